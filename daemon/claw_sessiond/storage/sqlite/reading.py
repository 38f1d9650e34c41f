"""The SQLite backend's read connections: short reads, bulk reads, and the followers' lane.

Reads run on aiosqlite connections opened read-only: ``_READERS`` for short reads and
``_BULK_READERS`` kept for bulk reads (ListSessions scans, export pages, pages of large Loads), so
that short reads never queue behind them (see ``reads.py``). Follower reads (Watch and WatchAll
batches, issued after every commit by however many streams are due) are short reads, but at most
``_FOLLOWER_READERS`` of them hold a connection at once, so a request's read never queues behind
them all. Each connection lent is given back when the caller's block ends, and sqlite3 errors in it
are mapped to domain errors (``errors.py``).

:meth:`Readers.in_snapshot` runs a whole read transaction (``BEGIN``, its reads, ``COMMIT``) as one job
on a short reader's own thread: one hand-off between the loop and that thread for the lot, where each
statement awaited alone is one hand-off each way (a Load's snapshot is five statements; the hand-offs
were most of a small Load's cost in the daemon). The job holds the GIL while it runs, as the same work
on the loop would hold the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Final, TypeVar

import aiosqlite

from .errors import map_sqlite_errors

__all__ = ["READERS", "Readers", "open_readers"]

#: Read connections for short reads.
_READERS: Final = 2
#: Read connections kept for bulk reads (ListSessions scans, Export pages, pages of large
#: Loads), so that short reads never queue behind them (see ``reads.py``).
_BULK_READERS: Final = 1
#: Short read connections follower reads (watch and follow-all batches) may hold at once; the other
#: short readers stay free for requests however many streams a commit makes due.
_FOLLOWER_READERS: Final = 1
#: Every read connection of a storage.
READERS: Final = _READERS + _BULK_READERS
#: Each read connection's page cache, in KiB (SQLite's ``cache_size``; its default is 2,000): a Load of
#: 10,000 Responses items reads about 11 MB of rows, which SQLite's default re-reads from the file each time
#: (28 % more of the read's CPU than with its pages cached). At most this much memory per read connection.
READER_CACHE_KIB: Final = 16 * 1024
T = TypeVar("T")


def _in_transaction(conn: aiosqlite.Connection, job: Callable[[sqlite3.Connection], T]) -> T:
    """``job`` on ``conn``'s sqlite3 connection in one read transaction; on ``conn``'s thread."""
    db: sqlite3.Connection = conn._conn  # aiosqlite's own methods run this way, on this thread
    db.execute("BEGIN")
    try:
        return job(db)
    finally:
        db.execute("COMMIT")


class Readers:
    """The read connections of one database file, shared out: the last one serves bulk reads only."""

    def __init__(self, path: Path, readers: list[aiosqlite.Connection]) -> None:
        self.path = path
        self.all = readers
        self._short: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._bulk: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        bulk = min(_BULK_READERS, len(readers) - 1)
        for i, reader in enumerate(readers):
            (self._bulk if i >= len(readers) - bulk else self._short).put_nowait(reader)
        self._has_bulk = bulk > 0
        self._follower_lane = asyncio.Semaphore(_FOLLOWER_READERS)

    @contextlib.asynccontextmanager
    async def _lent(self, pool: asyncio.Queue[aiosqlite.Connection]) -> AsyncIterator[aiosqlite.Connection]:
        conn = await pool.get()
        try:
            with map_sqlite_errors(self.path):
                yield conn
        finally:
            pool.put_nowait(conn)

    def short(self) -> contextlib.AbstractAsyncContextManager[aiosqlite.Connection]:
        """A connection for a short read."""
        return self._lent(self._short)

    async def in_snapshot(self, job: Callable[[sqlite3.Connection], T]) -> T:
        """``job`` in one read transaction on a short reader, run on that reader's thread in one hand-off (the
        module docstring); ``job`` must not wait for anything but the database.

        Raises:
            StorageError: a statement failed (mapped, ``errors.py``).
        """
        async with self._lent(self._short) as conn:
            result: T = await conn._execute(_in_transaction, conn, job)  # type: ignore[no-untyped-call]  # aiosqlite: its thread
            return result

    @contextlib.asynccontextmanager
    async def follower(self) -> AsyncIterator[aiosqlite.Connection]:
        """A short reader for a Watch or WatchAll batch, taken in the followers' lane (``_FOLLOWER_READERS``)."""
        async with self._follower_lane, self._lent(self._short) as conn:
            yield conn

    def bulk(self) -> contextlib.AbstractAsyncContextManager[aiosqlite.Connection]:
        """A connection for one step of a long read (scan chunk, export or history page)."""
        return self._lent(self._bulk if self._has_bulk else self._short)

    async def close(self) -> None:
        for reader in self.all:
            await reader.close()


async def open_readers(path: Path, uri: str, busy_timeout_ms: int) -> Readers:
    """:data:`READERS` read-only connections to ``uri`` (the database at ``path``), each with the busy timeout,
    temporary storage in memory (as the writer: no temporary files) and a page cache of :data:`READER_CACHE_KIB`;
    none is left open if one fails.

    Raises:
        StorageError: a connection could not be opened (mapped, ``errors.py``).
    """
    readers: list[aiosqlite.Connection] = []
    try:
        for _ in range(READERS):
            with map_sqlite_errors(path):
                readers.append(await aiosqlite.connect(uri, uri=True, isolation_level=None))
                await readers[-1].execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                await readers[-1].execute("PRAGMA temp_store = MEMORY")
                await readers[-1].execute(f"PRAGMA cache_size = -{READER_CACHE_KIB}")
    except BaseException:
        for reader in readers:
            await reader.close()
        raise
    return Readers(path, readers)
