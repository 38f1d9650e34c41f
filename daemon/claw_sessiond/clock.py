"""The daemon's notion of "now" for deciding that something is old enough to remove.

Timestamps in the database are wall-clock (RFC 3339 UTC), written when the
row changed. The wall clock can step (NTP correcting a machine that booted
with a wrong time, an operator setting it): a step forward would make every
row look old at once. So removal decisions (retention, pruning idempotency
records) use :meth:`SteadyClock.now`, which is the *smaller* of the wall
clock and "wall clock at start + monotonic time since start":

- a forward step is ignored (time since start is measured by the monotonic clock);
- after a backward step the wall clock is used, and rows written since then
  carry the same stepped-back clock, so their age is still right.

Either way, a step can only delay a removal, never bring one forward. No I/O.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

__all__ = ["SteadyClock", "rfc3339"]


def rfc3339(moment: dt.datetime) -> str:
    """The stored timestamp form (``%Y-%m-%dT%H:%M:%S.%fZ``, UTC)."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SteadyClock:
    """Wall-clock "now" that a forward clock step cannot move ahead (see the module docstring)."""

    def __init__(
        self,
        wall: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._wall = wall
        self._monotonic = monotonic
        self._start_wall = wall()
        self._start_mono = monotonic()

    def now(self) -> dt.datetime:
        """The earlier of the wall clock and the start time plus monotonic time since start."""
        steady = self._start_wall + dt.timedelta(seconds=self._monotonic() - self._start_mono)
        return min(self._wall(), steady)

    def cutoff(self, age_s: float) -> str:
        """The stored-timestamp text before which a row is older than ``age_s`` seconds."""
        return rfc3339(self.now() - dt.timedelta(seconds=age_s))
