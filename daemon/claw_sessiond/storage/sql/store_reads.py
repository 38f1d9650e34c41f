"""Whole-store reads written once for both SQL backends: :class:`SqlReads`, the base of each SQL engine.

Listings and their count, scope states, session ids, usage by model, an export's start, the
retention queries, the counts of the figures and where a follow-all starts (``base.StoreReads`` says
what each promises; :func:`follow_rows` reads its pages for the engines) run
the same statements on both backends, over the connections the engine lends (:class:`SqlReads`'s
four ``_short``/``_bulk`` hooks: SQLite's read connections, PostgreSQL's pool), in a short read
transaction (one snapshot) where two statements need one. What differs per backend (search, the
usage report, how far the follow feed may read, the bytes of the figures) stays in the engine.

Must never: write, or open or close a transaction other than through the engine's hooks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, Final

from ...edits import history_item
from ...errors import SessionNotFoundError
from ...model import HistoryCursor, ModelUsage, SessionSummary, Usage
from ...queries import MAX_FOLLOW_LAST
from ...state import ScopeState
from ..base import FollowItem
from ..paging import PAGE_BYTES, cut
from ..port import SESSION_COLS, like_pattern, session_row
from . import listing
from .dialect import Conn, Dialect
from .listing import Tx

if TYPE_CHECKING:
    from ...export import ExportHeader

__all__ = ["NO_BOUND", "SqlReads", "follow_rows"]

#: The follow feed's bound where event ids commit in order (SQLite: one writer): none (the largest id).
NO_BOUND: Final = (1 << 63) - 1

_SCOPE_COLS: Final = "SELECT scope, state, updated_at FROM scope_states"
_ROW: Final = f"SELECT {SESSION_COLS} FROM sessions WHERE session_id = $1"
_COUNTS: Final = (
    "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM events), (SELECT count(*) FROM requests), "
    "(SELECT coalesce(max(version), 0) FROM schema_migrations)"
)


class SqlReads:
    """The whole-store reads of an SQL engine; :data:`DIALECT` and the four lending hooks are the engine's."""

    DIALECT: ClassVar[Dialect]
    #: A connection for a short read, and one in a short read transaction (one snapshot).
    _short: Tx
    _short_tx: Tx
    #: The same for a long read (a listing's count, its chunks).
    _bulk: Tx
    _bulk_tx: Tx

    async def list_sessions(
        self,
        id_contains: str,
        limit: int,
        after: tuple[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[SessionSummary]:
        """Scans in chunks (``listing.py``), so a filter that matches nothing does not hold a read connection for
        the whole table; a label filter reads only the sessions that carry the labels."""
        pattern, d = like_pattern(id_contains), self.DIALECT
        if labels:
            return await listing.labelled_sessions(self._bulk_tx, d, pattern, labels, limit, after)
        return await listing.scan_sessions(self._bulk_tx, d, pattern, limit, after)

    async def count_sessions(self, id_contains: str, labels: Mapping[str, str] | None = None) -> int:
        """One statement on a bulk read connection (``listing.count_sessions``)."""
        async with self._bulk() as conn:
            return await listing.count_sessions(conn, self.DIALECT, id_contains, labels or {})

    async def scope_states(self, scopes: Sequence[str]) -> list[ScopeState]:
        wanted = list(dict.fromkeys(scopes))
        sql = f"{_SCOPE_COLS} WHERE scope = ANY($1::text[])"
        async with self._short() as conn:
            rows = await self.DIALECT.each(conn, sql, wanted) if wanted else []
        found = {str(r[0]): ScopeState(str(r[0]), str(r[1]), str(r[2])) for r in rows}
        return [found.get(s, ScopeState(s)) for s in scopes]

    async def list_scope_states(self, after: str, limit: int) -> list[ScopeState]:
        """In byte order (SQLite's BINARY collation, PostgreSQL's ``COLLATE "C"``)."""
        async with self._short() as conn:
            rows = await conn.fetch(
                self.DIALECT.sql[f"{_SCOPE_COLS} WHERE scope > $1 ORDER BY scope LIMIT $2"], after, limit
            )
        return [ScopeState(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def session_ids(self) -> list[str]:
        async with self._short() as conn:
            rows = await conn.fetch(self.DIALECT.sql["SELECT session_id FROM sessions ORDER BY created_at, session_id"])
        return [str(r[0]) for r in rows]

    async def sessions_not_updated_since(self, cutoff_rfc3339: str) -> list[str]:
        sql = self.DIALECT.sql["SELECT session_id FROM sessions WHERE updated_at < $1 ORDER BY updated_at"]
        async with self._short() as conn:
            rows = await conn.fetch(sql, cutoff_rfc3339)
        return [str(r[0]) for r in rows]

    async def newest_update(self) -> str | None:
        async with self._short() as conn:
            newest = await conn.fetchval(self.DIALECT.sql["SELECT max(updated_at) FROM sessions"])
        return None if newest is None else str(newest)

    async def requests_due(self, cutoff_rfc3339: str) -> bool:
        async with self._short() as conn:
            found = await conn.fetchval(
                self.DIALECT.sql["SELECT 1 FROM requests WHERE created_at < $1 LIMIT 1"], cutoff_rfc3339
            )
        return found is not None

    async def usage_by_model(self, session_id: str) -> tuple[Usage, list[ModelUsage]]:
        """The totals and the breakdown in one snapshot."""
        d = self.DIALECT
        async with self._short_tx() as conn:
            row = session_row(await conn.fetchrow(d.sql[_ROW], session_id))
            if row is None:
                raise SessionNotFoundError(f"session {session_id!r} is not stored", session_id=session_id)
            rows = await conn.fetch(
                d.sql[
                    "SELECT model, pricing_version, input_tokens, output_tokens, cache_read_tokens, "
                    "cache_write_tokens, cost_micros, currency FROM usage_by_model WHERE session_id = $1 "
                    "ORDER BY model, pricing_version"
                ],
                session_id,
            )
        return row.usage, [ModelUsage(d.from_text(r[0]), d.from_text(r[1]), Usage(*r[2:8])) for r in rows]

    async def export_start(self, session_id: str) -> tuple[ExportHeader, HistoryCursor, int] | None:
        """The header's event count and the id bound are read in one snapshot."""
        d = self.DIALECT
        async with self._short_tx() as conn:
            row = session_row(await conn.fetchrow(d.sql[_ROW], session_id))
            if row is None:
                return None
            found = await conn.fetchrow(
                d.sql["SELECT count(*), coalesce(max(event_id), 0) FROM events WHERE session_id = $1"], session_id
            )
        from ...export import ExportHeader  # only an Export needs the export format

        header = ExportHeader(session_id, row.workdir, row.created_at, row.updated_at, int(found[0]))
        return header, HistoryCursor(session_id, row.created_at, row.clear_position, row.last_position), int(found[1])

    async def follow_start(self, last: int) -> int:
        """The newest event id up to :meth:`_follow_bound`, or the one before the last ``last`` history events."""
        d = self.DIALECT
        async with self._short() as conn:
            bound = await self._follow_bound(conn)
            if last <= 0:
                sql = "SELECT coalesce(max(event_id), 0) FROM events WHERE event_id <= $1"
                return int(await conn.fetchval(d.sql[sql], bound))
            sql = (
                "SELECT event_id FROM events WHERE position IS NOT NULL AND event_id <= $1 "
                "ORDER BY event_id DESC LIMIT 1 OFFSET $2"
            )
            found = await conn.fetchval(d.sql[sql], bound, min(last, MAX_FOLLOW_LAST) - 1)
        return int(found) - 1 if found is not None else 0

    async def _follow_bound(self, conn: Conn) -> int:
        """The highest event id a follow-all may read now (a backend whose ids may commit out of order: less)."""
        return NO_BOUND

    async def _counts(self) -> tuple[int, int, int, int]:
        """The figures' sessions, events, idempotency records and schema version, in one statement."""
        async with self._short() as conn:
            found = await conn.fetchrow(self.DIALECT.sql[_COUNTS])
        return int(found[0]), int(found[1]), int(found[2]), int(found[3])


async def follow_rows(
    conn: Conn, d: Dialect, after_event_id: int, limit: int, bound: int = NO_BOUND
) -> tuple[list[FollowItem], bool]:
    """History events of any session after an event id (up to ``bound``), in the caller's snapshot: at most
    ``limit`` rows and about ``PAGE_BYTES``, and True if more may follow."""
    sql = (
        "SELECT event_id, {event_bytes} FROM events "
        "WHERE event_id > $1 AND event_id <= $2 AND position IS NOT NULL ORDER BY event_id LIMIT $3"
    )
    sizes = await conn.fetch(d.sql[sql], after_event_id, bound, limit)
    if not sizes:
        return [], False
    n = cut(sizes, PAGE_BYTES)
    sql = (
        "SELECT event_id, session_id, position, type, trace_id, ts, payload, format, item FROM events "
        "WHERE event_id > $1 AND event_id <= $2 AND position IS NOT NULL ORDER BY event_id"
    )
    rows = await conn.fetch(d.sql[sql], after_event_id, int(sizes[n - 1][0]))
    items = [(int(r[0]), str(r[1]), int(r[2]), history_item(int(r[2]), *r[3:9])) for r in rows]
    return items, n < len(sizes) or len(sizes) >= limit
