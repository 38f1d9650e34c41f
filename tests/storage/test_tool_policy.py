"""The tool-call policy (issue 14) through the storage interface: pending calls, supersede, repair modes, orphan
results, unparsed calls, and a Load that looks without writing.

The session's own policy (``sessions.tool_policy``) is set by CreateSession / UpdateSession; its effect on
Append and Load is pinned in tests/storage/sqlite/test_session_tool_policy.py (which writes it directly).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.errors import InvalidRequestError, Reason, ToolCallStateError
from claw_sessiond.model import AppendResult, InFlightCall, Message, Repair, ToolCall
from claw_sessiond.policy import ToolPolicy
from claw_sessiond.storage import Storage
from claw_sessiond.validate import prepare_append
from tests.storage._support import (
    Stores,
    append,
    assistant,
    attach,
    export_lines,
    history,
    import_lines,
    read,
    result,
    snapshot,
    user,
)


async def put(
    storage: Storage, session_id: str, *messages: Message, policy: ToolPolicy | None = None, **options: Any
) -> AppendResult:
    """An append with the caller's tool policy, as the service builds it."""
    job = prepare_append(
        session_id,
        list(messages),
        expected_last_position=options.get("expected", 0),
        request_id=options.get("request_id", ""),
        workdir="",
        run_id=options.get("run_id", ""),
        trace_id="trace",
        max_message_bytes=1 << 20,
        max_batch_messages=1000,
        tool_policy=policy,
    )
    return await storage.append(job)


def pending(*call_ids: str) -> Message:
    return Message("assistant", "", tuple(ToolCall(i, "deploy", '{"env": "prod"}', pending=True) for i in call_ids))


def view(messages: list[Message]) -> list[tuple[Any, ...]]:
    return [
        (m.position, m.role, m.content, [c.id for c in m.tool_calls], m.tool_call_id, m.synthetic_reason)
        for m in messages
    ]


# ---------------------------------------------------------------- pending calls


async def test_a_pending_call_is_never_repaired_and_is_listed_in_flight_without_an_owner(storage: Storage) -> None:
    await append(storage, "s", user("deploy?"), pending("p1"), assistant("c1"))
    loaded = await storage.load("s", "/w", "t")
    assert loaded.repairs == [Repair("c1", 3, 4)]
    assert loaded.in_flight == [InFlightCall("p1", 2, "")]
    again = await storage.load("s", "/w", "t")
    assert again.repairs == [] and again.in_flight == [InFlightCall("p1", 2, "")]
    shown = await history(storage, again)
    assert [c.pending for m in shown for c in m.tool_calls] == [True, False]
    # The approved tool ran: its result answers the call, right after it.
    await append(storage, "s", result("p1", "deployed"))
    final = await storage.load("s", "/w", "t")
    assert final.repairs == [] and final.in_flight == []
    assert [(m.role, m.tool_call_id, m.content) for m in await history(storage, final)][1:3] == [
        ("assistant", "", ""),
        ("tool", "p1", "deployed"),
    ]


async def test_a_pending_call_outlives_its_run_and_a_cancelled_result_closes_it(storage: Storage) -> None:
    run = await attach(storage, "s", 4242, "owner")
    await put(storage, "s", pending("p1"), run_id=run.run_id)
    assert (await storage.load("s", "/w", "t")).in_flight == [InFlightCall("p1", 1, run.run_id)]
    storage.runs.unregister(run.run_id)  # the owner died
    loaded = await storage.load("s", "/w", "t")
    assert loaded.repairs == [] and loaded.in_flight == [InFlightCall("p1", 1, "")]
    await append(storage, "s", Message("tool", "not approved", tool_call_id="p1", cancelled=True))
    final = await storage.load("s", "/w", "t")
    assert final.repairs == [] and final.in_flight == []
    assert [(m.role, m.cancelled) for m in await history(storage, final)] == [("assistant", False), ("tool", True)]


# ---------------------------------------------------------------- supersede


async def test_a_real_result_supersedes_the_repair_the_log_keeps_both(storage: Storage) -> None:
    await append(storage, "s", user("q"), assistant("c1"), user("next"))
    assert (await storage.load("s", "/w", "t")).repairs == [Repair("c1", 2, 4)]
    assert (await storage.load("s", "/w", "t")).session.message_count == 4
    await append(storage, "s", result("c1", "it ran after all"))
    loaded = await storage.load("s", "/w", "t")
    assert loaded.repairs == [] and loaded.session.message_count == 4 and loaded.session.last_position == 5
    shown = await history(storage, loaded)
    assert view(shown) == [
        (1, "user", "q", [], "", ""),
        (2, "assistant", "", ["c1"], "", ""),
        (5, "tool", "it ran after all", [], "c1", ""),
        (3, "user", "next", [], "", ""),
    ]
    assert shown[2].supersedes == 4
    events = [json.loads(line) for line in (await export_lines(storage, "s"))[1:]]
    assert [(e["position"], e["type"]) for e in events] == [
        (1, "user_message"),
        (2, "assistant_message"),
        (3, "user_message"),
        (4, "repair"),
        (5, "tool_result"),
    ]
    assert events[4]["payload"]["supersedes"] == 4
    before = await snapshot(storage, "s")
    with pytest.raises(ToolCallStateError) as caught:
        await append(storage, "s", result("c1", "a third answer"))
    assert caught.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
    assert await snapshot(storage, "s") == before


