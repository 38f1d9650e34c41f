"""The cross-session reads for people in SQLite: full-text search (FTS5) and the usage report (follow-all pages:
``storage/sql/store_reads.py``).

Each function takes one read connection from the caller (``engine.py`` lends
it and maps sqlite3 errors) and returns plain tuples or the rows of
``claw_sessiond.queries``. Bounds (documented in ``docs/security.md``): a
search returns at most ``MAX_SEARCH_HITS`` hits, each snippet at most
``SNIPPET_TOKENS`` tokens, and its statement is interrupted
(``sqlite3_interrupt``) after ``SEARCH_TIMEOUT_S`` or as soon as the caller
goes away. The usage report returns at most ``MAX_REPORT_ROWS`` groups within
``REPORT_TIMEOUT_S``.

Must never: run a statement without a time bound, or hold a connection
across a yield.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import aiosqlite

from ...errors import InvalidRequestError, Reason
from ...queries import (
    MATCH_CLOSE,
    MATCH_OPEN,
    MAX_REPORT_ROWS,
    REPORT_TIMEOUT_S,
    SEARCH_TIMEOUT_S,
    SNIPPET_TOKENS,
    SearchFilter,
    SearchRow,
    UsageRow,
)
from ..nul_text import from_db_text, payload_sql
from ..sql.searching import filter_clause, too_long

__all__ = ["search", "usage_report"]

T = TypeVar("T")


async def _bounded(conn: aiosqlite.Connection, run: Callable[[], Awaitable[T]], timeout_s: float, what: str) -> T:
    """Run ``run`` on ``conn``; interrupt its statement on timeout or when the caller is cancelled."""
    task = asyncio.ensure_future(run())
    try:
        return await asyncio.wait_for(asyncio.shield(task), timeout_s)
    except (TimeoutError, asyncio.CancelledError) as exc:
        await conn.interrupt()
        with contextlib.suppress(Exception):
            await task  # the statement ends at once with SQLITE_INTERRUPT; the connection is clean again
        if isinstance(exc, TimeoutError):
            raise too_long(what, timeout_s) from None
        raise
    finally:
        if not task.done():  # pragma: no cover - only if interrupt() could not end it
            task.cancel()


_SEARCH_SQL: Final = (
    "SELECT e.session_id, e.position, json_extract(e.payload, '$.role'), e.ts, bm25(message_fts), "
    f"snippet(message_fts, 0, '{MATCH_OPEN}', '{MATCH_CLOSE}', '…', {SNIPPET_TOKENS}), "
    "(e.position <= s.clear_position OR e.hidden_by IS NOT NULL) "
    "FROM message_fts JOIN events AS e ON e.event_id = message_fts.rowid "
    "JOIN sessions AS s ON s.session_id = e.session_id "
    "WHERE message_fts MATCH ?{where} ORDER BY bm25(message_fts), e.event_id LIMIT ?"
)


async def search(
    conn: aiosqlite.Connection, match: str, filters: SearchFilter, limit: int
) -> tuple[list[SearchRow], bool]:
    """Up to ``limit`` hits, best first, and True if more matched.

    Raises:
        InvalidRequestError: the MATCH expression is not valid FTS5 syntax, or the search took too long.
    """
    params: list[Any] = [match]

    def arg(value: Any) -> str:
        params.append(value)
        return "?"

    where = filter_clause(filters, "json_extract(e.payload, '$.role')", arg)
    params.append(limit + 1)

    async def run() -> list[Any]:
        return list(await conn.execute_fetchall(_SEARCH_SQL.format(where=where), params))

    try:
        rows = await _bounded(conn, run, SEARCH_TIMEOUT_S, "search")
    except sqlite3.OperationalError as exc:
        # The statement is ours and fixed; SQLITE_ERROR here comes from the MATCH expression.
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_ERROR":
            raise InvalidRequestError(
                f"the search query is not valid FTS5 syntax ({exc}); drop --raw to search for plain words"
            ) from exc
        raise
    hits = [
        SearchRow(str(r[0]), int(r[1]), str(r[2] or ""), str(r[3]), float(r[4]), str(r[5] or ""), bool(r[6]))
        for r in rows[:limit]
    ]
    return hits, len(rows) > limit


async def usage_report(
    conn: aiosqlite.Connection, since: str, until: str, *, by_session: bool
) -> tuple[list[UsageRow], bool]:
    """Usage events grouped by UTC day, model, pricing version, currency (and session), in that order.

    A cost's currency is the event's currency when it has a cost (as the
    session totals count it), else empty: costs of different currencies are
    separate groups, never added.

    Raises:
        InvalidRequestError: a group's total overflows 64 bits, or the report took too long.
    """
    session = "e.session_id" if by_session else "''"
    # Model and pricing version are read in nul_text.db_text()'s form (json_extract() returns a string only up
    # to a NUL: a model holding one was counted with the model named by what precedes it), then decoded here.
    escaped = payload_sql("e.payload", "char")
    sql = (
        f"SELECT substr(e.ts, 1, 10) AS day, coalesce(json_extract({escaped}, '$.model'), '') AS model, "
        f"coalesce(json_extract({escaped}, '$.pricing_version'), '') AS pricing, "
        "CASE WHEN coalesce(json_extract(e.payload, '$.cost_micros'), 0) != 0 "
        "THEN coalesce(json_extract(e.payload, '$.currency'), '') ELSE '' END AS currency, "
        f"{session} AS sid, "
        "sum(coalesce(json_extract(e.payload, '$.input_tokens'), 0)), "
        "sum(coalesce(json_extract(e.payload, '$.output_tokens'), 0)), "
        "sum(coalesce(json_extract(e.payload, '$.cache_read_tokens'), 0)), "
        "sum(coalesce(json_extract(e.payload, '$.cache_write_tokens'), 0)), "
        "sum(coalesce(json_extract(e.payload, '$.cost_micros'), 0)), count(*) "
        "FROM events AS e WHERE e.type = 'usage' AND e.ts >= ? AND e.ts < ? "
        "GROUP BY day, model, pricing, currency, sid ORDER BY day, model, pricing, currency, sid LIMIT ?"
    )
    params = (since, until or "\uffff", MAX_REPORT_ROWS + 1)

    async def run() -> list[Any]:
        return list(await conn.execute_fetchall(sql, params))

    try:
        rows = await _bounded(conn, run, REPORT_TIMEOUT_S, "usage report")
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_ERROR":  # sum(): integer overflow
            raise InvalidRequestError(
                f"a usage total does not fit a 64-bit integer ({exc}); report a shorter time range",
                reason=Reason.INVALID_USAGE,
            ) from exc
        raise
    out = [
        UsageRow(str(r[0]), from_db_text(r[1]), from_db_text(r[2]), str(r[3]), str(r[4]), *(int(v) for v in r[5:11]))
        for r in rows
    ]
    return out[:MAX_REPORT_ROWS], len(out) > MAX_REPORT_ROWS
