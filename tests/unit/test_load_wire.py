"""Load's hand-encoded entries (entry_wire.py, rpc/wire.py) and items (rpc/loading.py) are the bytes protobuf writes
for the same message."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import AsyncGenerator

import pytest

from claw_sessiond.entry_wire import ROLE_NUMBERS, encode_entry, encode_stored, splice, varint
from claw_sessiond.events import encode_message, message_from_payload, reply_entry
from claw_sessiond.model import Message, ToolCall, UsageDelta
from claw_sessiond.rpc.convert import message_pb
from claw_sessiond.rpc.loading import _elements, item_chunks
from claw_sessiond.rpc.wire import DONE_FIELD, message_entry
from claw_sessiond.storage.port import entry_columns
from claw_sessiond.validate import prepare_append
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
_CALLS = [
    Message("assistant", "", (ToolCall("c1", "ls", "{}", pending=True),), position=7),
    Message(
        "assistant",
        "two",
        (ToolCall("c1", "ls", "{}"), ToolCall("c2", "", "not json", arguments_not_json=True), ToolCall("", "", "")),
        position=7,
        created_at=_TIMES[0],
    ),
    Message("assistant", "u", usage=UsageDelta(input_tokens=3), position=8),
    Message("assistant", "", usage=UsageDelta(), position=8),
    Message(
        "assistant",
        "all",
        usage=UsageDelta(1, 2**33, 3, 4, -5, "USD", "m1", "2026-01"),
        position=8,
        metadata="{}",
    ),
    Message("tool", "interrupted", tool_call_id="c1", synthetic_reason="interrupted", position=9),
    Message("tool", "other reason", tool_call_id="c1", synthetic_reason="later", position=9),
]
#: Encoded by protobuf itself (entry_wire gives None).
_OTHER = [
    Message("user", "odd time", position=10, created_at="2026-12-03T17:45:24Z"),
    Message("user", "bad \ud800 text", position=11),
]


@pytest.mark.parametrize("message", _PLAIN + _CALLS)
def test_an_entry_is_what_protobuf_writes(message: Message) -> None:
    want = pb.LoadResponse(messages=[message_pb(message)]).SerializeToString()
    assert message_entry(message) == want
    assert encode_entry(message) == message_pb(message).SerializeToString()
    assert pb.LoadResponse.FromString(message_entry(message)).messages[0] == message_pb(message)


@pytest.mark.parametrize("message", _PLAIN + _CALLS)
def test_a_stored_form_holds_everything_but_the_item(message: Message) -> None:
    """Schema 7: an entry with an item is stored less its item's bytes (the row's item column holds them); put
    back in at the offset stored with it, they give the whole form, byte for byte."""
    form = encode_stored(message)
    assert form is not None
    data, at = form
    whole = encode_entry(message)
    assert whole is not None and splice(form, message.item) == whole
    if message.format and message.item:
        assert at is not None and len(data) == len(whole) - len(message.item)
        assert whole[at : at + len(message.item)] == message.item
        assert message.item not in data
    else:
        assert (data, at) == (whole, None)  # nothing left out: the form is whole, as before schema 7


def test_a_whole_form_is_spliced_as_it_is() -> None:
    """A form stored whole (no item, or a row of schema 5 or 6) is never touched, whatever the row's item."""
    assert splice((b"\x08\x02", None), b"item") == b"\x08\x02"
    assert splice((b"ab", 1), b"XY") == b"aXYb" and splice((b"ab", 2), b"XY") == b"abXY"


def test_what_the_hand_encoding_leaves_to_protobuf() -> None:
    odd_time, bad_text = _OTHER
    assert encode_entry(odd_time) is None and encode_entry(bad_text) is None
    assert encode_stored(odd_time) is None and encode_stored(bad_text) is None
    want = pb.LoadResponse(messages=[message_pb(odd_time)]).SerializeToString()
    assert message_entry(odd_time) == want
    with pytest.raises(UnicodeEncodeError):  # protobuf refuses it too, as before the hand encoding
        message_entry(bad_text)


def test_a_stored_encoded_form_is_sent_as_it_is_and_never_compared() -> None:
    message = _PLAIN[0]
    stored = dataclasses.replace(message, encoded=encode_entry(message))
    assert stored == message and message_entry(stored) == message_entry(message)
    marked = dataclasses.replace(message, encoded=b"\x08\x05")
    assert message_entry(marked) == b"\x22\x02\x08\x05"  # the stored bytes, not a new encoding


@pytest.mark.parametrize(
    "value",
    [1, 127, 128, 129, 255, 300, 16383, 16384, 16385, 2**21 - 1, 2**21, 2**40, 2**63 - 1, -1, -128, -(2**63)],
)
def test_a_varint_is_what_protobuf_writes(value: int) -> None:
    """Each width's edges (one byte, the two-byte shortcut, the loop) and negatives (ten bytes)."""
    assert b"\x38" + varint(value) == pb.Message(position=value).SerializeToString()
    assert varint(0) == b"\x00"  # (protobuf leaves a zero field out: compared here on its own)


def test_the_role_numbers_are_the_protos() -> None:
    assert {name.removeprefix("ROLE_").lower(): n for name, n in pb.Role.items() if n} == ROLE_NUMBERS


