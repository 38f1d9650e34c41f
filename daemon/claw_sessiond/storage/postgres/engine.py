"""The PostgreSQL backend's engine (``storage/engine.py``): one database shared by any number of daemons.

Every write runs in a transaction on a pooled connection (asyncpg), whose first statement locks the
session row (``port.py``): the database, not the daemon, orders each session's writes. This
daemon's own writes to one session also keep their submission order: each joins the session's FIFO
queue (``group_commit.py``: queued writes share one transaction, each in a savepoint, and one
COMMIT), entered before the first ``await``, and runs in a task of its own shielded from the
caller's cancellation, so a transaction, once submitted, commits or rolls back whole whatever the
RPC does. Reads run on pooled connections, in ``REPEATABLE READ READ ONLY`` transactions where two
statements need one snapshot (``reads.py``). asyncpg errors are translated once (``errors.py``).

Several daemons on one database (``cluster.py``): runs live in the database under each daemon's
lease, and every commit wakes the other daemons' listeners (LISTEN/NOTIFY); docs/postgres.md
"Several daemons". Erasure is logical here: a vacuum follows it in the background (``vacuum.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final, TypeVar

from ...config import redact_url
from ...errors import StorageError
from ...model import AppendJob
from ...queries import SearchFilter, SearchRow, UsageRow
from ..base import FollowItem, StorageCounters, StorageFigures
from ..engine import Engine, Erasure, WriteSteps
from ..listeners import ChangeListeners
from ..loading import RunsLive
from ..port import Port, ReadPort, as_read_port
from ..sql.listing import snapshots
from ..sql.store_reads import SqlReads
from ..steps import Steps, run_async
from . import follow, queries, reads
from .batch_tx import is_plain
from .cluster import Cluster
from .connect import PostgresSettings, follower_connections, server_settings_of
from .dialect import POSTGRES
from .group_commit import GroupCommit
from .pooled import pooled
from .port import PostgresPort
from .vacuum import Vacuums

__all__ = ["CLOSE_BOUND_S", "PostgresEngine"]

_log = logging.getLogger("claw_sessiond.store")
T = TypeVar("T")

#: Longest a close waits for the connections to be given back before it cuts them.
CLOSE_BOUND_S: Final = 5.0
#: How often, and how long apart, an empty follow page is read again while a write in flight holds the horizon.
_HELD_POLLS: Final = 4
_HELD_POLL_S: Final = 0.005


class _Vacuum:
    """An erasing write's vacuum of the session tables, started in the background once it erased something."""

    def __init__(self, vacuums: Vacuums, tells: Callable[[Any], bool]) -> None:
        self.tells = tells
        self._vacuums = vacuums

    async def finish(self, erased: int) -> bool:
        if erased:
            self._vacuums.start()
        return False  # nothing more this daemon can do: the bytes go with the vacuum (docs/postgres.md)


