"""What makes several daemons on one database one service: shared runs (``runs.py``) and the change
feed across daemons (``feed.py``), as the storage facade uses them inside its transactions.

:class:`Cluster` is opened with the storage and closed with it. The facade
calls :meth:`Cluster.notify` in every write transaction that changes or
erases a session, :meth:`Cluster.runs_live` in the Load transactions (which open
calls belong to a live run, decided in SQL), and :meth:`Cluster.check_run`
after the session row lock of a write naming a run (fencing).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Awaitable, Callable
from typing import Any

from ..listeners import ChangeListeners
from .errors import map_pg_errors
from .feed import ChangeFeed, notify_in_tx
from .runs import DatabaseRuns

__all__ = ["Cluster"]


class Cluster:
    """This daemon's registration and LISTEN connection on the shared database."""

    def __init__(
        self,
        pool: Any,
        dsn: str,
        server_settings: dict[str, str],
        where: str,
        lease_s: float,
        listeners: ChangeListeners,
    ) -> None:
        self._where = where
        self.feed = ChangeFeed(
            dsn,
            {**server_settings, "application_name": f"claw-sessiond feed {os.getpid()}"},
            changed=listeners.changed,
            erased=listeners.erased,
            resync=listeners.resync,
            pinged=self._pinged,
        )
        self.runs = DatabaseRuns(pool, dsn, server_settings, where, lease_s, self.feed.origin)

    def _pinged(self, run_id: str) -> None:
        self.runs.pinged(run_id)

    async def start(self) -> None:
        """Register this daemon (its lease) and start listening; on failure nothing is left open.

        Raises:
            StorageUnavailableError: the server cannot be reached.
        """
        await self.runs.start()
        try:
            async with map_pg_errors(self._where):
                try:
                    await self.feed.start()
                except TimeoutError as exc:
                    raise ConnectionError(f"the LISTEN connection timed out ({exc})") from exc
        except BaseException:
            await self.runs.close()
            raise

    async def close(self) -> None:
        """Stop listening, withdraw this daemon and its runs."""
        with contextlib.suppress(Exception):
            await self.feed.close()
        await self.runs.close()

    async def notify(self, conn: Any, session_id: str, *, erased: bool = False) -> None:
        """In the caller's write transaction: every other daemon hears of the change after the commit."""
        await notify_in_tx(conn, self.feed.origin, session_id, erased=erased)

    def runs_live(self, conn: Any) -> Callable[[set[str]], Awaitable[set[str]]]:
        """Which of some run ids are live, each time asked decided in SQL in ``conn``'s transaction (a Load's
        ``loading.RunsLive``)."""
        return functools.partial(self.runs.live_in_tx, conn)

    async def check_run(self, conn: Any, run_id: str, session_id: str) -> None:
        """A write naming ``run_id`` goes ahead only while this daemon's lease holds the run.

        Raises:
            PreconditionError: reason UNKNOWN_RUN, cause ``lease_lost``.
        """
        if run_id:
            await self.runs.check_in_tx(conn, run_id, session_id)
