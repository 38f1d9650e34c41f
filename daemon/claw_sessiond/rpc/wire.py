"""Load's reply as wire bytes: each entry encoded once, straight into the bytes of its chunk.

A Load of thousands of entries spent most of its server time building a
``pb.Message`` per entry, sizing it, and serializing the chunk again. Here a
plain entry (no tool calls, usage or synthetic mark: most of a history) is
encoded by hand into the bytes of one ``LoadResponse.messages`` element; any
other goes through :func:`~.convert.fill_message_pb` and protobuf itself.
A chunk is then the concatenation of such elements after its header fields,
which is a valid ``LoadResponse`` (protobuf merges fields in any order; a
repeated field's elements append). The encoding is the one protobuf writes
(fields in number order, proto3 defaults left out): the unit tests compare
the bytes.

Must never: change what a client reads (the bytes parse to what ``fill_message_pb`` builds).
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..model import Message
from .convert import fill_message_pb, role_pb

__all__ = ["DONE_FIELD", "message_entry"]

#: ``LoadResponse.done = true`` (field 5, varint 1).
DONE_FIELD: Final = b"\x28\x01"
#: ``LoadResponse.messages`` (field 4, length-delimited).
_MESSAGES_TAG: Final = b"\x22"
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_fromisoformat = dt.datetime.fromisoformat
_SMALL: Final = tuple(bytes([i]) for i in range(128))


def _varint(value: int) -> bytes:
    """Protobuf's base-128 varint (a negative int64 as its 64-bit two's complement, like protobuf)."""
    if 0 <= value < 128:
        return _SMALL[value]
    value &= 0xFFFF_FFFF_FFFF_FFFF
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _text(tag: bytes, value: str) -> bytes:
    data = value.encode()
    return tag + _varint(len(data)) + data


def _timestamp(value: str) -> bytes | None:
    """The ``created_at`` field (8) of RFC 3339 text in the daemon's own shape, else None (not ours)."""
    if len(value) != 27 or value[-1] != "Z":
        return None
    try:
        delta = _fromisoformat(value) - _EPOCH
    except ValueError:
        return None
    seconds = delta.days * 86400 + delta.seconds
    nanos = delta.microseconds * 1000
    body = (b"\x08" + _varint(seconds) if seconds else b"") + (b"\x10" + _varint(nanos) if nanos else b"")
    return b"\x42" + _varint(len(body)) + body


def message_entry(m: Message) -> bytes:
    """The bytes of one ``LoadResponse.messages`` element holding ``m`` (as ``fill_message_pb`` fills it)."""
    try:
        body = _plain(m)
    except UnicodeEncodeError:  # text protobuf would refuse too: let it say so, as before
        body = None
    if body is None:
        out = pb.Message()
        fill_message_pb(out, m)
        body = out.SerializeToString()
    return _MESSAGES_TAG + _varint(len(body)) + body


def _plain(m: Message) -> bytes | None:
    """The encoded ``pb.Message`` of a plain entry (None: one with calls, usage or a synthetic mark)."""
    if m.tool_calls or m.usage is not None or m.synthetic_reason:
        return None
    parts: list[bytes] = []
    role = role_pb(m.role)
    if role:
        parts.append(b"\x08" + _varint(role))
    if m.content:
        parts.append(_text(b"\x12", m.content))
    if m.tool_call_id:
        parts.append(_text(b"\x22", m.tool_call_id))
    if m.name:
        parts.append(_text(b"\x2a", m.name))
    if m.position:
        parts.append(b"\x38" + _varint(m.position))
    if m.created_at:
        created = _timestamp(m.created_at)
        if created is None:
            return None
        parts.append(created)
    if m.trace_id:
        parts.append(_text(b"\x4a", m.trace_id))
    if m.format:
        parts.append(_text(b"\x52", m.format))
        if m.item:
            parts.append(b"\x5a" + _varint(len(m.item)) + m.item)
    if m.client_id:
        parts.append(_text(b"\x62", m.client_id))
    if m.metadata:
        parts.append(_text(b"\x6a", m.metadata))
    if m.cancelled:
        parts.append(b"\x78\x01")
    if m.orphan:
        parts.append(b"\x80\x01\x01")
    if m.supersedes:
        parts.append(b"\x88\x01" + _varint(m.supersedes))
    return b"".join(parts)