# ---------------------------------------------------------------- repair modes


async def test_drop_hides_the_open_call_and_writes_nothing(storage: Storage) -> None:
    drop = ToolPolicy("drop")
    await append(storage, "s", user("q"))
    await put(
        storage, "s", assistant("d1"), Message("assistant", "let me look", (ToolCall("d2", "x", "{}"),)), policy=drop
    )
    await append(storage, "s", user("next"))
    before = await snapshot(storage, "s")
    loaded = await storage.load("s", "/w", "t")
    assert loaded.repairs == [] and loaded.in_flight == []
    assert view(await history(storage, loaded)) == [
        (1, "user", "q", [], "", ""),
        (3, "assistant", "let me look", [], "", ""),  # its call dropped, its text kept
        (4, "user", "next", [], "", ""),
    ]
    assert loaded.session.message_count == 3  # the entry left empty is not counted
    assert await snapshot(storage, "s") == before  # nothing written, not even a repair
    # The log kept the call: a late result still pairs with it, and both show again.
    await append(storage, "s", result("d1", "late"))
    shown = await read(storage, "s")
    assert [(m.position, m.tool_call_id) for m in shown][:3] == [(1, ""), (2, ""), (5, "d1")]


async def test_off_leaves_the_call_open_and_visible(storage: Storage) -> None:
    await put(storage, "s", assistant("o1"), policy=ToolPolicy("off"))
    await append(storage, "s", assistant("c2"))
    loaded = await storage.load("s", "/w", "t")
    assert loaded.repairs == [Repair("c2", 2, 3)]  # the other call follows today's default
    assert [(m.position, [c.id for c in m.tool_calls]) for m in await history(storage, loaded)][:1] == [(1, ["o1"])]
    before = await snapshot(storage, "s")
    again = await storage.load("s", "/w", "t")
    assert again.repairs == [] and await snapshot(storage, "s") == before


async def test_a_look_without_repair_writes_nothing_whatever_the_calls(storage: Storage) -> None:
    await append(storage, "s", user("q"), pending("p"), assistant("c"))
    await put(storage, "s", assistant("d"), policy=ToolPolicy("drop"))
    await put(storage, "s", assistant("o"), policy=ToolPolicy("off"))
    before = await snapshot(storage, "s")
    looked = await storage.load("s", "/elsewhere", "t", repair=False)
    assert looked.repairs == [] and looked.in_flight == [InFlightCall("p", 2, "")]
    assert [c.id for m in await history(storage, looked) for c in m.tool_calls] == ["p", "c", "o"]
    assert looked.session.workdir == "/elsewhere"
    assert await snapshot(storage, "s") == before


# ---------------------------------------------------------------- orphans and unparsed calls


async def test_orphan_results_are_stored_only_when_allowed_and_never_paired(storage: Storage) -> None:
    await append(storage, "s", user("q"))
    before = await snapshot(storage, "s")
    with pytest.raises(ToolCallStateError) as caught:
        await append(storage, "s", result("k", "from elsewhere"))
    assert caught.value.reason == Reason.UNKNOWN_TOOL_CALL
    assert await snapshot(storage, "s") == before
    await put(storage, "s", result("k", "from elsewhere"), policy=ToolPolicy(allow_orphan_results=True))
    await append(storage, "s", assistant("k"), result("k", "its own"))  # a later call with that id pairs normally
    shown = await read(storage, "s")
    assert [(m.position, m.role, m.orphan) for m in shown] == [
        (1, "user", False),
        (2, "tool", True),
        (3, "assistant", False),
        (4, "tool", False),
    ]
    assert (await storage.load("s", "/w", "t")).repairs == []


