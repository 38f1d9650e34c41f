"""Vacuuming after an erasure: the dead tuples of deleted rows hold the erased content until a VACUUM.

The PostgreSQL engine starts one after each erasing write (``engine.py``: its ``Erasure``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import asyncpg

from ...errors import StorageError

__all__ = ["VACUUMED", "Vacuums"]

#: Tables a delete touched, vacuumed after it (their dead tuples hold the erased content until then).
VACUUMED: Final = ("events", "tool_calls", "requests", "usage_by_model", "session_labels", "sessions")

_log = logging.getLogger("claw_sessiond.store")


class Vacuums:
    """Vacuum the session tables in the background, one at a time; a request meanwhile runs once more."""

    def __init__(self, reader: Callable[[], AbstractAsyncContextManager[Any]]) -> None:
        self._reader = reader
        self._task: asyncio.Task[None] | None = None
        self._again = False

    def start(self) -> None:
        """Vacuum now, or once more after the running vacuum."""
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.ensure_future(self._run())

    async def wait(self) -> None:
        """Wait for a running vacuum (its failure is logged, not raised)."""
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task

    async def _run(self) -> None:
        while True:
            self._again = False
            try:
                async with self._reader() as conn:
                    # Large tables take longer than the statement bound (timeouts.py); the pool resets it on release.
                    await conn.execute("SET statement_timeout = 0")
                    await conn.execute("VACUUM " + ", ".join(VACUUMED))
            except (StorageError, asyncpg.PostgresError) as exc:
                _log.warning("event=vacuum_failed error=%s", exc)
                return
            if not self._again:
                return
