"""Paged reads in PostgreSQL: the page reads of the streaming RPCs (Load, Export, Watch) and chunked scans.

:class:`PostgresPageReads` is the port ``storage/history_reads.py`` reads a Load's pages,
Watch batches and Export pages through (that module owns the page bounds and the
consistency rule), each step in its own short ``REPEATABLE READ READ ONLY`` transaction
(:func:`snapshot`); this module keeps the SQL. Lists of ids are passed as one array parameter
(``= ANY($n)``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

from ...events import message_from_payload
from ...model import Message, SessionSummary
from ..history_reads import Snapshots
from ..nul_text import db_text, from_db_text
from ..paging import PAGE_BYTES, PAGE_ROWS, SCAN_ROWS, decode_rows
from ..paging import cut as _cut
from ..port import PageReads

__all__ = ["PostgresPageReads", "decode_row", "label_match", "main_rows", "scan_sessions", "snapshot", "snapshots"]

Reader = Callable[[], AbstractAsyncContextManager[Any]]

_HISTORY_COLS: Final = "position, type, trace_id, ts, payload, format, item"
_EXPORT_COLS: Final = "event_id, session_id, position, type, trace_id, ts, schema_version, payload, format, item"
#: What an event weighs in a page: its payload and its item.
EVENT_BYTES: Final = "octet_length(payload) + coalesce(octet_length(item), 0)"


def snapshot(conn: Any) -> Any:
    """A read-only transaction that sees one snapshot for all its statements."""
    return conn.transaction(isolation="repeatable_read", readonly=True)


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


def decode_row(r: Sequence[Any]) -> Message:
    """A history row ``(position, type, trace_id, ts, payload, format, item)`` as a message."""
    return message_from_payload(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6])


main_rows = _main_rows  # the first page of a Load, or of its window (``read_port.py``)


class PostgresPageReads:
    """The reads of one step of a paged history read (``storage/history_reads.py``), on a pooled connection in
    the caller's snapshot (:func:`snapshot`). Lists are passed as one array parameter (``= ANY($n)``)."""

    __slots__ = ("_conn",)

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def session_bounds(self, session_id: str) -> tuple[str, int, int] | None:
        row = await self._conn.fetchrow(
            "SELECT created_at, clear_position, last_position FROM sessions WHERE session_id = $1", session_id
        )
        return None if row is None else (str(row[0]), int(row[1]), int(row[2]))

    async def marks_after(self, session_id: str, position: int) -> list[tuple[str, str]]:
        rows = await self._conn.fetch(
            "SELECT type, payload FROM events WHERE session_id = $1 AND position > $2 AND type IN ('edit', 'clear')",
            session_id,
            position,
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    async def visible_page(self, session_id: str, after: int, last_position: int, reply_only: bool) -> list[Message]:
        # No encoded reply form is stored here: ``reply_only`` reads the whole entries.
        rows, _complete = await _main_rows(self._conn, session_id, after, last_position)
        return await decode_rows(rows, decode_row)

    async def entries_by_position(self, session_id: str, positions: Sequence[int], reply_only: bool) -> list[Message]:
        rows = await self._conn.fetch(
            f"SELECT {_HISTORY_COLS} FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])",
            session_id,
            list(positions),
        )
        return await decode_rows(rows, decode_row)

    async def entry_sizes(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, int]]:
        rows = await self._conn.fetch(
            f"SELECT position, {EVENT_BYTES} FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])",
            session_id,
            list(positions),
        )
        return [(int(r[0]), int(r[1] or 0)) for r in rows]

    async def known_calls(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        sql = "SELECT call_id FROM tool_calls WHERE session_id = $1 AND call_id = ANY($2::text[])"
        return {from_db_text(r[0]) for r in await self._conn.fetch(sql, session_id, [db_text(i) for i in call_ids])}

    async def far_results(self, session_id: str, call_ids: Sequence[str], after: int, last_position: int) -> list[Any]:
        return list(
            await self._conn.fetch(
                "SELECT e.position, octet_length(e.payload) + coalesce(octet_length(e.item), 0) FROM tool_calls AS t "
                "JOIN events AS e ON e.session_id = t.session_id AND e.position = t.result_position "
                "WHERE t.session_id = $1 AND t.call_id = ANY($2::text[]) "
                "AND t.result_position > $3 AND t.result_position <= $4 ORDER BY e.position",
                session_id,
                [db_text(i) for i in call_ids],
                after,
                last_position,
            )
        )

    async def incarnation(self, session_id: str) -> str | None:
        found = await self._conn.fetchval("SELECT incarnation FROM sessions WHERE session_id = $1", session_id)
        return None if found is None else str(found)

    async def event_sizes_after(self, session_id: str, position: int, limit: int) -> list[Any]:
        return list(
            await self._conn.fetch(
                f"SELECT position, {EVENT_BYTES} FROM events "
                "WHERE session_id = $1 AND position > $2 ORDER BY position LIMIT $3",
                session_id,
                position,
                limit,
            )
        )

    async def history_events(self, session_id: str, after: int, upto: int) -> list[Any]:
        rows = await self._conn.fetch(
            f"SELECT {_HISTORY_COLS} FROM events WHERE session_id = $1 AND position > $2 AND position <= $3 "
            "ORDER BY position",
            session_id,
            after,
            upto,
        )
        return [(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows]

    async def export_sizes(self, session_id: str, after_id: int, max_id: int, limit: int) -> list[Any]:
        return list(
            await self._conn.fetch(
                f"SELECT event_id, {EVENT_BYTES} FROM events "
                "WHERE session_id = $1 AND event_id > $2 AND event_id <= $3 ORDER BY event_id LIMIT $4",
                session_id,
                after_id,
                max_id,
                limit,
            )
        )

    async def export_rows(self, session_id: str, after_id: int, upto_id: int) -> list[Any]:
        rows = await self._conn.fetch(
            f"SELECT {_EXPORT_COLS} FROM events WHERE session_id = $1 AND event_id > $2 AND event_id <= $3 "
            "ORDER BY event_id",
            session_id,
            after_id,
            upto_id,
        )
        return [tuple(r) for r in rows]


_: type[PageReads] = PostgresPageReads


def snapshots(reader: Reader) -> Snapshots:
    """Short read-only snapshots on ``reader``'s connections, each handing a :class:`PostgresPageReads`."""

    @contextlib.asynccontextmanager
    async def step() -> AsyncIterator[PageReads]:
        async with reader() as conn, snapshot(conn):
            yield PostgresPageReads(conn)

    return step


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


def label_match(labels: Mapping[str, str], first: int) -> tuple[str, tuple[str, ...]]:
    """A ``WHERE`` clause (to append) keeping the sessions that carry every one of ``labels``, its parameters
    numbered from ``$first``.

    Each label is one lookup in the ``session_labels_match`` index (key, value, session id); the sets
    are intersected, so the cost follows the sessions carrying the labels, not all sessions.
    """
    if not labels:
        return "", ()
    parts = [
        f"SELECT session_id FROM session_labels WHERE key = ${first + 2 * i} AND value = ${first + 2 * i + 1}"
        for i in range(len(labels))
    ]
    return f" AND session_id IN ({' INTERSECT '.join(parts)})", tuple(v for kv in sorted(labels.items()) for v in kv)
