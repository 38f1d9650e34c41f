"""Watch across daemons: commits of every daemon wake this daemon's listeners (LISTEN/NOTIFY).

Every write transaction that changes a session's history (or erases it)
calls ``pg_notify`` on :data:`CHANNEL` before it commits (:func:`notify_in_tx`);
PostgreSQL delivers the notification only after the COMMIT, and folds
duplicates within one transaction. Each daemon keeps one LISTEN connection
(:class:`ChangeFeed`) whose notifications become ``changed({session})`` or
``erased(session)`` on the listeners; the daemon's own commits are skipped
here (they are told at once, without a round trip through the server).

A notification only wakes: watchers then read what they missed from the
database by position, so a lost notification delays but never drops an
event. When the LISTEN connection is lost (the server restarted, the
backend was terminated, the network broke) the feed connects again with
backoff and then tells every listener to read again (``resync``), so
nothing committed while it was away is missed. A watchdog query every
:data:`CHECK_EVERY_S` notices a connection that died silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from typing import Any, Final

import asyncpg

from .connect import open_connection

__all__ = ["CHANNEL", "CHECK_EVERY_S", "ChangeFeed", "note", "notify_in_tx", "notify_ping"]

#: The notification channel of every claw-sessiond daemon on a database.
CHANNEL: Final = "claw_sessiond_changes"
#: How often the LISTEN connection is checked (a query with a timeout).
CHECK_EVERY_S: Final = 2.0
#: Longest pause between two attempts to connect again.
_BACKOFF_MAX_S: Final = 2.0

_log = logging.getLogger("claw_sessiond.feed")


def note(origin: str, session_id: str, *, erased: bool = False) -> str:
    """The payload of the notification on :data:`CHANNEL` that ``session_id`` changed or was erased."""
    return f"{origin}:{'-' if erased else '+'}{session_id}"


async def notify_in_tx(conn: Any, origin: str, session_id: str, *, erased: bool = False) -> None:
    """In the caller's transaction: tell every daemon (after the commit) that ``session_id`` changed or was
    erased. ``origin`` names the daemon that writes, so it can skip its own notifications."""
    await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, note(origin, session_id, erased=erased))


async def notify_ping(conn: Any, origin: str, run_id: str) -> None:
    """Pass a PingRun naming another daemon's run on to its owner (every daemon hears it; the owner renews the
    run). Sent outside a transaction, so it is delivered at once; a ping lost with a LISTEN connection is lost."""
    await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, f"{origin}:~{run_id}")


class ChangeFeed:
    """One LISTEN connection of this daemon, feeding ``changed`` / ``erased`` / ``resync`` callbacks."""

    def __init__(
        self,
        dsn: str,
        server_settings: dict[str, str],
        *,
        changed: Callable[[set[str]], None],
        erased: Callable[[str], None],
        resync: Callable[[], None],
        pinged: Callable[[str], None] = lambda run_id: None,
    ) -> None:
        self.origin = secrets.token_hex(8)
        """This daemon's mark in the notifications it sends (its own are skipped)."""
        self._dsn = dsn
        self._settings = server_settings
        self._changed = changed
        self._erased = erased
        self._resync = resync
        self._pinged = pinged
        self._conn: Any = None
        self._lost = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.reconnects = 0
        """Times the LISTEN connection was made again after a loss (for tests and logs)."""

    async def start(self) -> None:
        """Connect and LISTEN (raises as ``asyncpg.connect`` does), then keep the connection up."""
        await self._connect()
        self._task = asyncio.ensure_future(self._keep())

    async def close(self) -> None:
        """Stop listening."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await self._drop()

    async def _connect(self) -> None:
        conn = await open_connection(self._dsn, self._settings, 10)
        try:
            conn.add_termination_listener(self._terminated)
            await conn.add_listener(CHANNEL, self._heard)
        except BaseException:
            conn.terminate()
            raise
        self._conn = conn
        self._lost.clear()

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            with contextlib.suppress(Exception):
                await conn.close(timeout=1)
            if not conn.is_closed():
                conn.terminate()

    def _terminated(self, conn: Any) -> None:
        if conn is self._conn:
            self._lost.set()

    def _heard(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        origin, _, rest = payload.partition(":")
        if origin == self.origin or not rest:
            return
        kind, session_id = rest[0], rest[1:]
        if kind == "-":
            self._erased(session_id)
        elif kind == "~":  # a PingRun another daemon passed on (notify_ping): here, a run id
            self._pinged(session_id)
        else:
            self._changed({session_id})

    async def _keep(self) -> None:
        """Watch the connection; when it is lost, connect again with backoff, then resync every listener."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._lost.wait(), CHECK_EVERY_S)
            if not self._lost.is_set():
                try:
                    await asyncio.wait_for(self._conn.fetchval("SELECT 1"), CHECK_EVERY_S)
                    continue
                except (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                    pass
            _log.warning("event=feed_lost")
            await self._drop()
            backoff = 0.05
            while True:
                try:
                    await self._connect()
                    break
                except (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                    _log.warning("event=feed_connect_failed error=%s retry_s=%g", type(exc).__name__, backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(_BACKOFF_MAX_S, backoff * 2)
            self.reconnects += 1
            _log.info("event=feed_reconnected reconnects=%d", self.reconnects)
            self._resync()  # whatever was committed while the connection was down is read now
