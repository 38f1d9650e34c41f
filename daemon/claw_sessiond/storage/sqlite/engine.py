"""The SQLite backend's engine (``storage/engine.py``): one writer thread, read-only readers, checkpoints.

Writes go through the writer (``writer.py``): one thread, one ``sqlite3`` connection, one queue,
group commit, a SAVEPOINT per request; each write's sequence runs over :class:`~.port.SQLitePort`
with ``steps.run_sync``. A Load's snapshot runs on a short reader (``reads.py``), its repair as
writer jobs. Reads lend connections from :class:`~.reading.Readers`. Erasure is followed by a
no-wait WAL checkpoint, so deleted bytes leave both files; one that a reader held up is retried
within :data:`_ERASURE_GRACE_S`, then recorded pending (``erasure.py`` finishes it).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final, TypeVar

from ...erasure import PendingErasures
from ...errors import StorageError
from ...model import AppendJob
from ...queries import SearchFilter, SearchRow, UsageRow
from ..base import FollowItem, StorageCounters, StorageFigures
from ..engine import Engine, Erasure, WriteSteps
from ..listeners import ChangeListeners
from ..loading import RunsLive
from ..port import Port, ReadPort, as_read_port
from ..runs import RunRegistry
from ..sql.listing import snapshots
from ..sql.store_reads import SqlReads, follow_rows
from ..steps import Steps, run_sync
from . import queries, reads
from .conns import SQLITE
from .port import SQLitePort
from .reading import Readers
from .tx import checkpoint, checkpoint_on_own_connection
from .writer import NoWriter, Writer

__all__ = ["SQLiteEngine"]

_log = logging.getLogger("claw_sessiond.store")
T = TypeVar("T")
#: How long an erasing call retries its checkpoint before reporting the erasure as pending.
_ERASURE_GRACE_S: Final = 0.25
_ERASURE_RETRY_S: Final = 0.01


class _Checkpoint:
    """An erasing write's no-wait checkpoint, run by the writer right after the commit (``tx.py``)."""

    def __init__(self, engine: SQLiteEngine, tells: Callable[[Any], bool]) -> None:
        self.tells = tells
        self.session_id = ""
        self._engine = engine
        self._done = False

    def hook(self, conn: sqlite3.Connection) -> None:
        """The writer's after-commit hook: the checkpoint, on its connection."""
        self._done = checkpoint(conn)

    async def finish(self, erased: int) -> bool:
        """Finish or record an erasure whose checkpoint did not complete; True if it is pending.

        The daemon's own reads are short: a few more no-wait checkpoints from another connection,
        within :data:`_ERASURE_GRACE_S`, usually finish it. Only this caller waits; the writer goes on.
        """
        if not erased or self._done:
            return False
        deadline = time.monotonic() + _ERASURE_GRACE_S
        while time.monotonic() < deadline:
            await asyncio.sleep(_ERASURE_RETRY_S)
            try:
                if await self._engine.checkpoint():
                    return False
            except StorageError:
                break
        self._engine.erasures.add(self.session_id)
        return True


