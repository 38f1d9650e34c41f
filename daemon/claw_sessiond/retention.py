"""The retention policy: erase whole sessions not updated for ``retention_days`` (off by default).

A sweep lists the sessions whose last change is older than the cutoff, then
deletes each one only if it is *still* older when the writer gets to it (a
session written meanwhile survives). Sessions are never trimmed, only erased
whole, with the same secure delete and WAL checkpoint as the Delete RPC.

The clock rule: stored times are wall-clock, and the wall clock can be wrong
or step. So

- the cutoff is taken from :class:`~claw_sessiond.clock.SteadyClock`
  (a forward step of the wall clock does not make sessions expire sooner), unless the
  storage keeps its times on another clock (PostgreSQL: the database's, ``Storage.retention_turn``);
- a store shared by several daemons is swept by one at a time (``Storage.retention_turn``);
- a session written since the daemon started (Append, RecordUsage, Clear,
  RecordEvent) is never erased by retention, whatever its stored time says,
  until it has been idle for the whole retention period by the monotonic
  clock. Only sessions last written before the daemon started (or imported
  with their original times) are judged by their stored time alone.

No SQL and no grpc here: the store does the work.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Final

from .clock import SteadyClock
from .errors import StorageError
from .storage import Storage

__all__ = ["run", "sweep"]

_log = logging.getLogger("claw_sessiond.retention")
#: Shortest pause between sweeps, whatever the configuration says.
_MIN_INTERVAL_S: Final = 0.05
_DAY_S: Final = 86400.0


async def sweep(store: Storage, retention_days: float, clock: SteadyClock | None = None) -> int:
    """Erase every expired session once; returns how many were erased."""
    steady = clock or SteadyClock()
    window_s = retention_days * _DAY_S
    store.forget_written_before(time.monotonic() - window_s)
    removed = spared = 0
    async with store.retention_turn(window_s, steady.cutoff(window_s)) as limit:
        if limit is None:
            _log.debug("event=retention_skipped reason=another_daemon_sweeping")
            return 0
        for session_id in await store.sessions_not_updated_since(limit):
            if store.written_since_start(session_id):
                spared += 1
                continue
            events = await store.delete_if_not_updated_since(session_id, limit)
            if events:
                removed += 1
                store.counters.retention_deleted += 1
                _log.info("event=retention_deleted session=%s events=%d cutoff=%s", session_id, events, limit)
    if spared:
        _log.debug("event=retention_spared sessions=%d reason=written_since_start", spared)
    if removed:
        _log.info("event=retention_swept sessions_deleted=%d", removed)
    return removed


async def run(store: Storage, retention_days: float, interval_s: float) -> None:
    """Sweep now, then every ``interval_s``, until cancelled. A failed sweep is logged and retried later."""
    clock = SteadyClock()
    while True:
        try:
            await sweep(store, retention_days, clock)
        except StorageError as exc:
            _log.warning("event=retention_failed error=%s", exc.message)
        await asyncio.sleep(max(interval_s, _MIN_INTERVAL_S))
