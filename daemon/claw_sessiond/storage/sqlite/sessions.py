"""The SQLite backend's session operations: CreateSession, ForkSession, UpdateSession, scope states (a mixin).

Part of :class:`~claw_sessiond.storage.sqlite.store.SQLiteStorage`. The
writes run in the writer (their sequences are ``storage/sessions.py``, over :class:`~.port.SQLitePort`);
scope states are read on a short
read connection.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...state import CreateJob, ForkJob, ForkResult, ScopeState, SessionResult, UpdateJob
from .. import sessions as writes
from .port import SQLitePort, write_tx
from .reading import SQLiteReads

__all__ = ["SQLiteSessions"]


class SQLiteSessions(SQLiteReads):
    """Session creation, forks, state and label updates, and shared scope states."""

    max_open_tool_calls: int

    async def create_session(self, job: CreateJob) -> SessionResult:
        """Create an empty session with initial state, labels and tool policy (exclusive).

        Raises:
            AlreadyExistsError: reason SESSION_EXISTS, the id is stored.
        """
        return await self._writer.submit(write_tx(writes.create_session, job))

    async def fork_session(self, job: ForkJob) -> ForkResult:
        """Create a session as a copy of another's visible entries up to a position (``sessions.fork_session``)."""
        limit = self.max_open_tool_calls
        return await self._writer.submit(write_tx(writes.fork_session, job, limit), job.session_id)

    async def update_session(self, job: UpdateJob) -> SessionResult:
        """Apply state deltas, label changes and a new default tool policy, all or none.

        Raises:
            SessionNotFoundError: the session is not stored.
        """
        return await self._writer.submit(write_tx(writes.update_session, job))

    async def scope_states(self, scopes: Sequence[str]) -> list[ScopeState]:
        """The states of shared scopes, in the order asked ("{}" for a scope never written)."""
        wanted = list(dict.fromkeys(scopes))
        if not wanted:
            return []
        async with self._reader() as conn:
            rows = await conn.execute_fetchall(
                f"SELECT scope, state, updated_at FROM scope_states WHERE scope IN ({','.join('?' * len(wanted))})",
                wanted,
            )
        found = {str(r[0]): ScopeState(str(r[0]), str(r[1]), str(r[2])) for r in rows}
        return [found.get(s, ScopeState(s)) for s in scopes]

    async def list_scope_states(self, after: str, limit: int) -> list[ScopeState]:
        """Stored shared scope states after ``after`` in byte order (BINARY collation), at most ``limit``."""
        async with self._reader() as conn:
            rows = await conn.execute_fetchall(
                "SELECT scope, state, updated_at FROM scope_states WHERE scope > ? ORDER BY scope LIMIT ?",
                (after, limit),
            )
        return [ScopeState(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def put_scope_states(self, states: Sequence[ScopeState]) -> None:
        """Store each state verbatim, replacing a stored one of the same scope, in one transaction."""
        if states:
            await self._writer.submit(lambda c: SQLitePort(c).put_scope_states(states))
