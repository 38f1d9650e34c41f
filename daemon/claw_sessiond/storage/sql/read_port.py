"""A Load's snapshot reads and the page reads (``storage/port.py``'s ReadPort and PageReads), once for both SQL
backends.

:class:`SqlReadPort` answers the reads of ``storage/loading.py``'s snapshot, :class:`SqlPageReads`
those of one step of ``storage/history_reads.py`` (a Load's pages, Watch batches, Export pages),
each over a :class:`~.dialect.Conn` inside the caller's read transaction. The reads the repair
transaction shares with a Load (the row and settings, the open calls, the entries at positions) are
the functions here, which ``port.py`` calls too.

A bounded Load's reads (``loading.read_window``) cost what the window holds, not the history: the
start through ``events_position`` read backwards from the end (``last``: N index entries), or
through ``events_session_ts`` (``after_time``: the index entries after the time); one step back
from the start; the window's results of calls made before it through the ``tool_calls`` primary
key; then the window's first page (:func:`main_rows`).

Must never: decide (``loading.py`` and the rules do), or write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from ... import repair as repairing
from ...events import message_from_payload
from ...history import OpenCall
from ...model import EntrySelection, HistoryCursor, Message, SessionSettings
from ...policy import ToolPolicy, policy_from_json
from .. import history_reads
from ..paging import ITEM_PAGE_ROWS, PAGE_BYTES, PAGE_ROWS, cut, decode_rows
from ..port import SESSION_COLS, SETTINGS_COLS, SETTINGS_COUNT, PageReads, SessionRow, session_row, settings_of
from .dialect import Conn, Dialect
from .entry_select import select_positions

__all__ = [
    "HISTORY_COLS",
    "Reading",
    "SqlPageReads",
    "SqlReadPort",
    "entries_at",
    "incarnation",
    "main_rows",
    "open_calls",
    "session_and_settings",
    "session_policy",
]

Decode = Callable[..., Message]
#: The columns of a history row, in ``events.message_from_payload``'s order.
HISTORY_COLS: Final = "position, type, trace_id, ts, payload, format, item"
_EXPORT_COLS: Final = "event_id, session_id, position, type, trace_id, ts, schema_version, payload, format, item"
#: An item at most this large comes with the first read of its page (``SqlPageReads.item_page``): a page of them is at
#: most ``PAGE_BYTES``.
_INLINE_ITEM: Final = PAGE_BYTES // ITEM_PAGE_ROWS
#: History events that are entries (not a clear, not an edit record), and not hidden by an edit.
_VISIBLE: Final = "type NOT IN ('clear', 'edit') AND hidden_by IS NULL"
#: The open tool calls of a session (columns in the order of ``history.OpenCall``), through the index of open
#: calls (SQLite: named, or its planner walks the primary key, every call the session ever made).
_OPEN_CALLS: Final = (
    "SELECT call_id, assistant_position, call_index, run_id, pending, repair_mode FROM tool_calls"
    "{open_calls_index} WHERE session_id = $1 AND result_position IS NULL"
)


@dataclass(frozen=True)
class Reading:
    """What a Load reads of each entry (``cols``) and how it makes a message of the row (``decode``)."""

    cols: str
    decode: Decode


#: Whole messages: the history columns (a backend that stores an encoded reply form names its own).
WHOLE: Final = Reading(HISTORY_COLS, message_from_payload)


async def session_and_settings(
    conn: Conn, q: Mapping[str, str], session_id: str
) -> tuple[SessionRow | None, SessionSettings | None]:
    """The session's row and settings (both None if it is not stored), in the caller's transaction."""
    sql = q[f"SELECT {SESSION_COLS}, {SETTINGS_COLS} FROM sessions WHERE session_id = $1"]
    values = await conn.fetchrow(sql, session_id)
    return (None, None) if values is None else (session_row(values), settings_of(values[-SETTINGS_COUNT:]))


async def session_policy(conn: Conn, q: Mapping[str, str], session_id: str) -> ToolPolicy:
    """The session's stored tool policy (empty for a session without one)."""
    sql = q["SELECT tool_policy FROM sessions WHERE session_id = $1"]
    return policy_from_json(await conn.fetchval(sql, session_id))


async def incarnation(conn: Conn, q: Mapping[str, str], session_id: str) -> str | None:
    """The session row's incarnation (None if it is not stored)."""
    found = await conn.fetchval(q["SELECT incarnation FROM sessions WHERE session_id = $1"], session_id)
    return None if found is None else str(found)


