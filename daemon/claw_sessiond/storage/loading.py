"""Load, decided once for both backends: its reads, the split of its open calls, its window and its repair.

A Load (``Storage.load``) is three steps, each a sequence of port calls (``steps.py``) with
every decision in the pure rules (``repair.py``: the split and the repair plan; ``history.py``:
the projection, the window's order, the dropped calls):

1. **The snapshot** (:func:`read_load`, over a :class:`~claw_sessiond.storage.port.ReadPort`
   in one read transaction): the session's row and settings, its open calls, which of them
   are in flight (the run registry: :data:`RunsLive`), what a ``drop`` hides, and, with
   nothing to repair (or ``repair`` off), the reply itself: the first page, a window, or a
   cursor for ``Storage.history_pages``. Nothing is written for an unknown session.
2. **The repair** (:func:`repair_steps`, over the write :class:`~claw_sessiond.storage.port.Port`
   in one write transaction): the row again (locked on PostgreSQL), the plan checked or made
   again, the synthetic results written, and a cursor bounding what the Load returns. A large
   repair planned ahead is first written in paced chunks (:func:`repair_chunk_steps`), see
   :attr:`LoadHost.repairs_ahead`.
3. **The window**, for a bounded Load that repaired: the cursor checked and the window read in
   a new snapshot.

The one place the backends differ is a named choice of the host, :attr:`LoadHost.repairs_ahead`:

- SQLite (``True``): one writer thread serves every session, so a repair of thousands of calls
  must not hold it. The snapshot also reads the assistant messages, the synthetic results are
  made on the loop (``repair.plan_payloads``), and all but the last :data:`~claw_sessiond.repair.REPAIR_CHUNK`
  are written in chunks, one writer job each, pausing as long as each took
  (:data:`~claw_sessiond.repair.REPAIR_PAUSE_RATIO`). The last chunk is written in the
  transaction that bounds the reply, which writes the plan as it is if nothing changed since
  (:meth:`~claw_sessiond.repair.RepairPlan.unchanged`) and plans again otherwise.
- PostgreSQL (``False``): a write locks only its session's row, so the repair is planned again
  under that lock and written in one transaction; a concurrent Load waits for the lock and
  then finds nothing left to repair.

Which runs are live is the other difference, and it is a value the host hands in
(:data:`RunsLive`), not a branch here: SQLite's runs live in this daemon's memory,
PostgreSQL's in the database under each daemon's lease (decided in SQL in the transaction).

Why the snapshot is a sequence too, and not a plain ``async`` function (both backends read
through asynchronous drivers, aiosqlite and asyncpg): the split of the open calls
(:func:`read_calls`) is the same steps in the snapshot and in the repair transaction, which on
SQLite runs synchronously on the writer thread; as a sequence it is written once for both.

Must never: touch a connection, a clock or a lock (the ports and the host do), or decide
anything a rule module decides.
"""

# A write verb answers None: ``yield port.write_repairs(...)`` hands the call to the driver, and the
# None it sends back is not used (mypy's func-returns-value would refuse the ``yield`` of such a call).
# mypy: disable-error-code="func-returns-value"

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from .. import repair as repairing
from ..errors import SequenceConflictError
from ..history import OpenCall, drop_calls, project, project_window
from ..model import EntrySelection, HistoryCursor, LoadResult, LoadWindow, Message, Repair, SessionSettings
from ..policy import ToolPolicy
from ..repair import CallSplit, RepairPlan
from .base import StorageCounters
from .item_cache import ItemCache, ItemsSeen, KnownItems
from .port import Port, ReadPort, SessionRow, session_meta
from .steps import Steps

__all__ = [
    "CallsRead",
    "LoadHost",
    "RepairStart",
    "RunsLive",
    "WindowRead",
    "first_items",
    "load",
    "read_calls",
    "read_load",
    "read_window",
    "repair_chunk_steps",
    "repair_steps",
    "windowed",
]

_log = logging.getLogger("claw_sessiond.store")
T = TypeVar("T")

