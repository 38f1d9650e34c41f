"""The client's Load conversion: built slot by slot, equal to the public constructor's result."""

from __future__ import annotations

import datetime as dt

import pytest

from claw_sessiond_client import errors as E
from claw_sessiond_client._responses import LoadAssembly, load_result_of, message_of
from claw_sessiond_client._types import EntryUsage, Message, ToolCall
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb


def _full() -> pb.Message:
    m = pb.Message(
        role=pb.ROLE_ASSISTANT,
        content="héllo",
        tool_call_id="",
        name="n",
        position=42,
        trace_id="t" * 32,
        format="openai.responses",
        item=b"\x00\x01",
        client_id="c-1",
        metadata='{"k": 1}',
        cancelled=False,
        orphan=True,
        supersedes=7,
    )
    m.tool_calls.add(id="call-1", name="ls", arguments="{}", pending=True)
    m.created_at.seconds = 1_764_000_000
    m.created_at.nanos = 123_456_789
    m.usage.input_tokens = 3
    m.usage.currency = "USD"
    m.usage.cost_micros = 5
    return m


def test_message_of_equals_the_constructed_message() -> None:
    got = message_of(_full())
    want = Message(
        "assistant",
        "héllo",
        (ToolCall("call-1", "ls", "{}", pending=True),),
        "",
        "n",
        "",
        42,
        dt.datetime(2025, 11, 24, 16, 0, 0, 123_456, tzinfo=dt.UTC),
        "t" * 32,
        "openai.responses",
        b"\x00\x01",
        "c-1",
        '{"k": 1}',
        EntryUsage(input_tokens=3, cost_micros=5, currency="USD"),
        False,
    )
    object.__setattr__(want, "orphan", True)
    object.__setattr__(want, "supersedes", 7)
    assert got == want
    assert got.created_at == _full().created_at.ToDatetime(tzinfo=dt.UTC)
    assert got.created_at is not None and got.created_at.tzinfo is dt.UTC


def test_message_of_a_bare_message_has_the_defaults() -> None:
    got = message_of(pb.Message(role=pb.ROLE_USER, content="hi", position=1))
    assert got == Message.user("hi", position=1)
    assert got.created_at is None and got.usage is None and got.tool_calls == ()


def test_message_of_an_interrupted_repair() -> None:
    m = pb.Message(role=pb.ROLE_TOOL, content="x", tool_call_id="c", position=3)
    m.synthetic.reason = pb.SYNTHETIC_REASON_INTERRUPTED
    got = message_of(m)
    assert got.synthetic and got.synthetic_reason == "interrupted"


def test_chunks_are_assembled_in_order() -> None:
    first = pb.LoadResponse(trace_id="tr", complete=True, start_position=1)
    first.session.id = "s"
    first.messages.add(role=pb.ROLE_USER, content="a", position=1)
    second = pb.LoadResponse(done=True)
    second.messages.add(role=pb.ROLE_USER, content="b", position=2)
    result = load_result_of(iter([first, second]))
    assert [m.content for m in result.messages] == ["a", "b"]
    assert result.trace_id == "tr" and result.session.id == "s" and result.start_position == 1


@pytest.mark.parametrize("chunks", [[], [pb.LoadResponse()]])
def test_a_stream_without_its_last_chunk_is_an_internal_error(chunks: list[pb.LoadResponse]) -> None:
    with pytest.raises(E.InternalError):
        load_result_of(chunks)
    assembly = LoadAssembly()
    for c in chunks:
        assembly.add(c)
    with pytest.raises(E.InternalError):
        assembly.result()
