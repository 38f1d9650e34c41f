"""Shared reads for followers: one read (and one encoding) serves every watcher at the same place.

With thousands of watchers on one session, every commit wakes them all; if
each ran its own query, the two read connections would be busy for seconds
and every Load would queue behind them. Instead, watchers that ask for the
same ``(session, after position, limit)`` at the same commit generation
await one shared future. A read joined at generation *g* was started at
*g* or later, so it sees every commit notified up to *g*: a watcher never
takes a result older than its own wake-up. Only reads in flight are shared;
a finished one is dropped at once, so nothing is kept per session.

Must never: hold a finished result, or let one caller's cancellation cancel
the read the others wait for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

__all__ = ["SharedReads"]

T = TypeVar("T")
_Key = tuple[str, int, int, int]


class SharedReads(Generic[T]):
    """Coalesces identical reads issued at the same generation (lives on the event loop)."""

    def __init__(self, fetch: Callable[[str, int, int], Awaitable[T]], generation: Callable[[], int]) -> None:
        self._fetch = fetch
        self._generation = generation
        self._in_flight: dict[_Key, asyncio.Future[T]] = {}
        self.reads = 0  # reads actually issued (for tests and stats)

    def in_flight(self) -> int:
        """Reads currently running."""
        return len(self._in_flight)

    async def read(self, session_id: str, after: int, limit: int) -> T:
        """The result of ``fetch(session_id, after, limit)``, shared with identical concurrent callers."""
        key = (session_id, after, limit, self._generation())
        fut = self._in_flight.get(key)
        if fut is None:
            self.reads += 1
            fut = asyncio.ensure_future(self._fetch(session_id, after, limit))
            self._in_flight[key] = fut
            fut.add_done_callback(lambda done: self._finished(key, done))
        return await asyncio.shield(fut)

    def _finished(self, key: _Key, fut: asyncio.Future[T]) -> None:
        if self._in_flight.get(key) is fut:
            del self._in_flight[key]
        if not fut.cancelled():
            fut.exception()  # retrieved here: every waiter may have gone
