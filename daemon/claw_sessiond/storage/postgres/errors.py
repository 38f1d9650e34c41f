"""asyncpg errors → domain storage errors, translated once, here (keyed on SQLSTATE, never on text).

Every database call of the backend runs inside :func:`map_pg_errors`:
``53100`` (disk full) → :class:`~claw_sessiond.errors.StorageFullError`;
``XX001``/``XX002`` (data or index corrupted) → ``CorruptDatabaseError``;
asyncpg's internal client errors (a connection cut in the middle of an operation) → unavailable too;
anything else, including a lost connection, a lock or statement timeout, a
serialization failure or deadlock, a server shutting down, and a unique
violation on ``(session_id, position)`` (a bug: logged) →
``StorageUnavailableError``; always chained with ``from exc``. Domain errors
raised by the rules inside a transaction pass through untouched. Messages
name the server (``config.redact_url``), never a password.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import asyncpg

from ...errors import CorruptDatabaseError, StorageFullError, StorageUnavailableError

__all__ = ["ROLLED_BACK_STATES", "map_pg_errors", "rolled_back"]

#: SQLSTATEs after which the server has rolled the whole transaction back and it may simply run again:
#: serialization failure, deadlock detected, lock not available (``lock_timeout``).
ROLLED_BACK_STATES: frozenset[str] = frozenset({"40001", "40P01", "55P03"})

_log = logging.getLogger("claw_sessiond.store")


@contextlib.asynccontextmanager
async def map_pg_errors(where: str) -> AsyncIterator[None]:
    """Translate asyncpg and connection errors raised inside into domain storage errors."""
    try:
        yield
    except asyncpg.PostgresError as exc:
        state = getattr(exc, "sqlstate", "") or ""
        if state == "53100":
            raise StorageFullError(f"storage is full ({where}): {exc}") from exc
        if state in ("XX001", "XX002"):
            raise CorruptDatabaseError(f"database is corrupt ({where}): {exc}") from exc
        if state == "23505":
            _log.error("event=unexpected_unique_violation where=%s sqlstate=%s detail=%s", where, state, exc)
        raise StorageUnavailableError(
            f"storage failed ({where}): SQLSTATE {state} {type(exc).__name__}: {exc}"
        ) from exc
    except (asyncpg.InterfaceError, asyncpg.InternalClientError, OSError, ConnectionError) as exc:
        raise StorageUnavailableError(f"storage failed ({where}): {type(exc).__name__}: {exc}") from exc


def rolled_back(exc: BaseException) -> bool:
    """True if ``exc`` (a mapped storage error) is one of :data:`ROLLED_BACK_STATES`: nothing was written."""
    cause = exc.__cause__
    return isinstance(cause, asyncpg.PostgresError) and getattr(cause, "sqlstate", "") in ROLLED_BACK_STATES
