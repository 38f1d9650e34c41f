"""The store in-process on a real database file: post-commit failures and writes after close."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from claw_sessiond.errors import ShuttingDownError
from claw_sessiond.model import Message
from claw_sessiond.storage.sqlite import SQLiteStorage as Store
from claw_sessiond.validate import prepare_append


def _job(session_id: str, text: str):  # type: ignore[no-untyped-def]
    return prepare_append(
        session_id,
        [Message(role="user", content=text)],
        expected_last_position=0,
        request_id="",
        workdir="",
        run_id="",
        trace_id="t",
        max_message_bytes=1024,
        max_batch_messages=10,
    )


async def test_a_failing_commit_observer_does_not_fail_a_committed_append(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    store = await Store.open(db)
    try:

        def broken(size: int, seconds: float, ok: bool) -> None:
            raise RuntimeError("metrics bug")

        store.counters.commit_observers.append(broken)
        result = await store.append(_job("s", "durable"))
        assert result.last_position == 1 and not result.replayed
    finally:
        await store.close()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT count(*) FROM events WHERE session_id = 's'").fetchone()[0] == 1
    finally:
        conn.close()


async def test_a_write_after_close_is_refused_not_left_waiting(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "sessions.db")
    await store.close()
    with pytest.raises(ShuttingDownError):
        await store.append(_job("s", "late"))
