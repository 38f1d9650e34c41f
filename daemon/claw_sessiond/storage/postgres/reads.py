"""Paged reads in PostgreSQL for the streaming RPCs (Load, Export, Watch) and chunked scans (ListSessions).

The same bounds and the same consistency rule as the SQLite backend's
``reads.py`` (whose docstring explains them): pages of at most
``PAGE_ROWS`` events and about ``PAGE_BYTES`` payload bytes, each read in
its own short ``REPEATABLE READ READ ONLY`` transaction that first checks
the session still has the ``created_at`` and ``clear_position`` seen at the
start (else ABORTED / ``SEQUENCE_CONFLICT``); no connection is held across a
yield. Lists of ids are passed as one array parameter (``= ANY($n)``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

from ...errors import Reason, SequenceConflictError
from ...events import edit_removed, erased_count
from ...history import drop_calls
from ...model import HistoryCursor, Message, SessionSummary
from ..nul_text import db_text, from_db_text
from ..paging import PAGE_BYTES, PAGE_ROWS, SCAN_ROWS, Segment, arrange_page, decode_rows
from ..paging import cut as _cut

__all__ = [
    "dropping",
    "export_pages",
    "history_pages",
    "scan_sessions",
    "snapshot",
    "watch_rows_after",
]

Reader = Callable[[], AbstractAsyncContextManager[Any]]
Decode = Callable[[int, str, str, str, str, str | None, bytes | None], Message]

_HISTORY_COLS: Final = "position, type, trace_id, ts, payload, format, item"
_EXPORT_COLS: Final = "event_id, session_id, position, type, trace_id, ts, schema_version, payload, format, item"
#: What an event weighs in a page: its payload and its item.
EVENT_BYTES: Final = "octet_length(payload) + coalesce(octet_length(item), 0)"


def snapshot(conn: Any) -> Any:
    """A read-only transaction that sees one snapshot for all its statements."""
    return conn.transaction(isolation="repeatable_read", readonly=True)


async def _guard(conn: Any, cursor: HistoryCursor, *, clears: bool = True) -> None:
    """Raise if the session was erased (or, with ``clears``, cleared) since the cursor was taken."""
    row = await conn.fetchrow(
        "SELECT created_at, clear_position, last_position FROM sessions WHERE session_id = $1", cursor.session_id
    )
    changed = row is None or row[0] != cursor.created_at or (clears and int(row[1]) != cursor.clear_position)
    if not changed and row is not None and int(row[2]) > cursor.last_position:
        # Written since the cursor was taken: an edit that hid entries up to its bound, or, for an export,
        # a clear that erased events it still has to send.
        found = await conn.fetch(
            "SELECT type, payload FROM events WHERE session_id = $1 AND position > $2 AND type IN ('edit', 'clear')",
            cursor.session_id,
            cursor.last_position,
        )
        changed = any(_moves_bound(str(r[0]), str(r[1]), cursor.last_position, clears) for r in found)
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


async def _main_rows(conn: Any, session_id: str, after: int, last: int) -> tuple[list[Any], bool]:
    """The next page of visible history rows after ``after`` (position ≤ ``last``); True if nothing follows."""
    sizes = await conn.fetch(
        f"SELECT position, {EVENT_BYTES} FROM events "
        "WHERE session_id = $1 AND position > $2 AND position <= $3 "
        "AND type NOT IN ('clear', 'edit') AND hidden_by IS NULL "
        "ORDER BY position LIMIT $4",
        session_id,
        after,
        last,
        PAGE_ROWS,
    )
    if not sizes:
        return [], True
    n = _cut(sizes, PAGE_BYTES)
    end = int(sizes[n - 1][0])
    rows = await conn.fetch(
        f"SELECT {_HISTORY_COLS} FROM events "
        "WHERE session_id = $1 AND position > $2 AND position <= $3 "
        "AND type NOT IN ('clear', 'edit') AND hidden_by IS NULL "
        "ORDER BY position",
        session_id,
        after,
        end,
    )
    return list(rows), n == len(sizes) < PAGE_ROWS


def _decode(r: Sequence[Any], decode: Decode) -> Message:
    return decode(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6])


main_rows = _main_rows  # the first page of a Load, or of its window (``read_port.py``)


async def check_cursor(conn: Any, cursor: HistoryCursor) -> None:
    """Raise SequenceConflictError if the session was erased or cleared since the cursor was taken."""
    await _guard(conn, cursor)


async def _decode_rows(rows: Sequence[Any], decode: Decode) -> list[Message]:
    return await decode_rows(rows, lambda r: _decode(r, decode))


async def history_pages(reader: Reader, cursor: HistoryCursor, decode: Decode) -> AsyncGenerator[list[Message], None]:
    """The visible history in conversation order (as ``history.project`` orders it), page by page.

    Each assistant message is followed by its tool results in position order;
    results beyond the assistant's page ("far" results, such as synthetic
    repairs) are fetched by position right after it and skipped where they occur.

    Raises:
        SequenceConflictError: the session was cleared or erased meanwhile.
    """
    after = cursor.clear_position if cursor.start_after < 0 else cursor.start_after
    in_flight = set(cursor.in_flight_ids)
    for i in range(0, len(cursor.lead), PAGE_ROWS):  # a window's results of calls made before it, first
        group = list(cursor.lead[i : i + PAGE_ROWS])
        async with reader() as conn, snapshot(conn):
            await _guard(conn, cursor)
            found = await conn.fetch(
                f"SELECT {_HISTORY_COLS} FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])",
                cursor.session_id,
                group,
            )
        order = {p: k for k, p in enumerate(group)}
        yield await _decode_rows(sorted(found, key=lambda r: order[int(r[0])]), decode)
    while after < cursor.last_position:
        segments: list[tuple[list[Message], list[list[int]]]] = []
        async with reader() as conn, snapshot(conn):
            await _guard(conn, cursor)
            rows, _complete = await _main_rows(conn, cursor.session_id, after, cursor.last_position)
            if not rows:
                break
            page_end = int(rows[-1][0])
            messages = await _decode_rows(rows, decode)
            segments = await _arrange(conn, cursor, messages, page_end, in_flight)
        after = page_end
        for shown, far_groups in segments:
            if shown:
                yield shown
            for group in far_groups:
                async with reader() as conn, snapshot(conn):
                    await _guard(conn, cursor)
                    found = await conn.fetch(
                        f"SELECT {_HISTORY_COLS} FROM events WHERE session_id = $1 AND position = ANY($2::bigint[]) "
                        "ORDER BY position",
                        cursor.session_id,
                        group,
                    )
                yield await _decode_rows(found, decode)


async def _arrange(
    conn: Any, cursor: HistoryCursor, messages: list[Message], page_end: int, in_flight: set[str]
) -> list[Segment]:
    """Order one page like ``project`` and find the far results of its assistants (caller's transaction)."""
    sid = cursor.session_id

    async def known_calls(ids: list[str]) -> set[str]:
        sql = "SELECT call_id FROM tool_calls WHERE session_id = $1 AND call_id = ANY($2::text[])"
        return {from_db_text(r[0]) for r in await conn.fetch(sql, sid, [db_text(i) for i in ids])}

    async def far_sizes(ids: list[str]) -> list[Any]:
        return list(
            await conn.fetch(
                "SELECT e.position, octet_length(e.payload) + coalesce(octet_length(e.item), 0) FROM tool_calls AS t "
                "JOIN events AS e ON e.session_id = t.session_id AND e.position = t.result_position "
                "WHERE t.session_id = $1 AND t.call_id = ANY($2::text[]) "
                "AND t.result_position > $3 AND t.result_position <= $4 ORDER BY e.position",
                sid,
                [db_text(i) for i in ids],
                page_end,
                cursor.last_position,
            )
        )

    return await arrange_page(messages, in_flight, known_calls, far_sizes)


async def watch_rows_after(
    reader: Reader, session_id: str, after_position: int, limit: int
) -> tuple[str | None, list[Any], bool]:
    """The session's incarnation (None if not stored) and up to ``limit`` history rows after a position, in
    one snapshot: rows ``(position, type, trace_id, ts, payload)``, and True if more may follow."""
    async with reader() as conn, snapshot(conn):
        incarnation = await conn.fetchval("SELECT incarnation FROM sessions WHERE session_id = $1", session_id)
        sizes = list(
            await conn.fetch(
                f"SELECT position, {EVENT_BYTES} FROM events "
                "WHERE session_id = $1 AND position > $2 ORDER BY position LIMIT $3",
                session_id,
                after_position,
                limit,
            )
        )
        if not sizes:
            return incarnation, [], False
        n = _cut(sizes, PAGE_BYTES)
        rows = await conn.fetch(
            f"SELECT {_HISTORY_COLS} FROM events WHERE session_id = $1 AND position > $2 AND position <= $3 "
            "ORDER BY position",
            session_id,
            after_position,
            int(sizes[n - 1][0]),
        )
    return (
        incarnation,
        [(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows],
        n < len(sizes) or len(sizes) >= limit,
    )


async def export_pages(reader: Reader, cursor: HistoryCursor, max_event_id: int) -> AsyncGenerator[list[Any], None]:
    """A session's event rows with ids up to ``max_event_id``, in event order, page by page.

    Rows are ``(event_id, session_id, position, type, trace_id, ts, schema_version, payload)``.

    Raises:
        SequenceConflictError: the session was erased meanwhile.
    """
    after = 0
    while after < max_event_id:
        async with reader() as conn, snapshot(conn):
            await _guard(conn, cursor, clears=False)  # a clear removes no events
            sizes = list(
                await conn.fetch(
                    f"SELECT event_id, {EVENT_BYTES} FROM events "
                    "WHERE session_id = $1 AND event_id > $2 AND event_id <= $3 ORDER BY event_id LIMIT $4",
                    cursor.session_id,
                    after,
                    max_event_id,
                    PAGE_ROWS,
                )
            )
            if not sizes:
                return
            end = int(sizes[_cut(sizes, PAGE_BYTES) - 1][0])
            rows = await conn.fetch(
                f"SELECT {_EXPORT_COLS} FROM events WHERE session_id = $1 AND event_id > $2 AND event_id <= $3 "
                "ORDER BY event_id",
                cursor.session_id,
                after,
                end,
            )
        after = end
        yield [tuple(r) for r in rows]


async def scan_sessions(
    reader: Reader,
    pattern: str,
    limit: int,
    row_of: Callable[[Sequence[Any]], SessionSummary],
    cols: str,
    start_after: tuple[str, str] | None = None,
) -> list[SessionSummary]:
    """Sessions whose id matches the ILIKE ``pattern``, most recently updated first (then by id), in chunks
    of ``SCAN_ROWS`` sessions, one short read each; ``start_after`` (updated_at, session_id) is a page cursor."""
    out: list[SessionSummary] = []
    after = start_after
    while len(out) < limit:
        where = ""
        params: tuple[Any, ...] = ()
        if after is not None:
            where = " AND updated_at <= $1 AND (updated_at < $1 OR session_id > $2)"
            params = (after[0], after[1])
        async with reader() as conn, snapshot(conn):
            n = len(params)
            end = await conn.fetchrow(
                f"SELECT updated_at, session_id FROM sessions WHERE true{where} "
                f"ORDER BY updated_at DESC, session_id LIMIT 1 OFFSET ${n + 1}",
                *params,
                SCAN_ROWS - 1,
            )
            upto = ""
            upto_params: tuple[Any, ...] = ()
            if end is not None:
                upto = f" AND updated_at >= ${n + 2} AND (updated_at > ${n + 2} OR session_id <= ${n + 3})"
                upto_params = (end[0], end[1])
            rows = await conn.fetch(
                f"SELECT {cols} FROM sessions WHERE session_id ILIKE ${n + 1} ESCAPE '\\'{where}{upto} "
                f"ORDER BY updated_at DESC, session_id LIMIT ${n + 2 + len(upto_params)}",
                *params,
                pattern,
                *upto_params,
                limit - len(out),
            )
        out.extend(row_of(values) for values in rows)
        if end is None:
            break
        after = (str(end[0]), str(end[1]))
    return out


async def dropping(
    pages: AsyncGenerator[list[Message], None], dropped: frozenset[str]
) -> AsyncGenerator[list[Message], None]:
    """``pages`` with the ``dropped`` calls taken out (``history.drop_calls``); closes ``pages`` when closed."""
    async with contextlib.aclosing(pages):
        async for page in pages:
            shown = drop_calls(page, dropped)
            if shown:
                yield shown
