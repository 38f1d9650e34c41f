"""Paged history reads, written once for both backends: a Load's pages, Watch batches, Export pages.

Each is a plain ``async`` function over a :class:`~claw_sessiond.storage.port.PageReads` port
opened by the backend per step (``Snapshots``: a short read transaction on one of its read
connections). Why plain functions and not step sequences (``steps.py``): every step is a read
on an asynchronous driver (aiosqlite, asyncpg), none runs in a write transaction or on
SQLite's writer thread, and a stream hands its pages to its caller between steps, which a
sequence's driver does not model.

What this module owns is *how much* a read holds at once, so that a stream whose client stops
reading pins a small, fixed amount of memory, not a session:

- history and export events are read page by page (at most ``paging.PAGE_ROWS`` events and
  about ``paging.PAGE_BYTES`` payload bytes a page, never fewer than one event), each page in
  its own short read transaction, and the next page is read only after the caller has handed
  the previous one on (the caller is an async generator that yields each page; gRPC's flow
  control blocks that yield while the client's window is full);
- no read connection is ever held across a yield, so a stalled stream cannot take one of the
  shared read connections from other requests.

Consistency without a long-lived snapshot: a session's events at positions (or event ids) up
to the bound read at the start never change, except when the session is erased (delete,
retention, import replace), cleared (a clear drops the tool-call index the projection uses) or
edited before the bound. Every step therefore first checks, in its own transaction
(:func:`guard`), that the session still holds what the cursor saw; if not, the stream ends with
ABORTED (``SEQUENCE_CONFLICT``: load again), never with a mix.

Must never: yield while holding a read connection, or read a page before the previous one was
handed on.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from ..edits import history_item
from ..errors import SequenceConflictError
from ..history import drop_calls, moves_bound
from ..model import HistoryCursor, Message
from .base import HistoryItem, StorageCounters
from .paging import PAGE_BYTES, PAGE_ROWS, Segment, arrange_page, cut
from .port import PageReads

__all__ = [
    "Snapshots",
    "WatchHost",
    "export_pages",
    "guard",
    "history_pages",
    "item_pages",
    "visible_pages",
    "watch_batch",
    "watch_rows_after",
]

#: Opens one short read transaction and hands its port (closed, and the connection given back, on exit).
Snapshots = Callable[[], AbstractAsyncContextManager[PageReads]]


async def guard(port: PageReads, cursor: HistoryCursor, *, clears: bool = True) -> None:
    """Raise if the session was erased (or, with ``clears``, cleared or edited before the cursor's bound; without,
    cleared with erase) since the cursor was taken (the port's transaction).

    Raises:
        SequenceConflictError: reason SEQUENCE_CONFLICT.
    """
    bounds = await port.session_bounds(cursor.session_id)
    changed = bounds is None or bounds[0] != cursor.created_at or (clears and bounds[1] != cursor.clear_position)
    if not changed and bounds is not None and bounds[2] > cursor.last_position:
        # Written since the cursor was taken: an edit that hid entries up to its bound (the projection
        # changed under the stream), or, for an export, a clear that erased events it still has to send.
        marks = await port.marks_after(cursor.session_id, cursor.last_position)
        changed = any(moves_bound(t, p, cursor.last_position, clears) for t, p in marks)
    if changed:
        raise SequenceConflictError(
            f"session {cursor.session_id!r} was cleared, edited or erased while its history was being streamed; "
            "load it again",
            expected=cursor.last_position,
            actual=bounds[2] if bounds is not None else 0,
        )


def visible_pages(
    snapshot: Snapshots, cursor: HistoryCursor, counters: StorageCounters
) -> AsyncGenerator[list[Message], None]:
    """``Storage.history_pages``: :func:`history_pages`, counted in ``counters``, with the cursor's dropped calls
    (repair mode ``drop``) taken out of each page (a page left empty is not sent)."""
    pages = _counted(history_pages(snapshot, cursor), counters)
    return _dropping(pages, frozenset(cursor.dropped_ids)) if cursor.dropped_ids else pages


async def _counted(
    pages: AsyncGenerator[list[Message], None], counters: StorageCounters
) -> AsyncGenerator[list[Message], None]:
    async with contextlib.aclosing(pages):
        async for page in pages:
            counters.history_events_read += len(page)
            yield page


async def _dropping(
    pages: AsyncGenerator[list[Message], None], dropped: frozenset[str]
) -> AsyncGenerator[list[Message], None]:
    """``pages`` with the ``dropped`` calls taken out (``history.drop_calls``); closes ``pages`` when closed."""
    async with contextlib.aclosing(pages):
        async for page in pages:
            shown = drop_calls(page, dropped)
            if shown:
                yield shown


async def history_pages(snapshot: Snapshots, cursor: HistoryCursor) -> AsyncGenerator[list[Message], None]:
    """The visible history of a Load's cursor in conversation order (as ``history.project`` orders it), page by page.

    Each assistant message is followed by its tool results in position order; results that lie
    beyond the assistant's page are read by position right after it ("far" results, for example
    synthetic repairs), in byte-bounded groups, and skipped where they occur later. A bounded
    read's cursor (``start_after`` set) starts after that position, and first sends its ``lead``:
    the window's results of calls made before it.

    Raises:
        SequenceConflictError: the session was cleared, edited or erased meanwhile.
    """
    sid, reply_only = cursor.session_id, cursor.reply_only
    after = cursor.clear_position if cursor.start_after < 0 else cursor.start_after
    in_flight = set(cursor.in_flight_ids)
    async for lead in _positions_by_pages(snapshot, cursor, list(cursor.lead)):
        yield lead
    while after < cursor.last_position:
        segments: list[Segment] = []
        async with snapshot() as port:
            await guard(port, cursor)
            messages = await port.visible_page(sid, after, cursor.last_position, reply_only)
            if not messages:
                break
            page_end = messages[-1].position

            async def known_calls(ids: list[str], port: PageReads = port) -> set[str]:
                return await port.known_calls(sid, ids)

            async def far_sizes(ids: list[str], port: PageReads = port, end: int = page_end) -> list[Any]:
                return await port.far_results(sid, ids, end, cursor.last_position)

            segments = await arrange_page(messages, in_flight, known_calls, far_sizes)
        after = page_end
        for shown, far_groups in segments:
            if shown:
                yield shown
            for group in far_groups:
                found = await _entries_at(snapshot, cursor, group)
                yield sorted(found, key=lambda m: m.position)


async def item_pages(
    snapshot: Snapshots, cursor: HistoryCursor, item_format: str, counters: StorageCounters
) -> AsyncGenerator[tuple[list[bytes], bool], None]:
    """The items of ``item_format`` of a Load's cursor's visible entries, in position order (the order written),
    page by page, each with True if it is known to be the last (the reply can end with it); each page is a
    short read that first checks the cursor (:func:`guard`).

    The cursor's entries are its ``lead`` positions before its start (the entries a Load by client
    ids chose; a window's lead lies inside its range) and the range after its start. Repair mode
    ``drop`` never hides an entry that has an item (``history.drop_calls``), so the cursor's dropped
    calls change no item.

    Raises:
        SequenceConflictError: the session was cleared, edited or erased meanwhile.
    """
    sid, last = cursor.session_id, cursor.last_position
    after = cursor.clear_position if cursor.start_after < 0 else cursor.start_after
    chosen = sorted(p for p in cursor.lead if p <= after)
    for i in range(0, len(chosen), PAGE_ROWS):
        part = chosen[i : i + PAGE_ROWS]
        async with snapshot() as port:
            await guard(port, cursor)
            sizes = sorted(await port.entry_sizes(sid, part))
        while sizes:
            n = cut(sizes, PAGE_BYTES)
            group, sizes = [int(p) for p, _size in sizes[:n]], sizes[n:]
            async with snapshot() as port:
                await guard(port, cursor)
                found = sorted(await port.items_at(sid, group, item_format))
            counters.history_events_read += len(found)
            if found:
                yield [item for _p, item in found], not sizes and i + PAGE_ROWS >= len(chosen) and after >= last
    while after < last:
        async with snapshot() as port:
            await guard(port, cursor)
            items, end = await port.item_page(sid, after, last, item_format)
        if not end:
            break
        after = end
        counters.history_events_read += len(items)
        if items:
            yield items, after >= last


async def _entries_at(snapshot: Snapshots, cursor: HistoryCursor, positions: Sequence[int]) -> list[Message]:
    """The cursor's session's entries at ``positions`` (in no order), in one read that first checks the cursor."""
    async with snapshot() as port:
        await guard(port, cursor)
        return await port.entries_by_position(cursor.session_id, positions, cursor.reply_only)


async def _positions_by_pages(
    snapshot: Snapshots, cursor: HistoryCursor, positions: list[int]
) -> AsyncGenerator[list[Message], None]:
    """The entries at ``positions``, in that order, in pages of about ``PAGE_BYTES`` (each its own read)."""
    for i in range(0, len(positions), PAGE_ROWS):
        part = positions[i : i + PAGE_ROWS]
        async with snapshot() as port:
            await guard(port, cursor)
            sizes = dict(await port.entry_sizes(cursor.session_id, part))
        n = cut([(p, sizes.get(p, 0)) for p in part], PAGE_BYTES)
        while part:
            group, part = part[:n], part[n:]
            order = {p: k for k, p in enumerate(group)}
            found = await _entries_at(snapshot, cursor, group)
            yield sorted(found, key=lambda m: order[m.position])
            n = cut([(p, sizes.get(p, 0)) for p in part], PAGE_BYTES) if part else 0


class WatchHost(Protocol):
    """What :func:`watch_batch` needs of a backend: short snapshots taken in its followers' lane."""

    @property
    def follower_snapshots(self) -> Snapshots:
        """Short read snapshots for a Watch or WatchAll batch, each on a connection of the followers' lane."""
        ...


