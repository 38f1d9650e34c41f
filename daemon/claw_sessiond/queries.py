"""Cross-session reads for people: full-text search, the usage report, and follow-all pages.

Part of the storage layer (SQL lives only here, in ``reads.py`` and in
``store.py``). Each function takes one read connection from the caller and
returns plain tuples; ``store.py`` lends the connection and maps sqlite3
errors.

Bounds (documented in ``docs/security.md``): a search returns at most
:data:`MAX_SEARCH_HITS` hits, its query is at most :data:`MAX_QUERY_BYTES`,
each snippet part at most :data:`MAX_SNIPPET_PART_CHARS` characters, and the
statement is interrupted (``sqlite3_interrupt``) after
:data:`SEARCH_TIMEOUT_S` or as soon as the caller goes away. The usage report
returns at most :data:`MAX_REPORT_ROWS` groups within
:data:`REPORT_TIMEOUT_S`. A follow-all page holds at most the rows asked for
and about ``reads.PAGE_BYTES`` of payload.

Must never: run a statement without a time bound, or hold a connection
across a yield.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import aiosqlite

from .errors import InvalidRequestError, Reason
from .reads import PAGE_BYTES, _cut

__all__ = [
    "DEFAULT_SEARCH_HITS",
    "MAX_FOLLOW_LAST",
    "MAX_QUERY_BYTES",
    "MAX_REPORT_ROWS",
    "MAX_SEARCH_HITS",
    "MAX_SNIPPET_PART_CHARS",
    "REPORT_TIMEOUT_S",
    "SEARCH_TIMEOUT_S",
    "SearchFilter",
    "SearchRow",
    "UsageRow",
    "follow_rows_after",
    "follow_start",
    "fts_query",
    "search",
    "split_snippet",
    "usage_report",
]

T = TypeVar("T")

#: Longest search query, in UTF-8 bytes.
MAX_QUERY_BYTES: Final = 1024
#: Hits returned when the request says 0.
DEFAULT_SEARCH_HITS: Final = 20
#: Most hits one search returns.
MAX_SEARCH_HITS: Final = 200
#: A search statement is interrupted after this long.
SEARCH_TIMEOUT_S: Final = 2.0
#: Longest text of one snippet part (a snippet has at most 16 tokens, but a token may be long).
MAX_SNIPPET_PART_CHARS: Final = 200
#: Most groups a usage report returns.
MAX_REPORT_ROWS: Final = 10_000
#: A usage report statement is interrupted after this long.
REPORT_TIMEOUT_S: Final = 5.0
#: Most history events a follow-all sends before the new ones (``WatchAll.last``).
MAX_FOLLOW_LAST: Final = 1000

# Match marks put around matched words by snippet() and split out again by split_snippet()
# (private-use code points: stored text that holds them only gets a wrong highlight).
_OPEN: Final = "\ue000"
_CLOSE: Final = "\ue001"
_SNIPPET_TOKENS: Final = 16
_WORD: Final = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """What a search is restricted to (empty strings: no restriction; times are RFC 3339 UTC)."""

    session_id: str = ""
    role: str = ""
    since: str = ""
    until: str = ""
    include_cleared: bool = False


@dataclass(frozen=True, slots=True)
class SearchRow:
    """One hit: where the message is, its role and time, its bm25 rank and snippet text (with marks)."""

    session_id: str
    position: int
    role: str
    ts: str
    rank: float
    snippet: str
    cleared: bool


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One group of the usage report."""

    day: str
    model: str
    pricing_version: str
    currency: str
    session_id: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_micros: int
    events: int


def fts_query(query: str, *, raw: bool) -> str:
    """The FTS5 MATCH expression for a user's query.

    Plain (the default): every word of the query, each as an FTS5 string, so
    that no character of the query is FTS5 syntax (``"``, ``*``, ``AND``,
    ``:`` are just text); all words must occur. Raw: the query as given.

    Raises:
        InvalidRequestError: the query is empty, too long, or has no words.
    """
    if len(query.encode()) > MAX_QUERY_BYTES:
        raise InvalidRequestError(
            f"the search query is longer than {MAX_QUERY_BYTES} bytes", reason=Reason.FIELD_TOO_LARGE
        )
    if raw:
        if not query.strip():
            raise InvalidRequestError("the search query is empty", reason=Reason.INVALID_MESSAGE)
        return query
    words = _WORD.findall(query)
    if not words:
        raise InvalidRequestError(
            "the search query has no words (letters or digits) to look for", reason=Reason.INVALID_MESSAGE
        )
    return " ".join('"' + w.replace('"', '""') + '"' for w in words)


