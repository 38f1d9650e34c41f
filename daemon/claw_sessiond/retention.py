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

And the start-up clock is checked against the store: a daemon started while
its clock (the clock the cutoff comes from) is more than
:data:`CLOCK_AHEAD_BOUND_S` (one day) ahead of the newest change stored
before it served, advanced by the monotonic time since, refuses to sweep.
Nothing tells a clock set a month ahead from a store idle for a month, and
an erasure cannot be undone while a late one costs nothing, so the sweep
waits: it logs ``event=retention_refused`` once and sweeps again (logging
``event=retention_resumed``) when the clock comes back within the bound, for
example after NTP steps it back. A store last written more than a day
before the daemon started is therefore swept only by a later daemon, started
after something was written. An empty store has nothing to erase and no
check.

No SQL and no grpc here: the store does the work.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from dataclasses import dataclass
from typing import Final

from .clock import SteadyClock
from .errors import StorageError
from .storage import Storage

__all__ = ["CLOCK_AHEAD_BOUND_S", "ClockCheck", "clock_check", "run", "sweep"]

_log = logging.getLogger("claw_sessiond.retention")
#: Shortest pause between sweeps, whatever the configuration says.
_MIN_INTERVAL_S: Final = 0.05
_DAY_S: Final = 86400.0
#: How far the clock may be ahead of the newest change stored before start-up (advanced by the time since)
#: before retention refuses to sweep: one day.
CLOCK_AHEAD_BOUND_S: Final = _DAY_S


def _parse(stored: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stored.replace("Z", "+00:00"))


@dataclass
class ClockCheck:
    """The store's evidence of the time at start-up: its newest change, read before the daemon served."""

    newest: dt.datetime | None
    """The newest stored change (``sessions.updated_at``) at start-up; None for an empty store."""
    read_monotonic: float
    """``time.monotonic()`` when it was read."""
    refusing: bool = False
    """True while sweeps are refused (so the refusal is logged once)."""

    def ahead_s(self, now: dt.datetime) -> float:
        """How far ``now`` is ahead of the newest stored change plus the time since it was read."""
        if self.newest is None:
            return 0.0
        return (now - self.newest).total_seconds() - (time.monotonic() - self.read_monotonic)


async def clock_check(store: Storage) -> ClockCheck:
    """Read the newest stored change; call it before the daemon serves (its own writes are no evidence)."""
    newest = await store.newest_update()
    return ClockCheck(_parse(newest) if newest else None, time.monotonic())


def _clock_refuses(check: ClockCheck | None, now: dt.datetime) -> bool:
    """True if this sweep must not run; logs a change of state once."""
    if check is None:
        return False
    ahead_s = check.ahead_s(now)
    if ahead_s > CLOCK_AHEAD_BOUND_S:
        if not check.refusing:
            check.refusing = True
            _log.warning(
                "event=retention_refused reason=clock_ahead_of_store ahead_s=%d bound_s=%d newest_stored=%s now=%s",
                ahead_s,
                CLOCK_AHEAD_BOUND_S,
                check.newest.isoformat() if check.newest else "",
                now.isoformat(),
            )
        return True
    if check.refusing:
        check.refusing = False
        _log.info("event=retention_resumed reason=clock_within_bound ahead_s=%d", ahead_s)
    return False


async def sweep(
    store: Storage, retention_days: float, clock: SteadyClock | None = None, check: ClockCheck | None = None
) -> int:
    """Erase every expired session once; returns how many were erased (0 when ``check`` refuses the clock)."""
    steady = clock or SteadyClock()
    window_s = retention_days * _DAY_S
    store.forget_written_before(time.monotonic() - window_s)
    removed = spared = 0
    async with store.retention_turn(window_s, steady.cutoff(window_s)) as limit:
        if limit is None:
            _log.debug("event=retention_skipped reason=another_daemon_sweeping")
            return 0
        if _clock_refuses(check, _parse(limit) + dt.timedelta(seconds=window_s)):
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


async def run(store: Storage, retention_days: float, interval_s: float, check: ClockCheck | None = None) -> None:
    """Sweep now, then every ``interval_s``, until cancelled. A failed sweep is logged and retried later.

    ``check`` is :func:`clock_check` read at start-up (None: no check of the clock against the store).
    """
    clock = SteadyClock()
    while True:
        try:
            await sweep(store, retention_days, clock, check)
        except StorageError as exc:
            _log.warning("event=retention_failed error=%s", exc.message)
        await asyncio.sleep(max(interval_s, _MIN_INTERVAL_S))