#: Which of these run ids are live: the set itself (SQLite: this daemon's run registry, in memory) or an
#: awaitable of it (PostgreSQL: decided in SQL in the caller's transaction). A sequence yields its answer.
RunsLive = Callable[[set[str]], Any]


class LoadHost(Protocol):
    """What :func:`load` needs of a backend: its counters, its choice, and a snapshot and a write to run steps in."""

    @property
    def counters(self) -> StorageCounters:
        """The figures a Load adds to (events read, repairs)."""
        ...

    @property
    def repairs_ahead(self) -> bool:
        """True: plan a repair from the snapshot and write it in paced chunks (see the module docstring)."""
        ...

    def load_snapshot(self, steps: Callable[[ReadPort, RunsLive], Steps[T]]) -> Awaitable[T]:
        """Run ``steps`` in one read-only snapshot of the database."""
        ...

    def load_write(self, session_id: str, steps: Callable[[Port, RunsLive], Steps[T]]) -> Awaitable[T]:
        """Run ``steps`` in one write transaction of ``session_id`` (its watchers hear of the commit)."""
        ...


@dataclass(frozen=True, slots=True)
class CallsRead:
    """A session's open calls split by fate (``repair.split_calls``), and what the ``drop`` calls hide."""

    split: CallSplit
    dropped: tuple[str, ...]
    """The ids of the calls the Load drops from its reply."""
    hidden: int
    """How many entries dropping them hides whole (not counted in ``message_count``)."""


@dataclass(frozen=True, slots=True)
class RepairStart:
    """What a snapshot found when a repair must follow: the row, the split, and the assistants' payloads."""

    row: SessionRow
    calls: CallsRead
    assistants: list[tuple[int, str]]
    """``(position, payload)`` of the repaired calls' assistant messages (read only when repairing ahead)."""


@dataclass(frozen=True, slots=True)
class WindowRead:
    """A window's bounds, and its entries if they fit one page."""

    start_after: int
    """The window is the visible entries after this position (up to the bound of the read)."""
    complete: bool
    """True if no visible entry lies before the window."""
    lead: tuple[int, ...]
    """Positions of the window's results of calls made before it, in the order they come first."""
    messages: list[Message] | None
    """The window in the full Load's order, or None if it is larger than one page (read it by pages)."""
    events_read: int
    """History events read (the window's first page)."""


def read_calls(port: ReadPort | Port, session_id: str, live: RunsLive) -> Steps[CallsRead]:
    """The session's open calls, split by what a Load does with them, and what its ``drop`` calls hide."""
    calls = yield port.open_calls(session_id)
    policy = (yield port.session_policy(session_id)) if calls else ToolPolicy()
    alive: set[str] = yield live({c.run_id for c in calls if c.run_id})
    split = repairing.split_calls(calls, alive.__contains__, policy)
    if not split.dropped:
        return CallsRead(split, (), 0)
    ids = tuple(c.tool_call_id for c in split.dropped)
    entries = yield port.entries_at(session_id, repairing.drop_positions(split.dropped))
    return CallsRead(split, ids, repairing.hidden_count(entries, set(ids)))


def _reply(
    row: SessionRow,
    settings: SessionSettings,
    workdir: str,
    in_flight: Sequence[OpenCall],
    dropped: tuple[str, ...],
    hidden: int,
    repairs: list[Repair],
    reply_only: bool = False,
) -> LoadResult:
    """A Load's reply before its history is read: the session (its hidden entries not counted), the repairs
    written, the calls in flight, and the cursor that reads the history's pages."""
    meta = session_meta(row, row.session_id, workdir, settings)
    if hidden:  # a copy only where the count changes (a copy is most of what this costs)
        meta = dataclasses.replace(meta, message_count=meta.message_count - hidden)
    ids = tuple(c.tool_call_id for c in in_flight)
    cursor = HistoryCursor(
        row.session_id,
        row.created_at,
        row.clear_position,
        row.last_position,
        ids,
        dropped_ids=dropped,
        reply_only=reply_only,
    )
    return LoadResult(meta, [], repairs, repairing.flights(in_flight), cursor)


