"""The PostgreSQL backend's store: :class:`PostgresStorage`, the shared facade over :class:`~.engine.PostgresEngine`.

One database shared by any number of daemons (``engine.py``). This module opens it: connect, check
the server (``fsync`` on, writable) and migrate (``connect.py``), then join the daemons sharing it
(``cluster.py``). :class:`PostgresStorage` is :class:`~claw_sessiond.storage.store.Storage` with the
capability only this backend has: ``SweepTurns`` (one daemon sweeps the shared store at a time, with
the cutoff on the database's clock: ``sweep.py``).
"""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager

from ...config import DEFAULT_MAX_OPEN_TOOL_CALLS
from ..base import StorageCounters, SweepTurns
from ..store import Storage
from .connect import PostgresSettings, connect, describe_target
from .engine import CLOSE_BOUND_S, PostgresEngine
from .sweep import retention_turn

__all__ = ["CLOSE_BOUND_S", "PostgresStorage"]

_log = logging.getLogger("claw_sessiond.store")


class PostgresStorage(Storage):
    """Sessions in one PostgreSQL database (:class:`Storage` over :class:`PostgresEngine`), swept in turns."""

    engine: PostgresEngine

    @classmethod
    async def open(
        cls,
        dsn: str,
        settings: PostgresSettings | None = None,
        *,
        max_open_tool_calls: int = DEFAULT_MAX_OPEN_TOOL_CALLS,
    ) -> PostgresStorage:
        """Connect, check the server and migrate the schema.

        Raises:
            StorageUnavailableError: the server cannot be reached, refuses the login, is read-only or has
                fsync off (the message names the host, port, database and user; never the password).
            CorruptDatabaseError: the schema is not ours or newer than this code.
        """
        settings = settings or PostgresSettings()
        pool, applied = await connect(dsn, settings)
        engine = PostgresEngine(pool, dsn, StorageCounters(), settings, applied)
        try:
            await engine.cluster.start()
        except BaseException:
            await pool.close()
            raise
        _log.info("event=storage_open backend=postgresql server=%s", describe_target(dsn))
        return cls(engine, max_open_tool_calls)

    def retention_turn(self, window_s: float) -> AbstractAsyncContextManager[str | None]:
        """One sweeper at a time across daemons, the cutoff from the database's clock (``sweep.py``)."""
        return retention_turn(self.engine.pool, self.engine.where, window_s)


_sweep_turns: type[SweepTurns] = PostgresStorage  # mypy proves the capability only this backend has
