"""Paged reads in SQLite: the page reads of the streaming RPCs (Load, Export, Watch) and chunked scans.

:class:`SQLitePageReads` is the port ``storage/history_reads.py`` reads a Load's pages, Watch
batches and Export pages through (that module owns the page bounds and the consistency
rule); this module keeps the SQL. Scans that may touch every session (ListSessions) run in
chunks of :data:`SCAN_ROWS` rows, giving the connection back between chunks, so a scan that
matches nothing interleaves with other reads and stops at the next chunk when its caller goes
away (cancellation).

Must never: yield while holding a read connection.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Final

import aiosqlite

from ...events import message_from_payload, reply_entry
from ...model import Message, SessionSummary
from ..history_reads import Snapshots
from ..paging import PAGE_BYTES, PAGE_ROWS, SCAN_ROWS, decode_rows
from ..paging import cut as _cut
from ..port import PageReads

__all__ = [
    "PAGE_BYTES",
    "PAGE_ROWS",
    "REPLY",
    "SCAN_ROWS",
    "WHOLE",
    "Reading",
    "SQLitePageReads",
    "label_match",
    "labelled_sessions",
    "main_rows",
    "scan_sessions",
    "snapshots",
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


class SQLitePageReads:
    """The reads of one step of a paged history read (``storage/history_reads.py``), on an aiosqlite read
    connection in the caller's read transaction."""

    __slots__ = ("_conn",)

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def session_bounds(self, session_id: str) -> tuple[str, int, int] | None:
        rows = list(
            await self._conn.execute_fetchall(
                "SELECT created_at, clear_position, last_position FROM sessions WHERE session_id = ?", (session_id,)
            )
        )
        return None if not rows else (str(rows[0][0]), int(rows[0][1]), int(rows[0][2]))

    async def marks_after(self, session_id: str, position: int) -> list[tuple[str, str]]:
        rows = await self._conn.execute_fetchall(
            "SELECT type, payload FROM events WHERE session_id = ? AND position > ? AND type IN ('edit', 'clear')",
            (session_id, position),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    async def visible_page(self, session_id: str, after: int, last_position: int, reply_only: bool) -> list[Message]:
        reading = REPLY if reply_only else WHOLE
        rows, _complete = await _main_rows(self._conn, session_id, after, last_position, reading.cols)
        return await _decode_rows(rows, reading.decode)

    async def entries_by_position(self, session_id: str, positions: Sequence[int], reply_only: bool) -> list[Message]:
        reading = REPLY if reply_only else WHOLE
        sql = f"SELECT {reading.cols} FROM events WHERE session_id = ? AND position IN ({{ids}})"
        return await _decode_rows(await _in(self._conn, sql, (session_id,), positions), reading.decode)

    async def entry_sizes(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, int]]:
        sql = f"SELECT position, {EVENT_BYTES} FROM events WHERE session_id = ? AND position IN ({{ids}})"
        return [(int(r[0]), int(r[1] or 0)) for r in await _in(self._conn, sql, (session_id,), positions)]

    async def known_calls(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        sql = "SELECT call_id FROM tool_calls WHERE session_id = ? AND call_id IN ({ids})"
        return {r[0] for r in await _in(self._conn, sql, (session_id,), call_ids)}

    async def far_results(self, session_id: str, call_ids: Sequence[str], after: int, last_position: int) -> list[Any]:
        far = await _in(
            self._conn,
            "SELECT result_position FROM tool_calls WHERE session_id = ? AND call_id IN ({ids}) "
            "AND result_position > ? AND result_position <= ?",
            (session_id,),
            call_ids,
            (after, last_position),
        )
        if not far:
            return []
        sql = f"SELECT position, {EVENT_BYTES} FROM events WHERE session_id = ? AND position IN ({{ids}})"
        return sorted(await _in(self._conn, sql, (session_id,), sorted(int(r[0]) for r in far)), key=lambda r: r[0])

    async def incarnation(self, session_id: str) -> str | None:
        found = list(
            await self._conn.execute_fetchall("SELECT incarnation FROM sessions WHERE session_id = ?", (session_id,))
        )
        return str(found[0][0]) if found else None

    async def event_sizes_after(self, session_id: str, position: int, limit: int) -> list[Any]:
        return list(
            await self._conn.execute_fetchall(
                f"SELECT position, {EVENT_BYTES} FROM events "
                "WHERE session_id = ? AND position > ? ORDER BY position LIMIT ?",
                (session_id, position, limit),
            )
        )

    async def history_events(self, session_id: str, after: int, upto: int) -> list[Any]:
        return list(
            await self._conn.execute_fetchall(
                f"SELECT {_HISTORY_COLS} FROM events WHERE session_id = ? AND position > ? AND position <= ? "
                "ORDER BY position",
                (session_id, after, upto),
            )
        )

    async def export_sizes(self, session_id: str, after_id: int, max_id: int, limit: int) -> list[Any]:
        return list(
            await self._conn.execute_fetchall(
                f"SELECT event_id, {EVENT_BYTES} FROM events "
                "WHERE session_id = ? AND event_id > ? AND event_id <= ? ORDER BY event_id LIMIT ?",
                (session_id, after_id, max_id, limit),
            )
        )

    async def export_rows(self, session_id: str, after_id: int, upto_id: int) -> list[Any]:
        return list(
            await self._conn.execute_fetchall(
                f"SELECT {_EXPORT_COLS} FROM events WHERE session_id = ? AND event_id > ? AND event_id <= ? "
                "ORDER BY event_id",
                (session_id, after_id, upto_id),
            )
        )


_: type[PageReads] = SQLitePageReads


def snapshots(reader: Reader) -> Snapshots:
    """Short read transactions on ``reader``'s connections, each handing a :class:`SQLitePageReads`."""

    @contextlib.asynccontextmanager
    async def snapshot() -> AsyncIterator[PageReads]:
        async with reader() as conn:
            try:
                await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
                yield SQLitePageReads(conn)
            finally:
                await conn.execute("COMMIT")

    return snapshot


async def _decode_rows(rows: Sequence[Sequence[Any]], decode: Decode) -> list[Message]:
    return await decode_rows(rows, lambda r: decode(*r))


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
