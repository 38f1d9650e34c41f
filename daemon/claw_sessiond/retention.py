"""The retention policy: erase whole sessions not updated for ``retention_days`` (off by default).

A sweep lists the sessions whose last change is older than the cutoff, then
deletes each one only if it is *still* older when the writer gets to it (a
session written meanwhile survives). Sessions are never trimmed, only erased
whole, with the same secure delete and WAL checkpoint as the Delete RPC.

The clock rule: stored times are wall-clock, and the wall clock can be wrong
or step. So

- the cutoff is taken from :class:`~claw_sessiond.clock.SteadyClock`
  (a forward step of the wall clock does not make sessions expire sooner), unless the
  storage keeps its times on another clock (PostgreSQL: the database's, ``SweepTurns``);
- a store shared by several daemons is swept by one at a time (``SweepTurns``, :func:`turn`);
- a session written since the daemon started (Append, RecordUsage, Clear,
  RecordEvent) is never erased by retention, whatever its stored time says,
  until it has been idle for the whole retention period by the monotonic
  clock. Only sessions last written before the daemon started (or imported
  with their original times) are judged by their stored time alone. The
  daemon remembers what it wrote (:class:`WrittenSessions`, fed by the
  service before each write is submitted); the sweep checks it just before
  it submits each delete, with no pause between, so a write submitted after
  the check commits after the delete (the storage keeps each session's order).

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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final

from .clock import SteadyClock
from .errors import StorageError
from .storage import Storage, SweepTurns

__all__ = ["CLOCK_AHEAD_BOUND_S", "ClockCheck", "WrittenSessions", "clock_check", "run", "sweep", "turn"]

_log = logging.getLogger("claw_sessiond.retention")
#: Shortest pause between sweeps, whatever the configuration says.
_MIN_INTERVAL_S: Final = 0.05
_DAY_S: Final = 86400.0
#: How far the clock may be ahead of the newest change stored before start-up (advanced by the time since)
#: before retention refuses to sweep: one day.
CLOCK_AHEAD_BOUND_S: Final = _DAY_S


def _parse(stored: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stored.replace("Z", "+00:00"))


class WrittenSessions:
    """The sessions this daemon wrote since it started, with the monotonic time of each one's last write.

    The service notes a session before it submits each write of it (Append, AppendStream, RecordUsage,
    Clear, RecordEvent, EditTail, CreateSession, ForkSession, UpdateSession); a sweep spares what is noted,
    and forgets what was idle for a whole retention window. Bounded: with retention off (``enabled``
    False) nothing is kept; with it on, only the sessions written within the last window (and since the
    last sweep). Lives on the event loop.
    """

    def __init__(self, enabled: bool = True) -> None:
        self._enabled = enabled
        self._last: dict[str, float] = {}

    def note(self, session_id: str) -> None:
        """``session_id`` is about to be written (call before the write is submitted)."""
        if self._enabled:
            self._last[session_id] = time.monotonic()

    def __contains__(self, session_id: object) -> bool:
        """True if the session was written since start and not forgotten since."""
        return session_id in self._last

    def forget_before(self, monotonic_s: float) -> int:
        """Forget sessions last written before ``monotonic_s`` (``time.monotonic``); returns how many."""
        old = [sid for sid, at in self._last.items() if at < monotonic_s]
        for sid in old:
            del self._last[sid]
        return len(old)


@asynccontextmanager
async def turn(store: Storage, window_s: float, clock: SteadyClock) -> AsyncIterator[str | None]:
    """This daemon's turn to sweep, held while the context is open: the cutoff (sessions whose stored time is
    older expire), or None when another daemon sweeps the store now. A store shared by daemons
    (:class:`~claw_sessiond.storage.SweepTurns`) gives the turn and the cutoff; else it is always this
    daemon's turn, with the cutoff of its steady clock."""
    if isinstance(store, SweepTurns):
        async with store.retention_turn(window_s) as cutoff:
            yield cutoff
    else:
        yield clock.cutoff(window_s)


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
    store: Storage,
    retention_days: float,
    clock: SteadyClock | None = None,
    check: ClockCheck | None = None,
    written: WrittenSessions | None = None,
) -> int:
    """Erase every expired session once; returns how many were erased (0 when ``check`` refuses the clock).

    ``written``: the sessions the daemon wrote since start, spared (None: none, as for a store no daemon
    wrote to).
    """
    steady = clock or SteadyClock()
    window_s = retention_days * _DAY_S
    spare = written if written is not None else WrittenSessions()
    spare.forget_before(time.monotonic() - window_s)
    removed = spared = 0
    async with turn(store, window_s, steady) as limit:
        if limit is None:
            _log.debug("event=retention_skipped reason=another_daemon_sweeping")
            return 0
        if _clock_refuses(check, _parse(limit) + dt.timedelta(seconds=window_s)):
            return 0
        for session_id in await store.sessions_not_updated_since(limit):
            if session_id in spare:
                spared += 1
                continue
            # No pause between the check and the delete's submission (see the module's docstring).
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


async def run(
    store: Storage,
    retention_days: float,
    interval_s: float,
    check: ClockCheck | None = None,
    written: WrittenSessions | None = None,
) -> None:
    """Sweep now, then every ``interval_s``, until cancelled. A failed sweep is logged and retried later.

    ``check`` is :func:`clock_check` read at start-up (None: no check of the clock against the store);
    ``written`` the sessions the daemon wrote since start (:func:`sweep`).
    """
    clock = SteadyClock()
    while True:
        try:
            await sweep(store, retention_days, clock, check, written)
        except StorageError as exc:
            _log.warning("event=retention_failed error=%s", exc.message)
        await asyncio.sleep(max(interval_s, _MIN_INTERVAL_S))
