"""Borrowing a pool connection and running one write transaction on it, with a bounded retry.

- :func:`pooled`: a connection of the pool for one block. When the server cut the connection (a
  restart, a killed backend), giving it back may fail; that is logged and not raised, since the
  block itself already succeeded or failed on its own (asyncpg's pool drops the connection and
  opens a new one at the next acquire: the daemon reconnects by itself).
  When the server refuses a new connection (``53300``: the role's or the server's connection
  limit), the pool's other connections will be free in moments: the borrower waits for one,
  trying again after short pauses (2 ms doubling to 50 ms), for at most :data:`LIMIT_WAIT_S`
  seconds in all; then the refusal is the answer (UNAVAILABLE, "too many connections").
- :func:`run_transaction`: ``fn`` in one transaction; a serialization failure, a deadlock or a
  lock timeout (:data:`~.errors.ROLLED_BACK_STATES`: the server rolled everything back, nothing
  was written) runs it again, at most :data:`TX_ATTEMPTS` times in all, after a short random pause.
  A lost connection is never retried here: whether its COMMIT landed is unknown, and the client's
  retry with the same request id is what settles it (replayed, never applied twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final, TypeVar

import asyncpg

from ...errors import StorageUnavailableError
from .errors import map_pg_errors, rolled_back

__all__ = ["LIMIT_WAIT_S", "TX_ATTEMPTS", "pooled", "run_transaction"]

T = TypeVar("T")

#: Most runs of one write transaction (the first and its retries).
TX_ATTEMPTS: Final = 3
#: Upper bound of the pause before a retry, in seconds (times the attempt number).
_PAUSE_S: Final = 0.05

#: Longest a borrower waits for a pooled connection when the server refuses new ones (53300), seconds.
LIMIT_WAIT_S: Final = 3.0
#: First and largest pause between two tries at the connection limit, in seconds.
_LIMIT_PAUSE_S: Final = (0.002, 0.05)

_log = logging.getLogger("claw_sessiond.store")


async def _acquire(pool: Any, where: str) -> Any:
    """``pool.acquire()``, waiting (at most :data:`LIMIT_WAIT_S`) while the server refuses new connections."""
    deadline = time.monotonic() + LIMIT_WAIT_S
    pause, tries = _LIMIT_PAUSE_S[0], 0
    while True:
        try:
            conn = await pool.acquire()
        except asyncpg.TooManyConnectionsError:
            tries += 1
            left = deadline - time.monotonic()
            if left <= 0:
                _log.warning("event=connection_limit where=%s tries=%d waited_s=%.1f", where, tries, LIMIT_WAIT_S)
                raise
            # The pool prefers a connected holder: once one of its connections is given back, the next
            # try takes it without asking the server for a new one.
            await asyncio.sleep(min(left, random.uniform(pause / 2, pause)))
            pause = min(pause * 2, _LIMIT_PAUSE_S[1])
            continue
        if tries:
            _log.info("event=connection_limit_waited where=%s tries=%d", where, tries)
        return conn


@contextlib.asynccontextmanager
async def pooled(pool: Any, where: str) -> AsyncIterator[Any]:
    """A connection of ``pool`` for the block; errors inside are mapped (:func:`~.errors.map_pg_errors`)."""
    async with map_pg_errors(where):
        conn = await _acquire(pool, where)
        try:
            yield conn
        finally:
            try:
                await pool.release(conn)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError, OSError) as exc:
                _log.warning("event=connection_dropped where=%s error=%s", where, type(exc).__name__)


async def run_transaction(pool: Any, where: str, fn: Callable[[Any], Awaitable[T]]) -> T:
    """``fn(conn)`` in one transaction, run again (bounded) when the server rolled it back as a conflict.

    Raises:
        StorageUnavailableError: it failed (the last attempt's error), or the connection was lost.
    """
    for attempt in range(1, TX_ATTEMPTS + 1):
        try:
            async with pooled(pool, where) as conn, conn.transaction():
                return await fn(conn)
        except StorageUnavailableError as exc:
            if attempt == TX_ATTEMPTS or not rolled_back(exc):
                raise
            _log.info(
                "event=transaction_retried where=%s attempt=%d sqlstate=%s",
                where,
                attempt,
                getattr(exc.__cause__, "sqlstate", ""),
            )
        await asyncio.sleep(random.uniform(0, _PAUSE_S * attempt))
    raise AssertionError("unreachable")  # the loop returns or raises
