"""The SQLite backend through the storage interface: figures' names, the configured limit, read-only, checks.

Runs, the change feed and every other promise of the interface are pinned
once for every backend by the contract suite (``tests/storage/test_*.py``).

Everything here goes through ``claw_sessiond.storage`` (``open_storage``,
``Storage``, ``check_storage``), the way the daemon and the CLI use it; the
database is a real SQLite file in ``tmp_path``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from claw_sessiond.config import Config
from claw_sessiond.errors import PreconditionError, Reason, StorageUnavailableError
from claw_sessiond.metrics import figure_fields
from claw_sessiond.model import Message, ToolCall
from claw_sessiond.storage import (
    BackingUp,
    Checkpointing,
    SharedRuns,
    Storage,
    StorageFigures,
    SweepTurns,
    check_storage,
    open_read_only,
    open_storage,
    pending_erasures,
    stored_sessions,
)
from claw_sessiond.validate import prepare_append


def _job(session_id: str, *messages: Message, run_id: str = "", expected: int = 0):  # type: ignore[no-untyped-def]
    return prepare_append(
        session_id,
        list(messages),
        expected_last_position=expected,
        request_id="",
        workdir="",
        run_id=run_id,
        trace_id="t",
        max_message_bytes=1 << 20,
        max_batch_messages=100,
    )


def _calls(*ids: str) -> Message:
    return Message("assistant", tool_calls=tuple(ToolCall(i, "bash", "{}") for i in ids))


class _Feed:
    """A ChangeListener that remembers what it was told."""

    def __init__(self) -> None:
        self.changes: list[set[str]] = []
        self.erasures: list[str] = []

    def changed(self, session_ids: set[str]) -> None:
        self.changes.append(set(session_ids))

    def erased(self, session_id: str) -> None:
        self.erasures.append(session_id)

    def resync(self) -> None:
        pass


@pytest.fixture
def config(tmp_path: Path) -> Config:
    (tmp_path / ".claw").mkdir(mode=0o700)
    return Config(workspace=tmp_path)


@pytest.fixture
async def storage(config: Config) -> AsyncIterator[Storage]:
    opened = await open_storage(config)
    try:
        yield opened
    finally:
        await opened.close()


async def test_figures_are_neutral_and_reported_under_the_names_of_before(storage: Storage) -> None:
    await storage.append(_job("s", Message("user", "hi"), Message("assistant", "hello")))
    figures = await storage.figures()
    assert isinstance(figures, StorageFigures)
    assert (figures.sessions, figures.events, figures.request_records) == (1, 2, 0)
    assert figures.stored_bytes > 0 and figures.schema_version >= 3
    assert figure_fields(figures) == {
        "sessions": 1,
        "events": 2,
        "database_bytes": figures.stored_bytes,
        "wal_bytes": figures.log_bytes,
        "schema_version": figures.schema_version,
        "request_records": 0,
    }
    assert storage.counters.appends == 1 and storage.counters.messages_written == 2


async def test_the_sqlite_storage_checkpoints_and_copies_itself_and_needs_no_sweep_turns(storage: Storage) -> None:
    """SQLite's own capabilities, checked by the callers (``Checkpointing``: the daemon's erasure retries and
    the pending gauge; ``BackingUp``: the Backup RPC); one daemon per file needs no turns to sweep, and its
    runs live in its memory (no ``SharedRuns``)."""
    assert isinstance(storage, Checkpointing) and isinstance(storage, BackingUp)
    assert not isinstance(storage, SweepTurns) and not hasattr(storage, "retention_turn")
    assert not isinstance(storage.runs, SharedRuns) and not hasattr(storage.runs, "claim")  # runs in memory
    assert not hasattr(storage, "written_since_start") and not hasattr(storage, "forget_written_before")
    await storage.append(_job("s", Message("user", "hi")))
    assert (await storage.delete("s")).events_deleted == 1
    assert await storage.checkpoint() and pending_erasures(storage) == 0
    path, figures = await storage.backup()
    try:
        assert path.stat().st_mode & 0o077 == 0 and figures.sessions == 0
    finally:
        path.unlink()


async def test_the_configured_open_call_limit_reaches_the_storage(tmp_path: Path) -> None:
    (tmp_path / ".claw").mkdir(mode=0o700)
    storage = await open_storage(Config(workspace=tmp_path, max_open_tool_calls=2))
    try:
        await storage.append(_job("s", _calls("a", "b")))
        with pytest.raises(PreconditionError) as caught:
            await storage.append(_job("s", _calls("c")))
        assert caught.value.reason == Reason.TOO_MANY_OPEN_CALLS
    finally:
        await storage.close()


async def test_a_read_only_storage_reads_and_refuses_writes(config: Config) -> None:
    storage = await open_storage(config)
    await storage.append(_job("s", Message("user", "kept")))
    await storage.close()
    view = await open_read_only(config.db_path)
    try:
        loaded = await view.load("s", "/w", "t", repair=False)
        assert [m.content for m in loaded.messages] == ["kept"]
        with pytest.raises(StorageUnavailableError):
            await view.append(_job("s", Message("user", "no")))
    finally:
        await view.close()


async def test_doctors_checks_and_the_stored_sessions_of_a_file(config: Config, tmp_path: Path) -> None:
    db = config.db_path
    assert [(c.name, c.status) for c in check_storage(db)] == [("database", "warn")]
    assert stored_sessions(db) == 0
    storage = await open_storage(config)
    await storage.append(_job("s", Message("user", "hi")))
    await storage.append(_job("t", Message("user", "hi")))
    await storage.close()
    checks = check_storage(db)
    assert [(c.name, c.status) for c in checks] == [("quick_check", "ok"), ("schema_version", "ok")]
    assert checks[1].detail == str(await _version(config))
    assert stored_sessions(db) == 2

    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all, just text" * 10)
    (only,) = check_storage(garbage)
    assert (only.name, only.status) == ("database", "fail") and "bad header" in only.detail
    assert stored_sessions(garbage) is None
    os.truncate(garbage, 0)
    Path(f"{garbage}-wal").write_bytes(b"x" * 100)  # an empty database beside a WAL with data: unknown
    assert stored_sessions(garbage) is None


async def _version(config: Config) -> int:
    view = await open_read_only(config.db_path)
    try:
        return (await view.figures()).schema_version
    finally:
        await view.close()
