"""Load's reply as wire bytes: each entry's encoded form, straight into the bytes of its chunk.

A Load of thousands of entries spent most of its server time building a
``pb.Message`` per entry, sizing it, and serializing the chunk again. Here an
entry's ``LoadResponse.messages`` element is its stored encoded form
(``Message.encoded``, written with the entry: SQLite's schema 5) behind the
field's tag and length; an entry stored without it (older rows, PostgreSQL)
is encoded by hand now (``entry_wire.py``), and the rare one that cannot be
(text UTF-8 cannot encode, a foreign time) goes through
:func:`~.convert.fill_message_pb` and protobuf itself. A chunk is then the
concatenation of such elements after its header fields, which is a valid
``LoadResponse`` (protobuf merges fields in any order; a repeated field's
elements append).

Must never: change what a client reads (the bytes parse to what ``fill_message_pb`` builds).
"""

from __future__ import annotations

from typing import Final

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..entry_wire import encode_entry, varint
from ..model import Message
from .convert import fill_message_pb

__all__ = ["DONE_FIELD", "message_entry"]

#: ``LoadResponse.done = true`` (field 5, varint 1).
DONE_FIELD: Final = b"\x28\x01"
#: ``LoadResponse.messages`` (field 4, length-delimited).
_MESSAGES_TAG: Final = b"\x22"


def message_entry(m: Message) -> bytes:
    """The bytes of one ``LoadResponse.messages`` element holding ``m`` (as ``fill_message_pb`` fills it)."""
    body = m.encoded
    if body is None:
        body = encode_entry(m)
        if body is None:
            out = pb.Message()
            fill_message_pb(out, m)
            body = out.SerializeToString()
    return _MESSAGES_TAG + varint(len(body)) + body
