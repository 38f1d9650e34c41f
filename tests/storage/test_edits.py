"""EditTail and the erasing Clear, through the storage interface (every backend).

An edit removes the tail of the visible history and appends replacements in its place, all or
nothing, with Append's rules; the log keeps what it removed. A Clear with ``erase`` removes the
history from the log, keeps usage, and never reuses a position.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.errors import (
    InvalidRequestError,
    PreconditionError,
    Reason,
    SequenceConflictError,
    ToolCallStateError,
)
from claw_sessiond.model import HistoryMark, Message, ToolCall
from claw_sessiond.queries import SearchFilter, fts_query
from claw_sessiond.storage import Storage
from tests.storage._support import (
    WORKDIR,
    Stores,
    append,
    assistant,
    contents,
    edit,
    event_types,
    export_lines,
    history,
    import_lines,
    read,
    renamed,
    result,
    snapshot,
    usage,
    user,
)


async def erase(storage: Storage, session_id: str, *, expected: int = 0, request_id: str = "") -> Any:
    return await storage.clear(
        session_id, request_id=request_id, expected_last_position=expected, workdir="", trace_id="t", erase=True
    )


async def shown(storage: Storage, session_id: str) -> list[tuple[int, str]]:
    return [(m.position, m.content or m.tool_call_id) for m in await read(storage, session_id)]


async def test_an_edit_removes_the_last_entries_and_appends_in_their_place(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"), user("c"))
    done = await edit(storage, "s", user("x"), remove_last=2)
    assert [(m.position, m.content) for m in done.removed] == [(2, "b"), (3, "c")]
    assert all(m.created_at and m.trace_id == "trace" for m in done.removed)
    assert (done.edit_position, done.first_position, done.last_position, done.replayed) == (4, 5, 5, False)
    assert await shown(storage, "s") == [(1, "a"), (5, "x")]
    loaded = await storage.load("s", WORKDIR, "t", repair=False)
    assert (loaded.session.message_count, loaded.session.last_position) == (2, 5)
    [summary] = await storage.list_sessions("s", 10)
    assert (summary.message_count, summary.last_position) == (2, 5)
    # The log keeps what was removed: an edit event names it.
    assert await event_types(storage, "s") == ["user_message"] * 3 + ["edit", "user_message"]
    edit_line = json.loads((await export_lines(storage, "s"))[4])
    assert (edit_line["type"], edit_line["position"], edit_line["payload"]) == ("edit", 4, {"removed": [2, 3]})


async def test_an_edit_after_a_position_removes_every_visible_entry_after_it(storage: Storage) -> None:
    await append(storage, "s", *(user(t) for t in "abcde"))
    done = await edit(storage, "s", after=2)
    assert [m.position for m in done.removed] == [3, 4, 5]
    assert (done.edit_position, done.first_position, done.last_position) == (6, 0, 0)
    assert await contents(storage, "s") == ["a", "b"]
    assert (await edit(storage, "s", user("tail"), after=6)).removed == []  # nothing after the end: only appends
    assert await contents(storage, "s") == ["a", "b", "tail"]


async def test_edits_step_over_earlier_edits_and_count_only_visible_entries(storage: Storage) -> None:
    await append(storage, "s", *(user(t) for t in "abcdef"))
    for expected in ("f", "e", "d"):  # pop one by one
        assert [m.content for m in (await edit(storage, "s", remove_last=1)).removed] == [expected]
    await append(storage, "s", user("g"))
    done = await edit(storage, "s", user("h"), remove_last=3)
    assert [m.content for m in done.removed] == ["b", "c", "g"]
    assert await contents(storage, "s") == ["a", "h"]
    with pytest.raises(InvalidRequestError) as caught:
        await edit(storage, "s", remove_last=3)
    assert caught.value.reason == Reason.INVALID_MESSAGE and "2 visible" in caught.value.message
    assert [m.content for m in (await edit(storage, "s", remove_last=2)).removed] == ["a", "h"]
    assert await contents(storage, "s") == []
    assert (await storage.load("s", WORKDIR, "t", repair=False)).session.message_count == 0


async def test_an_edit_never_reaches_behind_a_clear(storage: Storage) -> None:
    await append(storage, "s", user("old"))
    await storage.clear("s", request_id="", expected_last_position=0, workdir="", trace_id="t")
    await append(storage, "s", user("new"))
    with pytest.raises(InvalidRequestError):
        await edit(storage, "s", remove_last=2)
    assert [m.content for m in (await edit(storage, "s", after=1)).removed] == ["new"]
    assert await contents(storage, "s") == []


async def test_refused_edits_write_nothing(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"))
    await edit(storage, "s", remove_last=1, request_id="used")
    before = await snapshot(storage, "s", "new")
    refusals: list[tuple[type[Exception], Reason, dict[str, Any]]] = [
        (InvalidRequestError, Reason.INVALID_MESSAGE, {"remove_last": 2}),  # one visible entry
        (InvalidRequestError, Reason.INVALID_MESSAGE, {"after": 4}),  # beyond the last position (3)
        (SequenceConflictError, Reason.SEQUENCE_CONFLICT, {"remove_last": 1, "expected": 2}),
        (InvalidRequestError, Reason.REQUEST_ID_REUSED, {"remove_last": 1, "request_id": "used", "expected": 3}),
        (InvalidRequestError, Reason.INVALID_MESSAGE, {"remove_last": 1, "session": "new"}),  # not stored
    ]
    for error, reason, options in refusals:
        session = options.pop("session", "s")
        with pytest.raises(error) as caught:
            await edit(storage, session, user("never"), **options)
        assert caught.value.reason == reason, options  # type: ignore[attr-defined]
    # A replacement the append rules refuse: a result for a call the history does not hold.
    with pytest.raises(ToolCallStateError):
        await edit(storage, "s", result("nowhere"), remove_last=1)
    assert await snapshot(storage, "s", "new") == before


async def test_a_retried_edit_replays_its_first_result_without_the_removed_entries(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"))
    first = await edit(storage, "s", user("c"), remove_last=1, expected=2, request_id="r")
    after = await snapshot(storage, "s")
    again = await edit(storage, "s", user("c"), remove_last=1, expected=2, request_id="r")
    assert again.replayed and again.removed == [] and [m.content for m in first.removed] == ["b"]
    assert (again.edit_position, again.first_position, again.last_position) == (3, 4, 4)
    assert again.trace_id == first.trace_id
    assert await snapshot(storage, "s") == after
    assert await contents(storage, "s") == ["a", "c"]


async def test_removed_results_reopen_their_calls_and_removed_calls_leave_the_history(storage: Storage) -> None:
    await append(storage, "s", user("go"), assistant("c1", "c2"), result("c1", "one"), result("c2", "two"))
    # Replace the last result: its call is open again, so a new result may answer it.
    await edit(storage, "s", result("c2", "two, again"), remove_last=1)
    assert await shown(storage, "s") == [(1, "go"), (2, ""), (3, "one"), (6, "two, again")]
    with pytest.raises(ToolCallStateError) as answered:
        await append(storage, "s", result("c2", "a second answer"))
    assert answered.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
    # Remove the assistant and its results: its calls are gone, and their ids free again.
    await edit(storage, "s", remove_last=3)
    with pytest.raises(ToolCallStateError) as unknown:
        await append(storage, "s", result("c1", "late"))
    assert unknown.value.reason == Reason.UNKNOWN_TOOL_CALL
    await append(storage, "s", assistant("c1"), result("c1", "new one"))
    assert [m.content or m.role for m in await read(storage, "s")] == ["go", "assistant", "new one"]


async def test_a_load_repairs_a_call_whose_result_an_edit_removed(storage: Storage) -> None:
    await append(storage, "s", assistant("c1"), result("c1"))
    await edit(storage, "s", remove_last=1)
    loaded = await storage.load("s", WORKDIR, "t")
    assert [(r.tool_call_id, r.assistant_position) for r in loaded.repairs] == [("c1", 1)]
    messages = await history(storage, loaded)
    assert [(m.role, m.synthetic_reason) for m in messages] == [("assistant", ""), ("tool", "interrupted")]


async def test_followers_see_the_edit_then_its_replacements(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"))
    await edit(storage, "s", user("c"), remove_last=1)
    _incarnation, items, _more = await storage.watch_batch("s", 0, 10)
    assert [(p, m.content if isinstance(m, Message) else m) for p, m in items] == [
        (1, "a"),
        (2, "b"),
        (3, HistoryMark(removed=(2,))),
        (4, "c"),
    ]
    start = await storage.follow_start(2)
    rows, _more = await storage.follow_batch(start, 10)
    assert [(p, m) for _id, _sid, p, m in rows][:1] == [(3, HistoryMark(removed=(2,)))]


async def test_pages_of_a_history_edited_under_their_bound_are_refused(storage: Storage) -> None:
    await append(storage, "long", *(user("x" * 4096) for _ in range(600)))
    loaded = await storage.load("long", WORKDIR, "t")
    assert loaded.cursor is not None, "a history of 2.4 MB does not fit one page"
    await edit(storage, "long", remove_last=1)
    with pytest.raises(SequenceConflictError):
        await history(storage, loaded)
    again = await storage.load("long", WORKDIR, "t")
    await append(storage, "long", user("y"))
    await edit(storage, "long", remove_last=1)  # removes only what came after the bound: the stream stands
    assert len(await history(storage, again)) == 599


async def test_search_skips_entries_an_edit_removed(storage: Storage) -> None:
    await append(storage, "s", user("the quick fox"), user("the slow fox"))
    await edit(storage, "s", remove_last=1)
    hits, _ = await storage.search(fts_query("fox", raw=False), SearchFilter(), 10)
    assert [(h.position, h.cleared) for h in hits] == [(1, False)]
    everything, _ = await storage.search(fts_query("fox", raw=False), SearchFilter(include_cleared=True), 10)
    assert sorted((h.position, h.cleared) for h in everything) == [(1, False), (2, True)]


async def test_an_export_with_edits_imports_to_the_same_history(
    storage: Storage, stores: Stores, tmp_path: Path
) -> None:
    await append(storage, "s", user("go"), assistant("c1"), result("c1", "first"))
    await edit(storage, "s", result("c1", "second"), remove_last=1)
    await append(storage, "s", user("more"), user("and more"))
    await edit(storage, "s", remove_last=1)
    lines = await export_lines(storage, "s")
    other = await stores.open(tmp_path / "other")
    await import_lines(other, lines)
    assert await shown(other, "s") == await shown(storage, "s")
    got = (await other.load("s", WORKDIR, "t", repair=False)).session
    want = (await storage.load("s", WORKDIR, "t", repair=False)).session
    assert (got.message_count, got.last_position) == (want.message_count, want.last_position) == (4, 8)
    assert await export_lines(other, "s") == lines  # byte for byte, again
    # The imported tool-call index is the edited one: c1 is answered, by the replacement.
    with pytest.raises(ToolCallStateError):
        await append(other, "s", result("c1", "third"))
    # Merged after another history, the edit's positions move with it.
    await append(other, "m", user("before"))
    await import_lines(other, renamed(lines, "m"), "merge")
    assert [t for _p, t in await shown(other, "m")] == ["before", "go", "", "second", "more"]


async def test_an_import_whose_edit_removes_what_is_not_visible_is_refused(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"), user("c"))
    await edit(storage, "s", remove_last=1)  # at 4, removes 3
    await edit(storage, "s", remove_last=1)  # at 5, removes 2
    lines = await export_lines(storage, "s")
    last = json.loads(lines[-1])
    for removed in ([3], [1, 3], [5], [2, 1], ["2"]):  # removed already; not before the edit; not ascending
        last["payload"]["removed"] = removed
        with pytest.raises(InvalidRequestError) as caught:
            await import_lines(storage, renamed([*lines[:-1], json.dumps(last)], "t"))
        assert caught.value.reason == Reason.INVALID_IMPORT, removed
    assert await storage.session_ids() == ["s"]
    last["payload"]["removed"] = [1, 2]  # both visible then: a valid history
    await import_lines(storage, renamed([*lines[:-1], json.dumps(last)], "t"))
    assert await contents(storage, "t") == []


async def test_an_erasing_clear_removes_the_history_and_keeps_usage_and_positions(storage: Storage) -> None:
    await append(storage, "s", user("secret"), assistant("c1"), request_id="a1")
    await usage(storage, "s", input_tokens=7, model="m")
    await storage.record_event("s", "error", '{"detail": "audit"}', request_id="", trace_id="t")
    await edit(storage, "s", result("c1"), remove_last=0)
    before = (await storage.load("s", WORKDIR, "t", repair=False)).session
    done = await erase(storage, "s", expected=before.last_position, request_id="e1")
    assert (done.position, done.events_erased, done.replayed) == (before.last_position + 1, 4, False)
    loaded = await storage.load("s", WORKDIR, "t", repair=False)
    assert loaded.messages == [] and loaded.session.message_count == 0
    assert loaded.session.usage.input_tokens == 7
    assert (await storage.usage_by_model("s"))[1][0].usage.input_tokens == 7
    assert await event_types(storage, "s") == ["usage", "error", "clear"]
    assert json.loads((await export_lines(storage, "s"))[3])["payload"] == {"erased": 4}
    _inc, items, _more = await storage.watch_batch("s", 0, 10)
    assert items == [(done.position, HistoryMark(erased=True))]
    # Positions go on; the erased calls are gone with the history.
    assert (await append(storage, "s", user("after"))).first_position == done.position + 1
    with pytest.raises(ToolCallStateError):
        await append(storage, "s", result("c1"))
    hits, _ = await storage.search(fts_query("secret", raw=False), SearchFilter(include_cleared=True), 10)
    assert hits == []


async def test_an_erasing_clear_is_conditional_and_idempotent(storage: Storage) -> None:
    await append(storage, "s", user("x"), request_id="a1")
    before = await snapshot(storage, "s")
    with pytest.raises(SequenceConflictError):
        await erase(storage, "s", expected=5)
    assert await snapshot(storage, "s") == before
    first = await erase(storage, "s", request_id="e1")
    after = await snapshot(storage, "s")
    again = await erase(storage, "s", request_id="e1")
    assert again.replayed and (again.position, again.events_erased) == (first.position, first.events_erased) == (2, 1)
    assert await snapshot(storage, "s") == after
    with pytest.raises(InvalidRequestError) as other_kind:  # the same id for a clear that keeps the log
        await storage.clear("s", request_id="e1", expected_last_position=0, workdir="", trace_id="t")
    assert other_kind.value.reason == Reason.REQUEST_ID_REUSED
    # A retry of an append whose content was erased replays its first result and writes nothing.
    replay = await append(storage, "s", user("x"), request_id="a1")
    assert replay.replayed and (replay.first_position, replay.last_position) == (1, 1)
    assert await snapshot(storage, "s") == after


async def test_an_export_after_an_erasing_clear_imports(storage: Storage, stores: Stores, tmp_path: Path) -> None:
    await append(storage, "s", user("gone"))
    await usage(storage, "s", output_tokens=3)
    await erase(storage, "s")
    await append(storage, "s", user("kept"))
    lines = await export_lines(storage, "s")
    other = await stores.open(tmp_path / "other")
    await import_lines(other, lines)
    assert await shown(other, "s") == [(3, "kept")]
    assert (await other.load("s", WORKDIR, "t", repair=False)).session.usage.output_tokens == 3
    assert await export_lines(other, "s") == lines


async def test_an_export_running_while_the_history_is_erased_is_refused(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"))
    found = await storage.export_start("s")
    assert found is not None
    _header, cursor, max_event_id = found
    await append(storage, "s", user("c"))  # more history: the export still reads what it announced
    await edit(storage, "s", remove_last=1)  # an edit removes no event from the log
    assert sum([len(rows) async for rows in storage.export_pages(cursor, max_event_id)]) == 2
    await erase(storage, "s")
    with pytest.raises(SequenceConflictError):
        async for _rows in storage.export_pages(cursor, max_event_id):
            pass


async def test_a_pending_call_still_unanswered_refuses_the_edit_that_would_cut_it(storage: Storage) -> None:
    pending = Message("assistant", tool_calls=(ToolCall("approve", "deploy", "{}", pending=True),))
    await append(storage, "s", user("deploy"), pending)
    before = await snapshot(storage, "s")
    with pytest.raises(PreconditionError) as caught:
        await edit(storage, "s", user("no"), remove_last=1)
    assert caught.value.reason == Reason.EDIT_SPLITS_CALL
    assert await snapshot(storage, "s") == before
    await append(storage, "s", result("approve", "done"))
    assert [m.content for m in (await edit(storage, "s", remove_last=2)).removed] == ["", "done"]
    await append(storage, "s", pending)
    done = await edit(storage, "s", remove_last=1, discard_pending=True)
    assert [c.id for m in done.removed for c in m.tool_calls] == ["approve"]
    assert await contents(storage, "s") == ["deploy"]
