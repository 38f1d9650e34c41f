"""EditTail in SQLite: its cost is the entries it touches, not the history.

The cost is counted, not timed: SQLite's progress handler is called every
virtual-machine instruction of the writer's connection, so the number of
calls is the work the edit's transaction did (every row read is several
instructions). An edit of a 10,000-entry session must cost what it costs on
a 10-entry one, while one scan of the larger history costs thousands of
times more (the guard that the counter sees reads at all).
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.model import EditResult, Message
from claw_sessiond.storage.sqlite import SQLiteStorage
from claw_sessiond.validate import prepare_append
from tests.helpers.figures import record
from tests.storage._support import edit_job


def _append(session_id: str, *messages: Message) -> Any:
    return prepare_append(
        session_id,
        list(messages),
        expected_last_position=0,
        request_id="",
        workdir="",
        run_id="",
        trace_id="t",
        max_message_bytes=1 << 20,
        max_batch_messages=1000,
    )


def _edit(session_id: str, *replacements: Message, remove_last: int = 0, discard_pending: bool = False) -> Any:
    return edit_job(session_id, *replacements, remove_last=remove_last, discard_pending=discard_pending)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStorage]:
    s = await SQLiteStorage.open(tmp_path / "sessions.db")
    try:
        yield s
    finally:
        await s.close()


async def _fill(store: SQLiteStorage, session_id: str, n: int) -> None:
    for start in range(0, n, 1000):
        batch = [Message("user", f"{session_id} entry {i} " + "x" * 200) for i in range(start, min(n, start + 1000))]
        await store.append(_append(session_id, *batch))


class _Steps:
    """Counts the virtual-machine instructions the writer's connection runs while it is installed."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> int:
        self.count += 1
        return 0  # go on

    async def of(self, store: SQLiteStorage, run: Callable[[], Any]) -> int:
        def install(conn: sqlite3.Connection) -> None:
            conn.set_progress_handler(self, 1)

        def remove(conn: sqlite3.Connection) -> None:
            conn.set_progress_handler(None, 1)

        await store.engine.writer.submit(install)
        self.count = 0
        try:
            await run()
            return self.count
        finally:
            await store.engine.writer.submit(remove)


async def test_an_edit_costs_the_entries_it_touches_not_the_history(store: SQLiteStorage) -> None:
    await _fill(store, "small", 10)
    await _fill(store, "big", 10_000)
    steps = _Steps()

    async def pop(session_id: str) -> EditResult:
        return await store.edit_tail(_edit(session_id, Message("user", "instead"), remove_last=1))

    small = await steps.of(store, lambda: pop("small"))
    big = await steps.of(store, lambda: pop("big"))
    # A run of pops that walk back over the earlier ones: each steps over the last edit with what it removed.
    for _ in range(200):
        await store.edit_tail(_edit("big", remove_last=1))
    after_many_pops = await steps.of(store, lambda: store.edit_tail(_edit("big", remove_last=1)))
    scan = await steps.of(
        store,
        lambda: store.engine.writer.submit(lambda c: c.execute("SELECT count(*) FROM events WHERE session_id = 'big'")),
    )
    assert scan > 20 * big, f"the counter does not see a scan of the history (scan {scan}, edit {big})"
    assert big <= small * 1.1 + 20, f"an edit of 10,000 entries did {big} steps, of 10 entries {small}"
    assert after_many_pops <= small * 1.1 + 20, f"a pop after 200 pops did {after_many_pops} steps ({small})"
    loaded = await store.load("big", "/w", "t", repair=False)
    assert loaded.session.message_count == 10_000 - 201
    record("edit_cost", steps_at_10=small, steps_at_10000=big, steps_after_200_pops=after_many_pops, scan=scan)
