"""The pure rules of session state, labels and settings (``state.py``, ``validate_sessions.py``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond.errors import InvalidRequestError, Reason
from claw_sessiond.model import StateDelta
from claw_sessiond.policy import ToolPolicy, policy_json
from claw_sessiond.state import (
    MAX_DELTA_DEPTH,
    MAX_LABELS,
    MAX_STATE_BYTES,
    MAX_STATE_DELTAS,
    apply_delta,
    check_event_payload,
    check_labels,
    fold_settings,
    labels_after,
    parse_delta,
    prepare_deltas,
    settings_payload,
    state_after,
    state_payload,
)
from claw_sessiond.validate_sessions import check_scopes, prepare_create, prepare_fork, prepare_update


def test_a_delta_sets_top_level_keys_whole_and_null_removes() -> None:
    old = {"a": 1, "b": {"x": 1, "y": 2}, "c": [1]}
    assert apply_delta(old, {"b": {"x": 9}, "c": None, "d": None, "e": False}) == {"a": 1, "b": {"x": 9}, "e": False}
    assert old == {"a": 1, "b": {"x": 1, "y": 2}, "c": [1]}  # not changed in place


def test_a_state_is_stored_with_sorted_keys_whatever_the_order_given() -> None:
    assert parse_delta('{"b": 1, "a": {"d": 2, "c": 3}}', "state") == '{"a":{"c":3,"d":2},"b":1}'
    assert state_after('{"b":1}', '{"a":"é"}', "d") == '{"a":"é","b":1}'


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[1]", "must be a JSON object"),
        ("1", "must be a JSON object"),
        ("{", "not valid JSON"),
        ('{"a": NaN}', "not valid JSON"),
        ("[" * (MAX_DELTA_DEPTH + 1) + "]" * (MAX_DELTA_DEPTH + 1), "nested deeper"),
    ],
)
def test_a_bad_delta_is_refused_naming_its_field(text: str, words: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        parse_delta(text, "state_deltas[3].delta")
    assert caught.value.message.startswith("state_deltas[3].delta: ") and words in caught.value.message
    assert caught.value.metadata["field"] == "state_deltas[3].delta"


def test_a_state_over_the_bound_is_refused() -> None:
    with pytest.raises(InvalidRequestError) as too_big:
        parse_delta(json.dumps({"a": "x" * MAX_STATE_BYTES}), "state")
    assert too_big.value.reason == Reason.FIELD_TOO_LARGE
    half = json.dumps({"a": "x" * (MAX_STATE_BYTES // 2)})
    full = state_after("{}", parse_delta(half, "d"), "d")
    with pytest.raises(InvalidRequestError) as after:
        state_after(full, parse_delta(json.dumps({"b": "y" * (MAX_STATE_BYTES // 2)}), "d"), "state_deltas[1]")
    assert after.value.reason == Reason.FIELD_TOO_LARGE and "state_deltas[1]" in after.value.message
    assert state_after(full, '{"a":null}', "d") == "{}"


def test_deltas_of_a_request_are_checked_and_counted() -> None:
    assert prepare_deltas([("", '{"a":1}'), ("app:x", "{}")]) == (StateDelta("", '{"a":1}'), StateDelta("app:x", "{}"))
    with pytest.raises(InvalidRequestError) as many:
        prepare_deltas([("", "{}")] * (MAX_STATE_DELTAS + 1))
    assert many.value.reason == Reason.FIELD_TOO_LARGE
    for scope, where in (("a" * 257, "state_deltas[1].scope"), ("a\nb", "state_deltas[1].scope")):
        with pytest.raises(InvalidRequestError) as bad:
            prepare_deltas([("", "{}"), (scope, "{}")])
        assert bad.value.message.startswith(where)


def test_the_state_event_payload_is_canonical_json() -> None:
    payload = state_payload(StateDelta("app:é", '{"a":null,"b":[1]}'))
    assert payload == json.dumps(json.loads(payload), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(payload) == {"delta": {"a": None, "b": [1]}, "scope": "app:é"}


@pytest.mark.parametrize(
    ("labels", "where"),
    [
        ({"": "v"}, "labels[''"),
        ({"has space": "v"}, "labels['has space'"),
        ({"k" * 65: "v"}, "labels['kkk"),
        ({"é": "v"}, "labels['é'"),
        ({"ok": "v" * 257}, "labels['ok']"),
        ({"ok": "a\x00b"}, "labels['ok']"),
    ],
)
def test_bad_labels_are_refused_naming_the_key(labels: dict[str, str], where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        check_labels(labels, "labels")
    assert caught.value.message.startswith(where)


def test_labels_keys_values_and_count() -> None:
    good = {"app": "weather", "user.id": "a/b:c-d_e", "K9": "", "x" * 64: "é" * 128}
    assert check_labels(good, "labels") == good
    with pytest.raises(InvalidRequestError) as many:
        check_labels({f"k{i}": "v" for i in range(MAX_LABELS + 1)}, "labels")
    assert many.value.reason == Reason.FIELD_TOO_LARGE
    full = {f"k{i}": "v" for i in range(MAX_LABELS)}
    changed = labels_after(full, {"k0": "w"}, ["k1", "absent"])
    assert changed == {k: v for k, v in {**full, "k0": "w"}.items() if k != "k1"}
    with pytest.raises(InvalidRequestError):
        labels_after(full, {"new": "v"}, [])


def test_a_settings_event_holds_the_policy_as_stored_and_folds_back_to_it() -> None:
    for policy in (ToolPolicy(), ToolPolicy("drop", True, True), ToolPolicy("", False, True), ToolPolicy("off")):
        text = policy_json(policy)
        payload = settings_payload(tool_policy=text)
        assert check_event_payload("session_settings", json.loads(payload)) is None
        assert fold_settings("s", [("session_settings", payload)]).tool_policy == text


def test_settings_events_fold_to_the_last_values_and_own_deltas() -> None:
    events = [
        ("session_settings", settings_payload(labels={"a": "1"}, tool_policy=policy_json(ToolPolicy("off")))),
        ("state", state_payload(StateDelta("", '{"x":1,"y":2}'))),
        ("state", state_payload(StateDelta("app:z", '{"x":99}'))),  # a shared scope: not this session's
        ("session_settings", settings_payload(labels={"b": "2"}, forked_from="src", forked_at_position=7)),
        ("state", state_payload(StateDelta("", '{"y":null}'))),
    ]
    fold = fold_settings("s", events)
    assert (fold.state, fold.labels, fold.tool_policy, fold.forked_from, fold.forked_at_position) == (
        '{"x":1}',
        {"b": "2"},
        policy_json(ToolPolicy("off")),
        "src",
        7,
    )
    assert fold_settings("s", []).state == "{}"
    for event_type, text in events:
        assert check_event_payload(event_type, json.loads(text)) is None


def test_bad_event_payloads_are_named() -> None:
    assert "delta" in str(check_event_payload("state", {"scope": "", "delta": 1}))
    assert "scope" in str(check_event_payload("state", {"scope": 1, "delta": {}}))
    assert "unknown keys" in str(check_event_payload("session_settings", {"x": 1}))
    assert "repair" in str(check_event_payload("session_settings", {"tool_policy": {"repair": "x"}}))
    assert "flags" in str(check_event_payload("session_settings", {"tool_policy": {"allow_orphan_results": 1}}))
    assert "forked" in str(check_event_payload("session_settings", {"forked_from": "s", "forked_at_position": -1}))
    assert check_event_payload("user_message", {"anything": 1}) is None


def test_requests_name_the_field_they_refuse() -> None:
    base = {"workdir": "", "state": "", "labels": {}, "tool_policy": "{}", "request_id": "", "trace_id": "t"}
    with pytest.raises(InvalidRequestError) as state:
        prepare_create("s", **{**base, "state": "[1]"})
    assert state.value.message.startswith("state: ")
    with pytest.raises(InvalidRequestError) as workdir:
        prepare_create("s", **{**base, "workdir": "relative"})
    assert workdir.value.reason == Reason.INVALID_WORKDIR
    with pytest.raises(InvalidRequestError) as source:
        prepare_fork("../x", "s", up_to_position=0, workdir="", labels=None, request_id="", trace_id="t")
    assert source.value.message.startswith("source_session_id: ")
    with pytest.raises(InvalidRequestError) as upto:
        prepare_fork("a", "b", up_to_position=-1, workdir="", labels=None, request_id="", trace_id="t")
    assert "up_to_position" in upto.value.message
    update = {"state_deltas": [], "set_labels": {}, "tool_policy": None, "request_id": "", "trace_id": "t"}
    with pytest.raises(InvalidRequestError) as both:
        prepare_update("s", **{**update, "set_labels": {"a": "1"}}, remove_labels=["a"], expected_last_position=0)
    assert both.value.message.startswith("remove_labels: ")
    with pytest.raises(InvalidRequestError) as key:
        prepare_update("s", **update, remove_labels=["bad key"], expected_last_position=0)
    assert key.value.message.startswith("remove_labels['bad key']")
    with pytest.raises(InvalidRequestError) as expected:
        prepare_update("s", **update, remove_labels=[], expected_last_position=-2)
    assert "expected_last_position" in expected.value.message
    with pytest.raises(InvalidRequestError) as none:
        check_scopes([])
    assert none.value.message.startswith("scopes: ")
    with pytest.raises(InvalidRequestError) as empty:
        check_scopes(["a", ""])
    assert empty.value.message.startswith("scopes[1]: ")
    assert check_scopes([], required=False) == []


def test_fingerprints_tell_requests_apart() -> None:
    base = {"workdir": "", "labels": {}, "tool_policy": "{}", "request_id": "r", "trace_id": "t"}
    a = prepare_create("s", state='{"a":1}', **base)
    assert a.fingerprint == prepare_create("s", state='{ "a" : 1 }', **{**base, "trace_id": "other"}).fingerprint
    assert a.fingerprint != prepare_create("s", state='{"a":2}', **base).fingerprint
    assert a.fingerprint != prepare_create("s", state='{"a":1}', **{**base, "labels": {"k": "v"}}).fingerprint


@given(
    st.lists(
        st.dictionaries(
            st.sampled_from("abcde"),
            st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2)),
            max_size=4,
        ),
        max_size=12,
    )
)
def test_folding_deltas_as_stored_equals_applying_them_to_a_dict(deltas: list[dict[str, object]]) -> None:
    model: dict[str, object] = {}
    stored = "{}"
    for d in deltas:
        model = {**{k: v for k, v in model.items() if k not in d}, **{k: v for k, v in d.items() if v is not None}}
        stored = state_after(stored, parse_delta(json.dumps(d), "d"), "d")
    assert json.loads(stored) == model
    events = [("state", state_payload(StateDelta("", parse_delta(json.dumps(d), "d")))) for d in deltas]
    assert fold_settings("s", events).state == stored