def test_a_chunk_of_concatenated_entries_parses_whole() -> None:
    head = pb.LoadResponse(trace_id="t", complete=True, start_position=1)
    head.session.id = "s"
    data = (
        head.SerializeToString()
        + b"".join(message_entry(m) for m in itertools.chain(_PLAIN, _CALLS, _OTHER[:1]))
        + DONE_FIELD
    )
    got = pb.LoadResponse.FromString(data)
    assert got.done and got.session.id == "s" and got.trace_id == "t" and got.start_position == 1
    assert list(got.messages) == [message_pb(m) for m in itertools.chain(_PLAIN, _CALLS, _OTHER[:1])]


@pytest.mark.parametrize(
    ("event_type", "role"), [("system_message", "system"), ("user_message", "user"), ("other_entry", "other")]
)
def test_a_reply_entry_sent_as_stored_is_its_form_with_role_and_position(event_type: str, role: str) -> None:
    form = encode_entry(Message(role, "hi", position=4))
    got = reply_entry(4, event_type, "tr", _TIMES[0], None, None, None, form)
    assert got == Message(role, position=4, created_at=_TIMES[0], trace_id="tr") and got.encoded == form


def test_a_reply_entry_with_calls_or_without_a_form_is_decoded_whole() -> None:
    call = Message("assistant", "x", (ToolCall("c1", "ls", "{}"),), position=3)
    for event_type, message, form in (
        ("assistant_message", call, encode_entry(call)),
        ("tool_result", Message("tool", "out", tool_call_id="c1", position=5), b"\x08\x04"),
        ("user_message", Message("user", "no form", position=6), None),
    ):
        payload = encode_message(message)
        got = reply_entry(message.position, event_type, "", "", payload, None, None, form)
        assert got == message_from_payload(message.position, event_type, "", "", payload) and got.encoded == form


#: Requests of every shape an append stores (validated by ``prepare_append``, as the writer receives them).
_APPENDED = [
    Message("user", "hello"),
    Message("user", "an item", format="openai.responses", item=b'{"role":"user","content":"an item"}'),
    Message("other", format="x", item=b"\x00" * 200),
    Message("assistant", "", format="openai.responses", item=b"{}"),
    Message("user", "é" * 300 + "\U0001f600", client_id="c-1", metadata='{"a": [1]}'),
    Message("system", ""),
    Message("assistant", "x" * 5000, name="bot", usage=UsageDelta(1, 2**33, 3, 4, 5, "USD", "m1", "2026-01")),
    Message("assistant", "", usage=UsageDelta()),
    Message(
        "assistant",
        "calls",
        (ToolCall("c1", "ls", "{}", pending=True), ToolCall("c2", "sh", "not json"), ToolCall("", "x", "")),
    ),
    Message("tool", "out", tool_call_id="c1", name="ls", cancelled=True),
    Message("other", format="openai.responses", item=b"\x00\xff" * 100, client_id="c-2"),
    Message("user", "bad \ud800 text"),
]


@pytest.mark.parametrize("position", [1, 127, 128, 2**40])
@pytest.mark.parametrize("ts", [_TIMES[0], _TIMES[1], "2026-12-03T17:45:24Z"])
def test_an_appended_entry_is_encoded_as_a_load_reads_it_back(position: int, ts: str) -> None:
    """The stored reply form made from the validated message (``entry_columns``' path for an append) is
    the form of the entry read back from its row, byte for byte (None where that is None), and with the
    row's item put back in, the whole form a Load sends."""
    job = prepare_append(
        "s",
        _APPENDED,
        expected_last_position=0,
        request_id="",
        workdir="",
        run_id="",
        trace_id="tr-1",
        max_message_bytes=1 << 20,
        max_batch_messages=100,
    )
    for prepared in job.messages:
        fmt, item, fast, at = entry_columns((position, prepared, prepared.payload), "tr-1", ts)
        row = message_from_payload(position, prepared.event_type, "tr-1", ts, prepared.payload, fmt, item)
        whole = encode_entry(row)
        if fast is None:
            assert whole is None and at is None
        else:
            assert (fast, at) == encode_stored(row) and splice((fast, at), item or b"") == whole
            assert (at is None) == (not item)  # an item is always left out of the stored form
        copy = (position, prepared, str(prepared.payload + " ")[:-1])  # a payload the write replaced: the row's way
        assert entry_columns(copy, "tr-1", ts)[2:] == (fast, at)


@pytest.mark.parametrize(
    "sizes",
    [
        [0, 1, 127, 128, 200, 4095],  # every head from the table
        [276, 4096, 16383, 16384, 3 * 1024 * 1024],  # a page with one too long for it: each head made
        [300],  # one item
        [],
    ],
)
def test_a_page_of_items_is_what_protobuf_writes(sizes: list[int]) -> None:
    """Load's items alone (``rpc/loading.py``): each item's head (tag, varint length) and bytes, as protobuf
    writes ``LoadResponse.items``; and a reply's chunks parse into the header, every item in order, and done."""
    items = [bytes([n % 251]) * n for n in sizes]
    elements, size = _elements(items)
    assert b"".join(elements) == pb.LoadResponse(items=items).SerializeToString()
    assert size == len(b"".join(elements))

    async def pages() -> AsyncGenerator[tuple[list[bytes], bool], None]:
        yield items, False
        yield items[::-1], True

    async def chunks() -> list[bytes]:
        return [c async for c in item_chunks(pb.LoadResponse(trace_id="t", complete=True), pages())]

    got = pb.LoadResponse()
    for chunk in asyncio.run(chunks()):
        got.MergeFromString(chunk)
    assert got == pb.LoadResponse(trace_id="t", complete=True, items=items + items[::-1], done=True)
