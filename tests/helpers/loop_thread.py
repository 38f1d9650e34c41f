"""An event loop on a thread of its own, for synchronous test code that keeps an asyncpg connection.

A helper called from a synchronous test, or from inside an async test's running loop, cannot await
there: it hands its coroutine to this thread's loop and waits for the result, bounded. A connection
opened on that loop stays usable between calls (``tests/helpers/postgres.py`` keeps one to create
databases, ``tests/helpers/inspect_postgres.py`` one to read a workspace's database).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

__all__ = ["LoopThread"]


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    try:
        loop.run_forever()
    finally:
        loop.close()


class LoopThread:
    """Started at the first :meth:`run`; :meth:`stop` ends it (a later :meth:`run` starts it again)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, make: Callable[[], Awaitable[T]], timeout_s: float) -> T:
        """Run ``make()`` on the thread's loop and return its result; one call at a time, at most ``timeout_s``."""
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=_serve, args=(self._loop,), name=self._name, daemon=True).start()
            return asyncio.run_coroutine_threadsafe(_call(make), self._loop).result(timeout_s)

    def stop(self, last: Callable[[], Awaitable[object]], timeout_s: float) -> None:
        """Run ``last()`` (closing what the loop holds), then stop the thread; nothing if it never started."""
        with self._lock:
            loop, self._loop = self._loop, None
            if loop is None:
                return
            try:
                asyncio.run_coroutine_threadsafe(_call(last), loop).result(timeout_s)
            finally:
                loop.call_soon_threadsafe(loop.stop)


async def _call(make: Callable[[], Awaitable[T]]) -> T:
    return await make()
