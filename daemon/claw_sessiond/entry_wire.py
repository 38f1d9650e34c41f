"""An entry's encoded reply form: the bytes of its ``claw.sessiond.v1.Message``, written by hand.

Pure (no protobuf, no gRPC, no storage): the SQLite backend calls it when it
stores an entry (schema 5 keeps the result beside the payload, so that Load
sends stored bytes instead of rebuilding and encoding each entry), and the
RPC edge calls it for entries stored without it (older rows, PostgreSQL).
From schema 7 an entry with an item keeps its form *less the item's bytes*
(:func:`encode_stored`, :func:`encode_appended`), with the offset they go back
in at (:func:`splice`): the row's ``item`` column already holds them, so the
item is stored once.

The encoding is the one protobuf writes for what ``rpc.convert.fill_message_pb``
builds: fields in number order, proto3 defaults left out (the unit tests in
tests/unit/test_load_wire.py compare the bytes with protobuf's for every field).
Text that UTF-8 cannot encode (a lone surrogate) and a creation time not in the
daemon's own shape give None: the caller then goes through protobuf itself, which
says what is wrong, as before.

Must never: give bytes that differ from protobuf's for the same message.
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Final

from .model import Message, ToolCall, UsageDelta

__all__ = [
    "ROLE_NUMBERS",
    "StoredForm",
    "append_stamp",
    "encode_appended",
    "encode_entry",
    "encode_stored",
    "splice",
    "varint",
]

#: Domain role → ``claw.sessiond.v1.Role`` number (any other role: 0, ROLE_UNSPECIFIED).
ROLE_NUMBERS: Final = {"system": 1, "user": 2, "assistant": 3, "tool": 4, "other": 5}
#: ``SYNTHETIC_REASON_INTERRUPTED`` inside ``Message.synthetic`` (field 6), encoded whole.
_INTERRUPTED: Final = b"\x32\x02\x08\x01"
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_fromisoformat = dt.datetime.fromisoformat
_SMALL: Final = tuple(bytes([i]) for i in range(128))

#: An entry's stored reply form: its encoded ``Message`` less its item's bytes, and the offset they go back
#: in at (:func:`splice`); the offset is None when the form is whole (no item, or written before schema 7).
StoredForm = tuple[bytes, int | None]


def varint(value: int) -> bytes:
    """Protobuf's base-128 varint (a negative int64 as its 64-bit two's complement, like protobuf)."""
    if 0 <= value < 128:
        return _SMALL[value]
    if 0 < value < 16384:  # two bytes (most positions and item lengths): one call, no loop
        return ((value & 0x7F) | 0x80 | ((value >> 7) << 8)).to_bytes(2, "little")
    value &= 0xFFFF_FFFF_FFFF_FFFF
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _text(tag: bytes, value: str) -> bytes:
    data = value.encode()
    return tag + varint(len(data)) + data


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
    body = (b"\x08" + varint(seconds) if seconds else b"") + (b"\x10" + varint(nanos) if nanos else b"")
    return b"\x42" + varint(len(body)) + body


def _call(c: ToolCall) -> bytes:
    """One ``tool_calls`` element (field 3)."""
    body = b"".join(
        (
            _text(b"\x0a", c.id) if c.id else b"",
            _text(b"\x12", c.name) if c.name else b"",
            _text(b"\x1a", c.arguments) if c.arguments else b"",
            b"\x20\x01" if c.pending else b"",
            b"\x28\x01" if c.arguments_not_json else b"",
        )
    )
    return b"\x1a" + varint(len(body)) + body


def _usage(u: UsageDelta) -> bytes:
    """The ``usage`` field (14): present even when every figure is zero (the daemon sets it whole)."""
    parts = [
        tag + varint(value)
        for tag, value in (
            (b"\x08", u.input_tokens),
            (b"\x10", u.output_tokens),
            (b"\x18", u.cache_read_tokens),
            (b"\x20", u.cache_write_tokens),
            (b"\x28", u.cost_micros),
        )
        if value
    ]
    for tag, text in ((b"\x32", u.currency), (b"\x3a", u.model), (b"\x42", u.pricing_version)):
        if text:
            parts.append(_text(tag, text))
    body = b"".join(parts)
    return b"\x72" + varint(len(body)) + body


def encode_entry(m: Message) -> bytes | None:
    """The encoded ``Message`` of ``m`` (as ``fill_message_pb`` fills it), or None (go through protobuf)."""
    form = encode_stored(m)
    return None if form is None else splice(form, m.item)


def encode_stored(m: Message) -> StoredForm | None:
    """The stored form of ``m``'s encoded ``Message`` (:data:`StoredForm`), or None (go through protobuf)."""
    try:
        stamp = _stamp(m.created_at, m.trace_id)
        if stamp is None:
            return None
        return _parts(_head(m, m.synthetic_reason == "interrupted") + _position(m.position) + stamp, m)
    except UnicodeEncodeError:  # text protobuf would refuse too: let it say so
        return None


