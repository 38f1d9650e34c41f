"""Repairing interrupted tool calls (SPEC §3): right after the assistant, once, and never by a read-only Load."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from claw_sessiond.errors import Reason, ToolCallStateError
from claw_sessiond.model import Repair
from claw_sessiond.repair import PLAN_SLICE
from claw_sessiond.storage import Storage
from tests.storage._support import (
    Stores,
    append,
    assistant,
    clear,
    event_types,
    history,
    read,
    result,
    snapshot,
    user,
)


def shape(messages: list) -> list[tuple[str, str, str]]:  # type: ignore[type-arg]
    return [(m.role, m.tool_call_id, m.synthetic_reason) for m in messages]


async def test_interrupted_calls_are_answered_right_after_their_assistant_in_call_order(storage: Storage) -> None:
    await append(storage, "s", user("q"), assistant("call-1", "call-2"), user("next question"))
    loaded = await storage.load("s", "/w", "t")
    assert loaded.repairs == [Repair("call-1", 2, 4), Repair("call-2", 2, 5)]
    messages = await history(storage, loaded)
    assert shape(messages) == [
        ("user", "", ""),
        ("assistant", "", ""),
        ("tool", "call-1", "interrupted"),
        ("tool", "call-2", "interrupted"),
        ("user", "", ""),
    ]
    assert [m.position for m in messages] == [1, 2, 4, 5, 3]
    synthetic = messages[2].content.lower()
    assert "interrupted" in synthetic and "not re-run" in synthetic
    assert loaded.session.last_position == 5 and loaded.session.message_count == 5


async def test_only_the_missing_result_of_two_is_repaired(storage: Storage) -> None:
    await append(storage, "s", user("two things"), assistant("call-1", "call-2"), result("call-1", "done one"))
    loaded = await storage.load("s", "/w", "t")
    assert [(r.tool_call_id, r.assistant_position) for r in loaded.repairs] == [("call-2", 2)]
    messages = await history(storage, loaded)
    assert [(m.tool_call_id, m.content, m.synthetic_reason) for m in messages if m.role == "tool"] == [
        ("call-1", "done one", ""),
        ("call-2", messages[3].content, "interrupted"),
    ]
    assert await event_types(storage, "s") == [
        "user_message",
        "assistant_message",
        "tool_result",
        "repair",
    ]


async def test_a_second_load_repairs_nothing_and_changes_nothing(storage: Storage) -> None:
    await append(storage, "s", assistant("c1"))
    first = await storage.load("s", "/w", "t")
    assert len(first.repairs) == 1
    after_repair = await snapshot(storage, "s")
    second = await storage.load("s", "/w", "t")
    assert second.repairs == []
    assert second.session.updated_at == first.session.updated_at
    assert await snapshot(storage, "s") == after_repair
    assert shape(await history(storage, second)) == [("assistant", "", ""), ("tool", "c1", "interrupted")]


async def test_concurrent_loads_repair_once(storage: Storage) -> None:
    await append(storage, "s", user("q"), assistant("a", "b"))
    loads = await asyncio.gather(*(storage.load("s", "/w", f"t{i}") for i in range(6)))
    assert sorted(r.tool_call_id for load in loads for r in load.repairs) == ["a", "b"]
    assert await event_types(storage, "s") == ["user_message", "assistant_message", "repair", "repair"]
    for load in loads:  # every Load returns the repaired history, whichever of them wrote it
        assert shape(await history(storage, load))[2:] == [("tool", "a", "interrupted"), ("tool", "b", "interrupted")]


async def test_a_load_without_repair_writes_nothing(storage: Storage) -> None:
    await append(storage, "s", user("q"), assistant("c1"))
    before = await snapshot(storage, "s")
    loaded = await storage.load("s", "/w", "t", repair=False)
    assert loaded.repairs == []
    assert shape(await history(storage, loaded)) == [("user", "", ""), ("assistant", "", "")]
    assert await snapshot(storage, "s") == before
    # the call is still open: a live result is accepted
    assert (await append(storage, "s", result("c1", "late but fine"))).first_position == 3


async def test_a_load_reads_more_open_calls_than_one_slice_whole_then_repairs_them_all(storage: Storage) -> None:
    # The snapshot reads the open calls in slices of PLAN_SLICE (on SQLite: on its reader's thread, in one go).
    ids = [f"c{i:03}" for i in range(PLAN_SLICE * 2 + 3)]
    await append(storage, "s", user("q"), assistant(*ids))
    before = await snapshot(storage, "s")
    looked = await storage.load("s", "/w", "t", repair=False)
    assert looked.repairs == [] and await snapshot(storage, "s") == before
    loaded = await storage.load("s", "/w", "t")
    assert [r.tool_call_id for r in loaded.repairs] == ids
    assert [m.tool_call_id for m in await history(storage, loaded)][2:] == ids


async def test_a_paired_history_is_not_written(storage: Storage) -> None:
    await append(storage, "s", assistant("c"), result("c", "r"))
    before = await snapshot(storage, "s")
    first = await storage.load("s", "/w", "t")
    second = await storage.load("s", "/other", "t")
    assert first.repairs == second.repairs == []
    assert second.session.updated_at == first.session.updated_at
    assert await snapshot(storage, "s") == before


async def test_loading_an_unknown_session_writes_nothing(storage: Storage) -> None:
    loaded = await storage.load("never", "/callers/dir", "t")
    assert loaded.session.stored is False and loaded.messages == [] and loaded.repairs == []
    assert loaded.session.workdir == "/callers/dir" and loaded.session.last_position == 0
    figures = await storage.figures()
    assert (figures.sessions, figures.events) == (0, 0)
    assert await storage.session_ids() == []


async def test_the_callers_workdir_is_returned_and_stored_at_the_next_write(storage: Storage) -> None:
    await append(storage, "s", user("x"), workdir="/old")
    loaded = await storage.load("s", "/moved", "t")
    assert loaded.session.workdir == "/moved"
    assert [s.workdir for s in await storage.list_sessions("", 10)] == ["/old"]  # a Load alone wrote nothing
    await append(storage, "s", user("y"), workdir="/moved")
    assert [s.workdir for s in await storage.list_sessions("", 10)] == ["/moved"]


async def test_a_late_result_after_a_repair_supersedes_it_and_a_second_one_is_refused(storage: Storage) -> None:
    # The tool did run: refusing its result would leave a history saying it had not (issue 14).
    await append(storage, "s", assistant("c1"))
    await storage.load("s", "/w", "t")
    stored = await append(storage, "s", result("c1", "real result, late"))
    assert stored.first_position == 3
    shown = await read(storage, "s")
    assert [(m.content, m.supersedes, m.synthetic_reason) for m in shown if m.role == "tool"] == [
        ("real result, late", 2, "")
    ]
    before = await snapshot(storage, "s")
    with pytest.raises(ToolCallStateError) as caught:
        await append(storage, "s", result("c1", "and again"))
    assert caught.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
    assert await snapshot(storage, "s") == before


async def test_repairs_are_stored_once_across_reopening(stores: Stores, tmp_path: Path) -> None:
    first = await stores.open(tmp_path / "ws")
    await append(first, "s", assistant("c1"))
    assert len((await first.load("s", "/w", "t")).repairs) == 1
    updated = (await first.load("s", "/w", "t")).session.updated_at
    await stores.close(first)
    again = await stores.open(tmp_path / "ws")
    third = await again.load("s", "/w", "t")
    assert third.repairs == [] and third.session.updated_at == updated
    assert sum(1 for m in await history(again, third) if m.synthetic_reason) == 1


async def test_calls_cleared_away_are_not_repaired(storage: Storage) -> None:
    await append(storage, "s", assistant("old"))
    await clear(storage, "s")
    await append(storage, "s", user("fresh start"))
    loaded = await storage.load("s", "/w", "t")
    assert loaded.repairs == []
    assert [m.content for m in await read(storage, "s")] == ["fresh start"]
