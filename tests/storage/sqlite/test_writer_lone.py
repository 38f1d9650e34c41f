"""The writer's lone job (a batch of one runs without a SAVEPOINT): a failure leaves nothing behind.

A real SQLite file in WAL mode at ``synchronous=FULL``, the writer thread, the
event loop; the job functions write rows and then fail in each way a job can.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from claw_sessiond.errors import SequenceConflictError
from claw_sessiond.storage.base import StorageCounters
from claw_sessiond.storage.sqlite.writer import Writer


def _writer(path: Path) -> Writer:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE t(v TEXT)")
    return Writer(conn, path, 64, StorageCounters())


def _rows(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT v FROM t ORDER BY rowid")]


def _insert(v: str, then: BaseException | None = None):  # type: ignore[no-untyped-def]
    def fn(conn: sqlite3.Connection) -> str:
        conn.execute("INSERT INTO t(v) VALUES (?)", (v,))
        if then is not None:
            raise then
        return v

    return fn


@pytest.mark.parametrize("failure", [SequenceConflictError("stale"), RuntimeError("a bug")])
async def test_a_lone_failing_job_writes_nothing_and_the_next_commits(tmp_path: Path, failure: Exception) -> None:
    path = tmp_path / "w.db"
    writer = _writer(path)
    try:
        assert await writer.submit(_insert("before")) == "before"
        with pytest.raises(type(failure)):
            await writer.submit(_insert("failed", failure))
        assert await writer.submit(_insert("after")) == "after"
    finally:
        writer.stop()
    assert _rows(path) == ["before", "after"]


async def test_a_failing_job_among_others_fails_alone(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    writer = _writer(path)
    try:
        jobs = [_insert(f"m{i}", SequenceConflictError("stale") if i == 3 else None) for i in range(8)]
        out = await asyncio.gather(*(writer.submit(j) for j in jobs), return_exceptions=True)
    finally:
        writer.stop()
    assert isinstance(out[3], SequenceConflictError)
    assert _rows(path) == [f"m{i}" for i in range(8) if i != 3]


async def test_the_commit_notice_comes_once_per_committed_write(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    writer = _writer(path)
    seen: list[set[str]] = []
    writer.on_commit = lambda changed: seen.append(set(changed))
    try:
        await writer.submit(_insert("x"), "s1")
        await asyncio.sleep(0)
        with pytest.raises(SequenceConflictError):  # a failed write changes nothing: no notice
            await writer.submit(_insert("y", SequenceConflictError("stale")), "s2")
        await asyncio.sleep(0)
    finally:
        writer.stop()
    assert seen == [{"s1"}]
