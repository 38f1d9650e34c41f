"""The pure rules of the tool-call policy (``policy.py``, ``repair.split_calls``, ``history.drop_calls``,
``rules.admit_tool_result`` / ``check_unparsed_calls`` / ``fold_events``) and their conversions, without a daemon.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claw_sessiond import rules
from claw_sessiond.errors import InvalidRequestError, Reason, ToolCallStateError
from claw_sessiond.events import encode_message, message_from_payload
from claw_sessiond.history import OpenCall, drop_calls, open_calls, project
from claw_sessiond.model import AppendJob, Message, PreparedMessage, ToolCall
from claw_sessiond.policy import (
    REPAIR_MODES,
    ToolPolicy,
    call_fate,
    merge_policies,
    policy_from_json,
    policy_json,
)
from claw_sessiond.repair import hidden_count, plan_repair, split_calls
from claw_sessiond.rpc.convert import fill_message_pb, message_from_pb, tool_policy_of, tool_policy_pb
from claw_sessiond.validate import prepare_append
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from tests.helpers.tiers import scale

policies = st.builds(ToolPolicy, st.sampled_from(("", *REPAIR_MODES)), st.booleans(), st.booleans())


def prepare(*messages: Message, policy: ToolPolicy | None = None) -> list[PreparedMessage]:
    job = prepare_append(
        "s",
        list(messages),
        expected_last_position=0,
        request_id="",
        workdir="",
        run_id="",
        trace_id="t",
        max_message_bytes=1 << 20,
        max_batch_messages=100,
        tool_policy=policy,
    )
    return list(job.messages)


# ---------------------------------------------------------------- the policy itself


@settings(max_examples=scale(100, 500), deadline=None)
@given(policies)
def test_the_stored_spelling_round_trips_and_holds_only_what_is_set(policy: ToolPolicy) -> None:
    text = policy_json(policy)
    assert policy_from_json(text) == policy
    data = json.loads(text)
    assert set(data) <= {"repair", "allow_orphan_results", "allow_unparsed_calls"}
    assert all(v not in ("", False) for v in data.values())
    assert (text == "{}") == policy.empty


def test_a_stored_value_it_does_not_understand_counts_as_not_set() -> None:
    assert policy_from_json("") == policy_from_json(None) == policy_from_json("{}") == ToolPolicy()
    assert policy_from_json("not json") == policy_from_json("[1]") == ToolPolicy()
    assert policy_from_json('{"repair": "later", "allow_orphan_results": 1}') == ToolPolicy()
    assert policy_from_json('{"repair": "drop", "allow_unparsed_calls": true}') == ToolPolicy("drop", False, True)


@settings(max_examples=scale(100, 500), deadline=None)
@given(policies, policies)
def test_the_append_wins_where_it_sets_a_field(session: ToolPolicy, append: ToolPolicy) -> None:
    merged = merge_policies(session, append)
    assert merged.repair == (append.repair or session.repair)
    assert merged.allow_orphan_results == (append.allow_orphan_results or session.allow_orphan_results)
    assert merged.allow_unparsed_calls == (append.allow_unparsed_calls or session.allow_unparsed_calls)
    assert merge_policies(session, None) == session
    assert merge_policies(session, ToolPolicy()) == session


@pytest.mark.parametrize(
    ("live", "pending", "call_mode", "session_mode", "fate"),
    [
        (False, False, "", "", "repair"),  # today's behaviour
        (True, False, "", "drop", "in_flight"),
        (False, True, "", "", "in_flight"),  # pending: whether or not its owner lives
        (False, True, "synthesize", "synthesize", "in_flight"),
        (False, True, "drop", "", "in_flight"),
        (False, False, "", "drop", "drop"),
        (False, False, "", "off", "open"),
        (False, False, "synthesize", "drop", "repair"),  # the call's own mode wins over the session's
        (False, False, "off", "synthesize", "open"),
        (False, False, "drop", "off", "drop"),
    ],
)
def test_call_fate(live: bool, pending: bool, call_mode: str, session_mode: str, fate: str) -> None:
    assert call_fate(live=live, pending=pending, call_mode=call_mode, session=ToolPolicy(session_mode)) == fate


@settings(max_examples=scale(200, 1000), deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.booleans(), st.sampled_from(("", *REPAIR_MODES))), min_size=0, max_size=12),
    st.sampled_from(("", *REPAIR_MODES)),
)
def test_split_calls_never_repairs_or_drops_a_pending_call(
    shapes: list[tuple[bool, bool, str]], session_mode: str
) -> None:
    calls = [
        OpenCall(f"c{i}", i // 3 + 1, i % 3, f"run{i}" if owned else "", pending, mode)
        for i, (owned, pending, mode) in enumerate(shapes)
    ]
    live = {f"run{i}" for i in range(0, len(calls), 2)}
    split = split_calls(calls, live.__contains__, ToolPolicy(session_mode))
    parts = [split.repair, split.in_flight, split.dropped, split.left_open]
    assert sorted(c.tool_call_id for p in parts for c in p) == sorted(c.tool_call_id for c in calls)
    assert all(not c.pending for c in split.repair + split.dropped + split.left_open)
    assert {c.tool_call_id for c in calls if c.pending} <= {c.tool_call_id for c in split.in_flight}
    for c in split.in_flight:  # a live owner is named; a pending call without one has run id ""
        assert c.run_id == "" or c.run_id in live
    for part in parts:
        assert part == sorted(part, key=lambda c: (c.assistant_position, c.call_index))
    if session_mode in ("", "synthesize") and all(mode == "" for _o, _p, mode in shapes):
        assert (split.repair, split.in_flight) == tuple(plan_repair(calls, live.__contains__))


# ---------------------------------------------------------------- projection


def test_drop_takes_calls_out_and_hides_an_entry_left_empty() -> None:
    history = [
        Message("user", "q", position=1),
        Message("assistant", "", (ToolCall("a", "bash", "{}"),), position=2),
        Message("assistant", "thinking aloud", (ToolCall("b", "bash", "{}"), ToolCall("c", "x", "{}")), position=3),
        Message("tool", "r", tool_call_id="c", position=4),
        Message("assistant", "", (ToolCall("d", "bash", "{}"),), item=b"{}", format="x", position=5),
    ]
    shown = drop_calls(project(history), {"a", "b", "d"})
    assert [(m.position, [c.id for c in m.tool_calls]) for m in shown] == [(1, []), (3, ["c"]), (4, []), (5, [])]
    assert drop_calls(history, ()) == history
    rows = [(m.position, encode_message(m), bool(m.item)) for m in history if m.role == "assistant"]
    assert hidden_count(rows, {"a", "b", "d"}) == 1  # position 2 only: 3 keeps text, 5 keeps its item


def test_an_orphan_result_is_never_paired_and_an_id_less_call_is_never_open() -> None:
    history = [
        Message("tool", "early", tool_call_id="k", orphan=True, position=1),
        Message("assistant", "", (ToolCall("k", "bash", "{}"), ToolCall("", "free", "text", False, True)), position=2),
        Message("user", "u", position=3),
        Message("tool", "late", tool_call_id="k", orphan=True, position=4),
    ]
    assert [m.position for m in project(history)] == [1, 2, 3, 4]
    assert [c.tool_call_id for c in open_calls(history)] == ["k"]


# ---------------------------------------------------------------- admission


def test_admission_pairs_supersedes_or_stores_an_orphan() -> None:
    assert rules.admit_tool_result("c", True, None) == "pair"
    assert rules.admit_tool_result("c", True, 5, answered_by_repair=True) == "supersede"
    assert rules.admit_tool_result("c", False, None, allow_orphan=True) == "orphan"
    with pytest.raises(ToolCallStateError) as answered:
        rules.admit_tool_result("c", True, 5, allow_orphan=True)
    assert answered.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
    with pytest.raises(ToolCallStateError) as unknown:
        rules.admit_tool_result("c", False, None, answered_by_repair=True)
    assert unknown.value.reason == Reason.UNKNOWN_TOOL_CALL


def test_unparsed_calls_are_flagged_by_validation_and_refused_without_the_policy() -> None:
    prepared = prepare(
        Message("assistant", tool_calls=(ToolCall("c1", "apply_patch", "*** Begin Patch"), ToolCall("", "x", "{}")))
    )
    calls = prepared[0].message.tool_calls
    assert [(c.id, c.arguments, c.arguments_not_json) for c in calls] == [
        ("c1", "*** Begin Patch", True),
        ("", "{}", False),
    ]
    assert rules.has_unparsed_calls(prepared)
    rules.check_unparsed_calls(prepared, True)
    with pytest.raises(InvalidRequestError) as refused:
        rules.check_unparsed_calls(prepared, False)
    assert refused.value.reason == Reason.ARGUMENTS_NOT_JSON and "messages[0]: tool_calls[0]" in str(refused.value)
    with pytest.raises(InvalidRequestError) as no_id:
        rules.check_unparsed_calls(prepare(Message("assistant", tool_calls=(ToolCall("", "x", "{}"),))), False)
    assert no_id.value.reason == Reason.INVALID_MESSAGE and "has no id" in str(no_id.value)
    assert not rules.has_unparsed_calls(prepare(Message("assistant", tool_calls=(ToolCall("c", "x", "[1]"),))))


def test_arguments_are_stored_exactly_as_given() -> None:
    text = '{ "b" : 1,\n  "a": [1.0, 2e3, "\\u00e9"] }'
    prepared = prepare(Message("assistant", tool_calls=(ToolCall("c", "x", text),)))
    stored = prepared[0].payload
    assert message_from_payload(1, "assistant_message", "", "", stored).tool_calls[0].arguments == text


def test_the_append_policy_sets_each_call_s_repair_mode_and_counts_in_the_fingerprint() -> None:
    msg = Message("assistant", tool_calls=(ToolCall("c", "x", "{}", pending=True), ToolCall("", "y", "{}")))

    def job(policy: ToolPolicy | None) -> AppendJob:
        return prepare_append(
            "s",
            [msg],
            expected_last_position=0,
            request_id="r",
            workdir="",
            run_id="",
            trace_id="t",
            max_message_bytes=1 << 20,
            max_batch_messages=10,
            tool_policy=policy,
        )

    plain, empty, drop = job(None), job(ToolPolicy()), job(ToolPolicy("drop"))
    assert plain.fingerprint == empty.fingerprint != drop.fingerprint
    assert job(ToolPolicy(allow_orphan_results=True)).fingerprint != plain.fingerprint
    calls = drop.messages[0].message.tool_calls
    assert [(c.repair_mode, c.pending) for c in calls] == [("drop", True), ("", False)]  # no id: never repaired
    assert json.loads(drop.messages[0].payload)["tool_calls"][0] == {
        "id": "c",
        "name": "x",
        "arguments": "{}",
        "pending": True,
        "repair_mode": "drop",
    }


def test_only_a_tool_message_may_be_cancelled() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        prepare(Message("user", "u", cancelled=True))
    assert caught.value.reason == Reason.INVALID_MESSAGE
    assert json.loads(prepare(Message("tool", "", tool_call_id="c", cancelled=True))[0].payload)["cancelled"] is True


# ---------------------------------------------------------------- the import fold


def _fold(*events: tuple[int | None, str, dict[str, object]]) -> rules.ImportFold:
    return rules.fold_events("s", [(p, t, json.dumps(d)) for p, t, d in events])


def test_the_fold_follows_a_supersede_orphans_and_id_less_calls() -> None:
    call = {"id": "c", "name": "x", "arguments": "{}", "pending": True, "repair_mode": "off"}
    fold = _fold(
        (
            1,
            "assistant_message",
            {"role": "assistant", "tool_calls": [call, {"id": "", "name": "y", "arguments": "?"}]},
        ),
        (2, "repair", {"role": "tool", "tool_call_id": "c", "synthetic": "interrupted"}),
        (3, "tool_result", {"role": "tool", "tool_call_id": "c", "supersedes": 2}),
        (4, "tool_result", {"role": "tool", "tool_call_id": "gone", "orphan": True}),
    )
    assert fold.hidden == {2: 3} and fold.message_count == 3
    entry = fold.calls["c"]
    assert (entry.result_position, entry.pending, entry.repair_mode) == (3, True, "off")
    assert set(fold.calls) == {"c"}
    with pytest.raises(InvalidRequestError):  # two real results
        _fold(
            (1, "assistant_message", {"role": "assistant", "tool_calls": [call]}),
            (2, "tool_result", {"role": "tool", "tool_call_id": "c"}),
            (3, "tool_result", {"role": "tool", "tool_call_id": "c"}),
        )


# ---------------------------------------------------------------- the wire


def test_conversion_of_the_policy_and_the_flags() -> None:
    for mode, value in (("", pb.REPAIR_MODE_UNSPECIFIED), ("drop", pb.REPAIR_MODE_DROP), ("off", pb.REPAIR_MODE_OFF)):
        policy = ToolPolicy(mode, True, False)
        assert tool_policy_pb(policy).repair == value
        assert tool_policy_of(tool_policy_pb(policy)) == policy
    with pytest.raises(InvalidRequestError):
        tool_policy_of(pb.ToolPolicy(repair=99))  # type: ignore[arg-type]
    sent = pb.Message(
        role=pb.ROLE_TOOL, tool_call_id="c", cancelled=True, orphan=True, supersedes=7
    )  # orphan and supersedes are the daemon's to set
    got = message_from_pb(sent)
    assert (got.cancelled, got.orphan, got.supersedes) == (True, False, 0)
    call = message_from_pb(
        pb.Message(
            role=pb.ROLE_ASSISTANT, tool_calls=[pb.ToolCall(id="c", name="n", pending=True, arguments_not_json=True)]
        )
    ).tool_calls[0]
    assert (call.pending, call.arguments_not_json) == (True, False)
    out = pb.Message()
    fill_message_pb(
        out,
        Message("tool", "r", tool_call_id="c", cancelled=True, orphan=True, supersedes=4, position=9),
    )
    assert (out.cancelled, out.orphan, out.supersedes) == (True, True, 4)


def test_the_client_s_types_and_requests() -> None:
    import dataclasses

    from claw_sessiond_client import InvalidRequestError as ClientInvalid
    from claw_sessiond_client import Message as CMessage
    from claw_sessiond_client import ToolCall as CToolCall
    from claw_sessiond_client import ToolPolicy as CToolPolicy
    from claw_sessiond_client._requests import append_request, load_request
    from claw_sessiond_client._responses import message_of

    call = CToolCall("c", "x", {"a": 1}, pending=True)
    request = append_request(
        "s",
        [CMessage.assistant(tool_calls=[call]), CMessage.tool("c", "no", cancelled=True)],
        expected_last_position=0,
        request_id="r",
        workdir="",
        run_id="",
        tool_policy=CToolPolicy("off", allow_orphan_results=True),
    )
    assert request.messages[0].tool_calls[0].pending and request.messages[1].cancelled
    assert (request.tool_policy.repair, request.tool_policy.allow_orphan_results) == (pb.REPAIR_MODE_OFF, True)
    assert not append_request(
        "s", CMessage.user("u"), expected_last_position=0, request_id=None, workdir="", run_id=""
    ).HasField("tool_policy")
    with pytest.raises(ClientInvalid):
        append_request(
            "s",
            CMessage.user("u"),
            expected_last_position=0,
            request_id=None,
            workdir="",
            run_id="",
            tool_policy=CToolPolicy("sometimes"),
        )
    assert load_request("s", "/w", True, True)[0].no_repair and load_request("s", "/w", False)[0].no_repair
    assert not load_request("s", "/w", True)[0].no_repair
    got = message_of(
        pb.Message(
            role=pb.ROLE_ASSISTANT,
            tool_calls=[pb.ToolCall(id="c", name="x", arguments="raw", pending=True, arguments_not_json=True)],
        )
    )
    stored = got.tool_calls[0]
    assert (stored.pending, stored.arguments_not_json) == (True, True)
    assert dataclasses.replace(stored, arguments="{}").arguments_not_json is False  # the daemon's flag is not copied
    result = message_of(pb.Message(role=pb.ROLE_TOOL, tool_call_id="c", orphan=True, supersedes=3, cancelled=True))
    assert (result.orphan, result.supersedes, result.cancelled) == (True, 3, True)
    with pytest.raises(TypeError):
        CMessage("tool", "r", tool_call_id="c", orphan=True)  # type: ignore[call-arg]
