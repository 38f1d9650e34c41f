"""The transaction port in PostgreSQL (``storage/port.py``): asynchronous (asyncpg), in the caller's transaction.

The verbs are ``storage/sql/port.py``'s in this backend's dialect (:data:`POSTGRES`). The order rule
(SPEC §8): the first statement of every write to a session locks its row
(:meth:`PostgresPort.session_row`: ``SELECT … FOR UPDATE``; :meth:`PostgresPort.ensure_session`
first creates a missing row with ``INSERT … ON CONFLICT DO NOTHING``), so writes of one session
commit in one total order whichever daemon sends them, positions come from ``last_position``
under that lock (no sequences), and a retry with the same request id, even on another daemon,
waits for the first and then reads its committed record (READ COMMITTED). Timestamps are the
database's transaction time (:data:`NOW_SQL`), as RFC 3339 UTC text like the SQLite backend's.
Strings that may hold NUL are stored in their NUL-free form (``nul_text.db_text``).

``steps.run_async`` awaits the verbs for a sequence, which is handed :meth:`PostgresPort.as_port`.

Must never: decide (ask a rule), begin, commit or roll back a transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ...state import EMPTY
from ..port import SESSION_COLS, SessionRow, new_incarnation, session_row
from ..sql.port import SqlPort
from .dialect import POSTGRES

__all__ = ["NOW_SQL", "PostgresPort"]

#: The transaction's time as RFC 3339 UTC text with microseconds (the database's clock: SPEC §8).
NOW_SQL: Final = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

_LOCK_SQL: Final = f"SELECT {SESSION_COLS}, {NOW_SQL} FROM sessions WHERE session_id = $1 FOR UPDATE"


class PostgresPort(SqlPort):
    """The port over an asyncpg connection inside its transaction."""

    __slots__ = ()

    DIALECT = POSTGRES

    async def session_row(self, session_id: str) -> tuple[SessionRow | None, str]:
        found = await self._conn.fetchrow(_LOCK_SQL, session_id)
        if found is not None:
            return session_row(found), str(found[13])
        return None, str(await self._conn.fetchval(f"SELECT {NOW_SQL}"))

    async def ensure_session(self, session_id: str, workdir: str) -> tuple[SessionRow, str]:
        found = await self._conn.fetchrow(_LOCK_SQL, session_id)
        if found is None:
            await self._conn.execute(
                "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation) "
                f"VALUES ($1, $2, {NOW_SQL}, {NOW_SQL}, $3) ON CONFLICT (session_id) DO NOTHING",
                session_id,
                workdir,
                new_incarnation(),
            )
            found = await self._conn.fetchrow(_LOCK_SQL, session_id)
        row = session_row(found)
        assert row is not None  # created above, or by the writer the insert waited for
        return row, str(found[13])

    async def claim_session(
        self, session_id: str, workdir: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> str | None:
        """``INSERT … ON CONFLICT DO NOTHING``: a concurrent creation of the id is waited for."""
        created: str | None = await self._conn.fetchval(
            "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation, state, tool_policy, "
            f"forked_from, forked_at_position) VALUES ($1, $2, {NOW_SQL}, {NOW_SQL}, $3, $4, $5, $6, $7) "
            "ON CONFLICT (session_id) DO NOTHING RETURNING created_at",
            session_id,
            workdir,
            new_incarnation(),
            state,
            tool_policy,
            forked_from,
            forked_at_position,
        )
        return created

    async def hold_scope_states(self, scopes: Sequence[str], now: str) -> Mapping[str, str]:
        """Each row made to exist first, then all locked (``FOR UPDATE``) in sorted order: no two writers deadlock."""
        await self._conn.execute(
            "INSERT INTO scope_states(scope, state, updated_at) SELECT s, $2, $3 FROM unnest($1::text[]) AS s "
            "ORDER BY s ON CONFLICT (scope) DO NOTHING",
            list(scopes),
            EMPTY,
            now,
        )
        return await super().hold_scope_states(scopes, now)