def read_load(
    port: ReadPort,
    live: RunsLive,
    session_id: str,
    workdir: str,
    *,
    repair: bool,
    window: LoadWindow | None,
    reply_only: bool,
    ahead: bool,
    items_format: str = "",
    seen: ItemsSeen | None = None,
) -> Steps[tuple[LoadResult | RepairStart, int]]:
    """A Load's snapshot: its reply (with the history events read), or what a repair starts from.

    ``items_format``: the reply is the items of that format alone, their first page read here (:func:`first_items`;
    ``seen``: what the item cache knows of them, checked here, and where the whole history's items read are left).
    """
    row, settings = yield port.session_and_settings(session_id)
    if row is None:
        return LoadResult(session_meta(None, session_id, workdir), []), 0
    calls = yield from read_calls(port, session_id, live)
    split = calls.split
    if split.repair and repair:
        positions = repairing.assistant_positions(split.repair)
        assistants = [(p, t) for p, t, _item in (yield port.entries_at(session_id, positions))] if ahead else []
        return RepairStart(row, calls, assistants), 0
    result = _reply(row, settings, workdir, split.in_flight, calls.dropped, calls.hidden, [], reply_only)
    if window is not None:
        return (yield from windowed(port, result, window, items_format))
    if items_format:
        return (yield from first_items(port, result, items_format, seen))
    page, _read = yield port.history_page(session_id, row.clear_position, row.last_position, reply_only)
    if page is None:  # larger than one page: the caller streams it by the cursor
        return result, 0
    return dataclasses.replace(result, messages=drop_calls(project(page), calls.dropped), cursor=None), len(page)


def first_items(
    port: ReadPort, result: LoadResult, item_format: str, seen: ItemsSeen | None = None
) -> Steps[tuple[LoadResult, int]]:
    """``result`` with the first page of its cursor's items of ``item_format`` (``LoadResult.items``), read in the
    caller's transaction, and a cursor for the rest (None when the page holds them all); and the items read.

    The cursor must not choose entries by client id (its ``lead``): :func:`_chosen`'s are read by its pages.

    ``seen`` (a whole history's read only): the items the cache knows, used as the reply's first items when they
    still hold in this snapshot (:func:`_still_known`; the page then starts after them), and the place where the
    whole history's items are left when the reply holds them all (for the cache to keep).
    """
    cursor = result.cursor
    assert cursor is not None and not cursor.lead
    after = cursor.clear_position if cursor.start_after < 0 else cursor.start_after
    known = seen.known if seen is not None and cursor.start_after < 0 else None
    if known is not None and not (yield from _still_known(port, result, known)):
        known = None
    if known is not None and known.bounds.last_position == cursor.last_position:
        page, end = [], 0
    else:
        start = after if known is None else known.bounds.last_position
        page, end = yield port.item_page(cursor.session_id, start, cursor.last_position, item_format)
    items = page if known is None else [*known.items, *page]
    rest = dataclasses.replace(cursor, start_after=end) if 0 < end < cursor.last_position else None
    if seen is not None and cursor.start_after < 0 and rest is None and result.session.settings is not None:
        bounds = HistoryCursor(cursor.session_id, cursor.created_at, cursor.clear_position, cursor.last_position)
        seen.read = KnownItems.of(bounds, result.session.settings.incarnation, tuple(items))
    return dataclasses.replace(result, items=items, cursor=rest), len(page)


def _still_known(port: ReadPort, result: LoadResult, known: KnownItems) -> Steps[bool]:
    """True if ``known``'s items are still the first of ``result``'s whole history (``item_cache.py``): the same
    incarnation, creation time and clear position, a last position no lower, and no edit stored since that
    removed an entry at or before its last position (the stream's own check: ``check_cursor``)."""
    cursor, bounds = result.cursor, known.bounds
    assert cursor is not None
    settings = result.session.settings
    if (
        settings is None
        or settings.incarnation != known.incarnation
        or (bounds.session_id, bounds.created_at, bounds.clear_position)
        != (cursor.session_id, cursor.created_at, cursor.clear_position)
        or bounds.last_position > cursor.last_position
    ):
        return False
    if bounds.last_position == cursor.last_position:
        return True
    try:
        yield port.check_cursor(bounds)
    except SequenceConflictError:
        return False
    return True


