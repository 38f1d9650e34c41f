"""Paged reads for the streaming RPCs (Load, Export, Watch) and chunked scans (ListSessions).

Part of the SQLite backend (its SQL lives in this package only). What
this module owns is *how much* a read holds at once. A stream whose client
stops reading must pin a small, fixed amount of memory, not a session, so:

- history and export events are read page by page (at most
  :data:`PAGE_ROWS` events and about :data:`PAGE_BYTES` payload bytes a
  page, never fewer than one event), each page in its own short read
  transaction, and the next page is read only after the caller has handed
  the previous one to the transport (the caller is an async generator that
  yields each page; gRPC's flow control blocks that yield while the
  client's window is full);
- no read connection is ever held across a yield, so a stalled stream
  cannot take one of the (two) shared read connections from other RPCs;
- scans that may touch every session (ListSessions) run in chunks of
  :data:`SCAN_ROWS` rows, giving the connection back between chunks, so a
  scan that matches nothing interleaves with other reads and stops at the
  next chunk when its caller goes away (cancellation).

Consistency without a long-lived snapshot: a session's events at positions
(or event ids) up to the bound read at the start never change, except when
the session is erased (delete, retention, import replace) or cleared (a
clear drops the tool-call index the projection uses). Every page therefore
re-checks, in its own transaction, that the session still has the
``created_at`` and ``clear_position`` seen at the start; if not, the stream
ends with ABORTED (``SEQUENCE_CONFLICT``: load again), never with a mix.

Must never: yield while holding a read connection, or read a page before
the previous one was handed on.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Final

import aiosqlite

from ...errors import Reason, SequenceConflictError
from ...events import edit_removed, erased_count, message_from_payload, reply_entry
from ...model import HistoryCursor, Message, SessionSummary
from ..paging import (
    PAGE_BYTES,
    PAGE_ROWS,
    SCAN_ROWS,
    Segment,
    arrange_page,
    decode_rows,
)
from ..paging import cut as _cut

__all__ = [
    "PAGE_BYTES",
    "PAGE_ROWS",
    "REPLY",
    "SCAN_ROWS",
    "WHOLE",
    "Reading",
    "check_cursor",
    "export_pages",
    "history_pages",
    "label_match",
    "labelled_sessions",
    "main_rows",
    "scan_sessions",
    "watch_rows_after",
]

#: Tool-call ids looked up per query (well under SQLite's 32766 parameters).
_IDS_PER_QUERY: Final = 500

Reader = Callable[[], AbstractAsyncContextManager[aiosqlite.Connection]]
Decode = Callable[[int, str, str, str, str, str | None, bytes | None, bytes | None], Message]

_HISTORY_COLS: Final = "position, type, trace_id, ts, payload, format, item"
#: What a Load reads of an entry: the history columns and its stored encoded reply form (``Message.encoded``).
_LOAD_COLS: Final = f"{_HISTORY_COLS}, encoded"
#: The same for a reply only: an entry that ``events.reply_entry`` sends as stored leaves its payload
#: and item unread (its encoded form holds them; SQLite then copies neither out of the page).
_AS_STORED: Final = "encoded IS NOT NULL AND type IN ('system_message', 'user_message', 'other_entry')"
_REPLY_COLS: Final = (
    f"position, type, trace_id, ts, CASE WHEN {_AS_STORED} THEN NULL ELSE payload END, format, "
    f"CASE WHEN {_AS_STORED} THEN NULL ELSE item END, encoded"
)


@dataclass(frozen=True)
class Reading:
    """What a Load reads of each entry (``cols``) and how it makes a message of the row (``decode``)."""

    cols: str
    decode: Decode


#: Whole messages (the offline CLI, anything that reads the entries themselves).
WHOLE: Final = Reading(_LOAD_COLS, message_from_payload)
#: Messages for a Load's reply only (``Storage.load(reply_only=True)``).
REPLY: Final = Reading(_REPLY_COLS, reply_entry)
_EXPORT_COLS: Final = "event_id, session_id, position, type, trace_id, ts, schema_version, payload, format, item"
#: What an event weighs in a page: its payload and its item (large items fill a page alone).
EVENT_BYTES: Final = "length(CAST(payload AS BLOB)) + coalesce(length(item), 0)"
#: The entries of the projection among a session's history events: not a clear or an edit, not hidden by one.
_VISIBLE: Final = "type NOT IN ('clear', 'edit') AND hidden_by IS NULL"


async def _guard(conn: aiosqlite.Connection, cursor: HistoryCursor, *, clears: bool = True) -> None:
    """Raise if the session was erased (or, with ``clears``, cleared or edited before the cursor's bound; without,
    cleared with erase) since the cursor was taken (caller's tx)."""
    cur = await conn.execute(
        "SELECT created_at, clear_position, last_position FROM sessions WHERE session_id = ?", (cursor.session_id,)
    )
    row = await cur.fetchone()
    changed = row is None or row[0] != cursor.created_at or (clears and row[1] != cursor.clear_position)
    if not changed and row is not None and row[2] > cursor.last_position:
        # Written since the cursor was taken: an edit that hid entries up to its bound (the projection
        # changed under the stream), or, for an export, a clear that erased events it still has to send.
        found = await conn.execute_fetchall(
            "SELECT type, payload FROM events WHERE session_id = ? AND position > ? AND type IN ('edit', 'clear')",
            (cursor.session_id, cursor.last_position),
        )
        changed = any(_moves_bound(str(t), str(p), cursor.last_position, clears) for t, p in found)
    if changed:
        actual = int(row[2]) if row is not None else 0
        raise SequenceConflictError(
            f"session {cursor.session_id!r} was cleared, edited or erased while its history was being streamed; "
            "load it again",
            reason=Reason.SEQUENCE_CONFLICT,
            expected=cursor.last_position,
            actual=actual,
        )


def _moves_bound(event_type: str, payload: str, bound: int, clears: bool) -> bool:
    """True if an event written after a cursor's bound changes what the stream reads up to it."""
    if event_type == "edit":
        removed = edit_removed(payload)
        return clears and bool(removed) and removed[0] <= bound
    return not clears and erased_count(payload) is not None


async def check_cursor(conn: aiosqlite.Connection, cursor: HistoryCursor) -> None:
    """Raise if the session was erased or cleared since the cursor was taken (caller's transaction).

    Raises:
        SequenceConflictError: reason SEQUENCE_CONFLICT.
    """
    await _guard(conn, cursor)


async def _main_rows(
    conn: aiosqlite.Connection, session_id: str, after: int, last: int, cols: str = _LOAD_COLS
) -> tuple[list[Any], bool]:
    """The next page of visible history rows (``cols``) after ``after`` (position ≤ ``last``); True if nothing
    follows."""
    sizes = await conn.execute_fetchall(
        f"SELECT position, {EVENT_BYTES} FROM events "
        f"WHERE session_id = ? AND position > ? AND position <= ? AND {_VISIBLE} ORDER BY position LIMIT ?",
        (session_id, after, last, PAGE_ROWS),
    )
    sizes = list(sizes)
    if not sizes:
        return [], True
    n = _cut(sizes, PAGE_BYTES)
    end = int(sizes[n - 1][0])
    rows = await conn.execute_fetchall(
        f"SELECT {cols} FROM events "
        f"WHERE session_id = ? AND position > ? AND position <= ? AND {_VISIBLE} ORDER BY position",
        (session_id, after, end),
    )
    return list(rows), n == len(sizes) < PAGE_ROWS


main_rows = _main_rows  # the first page of a Load, or of its window (``read_port.py``)


async def _in(
    conn: aiosqlite.Connection, sql: str, head: tuple[Any, ...], ids: Sequence[Any], tail: tuple[Any, ...] = ()
) -> list[Any]:
    """Run ``sql`` (with one ``{ids}`` placeholder list) over ``ids`` in chunks."""
    out: list[Any] = []
    for i in range(0, len(ids), _IDS_PER_QUERY):
        part = ids[i : i + _IDS_PER_QUERY]
        marks = ",".join("?" * len(part))
        out.extend(await conn.execute_fetchall(sql.format(ids=marks), (*head, *part, *tail)))
    return out


async def history_pages(reader: Reader, cursor: HistoryCursor, reading: Reading) -> AsyncGenerator[list[Message], None]:
    """The visible history in conversation order (as ``history.project`` orders it), page by page.

    Each assistant message is followed by its tool results in position
    order; results that lie beyond the assistant's page are fetched by
    position right after it ("far" results, for example synthetic repairs),
    in byte-bounded groups, and skipped where they occur later.

    A bounded read's cursor (``start_after`` set) starts after that position,
    and first sends its ``lead``: the window's results of calls made before it.

    Raises:
        SequenceConflictError: the session was cleared or erased meanwhile.
    """
    after = cursor.clear_position if cursor.start_after < 0 else cursor.start_after
    in_flight = set(cursor.in_flight_ids)
    if cursor.lead:
        async for lead in _positions_by_pages(reader, cursor, list(cursor.lead), reading):
            yield lead
    while after < cursor.last_position:
        # (messages to send) or (far result positions grouped by size) in order.
        segments: list[tuple[list[Message], list[list[int]]]] = []
        async with reader() as conn:
            try:
                await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
                await _guard(conn, cursor)
                rows, _complete = await _main_rows(conn, cursor.session_id, after, cursor.last_position, reading.cols)
                if not rows:
                    break
                page_end = int(rows[-1][0])
                messages = await _decode_rows(rows, reading.decode)
                segments = await _arrange(conn, cursor, messages, page_end, in_flight)
            finally:
                await conn.execute("COMMIT")
        after = page_end
        for shown, far_groups in segments:
            if shown:
                yield shown
            for group in far_groups:
                found = await _rows_at(reader, cursor, reading.cols, group)
                found.sort(key=lambda r: r[0])
                yield await _decode_rows(found, reading.decode)


async def _rows_at(reader: Reader, cursor: HistoryCursor, columns: str, positions: Sequence[int]) -> list[Any]:
    """``columns`` of the cursor's session's events at ``positions`` (in no order), in one read
    transaction that first checks the cursor still holds (``_guard``)."""
    async with reader() as conn:
        try:
            await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
            await _guard(conn, cursor)
            return await _in(
                conn,
                f"SELECT {columns} FROM events WHERE session_id = ? AND position IN ({{ids}})",
                (cursor.session_id,),
                positions,
            )
        finally:
            await conn.execute("COMMIT")


async def _positions_by_pages(
    reader: Reader, cursor: HistoryCursor, positions: list[int], reading: Reading
) -> AsyncGenerator[list[Message], None]:
    """The events at ``positions``, in that order, in pages of about :data:`PAGE_BYTES` (each its own read)."""
    for i in range(0, len(positions), PAGE_ROWS):
        part = positions[i : i + PAGE_ROWS]
        sizes = {int(r[0]): int(r[1] or 0) for r in await _rows_at(reader, cursor, f"position, {EVENT_BYTES}", part)}
        n = _cut([(p, sizes.get(p, 0)) for p in part], PAGE_BYTES)
        while part:
            group, part = part[:n], part[n:]
            found = await _rows_at(reader, cursor, reading.cols, group)
            order = {p: k for k, p in enumerate(group)}
            found.sort(key=lambda r: order[int(r[0])])
            yield await _decode_rows(found, reading.decode)
            n = _cut([(p, sizes.get(p, 0)) for p in part], PAGE_BYTES) if part else 0


async def _decode_rows(rows: Sequence[Sequence[Any]], decode: Decode) -> list[Message]:
    return await decode_rows(rows, lambda r: decode(*r))


async def _arrange(
    conn: aiosqlite.Connection, cursor: HistoryCursor, messages: list[Message], page_end: int, in_flight: set[str]
) -> list[Segment]:
    """Order one page like ``project`` and find the far results of its assistants (caller's transaction)."""
    sid = cursor.session_id

    async def known_calls(ids: list[str]) -> set[str]:
        sql = "SELECT call_id FROM tool_calls WHERE session_id = ? AND call_id IN ({ids})"
        return {r[0] for r in await _in(conn, sql, (sid,), ids)}

    async def far_sizes(ids: list[str]) -> list[Any]:
        far = await _in(
            conn,
            "SELECT result_position FROM tool_calls WHERE session_id = ? AND call_id IN ({ids}) "
            "AND result_position > ? AND result_position <= ?",
            (sid,),
            ids,
            (page_end, cursor.last_position),
        )
        if not far:
            return []
        sql = f"SELECT position, {EVENT_BYTES} FROM events WHERE session_id = ? AND position IN ({{ids}})"
        return sorted(await _in(conn, sql, (sid,), sorted(int(r[0]) for r in far)), key=lambda r: r[0])

    return await arrange_page(messages, in_flight, known_calls, far_sizes)


async def watch_rows_after(
    reader: Reader, session_id: str, after_position: int, limit: int
) -> tuple[str | None, list[Any], bool]:
    """The session's incarnation (None if not stored) and up to ``limit`` history rows (any type) after a
    position, about :data:`PAGE_BYTES` at most, in one snapshot.

    Returns the incarnation, the rows ``(position, type, trace_id, ts, payload, format, item)`` and True if
    more may follow.
    """
    async with reader() as conn:
        try:
            await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
            found = list(
                await conn.execute_fetchall("SELECT incarnation FROM sessions WHERE session_id = ?", (session_id,))
            )
            incarnation = str(found[0][0]) if found else None
            sizes = list(
                await conn.execute_fetchall(
                    f"SELECT position, {EVENT_BYTES} FROM events "
                    "WHERE session_id = ? AND position > ? ORDER BY position LIMIT ?",
                    (session_id, after_position, limit),
                )
            )
            if not sizes:
                return incarnation, [], False
            n = _cut(sizes, PAGE_BYTES)
            rows = await conn.execute_fetchall(
                f"SELECT {_HISTORY_COLS} FROM events WHERE session_id = ? AND position > ? AND position <= ? "
                "ORDER BY position",
                (session_id, after_position, int(sizes[n - 1][0])),
            )
        finally:
            await conn.execute("COMMIT")
    return incarnation, list(rows), n < len(sizes) or len(sizes) >= limit


async def export_pages(reader: Reader, cursor: HistoryCursor, max_event_id: int) -> AsyncGenerator[list[Any], None]:
    """A session's event rows with ids up to ``max_event_id``, in event order, page by page.

    Rows are ``(event_id, session_id, position, type, trace_id, ts, schema_version, payload, format, item)``.

    Raises:
        SequenceConflictError: the session was erased meanwhile.
    """
    after = 0
    while after < max_event_id:
        async with reader() as conn:
            try:
                await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
                await _guard(conn, cursor, clears=False)  # a clear removes no events
                sizes = list(
                    await conn.execute_fetchall(
                        f"SELECT event_id, {EVENT_BYTES} FROM events "
                        "WHERE session_id = ? AND event_id > ? AND event_id <= ? ORDER BY event_id LIMIT ?",
                        (cursor.session_id, after, max_event_id, PAGE_ROWS),
                    )
                )
                if not sizes:
                    return
                end = int(sizes[_cut(sizes, PAGE_BYTES) - 1][0])
                rows = await conn.execute_fetchall(
                    f"SELECT {_EXPORT_COLS} FROM events WHERE session_id = ? AND event_id > ? AND event_id <= ? "
                    "ORDER BY event_id",
                    (cursor.session_id, after, end),
                )
            finally:
                await conn.execute("COMMIT")
        after = end
        # Payloads stay text here; the caller decodes and encodes them off the event loop.
        yield list(rows)


async def scan_sessions(
    reader: Reader,
    pattern: str,
    limit: int,
    row_of: Callable[[Sequence[Any]], SessionSummary],
    cols: str,
    start_after: tuple[str, str] | None = None,
) -> list[SessionSummary]:
    """Sessions whose id matches the LIKE ``pattern``, most recently updated first (then by id).

    Walks the ``updated_at`` index in that order in chunks of :data:`SCAN_ROWS`
    sessions, one short read per chunk (its boundary, then its matches), and
    stops at ``limit`` matches: a filter that matches nothing gives the read
    connection back every chunk, and cancellation stops it at the next one.
    ``start_after`` (updated_at, session_id) starts after that session (a page cursor).
    """
    out: list[SessionSummary] = []
    after = start_after  # (updated_at, session_id) of the last session scanned
    while len(out) < limit:
        where = ""
        params: tuple[Any, ...] = ()
        if after is not None:
            where = " AND updated_at <= ? AND (updated_at < ? OR session_id > ?)"
            params = (after[0], after[0], after[1])
        async with reader() as conn:
            try:
                await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
                end = list(
                    await conn.execute_fetchall(
                        f"SELECT updated_at, session_id FROM sessions WHERE 1{where} "
                        "ORDER BY updated_at DESC, session_id LIMIT 1 OFFSET ?",
                        (*params, SCAN_ROWS - 1),
                    )
                )
                upto = ""
                upto_params: tuple[Any, ...] = ()
                if end:
                    upto = " AND updated_at >= ? AND (updated_at > ? OR session_id <= ?)"
                    upto_params = (end[0][0], end[0][0], end[0][1])
                rows = await conn.execute_fetchall(
                    f"SELECT {cols} FROM sessions WHERE session_id LIKE ? ESCAPE '\\'{where}{upto} "
                    "ORDER BY updated_at DESC, session_id LIMIT ?",
                    (pattern, *params, *upto_params, limit - len(out)),
                )
            finally:
                await conn.execute("COMMIT")
        out.extend(row_of(values) for values in rows)
        if not end:
            break
        after = (str(end[0][0]), str(end[0][1]))
    return out


def label_match(labels: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """A ``WHERE`` clause (to append) keeping the sessions that carry every one of ``labels``, and its parameters.

    Each label is one lookup in the ``session_labels_match`` index (key, value, session id), and
    the sets are intersected: the cost follows the sessions carrying the labels, not all sessions.
    """
    if not labels:
        return "", ()
    match = " INTERSECT ".join(["SELECT session_id FROM session_labels WHERE key = ? AND value = ?"] * len(labels))
    return f" AND session_id IN ({match})", tuple(v for kv in sorted(labels.items()) for v in kv)


async def labelled_sessions(
    reader: Reader,
    pattern: str,
    labels: Mapping[str, str],
    limit: int,
    row_of: Callable[[Sequence[Any]], SessionSummary],
    cols: str,
    start_after: tuple[str, str] | None = None,
) -> list[SessionSummary]:
    """Like :func:`scan_sessions` for sessions that carry every one of ``labels`` (at least one).

    One statement: the label index gives the matching sessions, which are then ordered by
    (updated_at DESC, session_id) and cut at ``limit`` after the page cursor ``start_after``.
    """
    match, params = label_match(labels)
    where = ""
    after: tuple[str, ...] = ()
    if start_after is not None:
        where = " AND updated_at <= ? AND (updated_at < ? OR session_id > ?)"
        after = (start_after[0], start_after[0], start_after[1])
    async with reader() as conn:
        rows = await conn.execute_fetchall(
            f"SELECT {cols} FROM sessions WHERE session_id LIKE ? ESCAPE '\\'{match}{where} "
            "ORDER BY updated_at DESC, session_id LIMIT ?",
            (pattern, *params, *after, limit),
        )
    return [row_of(values) for values in rows]
