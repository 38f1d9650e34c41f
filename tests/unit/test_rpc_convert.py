"""Conversion between proto and model (``rpc/convert.py``), without a server."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond.errors import InvalidRequestError, Reason
from claw_sessiond.events import request_message
from claw_sessiond.model import Message, ToolCall, UsageDelta
from claw_sessiond.rpc.convert import (
    event_kind_of,
    fill_message_pb,
    import_mode_of,
    message_from_pb,
    message_pb,
    role_filter_of,
    role_pb,
    set_timestamp,
    time_bound,
    timestamp,
)
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

_TIMES = st.datetimes(min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(9999, 12, 31))


@given(_TIMES)
def test_the_fast_timestamp_path_agrees_with_protobufs_parser(when: dt.datetime) -> None:
    text = when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # the shape now_rfc3339 writes: 27 characters
    assert len(text) == 27
    fast, slow = Timestamp(), Timestamp()
    set_timestamp(fast, text)
    slow.FromJsonString(text)
    assert (fast.seconds, fast.nanos) == (slow.seconds, slow.nanos)


def test_other_timestamp_shapes_still_parse() -> None:
    ts = timestamp("2026-03-01T10:00:00+02:00")
    assert ts is not None and ts.ToJsonString() == "2026-03-01T08:00:00Z"
    assert timestamp("") is None and timestamp(None) is None


def test_a_message_survives_the_trip_through_proto() -> None:
    m = Message(
        role="assistant",
        content="hi",
        tool_calls=(ToolCall("c1", "ls", '{"path": "/"}'),),
        position=4,
        created_at="2026-03-01T10:00:00.123456Z",
        trace_id="t1",
        synthetic_reason="interrupted",
    )
    out = message_pb(m)
    assert out.role == pb.ROLE_ASSISTANT and out.position == 4 and out.trace_id == "t1"
    assert out.synthetic.reason == pb.SYNTHETIC_REASON_INTERRUPTED
    assert out.created_at.ToJsonString() == "2026-03-01T10:00:00.123456Z"
    back = message_from_pb(out)
    assert (back.role, back.content, back.tool_calls) == ("assistant", "hi", m.tool_calls)
    again = pb.Message()
    fill_message_pb(again, m)
    assert again == out


def test_unknown_enum_values_are_refused_with_their_reason() -> None:
    assert message_from_pb(pb.Message(role=99)).role == "unknown(99)"  # validation refuses it later
    assert role_pb("nobody") == pb.ROLE_UNSPECIFIED and role_pb("tool") == pb.ROLE_TOOL
    assert role_filter_of(pb.ROLE_UNSPECIFIED) == "" and role_filter_of(pb.ROLE_USER) == "user"
    with pytest.raises(InvalidRequestError, match="unknown role 99") as info:
        role_filter_of(99)  # type: ignore[arg-type]
    assert info.value.reason is Reason.INVALID_MESSAGE
    assert [import_mode_of(m) for m in (pb.IMPORT_MODE_UNSPECIFIED, pb.IMPORT_MODE_REPLACE, pb.IMPORT_MODE_MERGE)] == [
        "refuse",
        "replace",
        "merge",
    ]
    with pytest.raises(InvalidRequestError, match="unknown import mode 7") as info:
        import_mode_of(7)  # type: ignore[arg-type]
    assert info.value.reason is Reason.INVALID_IMPORT
    assert event_kind_of(pb.EVENT_KIND_ERROR) == "error"
    assert event_kind_of(pb.EVENT_KIND_PERMISSION_DENIAL) == "permission_denial"
    with pytest.raises(InvalidRequestError, match="kind must be") as info:
        event_kind_of(pb.EVENT_KIND_UNSPECIFIED)
    assert info.value.reason is Reason.INVALID_EVENT


def test_time_bounds_are_stored_time_text() -> None:
    request = pb.SearchRequest()
    assert time_bound(request, "since") == ""
    request.since.FromJsonString("2026-03-01T10:00:00.5Z")
    assert time_bound(request, "since") == "2026-03-01T10:00:00.500000Z"
    request.until.seconds = 10**15  # beyond year 9999
    with pytest.raises(InvalidRequestError, match="until is not a valid time") as info:
        time_bound(request, "until")
    assert info.value.reason is Reason.INVALID_MESSAGE


def test_now_rfc3339_is_the_clock_in_the_stored_shape() -> None:
    from claw_sessiond.model import now_rfc3339

    seen = set()
    deadline = time.monotonic() + 3
    while len(seen) < 2 and time.monotonic() < deadline:  # at least one change of second
        before = dt.datetime.now(dt.UTC)
        text = now_rfc3339()
        after = dt.datetime.now(dt.UTC)
        parsed = dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)
        assert parsed.strftime("%Y-%m-%dT%H:%M:%S.%fZ") == text and len(text) == 27
        assert before - dt.timedelta(microseconds=1) <= parsed <= after + dt.timedelta(microseconds=1)
        seen.add(text[:19])
        time.sleep(0.05)
    assert len(seen) >= 2, "the second never changed"


def test_a_request_message_is_the_message_with_those_fields_slot_for_slot() -> None:
    """``events.request_message`` sets slots by position: each field lands in its own slot, the rest are defaults."""
    calls = (ToolCall("c1", "ls", "{}", True),)
    usage = UsageDelta(input_tokens=1, model="m")
    fields = ("assistant", "text", calls, "", "nm", "openai.responses", b"\x00it", "k1", '{"a":1}', usage, True)
    built = request_message(*fields)
    assert built == Message(
        role="assistant",
        content="text",
        tool_calls=calls,
        name="nm",
        format="openai.responses",
        item=b"\x00it",
        client_id="k1",
        metadata='{"a":1}',
        usage=usage,
        cancelled=True,
    )
    assert built.encoded is None and built.position == 0 and not built.orphan and built.supersedes == 0
