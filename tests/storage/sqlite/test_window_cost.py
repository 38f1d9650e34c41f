"""A bounded Load's work in SQLite does not grow with the history (issue 14, "cost independent of history length").

The contract suite counts the history events a Load reads; this counts what
SQLite itself does for it: the virtual-machine instructions its read
connections run (``set_progress_handler`` called every instruction), which a
query that scans or counts the whole history would multiply. Measured, not
timed: the same count on a 10-entry and a 10,000-entry session, whatever the
machine's load.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from claw_sessiond.config import Config
from claw_sessiond.model import LoadWindow, Message, ToolCall, now_rfc3339
from claw_sessiond.storage import Storage, open_storage
from claw_sessiond.validate import prepare_append


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    (tmp_path / ".claw").mkdir(mode=0o700)
    opened = await open_storage(Config(workspace=tmp_path))
    try:
        yield opened
    finally:
        await opened.close()


async def _append(storage: Storage, sid: str, messages: list[Message]) -> None:
    await storage.append(
        prepare_append(
            sid,
            messages,
            expected_last_position=0,
            request_id="",
            workdir="",
            run_id="",
            trace_id="t",
            max_message_bytes=1 << 20,
            max_batch_messages=1000,
        )
    )


async def _fill(storage: Storage, sid: str, n: int, tag: str = "") -> None:
    """``n`` entries: users, assistants with a call, their results, every tenth with an item."""
    batch: list[Message] = []
    for i in range(n):
        if i % 3 == 1:
            batch.append(Message("assistant", f"a{i}", tool_calls=(ToolCall(f"c{tag}{i}", "bash", "{}"),)))
        elif i % 3 == 2:
            batch.append(Message("tool", f"r{i}", tool_call_id=f"c{tag}{i - 1}"))
        else:
            batch.append(Message("user", f"u{i}", format="x" if i % 10 == 0 else "", item=b"i" if i % 10 == 0 else b""))
        if len(batch) == 999:  # whole call/result pairs per batch
            await _append(storage, sid, batch)
            batch = []
    if batch:
        await _append(storage, sid, batch)


async def _steps(storage: Storage, sid: str, window: LoadWindow, returns: int = 10) -> int:
    """SQLite instructions the read connections run for a bounded Load of ``sid`` (returning ``returns`` entries)."""
    readers = storage.engine.readers.all  # type: ignore[attr-defined]
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    for conn in readers:
        await conn.set_progress_handler(tick, 1)
    try:
        loaded = await storage.load(sid, "/w", "t", repair=False, window=window)
        got = list(loaded.messages)
        if loaded.cursor is not None:
            async for page in storage.history_pages(loaded.cursor):
                got += page
    finally:
        for conn in readers:
            await conn.set_progress_handler(None, 1)
    assert len(got) == returns
    return steps


def _bounds(kind: str, cut: str) -> dict[str, LoadWindow]:
    if kind == "last":
        return {"small": LoadWindow(last=10), "large": LoadWindow(last=10)}
    if kind == "after_position":
        return {"small": LoadWindow(after_position=10), "large": LoadWindow(after_position=10_000)}
    return {"small": LoadWindow(after_time=cut), "large": LoadWindow(after_time=cut)}


@pytest.mark.parametrize("kind", ["last", "after_position", "after_time"])
async def test_a_bounded_load_runs_the_same_sqlite_work_at_10_and_10000_entries(storage: Storage, kind: str) -> None:
    await _fill(storage, "small", 10)
    await _fill(storage, "large", 10_000)
    cut = now_rfc3339()
    await asyncio.sleep(0.002)
    await _fill(storage, "small", 10, "+")  # ten more in each, stored after ``cut``
    await _fill(storage, "large", 10, "+")
    bounds = _bounds(kind, cut)
    small = await _steps(storage, "small", bounds["small"])
    large = await _steps(storage, "large", bounds["large"])
    assert large <= small * 1.2 + 100, (small, large)


async def test_a_client_ids_load_runs_the_same_sqlite_work_at_10_and_10000_entries(storage: Storage) -> None:
    """A point read by client id goes through the client-id index: a read that walked the session's history
    (its positions, or the whole table) would run a thousand times the instructions on the large session."""
    for sid, n in (("small", 10), ("large", 10_000)):
        for start in range(0, n, 1000):
            await _append(
                storage, sid, [Message("user", f"u{i}", client_id=f"e{i}") for i in range(start, min(n, start + 1000))]
            )
    small = await _steps(storage, "small", LoadWindow(client_ids=("e5",)), returns=1)
    large = await _steps(storage, "large", LoadWindow(client_ids=("e5000",)), returns=1)
    assert large <= small * 1.2 + 100, (small, large)


async def test_the_measure_sees_a_full_load_grow(storage: Storage) -> None:
    """The same count for a full Load does grow with the history: the measure can fail."""
    await _fill(storage, "small", 10)
    await _fill(storage, "large", 100)
    readers = storage.engine.readers.all  # type: ignore[attr-defined]
    counts = []
    for sid in ("small", "large"):
        steps = 0

        def tick() -> int:
            nonlocal steps
            steps += 1
            return 0

        for conn in readers:
            await conn.set_progress_handler(tick, 1)
        await storage.load(sid, "/w", "t", repair=False)
        for conn in readers:
            await conn.set_progress_handler(None, 1)
        counts.append(steps)
    assert counts[1] > counts[0] * 5, counts
