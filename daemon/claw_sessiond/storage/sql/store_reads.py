"""Whole-store reads written once for both SQL backends (scope states, session ids, usage by model, an export's
start), each over a :class:`~.dialect.Conn` the engine lends (SQLite's read connection, a pooled asyncpg one),
inside the caller's snapshot where two statements need one.

Must never: write, or open or close a transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ...errors import SessionNotFoundError
from ...export import ExportHeader
from ...model import HistoryCursor, ModelUsage, Usage
from ...state import ScopeState
from ..port import SESSION_COLS, SessionRow, session_row
from .dialect import Conn, Dialect

__all__ = [
    "export_start",
    "list_scope_states",
    "scope_states",
    "session_ids",
    "sessions_not_updated_since",
    "usage_by_model",
]

_SCOPE_COLS: Final = "SELECT scope, state, updated_at FROM scope_states"
_ROW: Final = f"SELECT {SESSION_COLS} FROM sessions WHERE session_id = $1"


async def scope_states(conn: Conn, d: Dialect, scopes: Sequence[str]) -> list[ScopeState]:
    """Each of ``scopes``' state, in their order (a scope never written: empty)."""
    wanted = list(dict.fromkeys(scopes))
    rows = await d.each(conn, f"{_SCOPE_COLS} WHERE scope = ANY($1::text[])", wanted) if wanted else []
    found = {str(r[0]): ScopeState(str(r[0]), str(r[1]), str(r[2])) for r in rows}
    return [found.get(s, ScopeState(s)) for s in scopes]


async def list_scope_states(conn: Conn, d: Dialect, after: str, limit: int) -> list[ScopeState]:
    """In byte order (SQLite's BINARY collation, PostgreSQL's ``COLLATE "C"``)."""
    rows = await conn.fetch(d.sql[f"{_SCOPE_COLS} WHERE scope > $1 ORDER BY scope LIMIT $2"], after, limit)
    return [ScopeState(str(r[0]), str(r[1]), str(r[2])) for r in rows]


async def session_ids(conn: Conn, d: Dialect) -> list[str]:
    return [
        str(r[0]) for r in await conn.fetch(d.sql["SELECT session_id FROM sessions ORDER BY created_at, session_id"])
    ]


async def sessions_not_updated_since(conn: Conn, d: Dialect, cutoff_rfc3339: str) -> list[str]:
    sql = d.sql["SELECT session_id FROM sessions WHERE updated_at < $1 ORDER BY updated_at"]
    return [str(r[0]) for r in await conn.fetch(sql, cutoff_rfc3339)]


async def _row(conn: Conn, d: Dialect, session_id: str) -> SessionRow | None:
    return session_row(await conn.fetchrow(d.sql[_ROW], session_id))


async def usage_by_model(conn: Conn, d: Dialect, session_id: str) -> tuple[Usage, list[ModelUsage]]:
    """A session's totals and its per-model breakdown.

    Raises:
        SessionNotFoundError: the session is not stored.
    """
    row = await _row(conn, d, session_id)
    if row is None:
        raise SessionNotFoundError(f"session {session_id!r} is not stored", session_id=session_id)
    rows = await conn.fetch(
        d.sql[
            "SELECT model, pricing_version, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
            "cost_micros, currency FROM usage_by_model WHERE session_id = $1 ORDER BY model, pricing_version"
        ],
        session_id,
    )
    return row.usage, [ModelUsage(d.from_text(r[0]), d.from_text(r[1]), Usage(*r[2:8])) for r in rows]


async def export_start(conn: Conn, d: Dialect, session_id: str) -> tuple[ExportHeader, HistoryCursor, int] | None:
    """An export's header (its event count), cursor and event id bound; to be read in one snapshot."""
    row = await _row(conn, d, session_id)
    if row is None:
        return None
    found = await conn.fetchrow(
        d.sql["SELECT count(*), coalesce(max(event_id), 0) FROM events WHERE session_id = $1"], session_id
    )
    header = ExportHeader(session_id, row.workdir, row.created_at, row.updated_at, int(found[0]))
    return header, HistoryCursor(session_id, row.created_at, row.clear_position, row.last_position), int(found[1])