def split_snippet(snippet: str) -> list[tuple[str, bool]]:
    """Snippet text with match marks → ``[(text, is_match)]``, each part clipped."""
    parts: list[tuple[str, bool]] = []
    for i, piece in enumerate(snippet.split(_OPEN)):
        if i == 0:
            matched, rest = "", piece
        else:
            matched, _, rest = piece.partition(_CLOSE)
        for text, is_match in ((matched, True), (rest.replace(_CLOSE, ""), False)):
            if text:
                clipped = text if len(text) <= MAX_SNIPPET_PART_CHARS else text[: MAX_SNIPPET_PART_CHARS - 1] + "…"
                parts.append((clipped, is_match))
    return parts


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
            raise InvalidRequestError(
                f"the {what} took longer than {timeout_s:g}s and was stopped; narrow it "
                "(a session, a role, a time range, more words)",
                reason=Reason.FIELD_TOO_LARGE,
            ) from None
        raise
    finally:
        if not task.done():  # pragma: no cover - only if interrupt() could not end it
            task.cancel()


_SEARCH_SQL: Final = (
    "SELECT e.session_id, e.position, json_extract(e.payload, '$.role'), e.ts, bm25(message_fts), "
    f"snippet(message_fts, 0, '{_OPEN}', '{_CLOSE}', '…', {_SNIPPET_TOKENS}), e.position <= s.clear_position "
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
    where = ""
    params: list[Any] = [match]
    if filters.session_id:
        where += " AND e.session_id = ?"
        params.append(filters.session_id)
    if filters.role:
        where += " AND json_extract(e.payload, '$.role') = ?"
        params.append(filters.role)
    if filters.since:
        where += " AND e.ts >= ?"
        params.append(filters.since)
    if filters.until:
        where += " AND e.ts < ?"
        params.append(filters.until)
    if not filters.include_cleared:
        where += " AND e.position > s.clear_position"
    params.append(limit + 1)

    async def run() -> list[Any]:
        return list(await conn.execute_fetchall(_SEARCH_SQL.format(where=where), params))

    try:
        rows = await _bounded(conn, run, SEARCH_TIMEOUT_S, "search")
    except sqlite3.OperationalError as exc:
        # The statement is ours and fixed; SQLITE_ERROR here comes from the MATCH expression.
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_ERROR":
            raise InvalidRequestError(
                f"the search query is not valid FTS5 syntax ({exc}); drop --raw to search for plain words",
                reason=Reason.INVALID_MESSAGE,
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
    sql = (
        f"SELECT substr(e.ts, 1, 10) AS day, coalesce(json_extract(e.payload, '$.model'), '') AS model, "
        "coalesce(json_extract(e.payload, '$.pricing_version'), '') AS pricing, "
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
    out = [UsageRow(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), *(int(v) for v in r[5:11])) for r in rows]
    return out[:MAX_REPORT_ROWS], len(out) > MAX_REPORT_ROWS


async def follow_start(conn: aiosqlite.Connection, last: int) -> int:
    """The event id to follow after: the newest one, or the one before the last ``last`` history events."""
    if last <= 0:
        found = list(await conn.execute_fetchall("SELECT coalesce(max(event_id), 0) FROM events"))
        return int(found[0][0])
    found = list(
        await conn.execute_fetchall(
            "SELECT event_id FROM events WHERE position IS NOT NULL ORDER BY event_id DESC LIMIT 1 OFFSET ?",
            (min(last, MAX_FOLLOW_LAST) - 1,),
        )
    )
    return int(found[0][0]) - 1 if found else 0


async def follow_rows_after(conn: aiosqlite.Connection, after_event_id: int, limit: int) -> tuple[list[Any], bool]:
    """History events of any session after an event id: at most ``limit`` rows and about ``PAGE_BYTES``.

    Returns rows ``(event_id, session_id, position, type, trace_id, ts, payload)`` and True if more may follow.
    """
    try:
        await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
        sizes = list(
            await conn.execute_fetchall(
                "SELECT event_id, length(CAST(payload AS BLOB)) FROM events "
                "WHERE event_id > ? AND position IS NOT NULL ORDER BY event_id LIMIT ?",
                (after_event_id, limit),
            )
        )
        if not sizes:
            return [], False
        n = _cut(sizes, PAGE_BYTES)
        rows = await conn.execute_fetchall(
            "SELECT event_id, session_id, position, type, trace_id, ts, payload FROM events "
            "WHERE event_id > ? AND event_id <= ? AND position IS NOT NULL ORDER BY event_id",
            (after_event_id, int(sizes[n - 1][0])),
        )
    finally:
        await conn.execute("COMMIT")
    return list(rows), n < len(sizes) or len(sizes) >= limit
