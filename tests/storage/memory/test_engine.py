"""The reference backend below the facade: its write sequences run over its ports, all or nothing.

The contract suite (``tests/storage/``) runs the whole ``Storage`` on this backend; these tests
hold what only the reference backend promises: a write whose sequence fails leaves every table as
it was (the undo log), one store per name for the life of the process, and the shared sequences
running directly over its ports.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from claw_sessiond.errors import SequenceConflictError, StorageUnavailableError
from claw_sessiond.model import UsageDelta
from claw_sessiond.storage import history_reads, loading, writes
from claw_sessiond.storage.memory.engine import MemoryEngine, memory_tables
from claw_sessiond.storage.memory.tables import Tables
from claw_sessiond.storage.paging import PAGE_ROWS
from claw_sessiond.storage.port import Port
from claw_sessiond.storage.steps import Steps
from tests.storage._support import assistant, job, result, user


async def _load(engine: MemoryEngine, session_id: str) -> list[str]:
    """The visible history's contents, by pages where a Load gives a cursor."""
    loaded = await loading.load(engine, session_id, "/w", "t", repair=False)
    if loaded.cursor is None:
        return [m.content for m in loaded.messages]
    out: list[str] = []
    async for page in history_reads.visible_pages(engine.page_snapshots, loaded.cursor, engine.counters):
        out += [m.content for m in page]
    return out


def _then_fail(steps: Steps[Any]) -> Steps[Any]:
    """A write's sequence, then a defect after all its writes."""
    yield from steps
    raise RuntimeError("a defect after the writes")


@pytest.mark.parametrize(
    "write",
    [
        lambda port: writes.append(port, job("s", user("more"), assistant("c2"), expected=3)),
        lambda port: writes.clear(port, "s", "", "", 3, "/w", "t", erase=True),
        lambda port: writes.delete(port, "s"),
        lambda port: writes.append(port, job("new", user("first"))),
    ],
    ids=["append", "erasing-clear", "delete", "create"],
)
async def test_a_write_that_fails_after_its_writes_leaves_every_table_as_it_was(write: Any) -> None:
    tables = Tables()
    engine = MemoryEngine(tables)
    await engine.write("s", lambda port: writes.append(port, job("s", user("a"), assistant("c1"), result("c1"))))
    await engine.write("s", lambda port: writes.record_usage(port, "s", _usage(), "r1", "fp", "/w", "t"))
    before = copy.deepcopy(tables)
    commits = engine.counters.commits

    with pytest.raises(StorageUnavailableError, match="RuntimeError"):
        await engine.write("s", lambda port: _then_fail(write(port)))

    assert tables == before
    assert engine.counters.commits == commits
    assert engine.counters.write_failures == 1
    assert await _load(engine, "s") == ["a", "", "done"]


async def test_a_refused_write_is_the_callers_error_and_writes_nothing() -> None:
    tables = Tables()
    engine = MemoryEngine(tables)
    await engine.write("s", lambda port: writes.append(port, job("s", user("a"))))
    before = copy.deepcopy(tables)
    with pytest.raises(SequenceConflictError):
        await engine.write("s", lambda port: writes.append(port, job("s", user("b"), expected=7)))
    assert tables == before
    assert engine.counters.write_failures == 0


async def test_a_history_longer_than_a_page_comes_back_whole_by_pages() -> None:
    engine = MemoryEngine(Tables())
    texts = [f"m{i}" for i in range(PAGE_ROWS + 3)]
    for i in range(0, len(texts), 100):
        await engine.write("s", _appending("s", texts[i : i + 100], expected=i))
    assert await _load(engine, "s") == texts


async def test_a_name_opens_the_same_tables_and_two_names_never_share(tmp_path: Any) -> None:
    first, other = str(tmp_path / "a"), str(tmp_path / "b")
    engine = MemoryEngine(memory_tables(first))
    await engine.write("s", lambda port: writes.append(port, job("s", user("kept"))))
    await engine.close()
    with pytest.raises(StorageUnavailableError):
        await engine.write("s", lambda port: writes.append(port, job("s", user("late"), expected=1)))

    assert await _load(MemoryEngine(memory_tables(first)), "s") == ["kept"]
    assert await _load(MemoryEngine(memory_tables(other)), "s") == []


def _appending(session_id: str, texts: list[str], expected: int) -> Any:
    def steps(port: Port) -> Steps[Any]:
        return writes.append(port, job(session_id, *(user(t) for t in texts), expected=expected))

    return steps


def _usage() -> UsageDelta:
    return UsageDelta(input_tokens=5, cost_micros=7, currency="USD", model="m")


async def test_a_second_event_at_a_position_is_refused_whole_as_the_sql_backends_unique_index_refuses_it() -> None:
    tables = Tables()
    engine = MemoryEngine(tables)
    await engine.write("s", lambda port: writes.append(port, job("s", user("a"))))
    before = copy.deepcopy(tables)

    def twice(port: Port) -> Steps[None]:
        yield port.insert_event("s", 2, "clear", "t", "2026-01-01T00:00:00.000000Z", "{}")
        yield port.insert_event("s", 1, "clear", "t", "2026-01-01T00:00:00.000000Z", "{}")

    with pytest.raises(StorageUnavailableError, match="position 1"):
        await engine.write("s", twice)
    assert tables == before
    assert engine.counters.write_failures == 1
