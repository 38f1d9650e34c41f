"""Erasure that has not reached the files yet: which sessions wait, and the retry that finishes them.

A Delete (or retention, or an import that replaces a session) commits, then
runs ``PRAGMA wal_checkpoint(TRUNCATE)`` *without* a busy wait: with
``secure_delete`` on, that is what moves the zeroed pages into
``sessions.db`` and empties ``sessions.db-wal`` (SPEC §7). A reader that
still holds a snapshot from before the delete stops the checkpoint part-way
(it returns busy), and the content stays in the files until that reader ends.
Waiting for it in the writer would stall every write for up to the busy
timeout, so instead the session is recorded here as *pending*: the Delete
reply says so, GetStats and ``/metrics`` count it, and :func:`run` retries
the checkpoint in the background (from its own connection, never the
writer's) with a short backoff until it completes, then logs once.

A successful checkpoint covers every commit before it started, so it
finishes exactly the sessions that were pending when it began.

No SQL and no grpc here: the store supplies the checkpoint.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final

from .errors import StorageError

__all__ = ["PendingErasures", "run"]

_log = logging.getLogger("claw_sessiond.erasure")
#: First pause between checkpoint retries; doubles up to :data:`_MAX_DELAY_S`.
_FIRST_DELAY_S: Final = 0.05
_MAX_DELAY_S: Final = 2.0


class PendingErasures:
    """Sessions erased in the database whose bytes may still be in the files (lives on the loop)."""

    def __init__(self) -> None:
        self._since: dict[str, float] = {}
        self._changed = asyncio.Event()

    def add(self, session_id: str) -> None:
        """The checkpoint after erasing ``session_id`` did not complete."""
        if session_id not in self._since:
            self._since[session_id] = time.monotonic()
            _log.warning(
                "event=erasure_pending session=%s reason=checkpoint_busy "
                "(a reader holds an older snapshot; retrying in the background)",
                session_id,
            )
        self._changed.set()

    def snapshot(self) -> list[str]:
        """The sessions pending now (a checkpoint that starts after this covers them all)."""
        return list(self._since)

    def finish(self, session_ids: list[str]) -> None:
        """A checkpoint that started after these were recorded completed: their bytes are gone."""
        now = time.monotonic()
        for session_id in session_ids:
            since = self._since.pop(session_id, None)
            if since is not None:
                _log.info("event=erasure_completed session=%s waited_s=%.3f", session_id, now - since)
        if not self._since:
            self._changed.clear()

    def count(self) -> int:
        """Number of sessions whose erasure is pending."""
        return len(self._since)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._since

    async def wait(self) -> None:
        """Return once some erasure is pending."""
        await self._changed.wait()


async def run(pending: PendingErasures, checkpoint: Callable[[], Awaitable[bool]]) -> None:
    """Retry the checkpoint while erasures are pending, until cancelled.

    ``checkpoint()`` returns True when the WAL was fully folded in and
    truncated. Retries back off from 50 ms to 2 s and start again at 50 ms
    after each success; nothing runs while nothing is pending.
    """
    delay = _FIRST_DELAY_S
    # Pending state is not kept across a restart: if the previous daemon stopped
    # with an erasure pending (a reader outlived it), this first attempt finishes it.
    try:
        await checkpoint()
    except StorageError as exc:
        _log.debug("event=erasure_checkpoint_failed error=%s", exc.message)
    while True:
        await pending.wait()
        waiting = pending.snapshot()
        try:
            done = await checkpoint()
        except StorageError as exc:
            _log.debug("event=erasure_checkpoint_failed error=%s", exc.message)
            done = False
        if done:
            pending.finish(waiting)
            delay = _FIRST_DELAY_S
            continue
        await asyncio.sleep(delay)
        delay = min(delay * 2, _MAX_DELAY_S)
