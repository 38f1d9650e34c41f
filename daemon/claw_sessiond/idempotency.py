"""The retry window: idempotency records older than it are pruned in the background.

Every write that carries a request id stores its first result (about 300
bytes) so that a retry replays it. Records are kept for the retry window
(``--request-id-retention-s``, default 24 h; 0 keeps them forever), then
deleted here in batches of at most :data:`PRUNE_BATCH`, each its own short
writer job, so a large backlog never holds the writer for long. A retry
inside the window (and until the record is pruned) returns the first
result; a retry *after* its record was pruned is a new request and is
written again. Age is measured with :class:`~claw_sessiond.clock.SteadyClock`,
so a wall-clock step forward does not cut the window short.

No SQL and no grpc here: the store does the work.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from .clock import SteadyClock
from .errors import StorageError
from .storage import Storage

__all__ = ["PRUNE_BATCH", "interval_s", "prune", "run"]

_log = logging.getLogger("claw_sessiond.idempotency")
#: Most records deleted per writer job.
PRUNE_BATCH: Final = 500
#: Most batches per sweep (the rest waits for the next sweep).
_MAX_BATCHES: Final = 200


def interval_s(window_s: float) -> float:
    """How often to prune: a tenth of the window, between 50 ms and 5 minutes."""
    return min(max(window_s / 10, 0.05), 300.0)


async def prune(store: Storage, window_s: float, clock: SteadyClock) -> int:
    """Delete the records older than the window, batch by batch; returns how many."""
    cutoff = clock.cutoff(window_s)
    total = 0
    for _ in range(_MAX_BATCHES):
        removed = await store.prune_requests(cutoff, PRUNE_BATCH)
        total += removed
        if removed < PRUNE_BATCH:
            break
        await asyncio.sleep(0)  # let other work reach the writer between batches
    if total:
        _log.info("event=request_records_pruned records=%d cutoff=%s", total, cutoff)
    return total


async def run(store: Storage, window_s: float, clock: SteadyClock | None = None) -> None:
    """Prune now, then every :func:`interval_s`, until cancelled. A failed sweep is logged and retried."""
    steady = clock or SteadyClock()
    while True:
        try:
            await prune(store, window_s, steady)
        except StorageError as exc:
            _log.warning("event=request_prune_failed error=%s", exc.message)
        await asyncio.sleep(interval_s(window_s))
