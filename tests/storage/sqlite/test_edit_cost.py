"""EditTail in SQLite: its cost is the entries it touches, not the history; pending calls refuse it.

The cost is counted, not timed: SQLite's progress handler is called every
virtual-machine instruction of the writer's connection, so the number of
calls is the work the edit's transaction did (every row read is several
instructions). An edit of a 10,000-entry session must cost what it costs on
a 10-entry one, while one scan of the larger history costs thousands of
times more (the guard that the counter sees reads at all).

Pending calls (``tool_calls.pending``) are set here in the table itself: in
this backend that column is what the edit reads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.errors import PreconditionError, Reason
from claw_sessiond.model import EditResult, Message, ToolCall
from claw_sessiond.storage.sqlite import SQLiteStorage
from claw_sessiond.validate import prepare_append, prepare_edit
from tests.helpers.figures import record


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
    return prepare_edit(
        session_id,
        list(replacements),
        remove_last=remove_last,
        after_position=0,
        expected_last_position=0,
        request_id="",
        workdir="",
        run_id="",
        trace_id="t",
        discard_pending=discard_pending,
        max_message_bytes=1 << 20,
        max_batch_messages=1000,
    )


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

        await store._writer.submit(install)
        self.count = 0
        try:
            await run()
            return self.count
        finally:
            await store._writer.submit(remove)


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
        store, lambda: store._writer.submit(lambda c: c.execute("SELECT count(*) FROM events WHERE session_id = 'big'"))
    )
    assert scan > 20 * big, f"the counter does not see a scan of the history (scan {scan}, edit {big})"
    assert big <= small * 1.1 + 20, f"an edit of 10,000 entries did {big} steps, of 10 entries {small}"
    assert after_many_pops <= small * 1.1 + 20, f"a pop after 200 pops did {after_many_pops} steps ({small})"
    loaded = await store.load("big", "/w", "t", repair=False)
    assert loaded.session.message_count == 10_000 - 201
    record("edit_cost", steps_at_10=small, steps_at_10000=big, steps_after_200_pops=after_many_pops, scan=scan)


async def _mark_pending(store: SQLiteStorage, session_id: str, call_id: str) -> None:
    def run(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE tool_calls SET pending = 1 WHERE session_id = ? AND call_id = ?", (session_id, call_id))

    await store._writer.submit(run)


def _dump(db: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


async def test_an_edit_that_would_cut_an_unanswered_pending_call_is_refused(store: SQLiteStorage) -> None:
    call = ToolCall("approve-1", "deploy", "{}")
    await store.append(_append("s", Message("user", "deploy it"), Message("assistant", tool_calls=(call,))))
    await _mark_pending(store, "s", "approve-1")
    before = _dump(store.path)
    with pytest.raises(PreconditionError) as caught:
        await store.edit_tail(_edit("s", remove_last=1))
    assert caught.value.reason == Reason.EDIT_SPLITS_CALL and "approve-1" in caught.value.message
    with pytest.raises(PreconditionError):  # also when the pending call is deeper in the removed tail
        await store.edit_tail(_edit("s", Message("user", "no"), remove_last=2))
    assert _dump(store.path) == before
    # Removing the user message after it is fine: the pending call stays.
    await store.append(_append("s", Message("user", "later")))
    assert [m.content for m in (await store.edit_tail(_edit("s", remove_last=1))).removed] == ["later"]
    # Once the call is answered, its assistant may go (with its result).
    await store.append(_append("s", Message("tool", "approved and done", tool_call_id="approve-1")))
    done = await store.edit_tail(_edit("s", remove_last=2))
    assert [m.role for m in done.removed] == ["assistant", "tool"]


async def test_discard_pending_removes_a_pending_call_on_purpose(store: SQLiteStorage) -> None:
    call = ToolCall("approve-2", "deploy", "{}")
    await store.append(_append("s", Message("assistant", tool_calls=(call,))))
    await _mark_pending(store, "s", "approve-2")
    done = await store.edit_tail(_edit("s", Message("user", "never mind"), remove_last=1, discard_pending=True))
    assert [c.id for m in done.removed for c in m.tool_calls] == ["approve-2"]
    loaded = await store.load("s", "/w", "t")
    assert loaded.repairs == [] and [m.content for m in loaded.messages] == ["never mind"]