class PostgresEngine(SqlReads):
    """One PostgreSQL database: the pool, the session queues, the cluster of daemons sharing it (its whole-store
    reads: :class:`~claw_sessiond.storage.sql.store_reads.SqlReads`, each on a pooled connection)."""

    DIALECT = POSTGRES

    #: A repair is planned again under the session's row lock and written in one transaction: a write locks
    #: only its session (``loading.py``).
    repairs_ahead: Final = False

    def __init__(
        self, pool: Any, dsn: str, counters: StorageCounters, settings: PostgresSettings, applied: list[str]
    ) -> None:
        self.pool = pool
        self.where = redact_url(dsn)
        self.counters = counters
        self.applied_migrations = applied
        self.listeners = ChangeListeners()
        self.cluster = Cluster(pool, dsn, server_settings_of(settings), self.where, settings.lease_s, self.listeners)
        self._group = GroupCommit(pool, self.where, self.cluster.feed.origin, self.cluster.check_run)
        self.runs = self.cluster.runs
        #: Every read is on a pooled connection: short and long reads alike.
        self._short = self._bulk = functools.partial(pooled, pool, self.where)
        self._vacuums = Vacuums(self._short)
        self._follower_lane = asyncio.Semaphore(follower_connections(settings.pool_max))
        self._short_tx = self._bulk_tx = reads.transactions(self._short)
        #: Pages of a Load's cursor and of an Export; Watch batches in the followers' lane.
        self.page_snapshots = snapshots(self._bulk_tx, reads.PostgresPageReads)
        self.follower_snapshots = snapshots(reads.transactions(self._follower_reader), reads.PostgresPageReads)

    @contextlib.asynccontextmanager
    async def _follower_reader(self) -> AsyncIterator[Any]:
        """A connection for a Watch or WatchAll batch, taken in the followers' lane (:func:`follower_connections`)."""
        async with self._follower_lane, pooled(self.pool, self.where) as conn:
            yield conn

    async def close(self) -> None:
        """Wait for a running vacuum, then close every connection; after :data:`CLOSE_BOUND_S` the pool's
        connections are cut instead (a stop must end: the servers stopped first, so nothing acknowledged
        waits on them; a write still committing was not acknowledged, and its retry is idempotent)."""
        try:
            await asyncio.wait_for(self._close(), CLOSE_BOUND_S)
        except TimeoutError:
            _log.warning("event=storage_close_cut after_s=%s", CLOSE_BOUND_S)
            self.pool.terminate()

    async def _close(self) -> None:
        await self._vacuums.wait()
        await self.cluster.close()
        await self.pool.close()

    # -- writes

    def write(
        self,
        session_id: str,
        steps: WriteSteps[T],
        *,
        changed: bool = False,
        erasure: Erasure | None = None,
        append: AppendJob | None = None,
        run_id: str = "",
    ) -> Awaitable[T]:
        """One transaction in the session's queue; an Append naming a run is fenced under the row lock first."""
        fenced = append.run_id if append is not None else ""

        async def fn(conn: Any) -> T:
            if fenced:
                await PostgresPort(conn).session_row(session_id)
                await self.cluster.check_run(conn, fenced, session_id)
            return await run_async(steps(PostgresPort(conn).as_port()))

        plain = append if append is not None and is_plain(append) else None
        return self._write(session_id, fn, changed=changed, erasure=erasure, plain=plain, run_id=run_id)

    async def _write(
        self,
        session_id: str,
        fn: Callable[[Any], Awaitable[T]],
        *,
        changed: bool = False,
        erasure: Erasure | None = None,
        plain: AppendJob | None = None,
        run_id: str = "",
    ) -> T:
        """Run ``fn`` in one transaction (maybe shared: group_commit.py), in session order, shielded from cancellation.

        ``changed``: tell the listeners after the commit; the write first announces itself to follow-all
        readers (``follow.py``). ``changed``, or an ``erasure`` that tells of its result: the transaction also
        tells the other daemons (NOTIFY, ``cluster.py``). ``plain``: ``fn`` writes this plain append
        (``batch_tx.py``: maybe in one call with others). ``run_id``: ``fn`` writes for this run: fenced at
        COMMIT (``group_commit.py``).
        """

        async def body(conn: Any) -> T:
            result = await fn(conn)
            erased = erasure is not None and erasure.tells(result)
            if changed or erased:  # in fn's savepoint: dropped with it if the write fails
                await self.cluster.notify(conn, session_id, erased=erased)
            return result

        async def lane() -> T:
            began, committed = time.perf_counter(), False
            try:
                result = await self._group.run(session_id, body, announce=changed, plain=plain, run_id=run_id)
                committed = True
            except StorageError:
                self.counters.write_failures += 1
                raise
            finally:
                self.counters.observe(1, began, committed)
            if changed:
                self.listeners.changed({session_id})
            return result

        return await asyncio.shield(asyncio.ensure_future(lane()))

    def erasure(self, tells: Callable[[Any], bool]) -> Erasure:
        return _Vacuum(self._vacuums, tells)

    def erasure_pending(self, session_id: str) -> bool:
        return False

    # -- Load

    async def load_snapshot(self, steps: Callable[[ReadPort, RunsLive], Steps[T]]) -> T:
        """Run a Load's snapshot ``steps`` in one read-only snapshot (runs' liveness decided in it, in SQL)."""
        async with self._short() as conn, reads.snapshot(conn):
            return await run_async(steps(as_read_port(reads.PostgresReadPort(conn)), self.cluster.runs_live(conn)))

    async def load_write(self, session_id: str, steps: Callable[[Port, RunsLive], Steps[T]]) -> T:
        """Run a Load's repair ``steps`` in one write transaction (in session order, its watchers and the other
        daemons told after the commit)."""
        return await self._write(
            session_id,
            lambda c: run_async(steps(PostgresPort(c).as_port(), self.cluster.runs_live(c))),
            changed=True,
        )

    # -- whole-store reads (the rest: ``sql.store_reads.SqlReads``)

    async def search(self, match: str, filters: SearchFilter, limit: int) -> tuple[list[SearchRow], bool]:
        """PostgreSQL text search (see ``queries.py`` for how it differs from FTS5)."""
        async with self._bulk() as conn:
            return await queries.search(conn, match, filters, limit)

    async def usage_report(self, since: str, until: str, *, by_session: bool) -> tuple[list[UsageRow], bool]:
        async with self._bulk() as conn:
            return await queries.usage_report(conn, since, until, by_session=by_session)

    async def _follow_bound(self, conn: Any) -> int:
        """Up to the horizon (``follow.py``)."""
        return (await follow.horizon(conn))[0]

    async def follow_batch(self, after_event_id: int, limit: int) -> tuple[list[FollowItem], bool]:
        """In commit order (``follow.py``: up to the horizon)."""
        for _ in range(_HELD_POLLS):
            async with self._follower_reader() as conn:
                rows, more, held = await follow.follow_rows_after(conn, after_event_id, limit)
            if rows or not held:
                break
            await asyncio.sleep(_HELD_POLL_S)  # a write in flight holds the horizon: it ends within milliseconds
        return rows, more or held  # held: the caller reads again (a write that rolls back wakes no one)

    async def figures(self) -> StorageFigures:
        """Sessions, events, idempotency records, schema version and the bytes of the schema's tables."""
        async with self._short() as conn:
            stored = await queries.stored_bytes(conn)
        return StorageFigures(*await self._counts(), stored, 0)


_: type[Engine] = PostgresEngine  # mypy proves that PostgresEngine is an Engine