async def test_unparsed_calls_are_stored_as_given_only_when_allowed(storage: Storage) -> None:
    free = Message("assistant", "", (ToolCall("c1", "apply_patch", "*** Begin Patch\n"), ToolCall("", "x", "{}")))
    for refused, reason in ((free, Reason.ARGUMENTS_NOT_JSON), (assistant(""), Reason.INVALID_MESSAGE)):
        before = await snapshot(storage, "s")
        with pytest.raises(InvalidRequestError) as caught:
            await append(storage, "s", refused)
        assert caught.value.reason == reason
        assert await snapshot(storage, "s") == before
    await put(storage, "s", free, policy=ToolPolicy(allow_unparsed_calls=True))
    calls = (await read(storage, "s"))[0].tool_calls
    assert [(c.id, c.arguments, c.arguments_not_json) for c in calls] == [
        ("c1", "*** Begin Patch\n", True),
        ("", "{}", False),
    ]
    loaded = await storage.load("s", "/w", "t")  # the id-less call is never repaired; the other one is
    assert loaded.repairs == [Repair("c1", 1, 2)] and loaded.in_flight == []
    assert (await storage.load("s", "/w", "t")).repairs == []


async def test_arguments_come_back_exactly_as_given(storage: Storage) -> None:
    text = '{ "cmd" : "ls",\n\t"n": 1.50, "e": "\\u00e9" }'
    await append(storage, "s", Message("assistant", "", (ToolCall("c", "bash", text),)))
    assert (await read(storage, "s"))[0].tool_calls[0].arguments == text
    assert json.loads((await export_lines(storage, "s"))[1])["payload"]["tool_calls"][0]["arguments"] == text


async def test_the_policy_is_part_of_a_request_s_content(storage: Storage) -> None:
    msg = Message("tool", "r", tool_call_id="gone")
    first = await put(storage, "s", msg, policy=ToolPolicy(allow_orphan_results=True), request_id="r1")
    again = await put(storage, "s", msg, policy=ToolPolicy(allow_orphan_results=True), request_id="r1")
    assert again.replayed and (again.first_position, again.last_position) == (first.first_position, first.last_position)
    with pytest.raises(InvalidRequestError) as caught:
        await put(storage, "s", msg, request_id="r1")
    assert caught.value.reason == Reason.REQUEST_ID_REUSED


# ---------------------------------------------------------------- export and import


async def test_export_and_import_carry_every_flag_and_the_supersede(stores: Stores, tmp_path: Path) -> None:
    one = await stores.open(tmp_path / "one")
    await append(one, "s", user("q"), pending("p"), assistant("c"))
    await one.load("s", "/w", "t")  # repairs c
    await append(one, "s", result("c", "ran"))  # supersedes the repair
    await put(one, "s", assistant("d"), policy=ToolPolicy("drop"))
    await put(one, "s", result("gone", "orphan"), policy=ToolPolicy(allow_orphan_results=True))
    await put(
        one,
        "s",
        Message("assistant", "", (ToolCall("u", "free", "not json"), ToolCall("", "x", "{}"))),
        policy=ToolPolicy(allow_unparsed_calls=True),
    )
    lines = await export_lines(one, "s")
    two = await stores.open(tmp_path / "two")
    assert await import_lines(two, lines) == len(lines) - 1
    assert await export_lines(two, "s") == lines
    a = await one.load("s", "/w", "t", repair=False)
    b = await two.load("s", "/w", "t", repair=False)

    def full(messages: list[Message]) -> list[tuple[Any, ...]]:
        return [(*v, m.supersedes, m.orphan, m.tool_calls) for v, m in zip(view(messages), messages, strict=True)]

    assert full(await history(one, a)) == full(await history(two, b))
    assert (a.session.message_count, a.in_flight) == (b.session.message_count, b.in_flight)
    assert [m.synthetic_reason for m in await history(two, b)].count("interrupted") == 0  # the repair stays hidden
    assert "d" not in [c.id for m in await history(two, b) for c in m.tool_calls]  # still dropped


async def test_a_history_read_by_pages_follows_the_same_rules(storage: Storage) -> None:
    """Over more than one page (``reads.PAGE_ROWS``): the dropped call, the superseded repair and the orphan."""
    await append(storage, "s", assistant("c1"))
    await put(storage, "s", assistant("d1"), policy=ToolPolicy("drop"))
    await put(storage, "s", result("stray", "orphan"), policy=ToolPolicy(allow_orphan_results=True))
    for start in range(0, 600, 200):
        await append(storage, "s", *(user(f"u{i}") for i in range(start, start + 200)))
    assert [r.tool_call_id for r in (await storage.load("s", "/w", "t")).repairs] == ["c1"]
    await append(storage, "s", result("c1", "real, late"))
    loaded = await storage.load("s", "/w", "t")
    assert loaded.cursor is not None  # paged
    shown = await history(storage, loaded)
    assert [(m.position, m.role, m.tool_call_id, m.supersedes, m.orphan) for m in shown[:3]] == [
        (1, "assistant", "", 0, False),
        (605, "tool", "c1", 604, False),
        (3, "tool", "stray", 0, True),
    ]
    assert len(shown) == 603 == loaded.session.message_count  # d1's entry and the repair are hidden
    assert all(not m.synthetic_reason for m in shown)
