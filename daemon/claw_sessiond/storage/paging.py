"""How both backends cut history into pages, and how a page of Load is arranged (no SQL here).

A page holds at most :data:`PAGE_ROWS` events and about :data:`PAGE_BYTES`
payload bytes. :func:`arrange_page` orders one page like the projection
(each assistant followed by its results) and asks the backend, through two
lookups, which results of the page's assistants lie further on; both
backends run it inside their read transaction.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from ..model import Message

__all__ = [
    "DECODE_SLICE_BYTES",
    "DECODE_SLICE_S",
    "ITEM_PAGE_ROWS",
    "PAGE_BYTES",
    "PAGE_ROWS",
    "SCAN_ROWS",
    "Segment",
    "arrange_page",
    "cut",
    "decode_rows",
    "groups_of",
]

#: Most payload bytes read into one page (a page always holds at least one event).
PAGE_BYTES: Final = 1024 * 1024
#: Most events in one page.
PAGE_ROWS: Final = 512
#: Most items in one page of a Load of items alone (``LoadRequest.items_format``): an item is only its stored
#: bytes (no entry is built), so a page is bounded by :data:`PAGE_BYTES` first; a history of a thousand small
#: items is then one read and one reply chunk, not two of each.
ITEM_PAGE_ROWS: Final = 2048
#: Payload bytes decoded before yielding to the loop (a page of assistants with thousands
#: of calls took the loop ~15 ms to decode in one piece).
DECODE_SLICE_BYTES: Final = 16 * 1024
#: Loop time a decode holds before it yields: checked after each :data:`DECODE_SLICE_BYTES`, so
#: that a page of small entries yields every millisecond, not every few entries (each yield is a
#: turn of the loop: a Load of 10,000 entries spent more time in them than in decoding).
DECODE_SLICE_S: Final = 0.001
#: Sessions examined per ListSessions chunk (one short read each).
SCAN_ROWS: Final = 1000

#: Messages sent in order, then the positions of far results to read after them, in pages.
Segment = tuple[list[Message], list[list[int]]]


def cut(sizes: Sequence[Sequence[Any]], max_bytes: int) -> int:
    """How many of the leading rows ``(key, bytes)`` fit in ``max_bytes`` (at least one)."""
    total = 0
    for i, (_key, size) in enumerate(sizes):
        total += int(size or 0)
        if total > max_bytes and i > 0:
            return i
    return len(sizes)


def groups_of(sizes: Sequence[Sequence[Any]]) -> list[list[int]]:
    """Rows ``(position, bytes)`` in position order, cut into pages of positions."""
    groups: list[list[int]] = []
    while sizes:
        n = min(cut(sizes, PAGE_BYTES), PAGE_ROWS)
        groups.append([int(r[0]) for r in sizes[:n]])
        sizes = sizes[n:]
    return groups


async def arrange_page(
    messages: list[Message],
    in_flight: set[str],
    known_calls: Callable[[list[str]], Awaitable[set[str]]],
    far_sizes: Callable[[list[str]], Awaitable[Sequence[Sequence[Any]]]],
) -> list[Segment]:
    """Order one page like ``project`` and find the far results of its assistants.

    ``known_calls(ids)``: which of these call ids the session has a call for (in the caller's
    transaction). ``far_sizes(ids)``: ``(position, bytes)`` of the results of these calls stored
    after the page (up to the cursor's last position), in position order.
    """
    owner_in_page: dict[str, int] = {}
    for m in messages:
        if m.role == "assistant":
            for call in m.tool_calls:
                owner_in_page[call.id] = m.position
    # An orphan result (its call was unknown when stored) pairs with nothing: it keeps its place.
    loose = [
        m.tool_call_id for m in messages if m.role == "tool" and not m.orphan and m.tool_call_id not in owner_in_page
    ]
    # A tool message answering an assistant of an earlier page was sent with it (as a far result).
    owned_elsewhere = await known_calls(loose) if loose else set()
    results: dict[int, list[Message]] = {}
    answered_in_page: set[str] = set()
    for m in messages:
        if m.role == "tool" and not m.orphan and m.tool_call_id in owner_in_page:
            results.setdefault(owner_in_page[m.tool_call_id], []).append(m)
            answered_in_page.add(m.tool_call_id)
    segments: list[Segment] = []
    current: list[Message] = []
    for m in messages:
        if m.role == "tool" and not m.orphan and (m.tool_call_id in owner_in_page or m.tool_call_id in owned_elsewhere):
            continue
        current.append(m)
        if m.role != "assistant" or not m.tool_calls:
            continue
        current.extend(results.get(m.position, ()))
        missing = [c.id for c in m.tool_calls if c.id not in answered_in_page and c.id not in in_flight]
        sizes = await far_sizes(missing) if missing else ()
        if not sizes:
            continue
        segments.append((current, groups_of(sizes)))
        current = []
    if current:
        segments.append((current, []))
    return segments


async def decode_rows(rows: Sequence[Sequence[Any]], decode: Callable[[Sequence[Any]], Message]) -> list[Message]:
    """Decode a page of history rows ``(position, type, trace_id, ts, payload, format, item[, encoded])``, yielding
    to the loop after every :data:`DECODE_SLICE_S` (checked every :data:`DECODE_SLICE_BYTES` of the row's bytes;
    a row sent as stored has no payload or item, only its encoded form).

    On the loop, in slices, rather than in a worker thread: a thread decoding
    holds the GIL in 5 ms turns, and every other request's hand-offs between
    the loop and the database threads then wait behind it.
    """
    out: list[Message] = []
    budget = DECODE_SLICE_BYTES
    since = time.perf_counter()
    for r in rows:
        out.append(decode(r))
        budget -= len(r[4] or "") + len(r[6] or b"") + (len(r[7] or b"") if len(r) > 7 else 0)
        if budget <= 0:
            budget = DECODE_SLICE_BYTES
            if time.perf_counter() - since >= DECODE_SLICE_S:
                await asyncio.sleep(0)
                since = time.perf_counter()
    return out
