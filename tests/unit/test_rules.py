"""The write rules (``rules.py``) without a database: each decision, its error and its edge cases.

Every backend's transaction code calls these rules; here they are checked on
their own, against small reference definitions written from SPEC (§3 positions
and CAS, §4 tool calls, request ids, usage, import), with hypothesis where the
input space is wide.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond import rules
from claw_sessiond.bounds import MAX_POSITION
from claw_sessiond.errors import (
    InvalidRequestError,
    PreconditionError,
    Reason,
    SequenceConflictError,
    ToolCallStateError,
)
from claw_sessiond.events import encode_message, encode_repair, encode_usage
from claw_sessiond.export import ImportedEvent
from claw_sessiond.model import (
    AppendResult,
    ClearResult,
    EventResult,
    Message,
    PreparedMessage,
    ToolCall,
    Usage,
    UsageDelta,
    UsageResult,
)

# ---------------------------------------------------------------- expected position


@given(st.integers(-1, 50), st.integers(0, 50))
def test_the_expected_position_check_passes_exactly_when_spec_says(expected: int, actual: int) -> None:
    passes = expected == 0 or (expected == -1 and actual == 0) or expected == actual
    if passes:
        rules.check_expected(expected, actual)
        return
    with pytest.raises(SequenceConflictError) as caught:
        rules.check_expected(expected, actual)
    want = 0 if expected == -1 else expected
    assert caught.value.reason == Reason.SEQUENCE_CONFLICT
    assert caught.value.metadata == {"expected": str(want), "actual": str(actual)}


# ---------------------------------------------------------------- request ids


def test_a_request_without_id_or_record_is_new() -> None:
    stored = rules.StoredRequest("append", "fp", "{}")
    assert rules.replay_record("", "append", "fp", stored) is None
    assert rules.replay_record("r1", "append", "fp", None) is None


def test_the_same_id_and_content_replays_the_first_result() -> None:
    stored = rules.StoredRequest("append", "fp", '{"first": 1}')
    assert rules.replay_record("r1", "append", "fp", stored) == '{"first": 1}'


@pytest.mark.parametrize(("kind", "fp"), [("append", "other"), ("clear", "fp"), ("usage", "other")])
def test_the_same_id_with_other_content_or_kind_is_refused(kind: str, fp: str) -> None:
    stored = rules.StoredRequest("append", "fp", "{}")
    with pytest.raises(InvalidRequestError) as caught:
        rules.replay_record("r1", kind, fp, stored)
    assert caught.value.reason == Reason.REQUEST_ID_REUSED
    assert caught.value.metadata == {"request_id": "r1"}
    assert "different append request" in caught.value.message


def test_a_record_stored_in_the_earlier_form_replays_and_the_earlier_form_is_computed_only_then() -> None:
    asked: list[str] = []

    def earlier() -> str:
        asked.append("earlier")
        return "old-fp"

    today = rules.StoredRequest("append", "v2:fp", '{"first": 1}')
    assert rules.replay_record("r1", "append", "v2:fp", today, earlier) == '{"first": 1}'
    assert asked == []  # a record of today's form: nothing else is hashed
    before = rules.StoredRequest("append", "old-fp", '{"first": 2}')
    assert rules.replay_record("r1", "append", "v2:fp", before, earlier) == '{"first": 2}'
    assert asked == ["earlier"]
    for stored in (rules.StoredRequest("append", "other", "{}"), rules.StoredRequest("clear", "old-fp", "{}")):
        with pytest.raises(InvalidRequestError) as caught:
            rules.replay_record("r1", "append", "v2:fp", stored, earlier)
        assert caught.value.reason == Reason.REQUEST_ID_REUSED


def test_result_records_are_spelled_as_stored_and_replay_as_replayed() -> None:
    append = AppendResult(3, 5, "2026-01-01T00:00:00.000000Z", "t1")
    assert rules.result_record(append) == '{"first": 3, "last": 5, "at": "2026-01-01T00:00:00.000000Z", "trace": "t1"}'
    replayed = AppendResult(3, 5, "2026-01-01T00:00:00.000000Z", "t1", replayed=True)
    assert rules.append_from_record(rules.result_record(append)) == replayed
    usage = UsageResult(Usage(1, 2, 3, 4, 5, "USD"), "t2")
    assert rules.result_record(usage) == (
        '{"usage": {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 3, "cache_write_tokens": 4, '
        '"cost_micros": 5, "currency": "USD"}, "trace": "t2"}'
    )
    assert rules.usage_from_record(rules.result_record(usage)) == UsageResult(usage.usage, "t2", replayed=True)
    clear = ClearResult(9, "t3")
    assert rules.result_record(clear) == '{"position": 9, "trace": "t3"}'
    assert rules.clear_from_record(rules.result_record(clear)) == ClearResult(9, "t3", replayed=True)
    event = EventResult(42, "t4")
    assert rules.result_record(event) == '{"event_id": 42, "trace": "t4"}'
    assert rules.event_from_record(rules.result_record(event)) == EventResult(42, "t4", replayed=True)


# ---------------------------------------------------------------- tool calls


def test_a_tool_result_for_an_unknown_call_is_refused() -> None:
    with pytest.raises(ToolCallStateError) as caught:
        rules.admit_tool_result("c1", False, None)
    assert caught.value.reason == Reason.UNKNOWN_TOOL_CALL


def test_a_second_result_for_a_call_is_refused_naming_the_first() -> None:
    with pytest.raises(ToolCallStateError) as caught:
        rules.admit_tool_result("c1", True, 7)
    assert caught.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
    assert caught.value.metadata == {"tool_call_id": "c1", "result_position": "7"}


def test_a_result_for_an_open_call_is_admitted() -> None:
    rules.admit_tool_result("c1", True, None)


def test_a_call_id_already_in_the_visible_history_is_refused() -> None:
    rules.check_call_inserted("c1", True)
    with pytest.raises(InvalidRequestError) as caught:
        rules.check_call_inserted("c1", False)
    assert caught.value.reason == Reason.DUPLICATE_TOOL_CALL_ID


@given(st.integers(0, 300), st.integers(0, 200))
def test_the_open_call_limit(open_calls: int, limit: int) -> None:
    if limit == 0 or open_calls <= limit:
        rules.check_open_calls(open_calls, limit, "s")
        rules.check_imported_open_calls(open_calls, limit, "s")
        return
    with pytest.raises(PreconditionError) as caught:
        rules.check_open_calls(open_calls, limit, "s")
    assert caught.value.reason == Reason.TOO_MANY_OPEN_CALLS
    with pytest.raises(InvalidRequestError) as imported:
        rules.check_imported_open_calls(open_calls, limit, "s")
    assert imported.value.reason == Reason.INVALID_IMPORT


def test_only_an_append_with_calls_can_raise_the_open_call_count() -> None:
    def prepared(msg: Message) -> PreparedMessage:
        return PreparedMessage(msg, "x", encode_message(msg))

    plain = [prepared(Message("user", "hi")), prepared(Message("tool", "r", tool_call_id="c0"))]
    assert not rules.makes_calls(plain)
    assert rules.makes_calls([*plain, prepared(Message("assistant", tool_calls=(ToolCall("c1", "f", "{}"),)))])


# ---------------------------------------------------------------- usage

_count = st.integers(0, 2**62)
_currency = st.sampled_from(["", "USD", "EUR"])


@st.composite
def usages(draw: st.DrawFn) -> Usage:
    counts = [draw(_count) for _ in range(5)]
    return Usage(*counts, currency=draw(_currency) if counts[4] else "")


@st.composite
def deltas(draw: st.DrawFn) -> UsageDelta:
    return UsageDelta(*(draw(_count) for _ in range(5)), currency=draw(_currency), model="m")


@given(usages(), deltas())
def test_usage_adds_up_in_one_currency_within_64_bits(old: Usage, delta: UsageDelta) -> None:
    mismatch = bool(delta.cost_micros and old.currency and delta.currency != old.currency)
    names = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros")
    sums = [getattr(old, n) + getattr(delta, n) for n in names]
    if mismatch:
        with pytest.raises(PreconditionError) as caught:
            rules.add_usage(old, delta, "s")
        assert caught.value.reason == Reason.CURRENCY_MISMATCH
        return
    if max(sums) > 2**63 - 1:
        with pytest.raises(InvalidRequestError) as over:
            rules.add_usage(old, delta, "s")
        assert over.value.reason == Reason.INVALID_USAGE
        return
    new = rules.add_usage(old, delta, "s")
    assert [getattr(new, n) for n in names] == sums
    assert new.currency == (old.currency or (delta.currency if delta.cost_micros else ""))


def test_usage_without_cost_charges_no_currency() -> None:
    assert rules.charged_currency(UsageDelta(input_tokens=5, currency="USD")) == ""
    assert rules.charged_currency(UsageDelta(cost_micros=1, currency="USD")) == "USD"
    # Tokens without cost never fix the session's currency, so a later cost in any currency is accepted.
    after_tokens = rules.add_usage(Usage(), UsageDelta(input_tokens=5, currency="USD"), "s")
    assert after_tokens.currency == ""
    assert rules.add_usage(after_tokens, UsageDelta(cost_micros=3, currency="EUR"), "s").currency == "EUR"


def test_usage_at_the_64_bit_edge() -> None:
    edge = Usage(input_tokens=2**63 - 2)
    assert rules.add_usage(edge, UsageDelta(input_tokens=1), "s").input_tokens == 2**63 - 1
    with pytest.raises(InvalidRequestError):
        rules.add_usage(edge, UsageDelta(input_tokens=2), "s")


# ---------------------------------------------------------------- import


def test_an_import_onto_a_stored_session_is_refused_only_in_mode_refuse() -> None:
    rules.check_import_mode("s", False, "refuse")
    rules.check_import_mode("s", True, "replace")
    rules.check_import_mode("s", True, "merge")
    with pytest.raises(PreconditionError) as caught:
        rules.check_import_mode("s", True, "refuse")
    assert caught.value.reason == Reason.SESSION_EXISTS


def _event(position: int | None, event_type: str, payload: str, ts: str = "t") -> ImportedEvent:
    return ImportedEvent(position, event_type, ts, "trace", 1, payload)


def test_a_merge_skips_stored_events_and_appends_the_rest_after_the_history() -> None:
    stored_payload = '{"role": "user", "content": "one"}'  # stored spelling; the import's is canonical
    stored = {rules.stored_event_key("user_message", "t", "trace", stored_payload)}
    imported = [
        _event(1, "user_message", '{"content":"one","role":"user"}'),
        _event(2, "user_message", '{"content":"two","role":"user"}'),
        _event(None, "usage", '{"input_tokens":1}'),
    ]
    kept, offset = rules.merge_events(stored, imported, last_position=5)
    assert kept == imported[1:]
    assert offset == 4  # the first kept position (2) lands at 6, right after the stored 5
    # Nothing with a position to move, or positions already beyond the history: no shift down.
    assert rules.merge_events(set(), imported[2:], 5) == (imported[2:], 5)
    assert rules.merge_events(set(), [_event(9, "user_message", "{}")], 3)[1] == 0


def _assistant(*calls: str) -> str:
    return encode_message(Message("assistant", tool_calls=tuple(ToolCall(c, "f", "{}") for c in calls)))


def _result(call: str) -> str:
    return encode_message(Message("tool", "ok", tool_call_id=call))


def test_the_fold_rebuilds_positions_calls_and_usage() -> None:
    fold = rules.fold_events(
        "s",
        [
            (1, "user_message", encode_message(Message("user", "hi"))),
            (2, "assistant_message", _assistant("a", "b")),
            (3, "tool_result", _result("a")),
            (None, "usage", encode_usage(UsageDelta(1, 2, 0, 0, 10, "USD", "m1", "v"))),
            (None, "usage", encode_usage(UsageDelta(3, 0, 0, 0, 0, "EUR", "m2", "v"))),
            (None, "permission_denial", '{"tool":"rm"}'),
            (4, "repair", encode_repair("b", "f")),
        ],
    )
    assert (fold.last_position, fold.clear_position, fold.message_count) == (4, 0, 4)
    assert fold.calls == {"a": rules.CallEntry(2, 0, 3), "b": rules.CallEntry(2, 1, 4)}
    assert fold.usage == Usage(4, 2, 0, 0, 10, "USD")  # EUR without a cost charges nothing
    assert fold.by_model == {("m1", "v"): Usage(1, 2, 0, 0, 10, "USD"), ("m2", "v"): Usage(3, 0, 0, 0, 0, "")}


def test_a_clear_in_the_fold_empties_the_visible_history_and_keeps_usage() -> None:
    fold = rules.fold_events(
        "s",
        [
            (1, "assistant_message", _assistant("a")),
            (None, "usage", encode_usage(UsageDelta(input_tokens=7))),
            (2, "clear", "{}"),
            (3, "assistant_message", _assistant("a")),  # the same call id again: the clear dropped the first
        ],
    )
    assert (fold.last_position, fold.clear_position, fold.message_count) == (3, 2, 1)
    assert fold.calls == {"a": rules.CallEntry(3, 0)}
    assert fold.usage.input_tokens == 7


@pytest.mark.parametrize(
    ("rows", "why"),
    [
        ([(1, "assistant_message", _assistant("a", "a"))], "duplicate tool call id 'a'"),
        ([(1, "tool_result", _result("x"))], "answers unknown tool call 'x'"),
        (
            [(1, "assistant_message", _assistant("a")), (2, "tool_result", _result("a")), (3, "repair", _result("a"))],
            "tool call 'a' has two results",
        ),
        (
            [
                (None, "usage", encode_usage(UsageDelta(cost_micros=1, currency="USD"))),
                (None, "usage", encode_usage(UsageDelta(cost_micros=1, currency="EUR"))),
            ],
            "usage is recorded in USD and EUR",
        ),
        (
            [(None, "usage", encode_usage(UsageDelta(output_tokens=2**62)))] * 2,
            "usage totals overflow a 64-bit integer",
        ),
        ([(MAX_POSITION + 1, "user_message", encode_message(Message("user")))], "above the highest allowed"),
    ],
)
def test_the_fold_refuses_an_inconsistent_history(rows: list[tuple[int | None, str, str]], why: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        rules.fold_events("s", rows)
    assert caught.value.reason == Reason.INVALID_IMPORT
    assert why in caught.value.message and caught.value.message.startswith("import of 's': ")


@given(st.lists(st.sampled_from(["call", "answer", "user", "clear", "usage"]), max_size=40))
def test_the_fold_agrees_with_a_replay_of_the_history(steps: list[str]) -> None:
    """Build a consistent history step by step, keeping the expected state by hand; the fold must agree."""
    rows: list[tuple[int | None, str, str]] = []
    position = clear = count = tokens = 0
    calls: dict[str, rules.CallEntry] = {}
    n = 0
    for step in steps:
        if step == "usage":
            rows.append((None, "usage", json.dumps({"input_tokens": 1})))
            tokens += 1
            continue
        position += 1
        if step == "clear":
            rows.append((position, "clear", "{}"))
            clear, count = position, 0
            calls.clear()
            continue
        count += 1
        open_ids = [c for c, e in calls.items() if e.result_position is None]
        if step == "answer" and open_ids:
            rows.append((position, "tool_result", _result(open_ids[0])))
            calls[open_ids[0]].result_position = position
        elif step == "call":
            n += 1
            rows.append((position, "assistant_message", _assistant(f"c{n}")))
            calls[f"c{n}"] = rules.CallEntry(position, 0)
        else:
            rows.append((position, "user_message", encode_message(Message("user", "x"))))
    fold = rules.fold_events("s", rows)
    assert (fold.last_position, fold.clear_position, fold.message_count) == (position, clear, count)
    assert fold.calls == calls
    assert fold.usage.input_tokens == tokens