def splice(form: StoredForm, item: bytes) -> bytes:
    """The whole encoded ``Message`` of a stored form: ``item`` (the row's item) put back in at its offset."""
    data, at = form
    if at is None:
        return data
    if at == len(data):  # the item is the last field (nearly every entry): one join
        return data + item
    return data[:at] + item + data[at:]


def encode_appended(m: Message, position: int, stamp: bytes) -> StoredForm:
    """The stored form of an entry an append stores: ``m`` as validated (no synthetic reason, no position,
    time or trace id of its own) at ``position``, with ``stamp`` (:func:`append_stamp` of the append's time
    and trace id, made once for all its entries). Equal to :func:`encode_stored` of the entry read back from
    its row (tests/unit/test_load_wire.py); raises UnicodeEncodeError where that gives None.
    """
    if (
        m.tool_calls
        or m.tool_call_id
        or m.name
        or m.client_id
        or m.metadata
        or m.usage is not None
        or m.cancelled
        or m.orphan
        or m.supersedes
    ):
        return _parts(_head(m, False) + _position(position) + stamp, m)
    # Role, content and item alone (nearly every appended entry): the same fields in one join, the
    # item's bytes left out (the item is the last field: they go back in at the end).
    content = m.content.encode()
    has_item = bool(m.format and m.item)
    data = b"".join(
        (
            _ROLE_FIELDS.get(m.role, b""),
            b"\x12" + varint(len(content)) if content else b"",
            content,
            b"\x38" + varint(position) if position else b"",
            stamp,
            _format_field(m.format) if m.format else b"",
            b"\x5a" + varint(len(m.item)) if has_item else b"",
        )
    )
    return data, len(data) if has_item else None


#: Field 1 (the role) of each role that has a number (ROLE_UNSPECIFIED, 0, is left out).
_ROLE_FIELDS: Final = {role: b"\x08" + bytes([number]) for role, number in ROLE_NUMBERS.items()}


@functools.lru_cache(maxsize=64)
def _format_field(fmt: str) -> bytes:
    """Field 10, the format tag: a handful of tags are ever written, each encoded once."""
    return _text(b"\x52", fmt)


@functools.lru_cache(maxsize=8)
def append_stamp(created_at: str, trace_id: str) -> bytes | None:
    """Fields 8 and 9 (the time and the trace id) shared by every entry of one append (None: a time not ours)."""
    return _stamp(created_at, trace_id)


def _stamp(created_at: str, trace_id: str) -> bytes | None:
    """The ``created_at`` (8) and ``trace_id`` (9) fields, or None for a time not in the daemon's shape."""
    created = b""
    if created_at:
        found = _timestamp(created_at)
        if found is None:
            return None
        created = found
    return created + _text(b"\x4a", trace_id) if trace_id else created


def _position(position: int) -> bytes:
    """Field 7, the position (left out at 0, protobuf's default)."""
    return b"\x38" + varint(position) if position else b""


def _head(m: Message, interrupted: bool) -> bytes:
    """Fields 1 to 6: role, content, tool calls, tool call id, name, the synthetic reason."""
    parts: list[bytes] = []
    role = ROLE_NUMBERS.get(m.role, 0)
    if role:
        parts.append(b"\x08" + _SMALL[role])
    if m.content:
        parts.append(_text(b"\x12", m.content))
    if m.tool_calls:
        parts.extend(_call(c) for c in m.tool_calls)
    if m.tool_call_id:
        parts.append(_text(b"\x22", m.tool_call_id))
    if m.name:
        parts.append(_text(b"\x2a", m.name))
    if interrupted:
        parts.append(_INTERRUPTED)
    return b"".join(parts)


def _parts(head: bytes, m: Message) -> StoredForm:
    """``head`` (fields 1 to 9), then fields 10 to 17 less the item's bytes, and the offset they go in at."""
    if not m.format:
        return head + _tail(m), None
    if not m.item:
        return head + _format_field(m.format) + _tail(m), None
    before = head + _format_field(m.format) + b"\x5a" + varint(len(m.item))
    return before + _tail(m), len(before)


def _tail(m: Message) -> bytes:
    """Fields 12 to 17 (after the format and the item): client id, metadata, usage, cancelled, orphan,
    supersedes."""
    parts: list[bytes] = []
    if m.client_id:
        parts.append(_text(b"\x62", m.client_id))
    if m.metadata:
        parts.append(_text(b"\x6a", m.metadata))
    if m.usage is not None:
        parts.append(_usage(m.usage))
    if m.cancelled:
        parts.append(b"\x78\x01")
    if m.orphan:
        parts.append(b"\x80\x01\x01")
    if m.supersedes:
        parts.append(b"\x88\x01" + varint(m.supersedes))
    return b"".join(parts)
