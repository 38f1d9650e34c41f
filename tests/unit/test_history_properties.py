"""Properties of the pure rules, without a daemon: ``history.project``, ``open_calls``, ``plan_repair``,
``ids.check_session_id`` (hypothesis; ``CLAW_FULL=1`` runs more examples).
"""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claw_sessiond.errors import InvalidRequestError
from claw_sessiond.history import OpenCall, open_calls, project
from claw_sessiond.ids import MAX_SESSION_ID_BYTES, check_session_id
from claw_sessiond.model import Message as DMessage
from claw_sessiond.model import ToolCall as DToolCall
from claw_sessiond.repair import plan_repair
from tests.helpers.tiers import scale

# ---------------------------------------------------------------- pure properties of history.py


@st.composite
def histories(draw: st.DrawFn) -> list[DMessage]:
    """Position-ordered histories as the daemon can store them (results after their calls, ids unique)."""
    out: list[DMessage] = []
    open_ids: list[str] = []
    ids = (f"k{n}" for n in itertools.count())
    for position in range(1, draw(st.integers(0, 14)) + 1):
        kind = draw(st.sampled_from(["user", "assistant", "tool"] if open_ids else ["user", "assistant"]))
        if kind == "assistant":
            calls = tuple(DToolCall(next(ids), "bash", "{}") for _ in range(draw(st.integers(0, 3))))
            open_ids.extend(c.id for c in calls)
            out.append(DMessage("assistant", tool_calls=calls, position=position))
        elif kind == "tool":
            cid = draw(st.sampled_from(open_ids))
            open_ids.remove(cid)
            out.append(DMessage("tool", "r", tool_call_id=cid, position=position))
        else:
            out.append(DMessage("user", "u", position=position))
    return out


def _repaired(history: list[DMessage]) -> list[DMessage]:
    """Append synthetic results for every open call (what a Load writes), at the next positions."""
    plan, _ = plan_repair(open_calls(history), lambda _r: False)
    last = history[-1].position if history else 0
    return history + [
        DMessage("tool", "x", tool_call_id=c.tool_call_id, synthetic_reason="interrupted", position=last + i + 1)
        for i, c in enumerate(plan)
    ]


@settings(max_examples=scale(200, 1000), deadline=None)
@given(histories())
def test_project_keeps_every_message_and_puts_results_after_their_call(history: list[DMessage]) -> None:
    out = project(history)
    assert sorted(m.position for m in out) == [m.position for m in history]
    non_tool = [m.position for m in out if m.role != "tool"]
    assert non_tool == [m.position for m in history if m.role != "tool"]
    owner = {c.id: m.position for m in history for c in m.tool_calls}
    for i, m in enumerate(out):
        if m.role == "tool":
            block_owner = next(p.position for p in reversed(out[:i]) if p.role != "tool")
            assert block_owner == owner[m.tool_call_id], "a result is not in its assistant's block"
    if not any(m.role == "tool" for m in history):
        assert out == history


@settings(max_examples=scale(200, 1000), deadline=None)
@given(histories())
def test_open_calls_are_exactly_the_unanswered_ones_in_call_order(history: list[DMessage]) -> None:
    answered = {m.tool_call_id for m in history if m.role == "tool"}
    calls = [(m.position, i, c.id) for m in history for i, c in enumerate(m.tool_calls)]
    assert [(c.assistant_position, c.call_index, c.tool_call_id) for c in open_calls(history)] == [
        x for x in calls if x[2] not in answered
    ]


@settings(max_examples=scale(200, 1000), deadline=None)
@given(histories(), st.sets(st.sampled_from(["run-a", "run-b", ""])))
def test_plan_repair_partitions_by_liveness_and_repairs_once(history: list[DMessage], live: set[str]) -> None:
    opened = open_calls(history)
    runs = itertools.cycle(["run-a", "run-b", ""])
    owned = [OpenCall(c.tool_call_id, c.assistant_position, c.call_index, next(runs)) for c in opened]
    repair, in_flight = plan_repair(list(reversed(owned)), lambda r: r in live)
    assert sorted(repair + in_flight, key=lambda c: c.tool_call_id) == sorted(owned, key=lambda c: c.tool_call_id)
    assert all(c.run_id and c.run_id in live for c in in_flight)
    assert not any(c.run_id and c.run_id in live for c in repair)
    assert repair == sorted(repair, key=lambda c: (c.assistant_position, c.call_index))
    # After the repair is applied, planning again finds nothing; a paired history plans nothing.
    repaired = _repaired(history)
    assert plan_repair(open_calls(repaired), lambda _r: False) == ([], [])
    assert _repaired(repaired) == repaired


@settings(max_examples=scale(200, 1000), deadline=None)
@given(histories())
def test_repairs_land_right_after_their_assistant_after_existing_results_in_call_order(
    history: list[DMessage],
) -> None:
    out = project(_repaired(history))
    for i, m in enumerate(out):
        if m.role != "assistant" or not m.tool_calls:
            continue
        block = list(itertools.takewhile(lambda x: x.role == "tool", out[i + 1 :]))
        assert {t.tool_call_id for t in block} == {c.id for c in m.tool_calls}, "every call answered in its block"
        synthetic = [t for t in block if t.synthetic_reason]
        live = [t for t in block if not t.synthetic_reason]
        assert block == live + synthetic, "synthetic results come after the existing ones"
        call_index = {c.id: n for n, c in enumerate(m.tool_calls)}
        assert [call_index[t.tool_call_id] for t in synthetic] == sorted(call_index[t.tool_call_id] for t in synthetic)


# ---------------------------------------------------------------- pure properties of ids.py


def _valid_by_spec(sid: str) -> bool:
    """SPEC §2 / README: non-empty, at most 256 bytes, no '/', '\\', '..', NUL, control or Cf characters, not '.'."""
    if not sid or len(sid.encode("utf-8", "surrogatepass")) > MAX_SESSION_ID_BYTES:
        return False
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in sid):
        return False
    if any(unicodedata.category(ch) == "Cf" for ch in sid):  # invisible format characters (bidi, zero-width)
        return False
    if "/" in sid or "\\" in sid or ".." in sid or sid == ".":
        return False
    return sid == sid.strip()


id_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("ab.-_/\\ \t\n\x00\x1b\x7f\x85é日🙂\u202e\u200b")),
        st.characters(codec="utf-8"),
    ),
    max_size=300,
) | st.text(alphabet="aé", min_size=120, max_size=260)


@settings(max_examples=scale(500, 3000), deadline=None)
@given(id_text)
def test_check_session_id_accepts_exactly_the_specified_ids(sid: str) -> None:
    if _valid_by_spec(sid):
        assert check_session_id(sid) == sid
    else:
        with pytest.raises(InvalidRequestError) as err:
            check_session_id(sid)
        assert err.value.reason == "INVALID_SESSION_ID"
        assert err.value.message


def test_check_session_id_boundaries() -> None:
    assert check_session_id("a" * MAX_SESSION_ID_BYTES)
    for bad in ("a" * (MAX_SESSION_ID_BYTES + 1), "é" * 129, "", ".", "..", "a/b", "a\\b", "a\x00", "x\x9f"):
        with pytest.raises(InvalidRequestError):
            check_session_id(bad)
