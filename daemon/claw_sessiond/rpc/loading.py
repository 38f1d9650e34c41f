"""Load's reply chunks as wire bytes: the whole entries (``messages``), or only the stored items of one format.

A Load reply is a stream of ``LoadResponse`` chunks; the service builds the first chunk's header
fields (the session, repairs, calls in flight) and hands them here with the pages its store reads.
Each chunk is the header's bytes (first chunk only) followed by repeated-field elements written
by hand, which is a valid ``LoadResponse`` (protobuf merges fields in any order; a repeated
field's elements append):

- :func:`message_chunks`: each entry's ``messages`` element (``wire.message_entry``: its stored
  encoded form where there is one), chunks of at most :data:`LOAD_CHUNK_BYTES` (an entry larger
  than that is a chunk alone);
- :func:`item_chunks` (``LoadRequest.items_format``): each stored item's bytes as an ``items``
  element, no ``Message`` at all, one chunk per page the store reads (a page is at most
  ``paging.ITEM_PAGE_ROWS`` items and about ``paging.PAGE_BYTES``, cut again here at
  :data:`LOAD_CHUNK_BYTES`), so the client decodes one page while the daemon reads the next.

The last chunk ends with ``done``. A page is read only when the client has taken the chunk before
(gRPC's flow control): a stalled reader holds one page.

Must never: read or decide what a Load returns (the store does), or split an entry or item.
"""

from __future__ import annotations

import asyncio
import contextlib
import operator
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Final

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..entry_wire import varint
from ..model import Message
from .wire import DONE_FIELD, message_entry

__all__ = ["LOAD_CHUNK_BYTES", "LOAD_SLICE_S", "LOAD_YIELD_EVERY", "item_chunks", "message_chunks", "one_page"]

#: Keep each Load chunk well under the 4 MiB default receive limit.
LOAD_CHUNK_BYTES: Final = 1024 * 1024
#: Messages converted for a Load between looks at the clock (bounds one slice of loop time).
LOAD_YIELD_EVERY: Final = 32
#: Loop time a Load's conversion holds before it yields (looked at every LOAD_YIELD_EVERY messages).
LOAD_SLICE_S: Final = 0.001
#: ``LoadResponse.items`` (field 10, length-delimited).
_ITEMS_TAG: Final = b"\x52"


async def one_page(messages: list[Message]) -> AsyncGenerator[list[Message], None]:
    """A reply whose entries came back whole (``LoadResult.messages``), as its one page."""
    yield messages


def _chunk(head: pb.LoadResponse | None, parts: list[bytes]) -> bytes:
    """One Load chunk's wire bytes: the header fields (first chunk only), then the elements."""
    if head is not None:
        parts.insert(0, head.SerializeToString())
    return b"".join(parts)


async def message_chunks(first: pb.LoadResponse, pages: AsyncGenerator[list[Message], None]) -> AsyncIterator[bytes]:
    """The reply's chunks holding each entry of ``pages`` whole (closes ``pages`` when closed)."""
    parts: list[bytes] = []
    size = first.ByteSize()
    head: pb.LoadResponse | None = first
    since = time.perf_counter()
    async with contextlib.aclosing(pages):
        async for page in pages:
            for n, message in enumerate(page, 1):
                if n % LOAD_YIELD_EVERY == 0 and time.perf_counter() - since >= LOAD_SLICE_S:
                    await asyncio.sleep(0)  # a page is up to 512 messages: let others in between
                    since = time.perf_counter()
                if head is not None and not parts:
                    first.start_position = message.position
                entry = message_entry(message)
                if size + len(entry) > LOAD_CHUNK_BYTES and parts:
                    yield _chunk(head, parts)
                    head, parts, size = None, [], 0
                parts.append(entry)
                size += len(entry)
            del page
    parts.append(DONE_FIELD)
    yield _chunk(head, parts)


def _head(n: int) -> bytes:
    """The tag and length (a varint) that go before an item of ``n`` bytes in ``LoadResponse.items``."""
    if n < 0x80:
        return (0x52 | n << 8).to_bytes(2, "little")
    if n < 0x4000:  # most items: two length bytes, without varint()'s loop
        return (0x52 | (n & 0x7F | 0x80) << 8 | (n >> 7) << 16).to_bytes(3, "little")
    return _ITEMS_TAG + varint(n)


#: Items shorter than this (most: a Responses item is a few hundred bytes) take their head from :data:`_HEADS`.
_TABLED: Final = 4096
#: The head of an item of each length below :data:`_TABLED`, made once (about 150 KB).
_HEADS: Final = tuple(_head(n) for n in range(_TABLED))


def _elements(items: list[bytes]) -> tuple[list[bytes], int]:
    """``items`` as ``LoadResponse.items`` elements: each one's head, then the item itself (not copied); and their
    bytes."""
    out: list[bytes] = [b""] * (2 * len(items))
    out[1::2] = items
    sizes = list(map(len, items))
    # a page of items all shorter than _TABLED (the usual case): the heads looked up in one call (a third of the
    # time of a lookup per item; itemgetter of one index answers the element, not a tuple)
    tabled = len(sizes) > 1 and max(sizes) < _TABLED
    heads: Sequence[bytes] = operator.itemgetter(*sizes)(_HEADS) if tabled else list(map(_head, sizes))
    out[0::2] = heads
    return out, sum(sizes) + sum(map(len, heads))


async def item_chunks(
    first: pb.LoadResponse, pages: AsyncGenerator[tuple[list[bytes], bool], None]
) -> AsyncIterator[bytes]:
    """The reply's chunks holding the items of ``pages`` (closes ``pages`` when closed): a chunk per page, the
    last page's chunk ending the reply; ``start_position`` stays 0 (the items carry no positions)."""
    head: pb.LoadResponse | None = first
    parts: list[bytes] = []
    size = first.ByteSize()
    async with contextlib.aclosing(pages):
        async for page, last in pages:
            elements, total = _elements(page)  # head, item, head, item, ...
            del page
            if size + total <= LOAD_CHUNK_BYTES:  # the page is one chunk (the usual case)
                parts += elements
                size += total
            else:
                for at in range(0, len(elements), 2):
                    pair = elements[at : at + 2]
                    grown = len(pair[0]) + len(pair[1])
                    if size + grown > LOAD_CHUNK_BYTES and parts:
                        yield _chunk(head, parts)
                        head, parts, size = None, [], 0
                    parts += pair
                    size += grown
            del elements
            if last:
                break
            if parts:  # a chunk per page: the client decodes it while the next page is read
                yield _chunk(head, parts)
                head, parts, size = None, [], 0
    parts.append(DONE_FIELD)
    yield _chunk(head, parts)
