"""Repair planning and placement (``repair.py``) without a database.

``tests/unit/test_history_properties.py`` pins ``plan_repair``'s partition and idempotence;
here: where the synthetic results go, what they say, the slice-by-slice
planner, and the checks a backend makes before writing a plan.
"""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from claw_sessiond import repair
from claw_sessiond.events import INTERRUPTED_CONTENT, encode_message, message_from_payload
from claw_sessiond.history import OpenCall, open_calls, project
from claw_sessiond.model import InFlightCall, Message, Repair, ToolCall


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """Position-ordered histories with unique call ids; some calls answered, some open."""
    out: list[Message] = []
    open_ids: list[str] = []
    ids = (f"c{n}" for n in itertools.count())
    for position in range(1, draw(st.integers(1, 12)) + 1):
        kind = draw(st.sampled_from(["user", "assistant", "tool"] if open_ids else ["user", "assistant"]))
        if kind == "assistant":
            n = draw(st.integers(0, 4))
            calls = tuple(ToolCall(next(ids), draw(st.sampled_from(["bash", "read", ""])), "{}") for _ in range(n))
            open_ids.extend(c.id for c in calls)
            out.append(Message("assistant", tool_calls=calls, position=position))
        elif kind == "tool":
            call_id = draw(st.sampled_from(open_ids))
            open_ids.remove(call_id)
            out.append(Message("tool", "ok", tool_call_id=call_id, position=position))
        else:
            out.append(Message("user", "u", position=position))
    return out


@given(histories())
def test_repairs_are_placed_after_the_last_position_in_call_order(history: list[Message]) -> None:
    to_repair, _ = repair.plan_repair(list(reversed(open_calls(history))), lambda _r: False)
    last = history[-1].position
    placed = repair.place(to_repair, last)
    assert [r.position for r in placed] == list(range(last + 1, last + 1 + len(to_repair)))
    assert [(r.tool_call_id, r.assistant_position) for r in placed] == [
        (c.tool_call_id, c.assistant_position) for c in to_repair
    ]


@given(histories())
def test_a_repaired_history_shows_each_synthetic_result_in_its_assistants_block_with_the_tool_name(
    history: list[Message],
) -> None:
    to_repair, _ = repair.plan_repair(open_calls(history), lambda _r: False)
    wanted = repair.assistant_positions(to_repair)
    assistants = [(m.position, encode_message(m)) for m in history if m.position in wanted]
    payloads = asyncio.run(repair.plan_payloads(to_repair, assistants))
    placed = repair.place(to_repair, history[-1].position)
    written = [message_from_payload(r.position, "repair", "t", "ts", p) for r, p in zip(placed, payloads, strict=True)]
    names = {c.id: c.name for m in history for c in m.tool_calls}
    for w in written:
        assert (w.role, w.content, w.synthetic_reason) == ("tool", INTERRUPTED_CONTENT, "interrupted")
        assert w.name == names[w.tool_call_id]
    out = project(history + written)
    assert not open_calls(history + written)
    for m in written:
        i = out.index(m)
        block = next(p for p in reversed(out[:i]) if p.role != "tool")
        assert block.role == "assistant" and m.tool_call_id in {c.id for c in block.tool_calls}


@settings(deadline=None)  # an event loop per example: 364 ms once on the shared 2-core machine (a timing, not a bug)
@given(histories())
def test_the_sliced_planner_makes_the_same_payloads_as_the_plain_one(history: list[Message]) -> None:
    to_repair = open_calls(history) * 70  # more than one slice of PLAN_SLICE
    assistants = [(m.position, encode_message(m)) for m in history if m.role == "assistant"]
    names = {c.id: c.name for m in history for c in m.tool_calls}
    sliced = asyncio.run(repair.plan_payloads(to_repair, assistants))
    assert list(sliced) == repair.synthetic_payloads(to_repair, names)


def test_a_call_without_a_known_tool_name_is_repaired_without_one() -> None:
    (payload,) = repair.synthetic_payloads([OpenCall("c1", 1, 0)], {})
    assert '"name"' not in payload and '"tool_call_id": "c1"' in payload


def test_only_calls_of_live_runs_are_in_flight_in_call_order() -> None:
    owned = [OpenCall("b", 5, 0, "run-1"), OpenCall("a", 2, 1, "run-1"), OpenCall("c", 2, 0, "run-2")]
    owned.append(OpenCall("d", 1, 0, ""))
    live = {"run-1"}.__contains__
    assert [c.tool_call_id for c in repair.in_flight_calls(owned, live)] == ["a", "b"]
    assert repair.in_flight_calls(owned, live) == repair.plan_repair(owned, live)[1]
    assert repair.flights(repair.in_flight_calls(owned, live)) == [
        InFlightCall("a", 2, "run-1"),
        InFlightCall("b", 5, "run-1"),
    ]


def test_a_plan_holds_only_for_the_history_it_was_made_from() -> None:
    plan = repair.RepairPlan("2026-01-01T00:00:00.000000Z", 3, 10, (OpenCall("c", 4, 0),), ("{}",))
    assert plan.unchanged("2026-01-01T00:00:00.000000Z", 3, 10)
    assert not plan.unchanged("2026-01-01T00:00:00.000000Z", 3, 11)  # written to since: plan again
    assert plan.same_history("2026-01-01T00:00:00.000000Z", 3)  # ... but a chunk may still be written
    assert not plan.same_history("2026-01-01T00:00:00.000000Z", 12)  # cleared since
    assert not plan.same_history("2026-02-01T00:00:00.000000Z", 3)  # erased and created again


def test_nothing_to_repair_places_nothing() -> None:
    assert repair.place([], 7) == []
    assert repair.plan_repair([], lambda _r: True) == ([], [])
    assert repair.place([OpenCall("x", 1, 0)], 0) == [Repair("x", 1, 1)]