def read_window(port: ReadPort, cursor: HistoryCursor, window: LoadWindow, paged: bool = False) -> Steps[WindowRead]:
    """A window's bounds (and its entries, if they fit one page) within the cursor's bounds.

    Its cost does not depend on the history's length: the start is found through the index of
    positions read backwards from the end (``last``), directly (``after_position``) or through
    the index of times (``after_time``); whether anything visible lies before it is one step
    back; the window's results of calls made before it (``lead``, they come first, as in the
    full history) come from the window's results and the index of calls; then the window's
    first page (not with ``paged``: the cursor's pages read it).
    """
    sid, clear, last = cursor.session_id, cursor.clear_position, cursor.last_position
    if window.last:
        found = yield port.nth_visible_back(sid, clear, last, window.last)
        start = clear + 1 if found is None else found
    elif window.after_time:
        found = yield port.first_position_after_time(sid, window.after_time, clear, last)
        start = last + 1 if found is None else found
    else:
        start = max(window.after_position, clear) + 1
    before = yield port.last_visible_before(sid, clear, start)
    lead = yield port.lead_positions(sid, start, last)
    page, read = (None, 0) if paged else (yield port.history_page(sid, start - 1, last, cursor.reply_only))
    messages = project_window(page, lead) if page is not None else None
    return WindowRead(start - 1, before is None, lead, messages, read)


def _chosen(port: ReadPort, result: LoadResult, cursor: HistoryCursor, window: LoadWindow) -> Steps[LoadResult]:
    """A Load's result cut to the entries its client ids (or prefix) choose, in position order.

    The positions come through the index of client ids; the cursor then reads exactly those
    entries (as its ``lead``, page by page) and nothing after them. ``complete`` only if they are
    every visible entry.
    """
    after = max(window.after_position, cursor.clear_position)
    chosen = EntrySelection(window.client_ids, window.client_id_prefix, after, cursor.last_position)
    limit = window.max_entries if window.client_id_prefix and window.max_entries else 0
    found: list[tuple[int, str]] = yield port.select_positions(cursor.session_id, chosen, limit + 1 if limit else 0)
    positions = tuple(p for p, _type in (found[:limit] if limit else found))
    complete = len(positions) == result.session.message_count
    reading = dataclasses.replace(cursor, start_after=cursor.last_position, lead=positions)
    return dataclasses.replace(result, messages=[], cursor=reading, complete=complete)


def windowed(
    port: ReadPort, result: LoadResult, window: LoadWindow, items_format: str = ""
) -> Steps[tuple[LoadResult, int]]:
    """A Load's result cut to a window, bounded by its cursor; and the history events read (``items_format``: the
    window's items alone, :func:`first_items`).

    A ``before_position`` lowers the cursor's bound below it; the reply is then complete only if
    no visible entry lies beyond the bound either.
    """
    cursor = result.cursor
    assert cursor is not None
    if window.before_position and window.before_position - 1 < cursor.last_position:
        cursor = dataclasses.replace(cursor, last_position=window.before_position - 1)
    if window.by_client_id:
        return (yield from _chosen(port, result, cursor, window)), 0
    found = yield from read_window(port, cursor, window, bool(items_format))
    complete = found.complete
    if complete and result.cursor is not None and cursor.last_position < result.cursor.last_position:
        beyond = yield port.nth_visible_back(cursor.session_id, cursor.last_position, result.cursor.last_position, 1)
        complete = beyond is None
    if found.messages is not None:
        shown = drop_calls(found.messages, frozenset(cursor.dropped_ids)) if cursor.dropped_ids else found.messages
        return dataclasses.replace(result, messages=shown, cursor=None, complete=complete), found.events_read
    if items_format:  # in position order: the window's lead lies in its range, in no other place
        cursor = dataclasses.replace(cursor, start_after=found.start_after)
        return (
            yield from first_items(port, dataclasses.replace(result, cursor=cursor, complete=complete), items_format)
        )
    cursor = dataclasses.replace(cursor, start_after=found.start_after, lead=found.lead)
    return dataclasses.replace(result, messages=[], cursor=cursor, complete=complete), found.events_read