class SQLiteEngine(SqlReads):
    """One SQLite database file: its writer, its readers, its erasures pending a checkpoint (its whole-store
    reads: :class:`~claw_sessiond.storage.sql.store_reads.SqlReads`)."""

    DIALECT = SQLITE

    #: A repair is planned from the snapshot and written in paced chunks: the one writer serves every
    #: session (``loading.py``).
    repairs_ahead: Final = True

    def __init__(
        self,
        path: Path,
        writer: Writer | NoWriter,
        readers: Readers,
        counters: StorageCounters,
        read_port: type[reads.SQLiteReadPort] = reads.SQLiteReadPort,
    ) -> None:
        """``read_port``: the reads of the store's schema (``reads.read_port_of``; a daemon's store is migrated)."""
        self.path = path
        self.writer = writer
        self.readers = readers
        self.counters = counters
        #: The live runs (in memory: a daemon restart ends them all).
        self.runs = RunRegistry()
        self.applied_migrations: list[str] = []
        self.listeners = ChangeListeners()
        writer.on_commit = self.listeners.changed
        #: Erased sessions whose bytes may still be in the files (see ``erasure.py``).
        self.erasures = PendingErasures()
        self._short, self._short_tx = reads.lent(readers.short), reads.transactions(readers.short)
        self._bulk, self._bulk_tx = reads.lent(readers.bulk), reads.transactions(readers.bulk)
        self._follower_tx = reads.transactions(readers.follower)
        #: Pages of a Load's cursor and of an Export, on the bulk reader; Watch batches in the followers' lane.
        self._read_port = read_port
        self.page_snapshots = snapshots(self._bulk_tx, read_port.PAGES)
        self.follower_snapshots = snapshots(self._follower_tx, read_port.PAGES)

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
        """One writer job (in submission order; ``changed``: its session's watchers hear of the commit)."""
        hook = None
        if isinstance(erasure, _Checkpoint):
            erasure.session_id, hook = session_id, erasure.hook
        sessions = (session_id,) if changed else ()
        return self.writer.submit(lambda c: run_sync(steps(SQLitePort(c).as_port())), *sessions, after_commit=hook)

    def erasure(self, tells: Callable[[Any], bool]) -> Erasure:
        return _Checkpoint(self, tells)

    def erasure_pending(self, session_id: str) -> bool:
        return session_id in self.erasures

    async def checkpoint(self) -> bool:
        """One no-wait TRUNCATE checkpoint from a connection of its own; True if the WAL is now empty.

        Raises:
            StorageError: the checkpoint failed (disk full, I/O error).
        """
        return await asyncio.to_thread(checkpoint_on_own_connection, self.path)

    # -- Load

    async def load_snapshot(self, steps: Callable[[ReadPort, RunsLive], Steps[T]]) -> T:
        """Run a Load's snapshot ``steps`` in one read transaction on a short read connection, on its thread in one
        hand-off (``reading.Readers.in_snapshot``): each read answers at once there (``steps.run_sync``)."""
        live = self._runs_live  # a look at the run registry (a dict), safe from that thread
        return await self.readers.in_snapshot(lambda db: run_sync(steps(as_read_port(self._read_port(db)), live)))

    async def load_write(self, session_id: str, steps: Callable[[Port, RunsLive], Steps[T]]) -> T:
        """Run a Load's repair ``steps`` as one writer job (its own transaction)."""
        return await self.writer.submit(lambda c: run_sync(steps(SQLitePort(c).as_port(), self._runs_live)), session_id)

    def _runs_live(self, run_ids: set[str]) -> set[str]:
        """Which of ``run_ids`` are live: this daemon's run registry (runs live in its memory)."""
        return {r for r in run_ids if self.runs.is_live(r)}

    # -- whole-store reads (the rest: ``sql.store_reads.SqlReads``)

    async def search(self, match: str, filters: SearchFilter, limit: int) -> tuple[list[SearchRow], bool]:
        """FTS5 on a bulk read connection, bounded in time (``queries.search``)."""
        async with self.readers.bulk() as conn:
            return await queries.search(conn, match, filters, limit)

    async def usage_report(self, since: str, until: str, *, by_session: bool) -> tuple[list[UsageRow], bool]:
        async with self.readers.bulk() as conn:
            return await queries.usage_report(conn, since, until, by_session=by_session)

    async def follow_batch(self, after_event_id: int, limit: int) -> tuple[list[FollowItem], bool]:
        """In one read transaction in the followers' lane (event ids commit in order here: one writer)."""
        async with self._follower_tx() as conn:
            return await follow_rows(conn, SQLITE, after_event_id, limit)

    async def figures(self) -> StorageFigures:
        """Sessions, events, idempotency records, schema version, database and WAL bytes."""

        def size(p: Path) -> int:
            try:
                return p.stat().st_size
            except FileNotFoundError:
                return 0

        return StorageFigures(*await self._counts(), size(self.path), size(Path(f"{self.path}-wal")))

    async def close(self) -> None:
        """Finish queued writes, checkpoint (TRUNCATE) and close every connection."""
        await self.readers.close()
        await asyncio.to_thread(self.writer.stop)
        if self.erasures.count():
            _log.warning(
                "event=erasure_pending_at_stop sessions=%d (their bytes leave the files at the next checkpoint, "
                "which the next daemon runs at start)",
                self.erasures.count(),
            )


_: type[Engine] = SQLiteEngine  # mypy proves that SQLiteEngine is an Engine