async def open_calls(
    conn: Conn, d: Dialect, session_id: str, *, owned: bool = False, on_loop: bool = True
) -> list[OpenCall]:
    """The session's open calls (``owned``: only those a run appended, or pending: the only ones that can be in
    flight), in the caller's transaction (``on_loop``: on an event loop, which it yields between slices of
    calls; not so on SQLite's writer thread)."""
    rows = await conn.fetch(d.sql[_OPEN_CALLS + (" AND (run_id <> '' OR pending)" if owned else "")], session_id)
    # Up to --max-open-tool-calls rows: built in slices, yielding the loop between them.
    calls: list[OpenCall] = []
    for i in range(0, len(rows), repairing.PLAN_SLICE):
        if i and on_loop:
            await asyncio.sleep(0)
        calls.extend(
            OpenCall(d.from_text(r[0]), int(r[1]), int(r[2]), str(r[3]), bool(r[4]), str(r[5]))
            for r in rows[i : i + repairing.PLAN_SLICE]
        )
    return calls


async def entries_at(conn: Conn, d: Dialect, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
    """``(position, payload, has an item)`` of the session's events at ``positions``, in the caller's transaction."""
    sql = (
        "SELECT position, payload, item IS NOT NULL FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])"
    )
    return [(int(r[0]), str(r[1]), bool(r[2])) for r in await d.each(conn, sql, positions, session_id)]


async def main_rows(
    conn: Conn, q: Mapping[str, str], session_id: str, after: int, last: int, cols: str
) -> tuple[list[Any], bool]:
    """The next page of visible history rows (``cols``) after ``after`` (position ≤ ``last``); True if nothing
    follows."""
    sql = q[
        "SELECT position, {event_bytes} FROM events WHERE session_id = $1 AND position > $2 AND position <= $3 "
        f"AND {_VISIBLE} ORDER BY position LIMIT $4"
    ]
    sizes = await conn.fetch(sql, session_id, after, last, PAGE_ROWS)
    if not sizes:
        return [], True
    n = cut(sizes, PAGE_BYTES)
    end = int(sizes[n - 1][0])
    sql = f"SELECT {cols} FROM events WHERE session_id = $1 AND position > $2 AND position <= $3 AND {_VISIBLE} "
    rows = await conn.fetch(q[sql + "ORDER BY position"], session_id, after, end)
    return list(rows), n == len(sizes) < PAGE_ROWS


class SqlPageReads:
    """The reads of one step of a paged history read, in the caller's read transaction."""

    __slots__ = ("_conn", "_d", "_q")

    DIALECT: ClassVar[Dialect]
    #: How an entry is read whole, and for a reply only (``ReadPort.history_page``'s ``reply_only``).
    READINGS: ClassVar[tuple[Reading, Reading]] = (WHOLE, WHOLE)

    def __init__(self, conn: Conn) -> None:
        self._conn = conn
        self._d = self.DIALECT
        self._q = self._d.sql

    async def session_bounds(self, session_id: str) -> tuple[str, int, int] | None:
        sql = "SELECT created_at, clear_position, last_position FROM sessions WHERE session_id = $1"
        row = await self._conn.fetchrow(self._q[sql], session_id)
        return None if row is None else (str(row[0]), int(row[1]), int(row[2]))

    async def marks_after(self, session_id: str, position: int) -> list[tuple[str, str]]:
        sql = "SELECT type, payload FROM events WHERE session_id = $1 AND position > $2 AND type IN ('edit', 'clear')"
        return [(str(r[0]), str(r[1])) for r in await self._conn.fetch(self._q[sql], session_id, position)]

    async def visible_page(self, session_id: str, after: int, last_position: int, reply_only: bool) -> list[Message]:
        reading = self.READINGS[reply_only]
        rows, _complete = await main_rows(self._conn, self._q, session_id, after, last_position, reading.cols)
        return await decode_rows(rows, lambda r: reading.decode(*r))

    async def entries_by_position(self, session_id: str, positions: Sequence[int], reply_only: bool) -> list[Message]:
        reading = self.READINGS[reply_only]
        sql = f"SELECT {reading.cols} FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])"
        rows = await self._d.each(self._conn, sql, positions, session_id)
        return await decode_rows(rows, lambda r: reading.decode(*r))

    async def entry_sizes(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, int]]:
        sql = "SELECT position, {event_bytes} FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])"
        return [(int(r[0]), int(r[1] or 0)) for r in await self._d.each(self._conn, sql, positions, session_id)]

    async def item_page(
        self, session_id: str, after: int, last_position: int, item_format: str
    ) -> tuple[list[bytes], int]:
        # One read for a page of small items (inline, at most ITEM_PAGE_ROWS x _INLINE_ITEM bytes); the others (None
        # in it: larger, or no item) by position: their sizes, then, once the page is cut at PAGE_BYTES, their items.
        # A small item's size is its length, so the read carries no length column (a column is a value made per row:
        # a sixth of a page's read).
        sql = (
            "SELECT position, CASE WHEN length(item) <= $6 THEN item END FROM events "
            f"WHERE session_id = $1 AND position > $2 AND position <= $3 AND {_VISIBLE} AND format = $4 "
            "ORDER BY position LIMIT $5"
        )
        args = (session_id, after, last_position, item_format, ITEM_PAGE_ROWS, _INLINE_ITEM)
        rows = await self._conn.fetch(self._q[sql], *args)
        if not rows:
            return [], 0
        items = [r[1] for r in rows]
        if None not in items:  # small items only (the usual case): the page as read, whole
            return items, last_position if len(rows) < ITEM_PAGE_ROWS else int(rows[-1][0])
        sql = "SELECT position, length(item) FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])"
        others = [int(r[0]) for r in rows if r[1] is None]
        size_of = {int(p): n for p, n in await self._d.each(self._conn, sql, others, session_id)}
        sizes = [len(i) if i is not None else size_of[int(r[0])] for r, i in zip(rows, items, strict=True)]
        n = cut([(r[0], size) for r, size in zip(rows, sizes, strict=True)], PAGE_BYTES)
        end = last_position if n == len(rows) < ITEM_PAGE_ROWS else int(rows[n - 1][0])
        rows, items, sizes = rows[:n], items[:n], sizes[:n]
        large = [int(r[0]) for r, size in zip(rows, sizes, strict=True) if r[1] is None and size]
        sql = "SELECT position, item FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])"
        found = {int(p): bytes(i) for p, i in await self._d.each(self._conn, sql, large, session_id)}
        return [
            bytes(i) if i is not None else found[int(r[0])]
            for r, i, size in zip(rows, items, sizes, strict=True)
            if size
        ], end

    async def items_at(self, session_id: str, positions: Sequence[int], item_format: str) -> list[tuple[int, bytes]]:
        sql = "SELECT position, item FROM events WHERE session_id = $1 AND format = $2 AND position = ANY($3::bigint[])"
        rows = await self._d.each(self._conn, sql, positions, session_id, item_format)
        return [(int(r[0]), bytes(r[1])) for r in rows if r[1]]

    async def known_calls(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        sql = "SELECT call_id FROM tool_calls WHERE session_id = $1 AND call_id = ANY($2::text[])"
        rows = await self._d.each(self._conn, sql, [self._d.text(c) for c in call_ids], session_id)
        return {self._d.from_text(r[0]) for r in rows}

    async def far_results(self, session_id: str, call_ids: Sequence[str], after: int, last_position: int) -> list[Any]:
        sql = (
            "SELECT e.position, {event_bytes} FROM tool_calls AS t "
            "JOIN events AS e ON e.session_id = t.session_id AND e.position = t.result_position "
            "WHERE t.session_id = $1 AND t.result_position > $2 AND t.result_position <= $3 "
            "AND t.call_id = ANY($4::text[])"
        )
        ids = [self._d.text(c) for c in call_ids]
        return sorted(await self._d.each(self._conn, sql, ids, session_id, after, last_position), key=lambda r: r[0])

    async def incarnation(self, session_id: str) -> str | None:
        return await incarnation(self._conn, self._q, session_id)

    async def event_sizes_after(self, session_id: str, position: int, limit: int) -> list[Any]:
        sql = (
            "SELECT position, {event_bytes} FROM events WHERE session_id = $1 AND position > $2 "
            "ORDER BY position LIMIT $3"
        )
        return list(await self._conn.fetch(self._q[sql], session_id, position, limit))

    async def history_events(self, session_id: str, after: int, upto: int) -> list[Any]:
        sql = f"SELECT {HISTORY_COLS} FROM events WHERE session_id = $1 AND position > $2 AND position <= $3 "
        return list(await self._conn.fetch(self._q[sql + "ORDER BY position"], session_id, after, upto))

    async def export_sizes(self, session_id: str, after_id: int, max_id: int, limit: int) -> list[Any]:
        sql = (
            "SELECT event_id, {event_bytes} FROM events "
            "WHERE session_id = $1 AND event_id > $2 AND event_id <= $3 ORDER BY event_id LIMIT $4"
        )
        return list(await self._conn.fetch(self._q[sql], session_id, after_id, max_id, limit))

    async def export_rows(self, session_id: str, after_id: int, upto_id: int) -> list[Any]:
        sql = f"SELECT {_EXPORT_COLS} FROM events WHERE session_id = $1 AND event_id > $2 AND event_id <= $3 "
        return list(await self._conn.fetch(self._q[sql + "ORDER BY event_id"], session_id, after_id, upto_id))


_: type[PageReads] = SqlPageReads


class SqlReadPort:
    """The snapshot reads of a Load over a connection, in the caller's read transaction; :data:`PAGES` is the
    backend's page reads (its dialect and readings)."""

    __slots__ = ("_conn", "_d", "_on_loop", "_q")

    PAGES: ClassVar[type[SqlPageReads]]

    def __init__(self, conn: Conn, *, on_loop: bool = True) -> None:
        """``on_loop``: the reads run on an event loop (they yield it between slices of a long read); False
        where every statement answers at once on the connection's own thread (SQLite's snapshot)."""
        self._conn = conn
        self._d = self.PAGES.DIALECT
        self._q = self._d.sql
        self._on_loop = on_loop

    async def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        return await session_and_settings(self._conn, self._q, session_id)

    async def open_calls(self, session_id: str) -> list[OpenCall]:
        return await open_calls(self._conn, self._d, session_id, on_loop=self._on_loop)

    async def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        return await select_positions(self._d, self._conn, session_id, selection, limit)

    async def session_policy(self, session_id: str) -> ToolPolicy:
        return await session_policy(self._conn, self._q, session_id)

    async def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        return await entries_at(self._conn, self._d, session_id, positions)

    async def history_page(
        self, session_id: str, after: int, last_position: int, reply_only: bool
    ) -> tuple[list[Message] | None, int]:
        reading = self.PAGES.READINGS[reply_only]
        rows, complete = await main_rows(self._conn, self._q, session_id, after, last_position, reading.cols)
        decode = reading.decode
        return ([decode(*r) for r in rows] if complete else None), len(rows)

    async def item_page(
        self, session_id: str, after: int, last_position: int, item_format: str
    ) -> tuple[list[bytes], int]:
        return await self.PAGES(self._conn).item_page(session_id, after, last_position, item_format)

    async def nth_visible_back(self, session_id: str, clear_position: int, last_position: int, n: int) -> int | None:
        sql = (
            f"SELECT position FROM events WHERE session_id = $1 AND position > $2 AND position <= $3 AND {_VISIBLE} "
            "ORDER BY position DESC LIMIT 1 OFFSET $4"
        )
        found = await self._conn.fetchval(self._q[sql], session_id, clear_position, last_position, n - 1)
        return None if found is None else int(found)

    async def first_position_after_time(
        self, session_id: str, after_time: str, clear_position: int, last_position: int
    ) -> int | None:
        # Through the index of history times: the entries stored after the time, not the history.
        sql = (
            "SELECT min(position) FROM events{ts_index} "
            "WHERE session_id = $1 AND ts > $2 AND position IS NOT NULL AND position > $3 AND position <= $4"
        )
        found = await self._conn.fetchval(self._q[sql], session_id, after_time, clear_position, last_position)
        return None if found is None else int(found)

    async def last_visible_before(self, session_id: str, clear_position: int, position: int) -> int | None:
        sql = (
            f"SELECT position FROM events WHERE session_id = $1 AND position > $2 AND position < $3 AND {_VISIBLE} "
            "ORDER BY position DESC LIMIT 1"
        )
        found = await self._conn.fetchval(self._q[sql], session_id, clear_position, position)
        return None if found is None else int(found)

    async def lead_positions(self, session_id: str, start: int, last_position: int) -> tuple[int, ...]:
        sql = (
            "SELECT e.position FROM events AS e JOIN tool_calls AS t "
            "ON t.session_id = e.session_id AND t.call_id = {result_call_id} "
            "WHERE e.session_id = $1 AND e.position >= $2 AND e.position <= $3 AND e.type IN ('tool_result', 'repair') "
            "AND e.hidden_by IS NULL AND t.assistant_position < $2 ORDER BY t.assistant_position, e.position"
        )
        return tuple(int(r[0]) for r in await self._conn.fetch(self._q[sql], session_id, start, last_position))

    async def check_cursor(self, cursor: HistoryCursor) -> None:
        await history_reads.guard(self.PAGES(self._conn), cursor)