def _checked_window(
    port: ReadPort, result: LoadResult, window: LoadWindow, items_format: str
) -> Steps[tuple[LoadResult, int]]:
    assert result.cursor is not None
    yield port.check_cursor(result.cursor)
    return (yield from windowed(port, result, window, items_format))


def repair_steps(
    port: Port, live: RunsLive, session_id: str, workdir: str, trace_id: str, plan: RepairPlan | None
) -> Steps[LoadResult]:
    """Repair interrupted calls in the caller's write transaction; the reply is then read by its cursor.

    ``plan`` (repairing ahead) was made from a snapshot at its ``last_position``: if nothing was
    written to the session since, it is written as it is, and only the calls a run appended, or
    pending ones, are read (to report those in flight); otherwise (or with no plan) the repair is
    planned again here. A run live when planning may have ended since (its calls stay open until
    the next Load); runs never come back to life, so a plan never repairs a call now in flight.
    """
    row, now = yield port.session_row(session_id)
    if row is None:
        return LoadResult(session_meta(None, session_id, workdir), [])
    if plan is not None and plan.unchanged(row.created_at, row.clear_position, row.last_position):
        to_repair: Sequence[OpenCall] = plan.calls
        payloads: Sequence[str] = plan.payloads
        dropped, hidden = plan.dropped, plan.hidden
        owned = yield port.owned_open_calls(session_id)
        alive: set[str] = yield live({c.run_id for c in owned if c.run_id})
        in_flight = repairing.in_flight_calls(owned, alive.__contains__)
    else:
        calls = yield from read_calls(port, session_id, live)
        to_repair, in_flight = calls.split.repair, calls.split.in_flight
        dropped, hidden = calls.dropped, calls.hidden
        payloads = []
        if to_repair:
            entries = yield port.entries_at(session_id, repairing.assistant_positions(to_repair))
            payloads = repairing.synthetic_payloads(to_repair, repairing.call_names_of(t for _p, t, _i in entries))
    repairs: list[Repair] = []
    if to_repair:
        repairs = repairing.place(to_repair, row.last_position)
        yield port.write_repairs(session_id, repairs, payloads, trace_id, now)
        yield port.advance_session(session_id, repairs[-1].position, len(repairs), now, workdir)
    row, settings = yield port.session_and_settings(session_id)
    assert row is not None  # the row is held (locked on PostgreSQL, the one writer on SQLite)
    return _reply(row, settings, workdir, in_flight, dropped, hidden, repairs)


def repair_chunk_steps(
    port: Port, session_id: str, trace_id: str, chunk: RepairPlan
) -> Steps[tuple[list[Repair], int] | None]:
    """Write one chunk of a large repair (not the last); its repairs and the session's new last position.

    Calls answered since planning (a live result, or a concurrent Load's repair) are skipped.
    None if the session was cleared, erased or replaced since planning: the caller then plans
    again in its last transaction.
    """
    row, now = yield port.session_row(session_id)
    if row is None or not chunk.same_history(row.created_at, row.clear_position):
        return None
    still_open = yield port.still_open(session_id, [c.tool_call_id for c in chunk.calls])
    todo = [(c, p) for c, p in zip(chunk.calls, chunk.payloads, strict=True) if c.tool_call_id in still_open]
    if not todo:
        return [], row.last_position
    repairs = repairing.place([c for c, _p in todo], row.last_position)
    yield port.write_repairs(session_id, repairs, [p for _c, p in todo], trace_id, now)
    yield port.advance_session(session_id, repairs[-1].position, len(repairs), now, "")
    return repairs, repairs[-1].position