async def watch_batch(
    host: WatchHost, session_id: str, after_position: int, limit: int
) -> tuple[str | None, list[HistoryItem], bool]:
    """``Storage.watch_batch`` for any backend ``host``: the session's incarnation (None if it is not stored)
    and its history events after a position, read in one snapshot (so the events belong to that
    incarnation); at most ``limit`` events and about ``PAGE_BYTES`` of payload; the flag says whether more
    may follow (:func:`watch_rows_after`)."""
    incarnation, rows, more = await watch_rows_after(host.follower_snapshots, session_id, after_position, limit)
    return incarnation, [(r[0], history_item(*r)) for r in rows], more


async def watch_rows_after(
    snapshot: Snapshots, session_id: str, after_position: int, limit: int
) -> tuple[str | None, list[Any], bool]:
    """The session's incarnation (None if not stored) and up to ``limit`` history rows (any type) after a
    position, about ``PAGE_BYTES`` at most, in one snapshot.

    Returns the incarnation, the rows ``(position, type, trace_id, ts, payload, format, item)`` and True if
    more may follow.
    """
    async with snapshot() as port:
        incarnation = await port.incarnation(session_id)
        sizes = await port.event_sizes_after(session_id, after_position, limit)
        if not sizes:
            return incarnation, [], False
        n = cut(sizes, PAGE_BYTES)
        rows = await port.history_events(session_id, after_position, int(sizes[n - 1][0]))
    return incarnation, rows, n < len(sizes) or len(sizes) >= limit


async def export_pages(
    snapshot: Snapshots, cursor: HistoryCursor, max_event_id: int
) -> AsyncGenerator[list[Any], None]:
    """A session's event rows with ids up to ``max_event_id``, in event order, page by page.

    Rows are ``(event_id, session_id, position, type, trace_id, ts, schema_version, payload, format, item)``;
    payloads stay text here (the caller decodes and encodes them off the event loop).

    Raises:
        SequenceConflictError: the session was erased meanwhile.
    """
    after = 0
    while after < max_event_id:
        async with snapshot() as port:
            await guard(port, cursor, clears=False)  # a clear removes no events
            sizes = await port.export_sizes(cursor.session_id, after, max_event_id, PAGE_ROWS)
            if not sizes:
                return
            end = int(sizes[cut(sizes, PAGE_BYTES) - 1][0])
            rows = await port.export_rows(cursor.session_id, after, end)
        after = end
        yield rows
