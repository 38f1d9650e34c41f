"""Load's hand-encoded entries (rpc/wire.py) are the bytes protobuf writes for the same message."""

from __future__ import annotations

import itertools

import pytest

from claw_sessiond.model import Message, ToolCall, UsageDelta
from claw_sessiond.rpc.convert import message_pb
from claw_sessiond.rpc.wire import DONE_FIELD, message_entry
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

_TIMES = ("2026-12-03T17:45:24.123456Z", "2026-12-03T17:45:24.000000Z", "1970-01-01T00:00:00.000000Z", "")

_PLAIN = [
    Message("user", "hello", position=1, created_at=t, trace_id="0af7651916cd43dd8448eb211c80319c") for t in _TIMES
] + [
    Message("user", "é" * 300 + "\U0001f600", position=2**40),
    Message("system", "", position=127),
    Message("assistant", "x" * 200_000, position=128, name="bot"),
    Message("tool", "out", tool_call_id="call-1", name="ls", position=3, cancelled=True),
    Message("tool", "late", tool_call_id="call-2", position=9, orphan=True, supersedes=7),
    Message("other", format="openai.responses", item=b"\x00\xff" * 100, position=4, client_id="c", metadata='{"a":1}'),
    Message("other", format="x", item=b"", position=5),
    Message("unknown-role", "?", position=6),
]
_OTHER = [
    Message("assistant", "", (ToolCall("c1", "ls", "{}", pending=True),), position=7),
    Message("assistant", "u", usage=UsageDelta(input_tokens=3), position=8),
    Message("tool", "interrupted", tool_call_id="c1", synthetic_reason="interrupted", position=9),
    Message("user", "odd time", position=10, created_at="2026-12-03T17:45:24Z"),
]


@pytest.mark.parametrize("message", _PLAIN + _OTHER)
def test_an_entry_is_what_protobuf_writes(message: Message) -> None:
    want = pb.LoadResponse(messages=[message_pb(message)]).SerializeToString()
    assert message_entry(message) == want
    assert pb.LoadResponse.FromString(message_entry(message)).messages[0] == message_pb(message)


def test_a_chunk_of_concatenated_entries_parses_whole() -> None:
    head = pb.LoadResponse(trace_id="t", complete=True, start_position=1)
    head.session.id = "s"
    data = head.SerializeToString() + b"".join(message_entry(m) for m in itertools.chain(_PLAIN, _OTHER)) + DONE_FIELD
    got = pb.LoadResponse.FromString(data)
    assert got.done and got.session.id == "s" and got.trace_id == "t" and got.start_position == 1
    assert list(got.messages) == [message_pb(m) for m in itertools.chain(_PLAIN, _OTHER)]
