"""Process-wide resource guards: the descriptor limit, a log that a flood cannot grow, the collector.

Any local user can open connections to a loopback listener (``--metrics``,
``--tcp``). Measured before these guards: about 1,100 slow connections took
all 1,024 descriptors of a daemon in 12 s, and asyncio then logged a
multi-line ``socket.accept() out of system resource`` record about 180 times
a second (0.9 MB in 14 s). So the daemon raises its soft ``RLIMIT_NOFILE``
to the hard limit at start, and repeated loop errors are logged once per
:data:`LOG_INTERVAL_S` with a count of the ones left out. This module must
never import grpc nor speak SQL.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import resource
import time
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "GC_YOUNG_THRESHOLD",
    "LOG_INTERVAL_S",
    "Throttle",
    "install_loop_error_throttle",
    "raise_nofile_limit",
    "settle_collector",
]

_log = logging.getLogger("claw_sessiond.limits")
#: Repeated loop errors of one kind are logged at most once per this many seconds.
LOG_INTERVAL_S: Final = 10.0
#: The cyclic collector's youngest-generation threshold in a serving daemon (Python's default: 700
#: allocations). An Append of 1,000 entries makes tens of thousands of container objects that live
#: until its reply: at 700 the collector walks each of them several times and promotes them to older
#: generations it then walks again. The bound: at most this many container objects (a few MB) of
#: cyclic garbage wait for a collection.
GC_YOUNG_THRESHOLD: Final = 10_000


def raise_nofile_limit() -> tuple[int, int]:
    """Raise the soft descriptor limit to the hard one; return ``(soft, hard)`` as they are afterwards.

    A failure is logged, never fatal: the daemon still runs with the old limit.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (OSError, ValueError) as exc:  # a hard limit of RLIM_INFINITY can be refused (nr_open)
            _log.warning("event=nofile_limit_unchanged soft=%d hard=%d error=%s", soft, hard, exc)
    return soft, hard


class Throttle:
    """Lets one event of a kind through per ``interval_s`` and counts the others.

    Args:
        interval_s: the shortest time between two events of one kind that pass.
        clock: monotonic seconds (tests may pass their own).
    """

    def __init__(self, interval_s: float = LOG_INTERVAL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def admit(self, kind: str) -> int | None:
        """None if this event should be left out; else how many of its kind were left out since the last one."""
        now = self._clock()
        last = self._last.get(kind)
        if last is not None and now - last < self.interval_s:
            self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
            return None
        self._last[kind] = now
        return self._suppressed.pop(kind, 0)


def settle_collector() -> None:
    """Once serving: what startup made (modules, the server, the store), which lives as long as the
    process, is moved out of the collector's generations (``gc.freeze``), so that a full collection
    walks what requests made, not all of it; and the youngest generation is collected every
    :data:`GC_YOUNG_THRESHOLD` allocations."""
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


def install_loop_error_throttle(loop: asyncio.AbstractEventLoop, interval_s: float = LOG_INTERVAL_S) -> Throttle:
    """Log the loop's unhandled errors (one line each, traceback escaped) at most once per ``interval_s`` per kind.

    asyncio's default handler logs every failed ``accept()`` with a traceback;
    under descriptor exhaustion that is hundreds of records a second.
    """
    throttle = Throttle(interval_s)

    def handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", "unhandled error in the event loop"))
        exc = context.get("exception")
        kind = f"{message}|{type(exc).__name__}"
        suppressed = throttle.admit(kind)
        if suppressed is None:
            return
        _log.error(
            'event=loop_error message="%s" error="%s" suppressed_since_last=%d',
            message,
            f"{type(exc).__name__}: {exc}" if exc is not None else "",
            suppressed,
            exc_info=exc if isinstance(exc, BaseException) else None,
        )

    loop.set_exception_handler(handler)
    return throttle
