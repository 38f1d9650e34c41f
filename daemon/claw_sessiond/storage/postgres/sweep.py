"""Retention across daemons on PostgreSQL: one sweeper at a time, its cutoff from the database's clock.

Every daemon on the database runs the retention sweep on its own schedule
(``retention.run``). A sweep first takes its turn (:func:`retention_turn`): a
session-level ``pg_try_advisory_lock`` on :data:`RETENTION_LOCK`, held on one
pooled connection for the whole sweep. A daemon that does not get it skips
this round (another daemon is sweeping the same sessions); a daemon that dies
mid-sweep loses the lock with its connection. The cutoff is the database's
``now()`` minus the retention window, as RFC 3339 UTC text like the stored
times (which are the database's transaction times too): daemons whose clocks
disagree still agree on which sessions expired.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Final

from .errors import map_pg_errors

__all__ = ["RETENTION_LOCK", "retention_turn"]

#: Key of the session-level advisory lock a retention sweep holds ("CLAW", "RETN").
RETENTION_LOCK: Final = (0x434C4157, 0x5245544E)

_CUTOFF_SQL: Final = (
    "SELECT to_char((now() - make_interval(secs => $1)) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
)


@contextlib.asynccontextmanager
async def retention_turn(pool: Any, where: str, window_s: float) -> AsyncIterator[str | None]:
    """Hold the retention turn for a sweep: yields the cutoff (the database's ``now()`` minus ``window_s``), or
    None when another daemon holds the turn now.

    Raises:
        StorageUnavailableError: the database cannot be reached.
    """
    async with pool.acquire() as conn:
        async with map_pg_errors(where):
            got = await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", *RETENTION_LOCK)
        if not got:
            yield None
            return
        try:
            async with map_pg_errors(where):
                cutoff = str(await conn.fetchval(_CUTOFF_SQL, float(window_s)))
            yield cutoff
        finally:
            # A connection that fails here is closed by the pool, and its lock goes with it.
            with contextlib.suppress(Exception):
                await conn.execute("SELECT pg_advisory_unlock($1, $2)", *RETENTION_LOCK)
