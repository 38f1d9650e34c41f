"""The cross-session reads for people in PostgreSQL: full-text search and the usage report (follow-all pages:
``follow.py``).

Search uses PostgreSQL's full-text search over the stored ``events.search``
column (``to_tsvector('simple', content)``, a GIN index), not FTS5. The
query (``queries.fts_query``) is translated: the plain form (every word an
FTS5 string: ``"fox" "lazy dog"``) becomes ``phraseto_tsquery`` per string,
all required; anything else (raw mode) is read as PostgreSQL web-search
syntax (``websearch_to_tsquery``: ``"a phrase"``, ``or``, ``-word``), not
FTS5 syntax (no ``NEAR``, ``*`` prefixes or column filters), and is never
a syntax error. The ``simple`` configuration lower-cases and does not stem,
like FTS5's ``unicode61``, but does not remove diacritics. Ranking is
``ts_rank`` (the score is its negation, so that lower is better as with
bm25); snippets come from ``ts_headline`` with the match marks of
``queries.py``. Every statement has the time bounds of ``queries.py``
(asyncpg cancels it on the server when the bound passes or the caller goes
away).
"""

from __future__ import annotations

import re
from typing import Any, Final

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
from ..nul_text import from_db_text
from ..sql.searching import filter_clause, too_long
from .dialect import payload_json
from .schema import SCHEMA

__all__ = ["search", "stored_bytes", "tsquery_sql", "usage_report"]

_PHRASES: Final = re.compile(r'^\s*(?:"(?:[^"]|"")*"\s*)+$')
_PHRASE: Final = re.compile(r'"((?:[^"]|"")*)"')
_INT64_MAX: Final = (1 << 63) - 1


def tsquery_sql(match: str, first_param: int) -> tuple[str, list[str]]:
    """The tsquery expression for a ``fts_query`` match string, and its parameters (numbered from ``first_param``).

    A NUL in it is a space (``text`` holds none; the search column reads a message's NUL as a space too)."""
    match = match.replace("\x00", " ")
    if _PHRASES.match(match):
        phrases = [p.replace('""', '"') for p in _PHRASE.findall(match)]
        parts = [f"phraseto_tsquery('simple', ${first_param + i})" for i in range(len(phrases))]
        return "(" + " && ".join(parts) + ")", phrases
    return f"websearch_to_tsquery('simple', ${first_param})", [match]


async def search(conn: Any, match: str, filters: SearchFilter, limit: int) -> tuple[list[SearchRow], bool]:
    """Up to ``limit`` hits, best first, and True if more matched.

    Raises:
        InvalidRequestError: the search took too long.
    """
    query, params = tsquery_sql(match, 1)
    args: list[Any] = list(params)

    def arg(value: Any) -> str:
        args.append(value)
        return f"${len(args)}"

    where = filter_clause(filters, f"({payload_json('e.payload')} ->> 'role')", arg)
    headline = (
        f"StartSel={MATCH_OPEN}, StopSel={MATCH_CLOSE}, MaxWords={SNIPPET_TOKENS}, MinWords={SNIPPET_TOKENS // 2}, "
        "ShortWord=0, FragmentDelimiter=…"
    )
    sql = (
        "WITH q AS (SELECT " + query + " AS q), hits AS ("
        "SELECT e.event_id, e.session_id, e.position, e.payload, e.ts, ts_rank(e.search, q.q) AS rank, "
        "(e.position <= s.clear_position OR e.hidden_by IS NOT NULL) AS cleared FROM events AS e CROSS JOIN q "
        "JOIN sessions AS s ON s.session_id = e.session_id "
        f"WHERE e.search @@ q.q{where} ORDER BY rank DESC, e.event_id LIMIT {arg(limit + 1)}) "
        f"SELECT h.session_id, h.position, {payload_json('h.payload')} ->> 'role', h.ts, -h.rank, "
        f"ts_headline('simple', coalesce({payload_json('h.payload')} ->> 'content', ''), q.q, {arg(headline)}), "
        "h.cleared "
        "FROM hits AS h CROSS JOIN q ORDER BY h.rank DESC, h.event_id"
    )
    try:
        rows = await conn.fetch(sql, *args, timeout=SEARCH_TIMEOUT_S)
    except TimeoutError:
        raise too_long("search", SEARCH_TIMEOUT_S) from None
    hits = [
        SearchRow(str(r[0]), int(r[1]), str(r[2] or ""), str(r[3]), float(r[4]), from_db_text(r[5] or ""), bool(r[6]))
        for r in rows[:limit]
    ]
    return hits, len(rows) > limit


async def usage_report(conn: Any, since: str, until: str, *, by_session: bool) -> tuple[list[UsageRow], bool]:
    """Usage events grouped by UTC day, model, pricing version, currency (and session), in that order.

    Raises:
        InvalidRequestError: a group's total overflows 64 bits, or the report took too long.
    """
    session = "e.session_id" if by_session else "''"

    def field(key: str) -> str:
        return f"coalesce(({payload_json('e.payload')} ->> '{key}')::numeric, 0)"

    sql = (
        'SELECT substr(e.ts, 1, 10) COLLATE "C" AS day, '
        f"coalesce({payload_json('e.payload')} ->> 'model', '') COLLATE \"C\" AS model, "
        f"coalesce({payload_json('e.payload')} ->> 'pricing_version', '') COLLATE \"C\" AS pricing, "
        f"(CASE WHEN {field('cost_micros')} <> 0 "
        f"THEN coalesce({payload_json('e.payload')} ->> 'currency', '') ELSE '' END) "
        'COLLATE "C" AS currency, '
        f'{session} COLLATE "C" AS sid, '
        f"sum({field('input_tokens')}), sum({field('output_tokens')}), sum({field('cache_read_tokens')}), "
        f"sum({field('cache_write_tokens')}), sum({field('cost_micros')}), count(*) "
        "FROM events AS e WHERE e.type = 'usage' AND e.ts >= $1 AND e.ts < $2 "
        "GROUP BY day, model, pricing, currency, sid ORDER BY day, model, pricing, currency, sid LIMIT $3"
    )
    try:
        rows = await conn.fetch(sql, since, until or "\uffff", MAX_REPORT_ROWS + 1, timeout=REPORT_TIMEOUT_S)
    except TimeoutError:
        raise too_long("usage report", REPORT_TIMEOUT_S) from None
    out: list[UsageRow] = []
    for r in rows:
        totals = [int(v) for v in r[5:11]]
        if any(abs(v) > _INT64_MAX for v in totals):
            raise InvalidRequestError(
                "a usage total does not fit a 64-bit integer; report a shorter time range",
                reason=Reason.INVALID_USAGE,
            )
        out.append(UsageRow(str(r[0]), from_db_text(r[1]), from_db_text(r[2]), str(r[3]), str(r[4]), *totals))
    return out[:MAX_REPORT_ROWS], len(out) > MAX_REPORT_ROWS


async def stored_bytes(conn: Any) -> int:
    """The bytes of the schema's tables (the figures' stored bytes)."""
    return int(
        await conn.fetchval(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c "
            "JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
            SCHEMA,
        )
    )
