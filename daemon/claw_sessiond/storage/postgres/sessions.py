"""The PostgreSQL backend's session operations: CreateSession, ForkSession, UpdateSession, scope states and
session listings (a mixin of :class:`~claw_sessiond.storage.postgres.store.PostgresStorage`).

The writes run as every write does (``PostgresStorage._write``: one transaction
in the session's lane); their sequences are ``storage/sessions.py``, over :class:`~.port.PostgresPort`.
Listings filter by
labels through the ``session_labels_match`` index, as on SQLite.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

from ...model import SessionSummary
from ...state import CreateJob, ForkJob, ForkResult, ScopeState, SessionResult, UpdateJob
from .. import sessions as writes
from ..port import SESSION_COLS, session_summary
from . import reads
from .port import PostgresPort, write_tx

__all__ = ["PostgresSessions", "label_match", "like_pattern"]

T = TypeVar("T")


def like_pattern(id_contains: str) -> str:
    """An ILIKE pattern matching ``id_contains`` literally (``%``, ``_`` and ``\\`` match themselves)."""
    return "%" + id_contains.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


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


class PostgresSessions:
    """Session creation, forks, state and label updates, shared scope states and listings."""

    max_open_tool_calls: int

    def _reader(self) -> AbstractAsyncContextManager[Any]:  # pragma: no cover - PostgresStorage's
        raise NotImplementedError

    async def _write(
        self, session_id: str, fn: Callable[[Any], Awaitable[T]], *, changed: bool = False, history: bool = False
    ) -> T:  # pragma: no cover - PostgresStorage's
        raise NotImplementedError

    async def create_session(self, job: CreateJob) -> SessionResult:
        """Create an empty session with initial state, labels and tool policy (exclusive).

        Raises:
            AlreadyExistsError: reason SESSION_EXISTS, the id is stored.
        """
        return await self._write(job.session_id, write_tx(writes.create_session, job))

    async def fork_session(self, job: ForkJob) -> ForkResult:
        """Create a session as a copy of another's visible entries up to a position (``sessions.fork_session``)."""
        limit = self.max_open_tool_calls
        return await self._write(job.session_id, write_tx(writes.fork_session, job, limit), changed=True)

    async def update_session(self, job: UpdateJob) -> SessionResult:
        """Apply state deltas, label changes and a new default tool policy, all or none.

        Raises:
            SessionNotFoundError: the session is not stored.
        """
        return await self._write(job.session_id, write_tx(writes.update_session, job))

    async def scope_states(self, scopes: Sequence[str]) -> list[ScopeState]:
        """The states of shared scopes, in the order asked ("{}" for a scope never written)."""
        wanted = list(dict.fromkeys(scopes))
        if not wanted:
            return []
        async with self._reader() as conn:
            rows = await conn.fetch(
                "SELECT scope, state, updated_at FROM scope_states WHERE scope = ANY($1::text[])", wanted
            )
        found = {str(r[0]): ScopeState(str(r[0]), str(r[1]), str(r[2])) for r in rows}
        return [found.get(s, ScopeState(s)) for s in scopes]

    async def list_scope_states(self, after: str, limit: int) -> list[ScopeState]:
        """Stored shared scope states after ``after`` in byte order (``COLLATE "C"``), at most ``limit``."""
        async with self._reader() as conn:
            rows = await conn.fetch(
                "SELECT scope, state, updated_at FROM scope_states WHERE scope > $1 ORDER BY scope LIMIT $2",
                after,
                limit,
            )
        return [ScopeState(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def put_scope_states(self, states: Sequence[ScopeState]) -> None:
        """Store each state verbatim, replacing a stored one of the same scope, in one transaction.

        Not in a session's lane: a scope is no session's; the row locks order it against UpdateSession.
        """
        if not states:
            return
        async with self._reader() as conn, conn.transaction():
            await PostgresPort(conn).put_scope_states(states)

    async def list_sessions(
        self,
        id_contains: str,
        limit: int,
        after: tuple[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[SessionSummary]:
        """Sessions whose id contains ``id_contains`` (literal, ASCII case-insensitive) and that carry every one
        of ``labels``, most recently updated first, after the keyset cursor ``after``."""
        cols = f"{SESSION_COLS}, labels"
        pattern = like_pattern(id_contains)
        if not labels:
            return await reads.scan_sessions(self._reader, pattern, limit, session_summary, cols, after)
        match, params = label_match(labels, 2)
        n = 2 + len(params)
        where = ""
        cursor: tuple[str, ...] = ()
        if after is not None:
            where = f" AND updated_at <= ${n} AND (updated_at < ${n} OR session_id > ${n + 1})"
            cursor = after
        async with self._reader() as conn:
            rows = await conn.fetch(
                f"SELECT {cols} FROM sessions WHERE session_id ILIKE $1 ESCAPE '\\'{match}{where} "
                f"ORDER BY updated_at DESC, session_id LIMIT ${n + len(cursor)}",
                pattern,
                *params,
                *cursor,
                limit,
            )
        return [session_summary(values) for values in rows]

    async def count_sessions(self, id_contains: str, labels: Mapping[str, str] | None = None) -> int:
        """How many sessions :meth:`list_sessions` would list over all its pages."""
        match, params = label_match(labels or {}, 2)
        async with self._reader() as conn:
            return int(
                await conn.fetchval(
                    f"SELECT count(*) FROM sessions WHERE session_id ILIKE $1 ESCAPE '\\'{match}",
                    like_pattern(id_contains),
                    *params,
                )
            )
