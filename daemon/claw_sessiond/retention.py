"""The retention policy: erase whole sessions not updated for ``retention_days`` (off by default).

A sweep lists the sessions whose last change is older than the cutoff, then
deletes each one only if it is *still* older when the writer gets to it (a
session written meanwhile survives). Sessions are never trimmed, only erased
whole, with the same secure delete and WAL checkpoint as the Delete RPC.
No SQL and no grpc here: the store does the work.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import Final

from .errors import StorageError
from .store import Store

__all__ = ["cutoff", "run", "sweep"]

_log = logging.getLogger("claw_sessiond.retention")
#: Shortest pause between sweeps, whatever the configuration says.
_MIN_INTERVAL_S: Final = 0.05


def cutoff(retention_days: float, now: dt.datetime | None = None) -> str:
    """The RFC 3339 time before which a session's last change makes it expire."""
    moment = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(days=retention_days)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def sweep(store: Store, retention_days: float) -> int:
    """Erase every expired session once; returns how many were erased."""
    limit = cutoff(retention_days)
    removed = 0
    for session_id in await store.sessions_not_updated_since(limit):
        events = await store.delete_if_not_updated_since(session_id, limit)
        if events:
            removed += 1
            store.counters.retention_deleted += 1
            _log.info("event=retention_deleted session=%s events=%d cutoff=%s", session_id, events, limit)
    if removed:
        _log.info("event=retention_swept sessions_deleted=%d", removed)
    return removed


async def run(store: Store, retention_days: float, interval_s: float) -> None:
    """Sweep now, then every ``interval_s``, until cancelled. A failed sweep is logged and retried later."""
    while True:
        try:
            await sweep(store, retention_days)
        except StorageError as exc:
            _log.warning("event=retention_failed error=%s", exc.message)
        await asyncio.sleep(max(interval_s, _MIN_INTERVAL_S))
