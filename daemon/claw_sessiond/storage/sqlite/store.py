"""The SQLite backend's store: :class:`SQLiteStorage`, the shared facade over :class:`~.engine.SQLiteEngine`.

One database file, one writer, read-only readers (``engine.py``). This module opens them: the file
is checked and prepared at open (``files.py``); sqlite3 errors are translated once
(``errors.py``). :class:`SQLiteStorage` is :class:`~claw_sessiond.storage.store.Storage` with the
capabilities only this backend has: ``Checkpointing`` (erased bytes leave the files at a checkpoint;
``erasure.py`` retries it) and ``BackingUp`` (a consistent copy in a private file).

Backend settings (:class:`SQLiteSettings`) live here, not in the daemon's configuration. A
compile-time check at the end makes mypy prove both capabilities.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path

from ...config import DEFAULT_BUSY_TIMEOUT_MS, DEFAULT_MAX_GROUP_COMMIT, DEFAULT_MAX_OPEN_TOOL_CALLS
from ...errors import CorruptDatabaseError, StorageError, StorageUnavailableError
from ..base import BackingUp, Checkpointing, CopyFigures, StorageCounters
from ..store import Storage
from . import schema
from .backup import copy_database, create_private_file, remove_stale_backups
from .engine import SQLiteEngine
from .errors import map_sqlite_errors
from .files import (
    check_database_file,
    ensure_identity,
    make_private,
    open_write_connection,
    probe_writable,
    space_hint,
)
from .reading import open_readers
from .reads import read_port_of
from .writer import NoWriter, Writer

__all__ = ["SQLiteSettings", "SQLiteStorage"]


@dataclass(frozen=True, slots=True)
class SQLiteSettings:
    """Settings of the SQLite backend (the daemon's ``--busy-timeout-ms`` and ``--max-group-commit``)."""

    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS
    """How long a connection waits for a lock held by another connection (``PRAGMA busy_timeout``)."""
    max_group_commit: int = DEFAULT_MAX_GROUP_COMMIT
    """Most requests committed in one write transaction."""


class SQLiteStorage(Storage):
    """Sessions in one SQLite database (:class:`Storage` over :class:`SQLiteEngine`), with its checkpoints and
    backups. Use :meth:`open` to create one; :meth:`close` checkpoints the WAL."""

    engine: SQLiteEngine

    def __init__(self, engine: SQLiteEngine, max_open_tool_calls: int = DEFAULT_MAX_OPEN_TOOL_CALLS) -> None:
        super().__init__(engine, max_open_tool_calls)
        self.path = engine.path
        #: Erased sessions whose bytes may still be in the files (see ``erasure.py``).
        self.erasures = engine.erasures
        self.checkpoint = engine.checkpoint
        self._backup_lock = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        path: Path,
        settings: SQLiteSettings | None = None,
        *,
        max_open_tool_calls: int = DEFAULT_MAX_OPEN_TOOL_CALLS,
    ) -> SQLiteStorage:
        """Check, open and migrate the database at ``path`` (``max_open_tool_calls``: 0 for no limit).

        Raises:
            CorruptDatabaseError: the file is damaged or not ours (its bytes are not touched).
            StorageError: the file cannot be opened for writing (read-only file system, ...).
        """
        settings = settings or SQLiteSettings()
        busy_timeout_ms = settings.busy_timeout_ms
        await asyncio.to_thread(check_database_file, path)
        await asyncio.to_thread(remove_stale_backups, path.parent)

        def open_writer() -> tuple[sqlite3.Connection, list[str]]:
            with map_sqlite_errors(path):
                conn = open_write_connection(path, busy_timeout_ms)
                try:
                    applied = schema.migrate(conn)
                    probe_writable(conn)
                    if ensure_identity(conn) or applied:
                        # Put the identity into the main file at once, so a foreign WAL is detectable
                        # (check_database_file) even if the daemon is killed before its first checkpoint.
                        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except BaseException:
                    conn.close()
                    raise
                return conn, applied

        try:
            conn, applied = await asyncio.to_thread(open_writer)
        except CorruptDatabaseError:
            raise
        except StorageError as exc:
            raise StorageUnavailableError(f"{path}: cannot open for writing: {exc.message}{space_hint(path)}") from exc
        try:
            make_private(path)
        except StorageError:
            conn.close()
            raise
        counters = StorageCounters()
        writer = Writer(conn, path, settings.max_group_commit, counters)
        try:
            readers = await open_readers(path, f"file:{path}?mode=ro", busy_timeout_ms)
        except BaseException:
            await asyncio.to_thread(writer.stop)
            raise
        engine = SQLiteEngine(path, writer, readers, counters)
        engine.applied_migrations = applied
        return cls(engine, max_open_tool_calls)

    @classmethod
    async def open_read_only(cls, path: Path, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> SQLiteStorage:
        """A SQLiteStorage that only reads ``path`` (``mode=ro`` connections; every write is refused).

        For inspection with the daemon down: the caller holds the workspace
        lock, so no daemon (no writer) can start meanwhile. Nothing is
        migrated, repaired or checkpointed. The file is checked first, as at
        a daemon's start (:func:`check_database_file`).

        Raises:
            CorruptDatabaseError: the file is damaged or not ours.
            StorageError: it cannot be opened.
        """
        await asyncio.to_thread(check_database_file, path)
        wal = Path(f"{path}-wal")
        # Without a WAL holding data, immutable=1 reads the main file alone and creates nothing beside it
        # (no -wal, no -shm); the caller's lock guarantees that nobody changes it meanwhile.
        has_wal = wal.exists() and wal.stat().st_size > 0
        uri = f"file:{path}?mode=ro" if has_wal else f"file:{path}?mode=ro&immutable=1"
        readers = await open_readers(path, uri, busy_timeout_ms)
        try:
            read_port = await read_port_of(readers.short)  # a store of an older schema is read as it is
        except BaseException:
            await readers.close()
            raise
        return cls(SQLiteEngine(path, NoWriter(), readers, StorageCounters(), read_port))

    async def backup(self) -> tuple[Path, CopyFigures]:
        """A consistent copy of the database in a new private file beside it; returns its path and figures.

        The file (``.backup-<random>.tmp`` in the database's folder) is created
        0600 with ``O_EXCL | O_NOFOLLOW``; the caller streams and removes it.
        One backup runs at a time (each costs the database's size on disk);
        others wait. The copy reads one snapshot and never blocks the writer
        (:func:`copy_database`).

        Raises:
            StorageError: the copy failed (the temporary file is removed).
        """
        async with self._backup_lock:
            target = self.path.parent / f".backup-{uuid.uuid4().hex}.tmp"
            try:
                await asyncio.to_thread(create_private_file, target)
            except OSError as exc:
                raise StorageUnavailableError(f"{target}: cannot create the backup file: {exc.strerror}") from exc
            try:
                return target, await asyncio.to_thread(copy_database, self.path, target)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
                raise


_checkpointing: type[Checkpointing] = SQLiteStorage  # mypy proves the capabilities only this backend has
_backing_up: type[BackingUp] = SQLiteStorage