def _chunk(
    session_id: str, trace_id: str, chunk: RepairPlan, port: Port, _live: RunsLive
) -> Steps[tuple[list[Repair], int] | None]:
    return repair_chunk_steps(port, session_id, trace_id, chunk)


async def _repair_ahead(
    host: LoadHost, session_id: str, trace_id: str, start: RepairStart
) -> tuple[RepairPlan | None, list[Repair]]:
    """Write all but the last chunk of a repair planned from the snapshot; the last chunk's plan and the repairs
    written.

    Each chunk is one write, and after each the loop pauses as long as it took, so that a large
    repair takes at most about half of the writer's time. If the caller goes away between
    chunks, the chunks written stand (each is whole, in call order) and the next Load repairs
    the rest. None for a plan: the session changed under the chunks, plan again at the end.
    """
    row, calls = start.row, start.calls
    to_repair = calls.split.repair
    payloads = await repairing.plan_payloads(to_repair, start.assistants)
    earlier: list[Repair] = []
    begin, last = 0, row.last_position
    chunk_size = repairing.REPAIR_CHUNK
    while len(to_repair) - begin > chunk_size:
        chunk = RepairPlan(
            row.created_at,
            row.clear_position,
            last,
            tuple(to_repair[begin : begin + chunk_size]),
            payloads[begin : begin + chunk_size],
        )
        begin += chunk_size
        began = time.perf_counter()
        done = await host.load_write(session_id, functools.partial(_chunk, session_id, trace_id, chunk))
        if done is None:
            return None, earlier
        earlier.extend(done[0])
        last = done[1]
        await asyncio.sleep((time.perf_counter() - began) * repairing.REPAIR_PAUSE_RATIO)
    plan = RepairPlan(
        row.created_at,
        row.clear_position,
        last,
        tuple(to_repair[begin:]),
        payloads[begin:],
        calls.dropped,
        calls.hidden,
    )
    return plan, earlier


async def load(
    host: LoadHost,
    session_id: str,
    workdir: str,
    trace_id: str,
    *,
    repair: bool = True,
    window: LoadWindow | None = None,
    reply_only: bool = False,
    items_format: str = "",
    cache: ItemCache | None = None,
) -> LoadResult:
    """``Storage.load`` for any backend ``host`` (see the module docstring and ``Storage.load``); ``cache``: the
    items of whole Loads of items, checked in the snapshot and kept when the reply holds them all (``item_cache.py``).
    """
    ahead = host.repairs_ahead
    seen, ticket = None, 0
    if cache is not None and items_format and window is None:
        known, ticket = cache.get(session_id, items_format)
        seen = ItemsSeen(known)
    found, read = await host.load_snapshot(
        lambda port, live: read_load(
            port,
            live,
            session_id,
            workdir,
            repair=repair,
            window=window,
            reply_only=reply_only,
            ahead=ahead,
            items_format=items_format,
            seen=seen,
        )
    )
    host.counters.history_events_read += read
    if isinstance(found, LoadResult):
        if cache is not None and seen is not None:
            if seen.read is not None:
                cache.put(items_format, seen.read, ticket)
            elif seen.known is not None:  # no longer what this snapshot holds (the session gone, say): not kept
                cache.drop(session_id)
        return found
    plan, earlier = await _repair_ahead(host, session_id, trace_id, found) if ahead else (None, [])
    result = await host.load_write(
        session_id, lambda port, live: repair_steps(port, live, session_id, workdir, trace_id, plan)
    )
    if earlier:
        result = dataclasses.replace(result, repairs=earlier + result.repairs)
    host.counters.repairs += len(result.repairs)
    if result.repairs:
        _log.info("event=repaired session=%s calls=%d", session_id, len(result.repairs))
    if reply_only and result.cursor is not None:
        result = dataclasses.replace(result, cursor=dataclasses.replace(result.cursor, reply_only=True))
    if window is not None and result.cursor is not None:
        bounded = result
        result, read = await host.load_snapshot(
            lambda port, _live: _checked_window(port, bounded, window, items_format)
        )
        host.counters.history_events_read += read
    return result
