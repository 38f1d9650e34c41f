"""The SQLite backend's facade: :class:`SQLiteStorage`, one database file, one writer, read-only readers.

Writes go through the writer (``writer.py``): one thread, one ``sqlite3``
connection, one queue, group commit, a SAVEPOINT per request; the
transaction code is ``tx.py``, and the shared sequences of ``storage/`` (``writes.py``,
``sessions.py``, ``editing.py``, ``importing.py``, ``states.py``, ``loading.py``) run over
``port.py`` and ``read_port.py``; the pure rules make every decision. Reads are
``reading.py``; session creation, forks and updates ``sessions.py``. The
file is checked and prepared at open (``files.py``); sqlite3 errors are
translated once (``errors.py``). Erasure is followed by a no-wait WAL
checkpoint, so deleted bytes leave both files (``erasure.py`` finishes one
that a reader held up).

Backend settings (:class:`SQLiteSettings`) live here, not in the daemon's
configuration. A compile-time check at the end makes mypy prove that
:class:`SQLiteStorage` is a :class:`~claw_sessiond.storage.base.Storage`, with the
capabilities only this backend has (``Checkpointing``, ``BackingUp``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import aiosqlite

from ...config import DEFAULT_BUSY_TIMEOUT_MS, DEFAULT_MAX_GROUP_COMMIT, DEFAULT_MAX_OPEN_TOOL_CALLS
from ...erasure import PendingErasures
from ...errors import CorruptDatabaseError, StorageError, StorageUnavailableError
from ...events import fingerprint
from ...export import ImportedSession
from ...model import (
    AppendJob,
    AppendResult,
    ClearResult,
    DeleteResult,
    EditJob,
    EditResult,
    EventResult,
    ImportMode,
    UsageDelta,
    UsageResult,
)
from .. import writes
from ..base import BackingUp, ChangeListener, Checkpointing, CopyFigures, Storage, StorageCounters, StorageFigures
from ..editing import edit_tail
from ..importing import import_session
from ..listeners import ChangeListeners
from ..runs import InMemoryRuns
from . import schema
from .backup import copy_database, create_private_file, remove_stale_backups
from .errors import map_sqlite_errors
from .files import (
    check_database_file,
    ensure_identity,
    make_private,
    open_write_connection,
    probe_writable,
    space_hint,
)
from .port import SQLitePort, write_tx
from .reading import READERS
from .sessions import SQLiteSessions
from .tx import (
    checkpoint_on_own_connection,
    checkpoint_outcome,
)
from .writer import NoWriter, Writer

__all__ = ["SQLiteSettings", "SQLiteStorage"]

_log = logging.getLogger("claw_sessiond.store")
#: How long an erasing call retries its checkpoint before reporting the erasure as pending.
_ERASURE_GRACE_S: Final = 0.25
_ERASURE_RETRY_S: Final = 0.01


@dataclass(frozen=True, slots=True)
class SQLiteSettings:
    """Settings of the SQLite backend (the daemon's ``--busy-timeout-ms`` and ``--max-group-commit``)."""

    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS
    """How long a connection waits for a lock held by another connection (``PRAGMA busy_timeout``)."""
    max_group_commit: int = DEFAULT_MAX_GROUP_COMMIT
    """Most requests committed in one write transaction."""


class SQLiteStorage(SQLiteSessions):
    """Sessions in one SQLite database. All methods are coroutines on the daemon's loop.

    Use :meth:`open` to create one; :meth:`close` checkpoints the WAL.
    """

    def __init__(self, path: Path, writer: Writer, readers: list[aiosqlite.Connection], counters: StorageCounters):
        self.path = path
        self._writer = writer
        self._pool(readers)
        self.counters = counters
        #: The live runs (in memory: a daemon restart ends them all).
        self.runs = InMemoryRuns()
        #: Most open (unanswered) tool calls per session (0: no limit).
        self.max_open_tool_calls: int = DEFAULT_MAX_OPEN_TOOL_CALLS
        self._listeners = ChangeListeners()
        self.applied_migrations: list[str] = []
        #: Erased sessions whose bytes may still be in the files (see ``erasure.py``).
        self.erasures = PendingErasures()
        self._backup_lock = asyncio.Lock()

    # -- life cycle

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
        readers = []
        try:
            for _ in range(READERS):
                reader = await aiosqlite.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
                await reader.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                await reader.execute("PRAGMA temp_store = MEMORY")  # as the writer: no temporary files
                readers.append(reader)
        except BaseException:
            for reader in readers:
                await reader.close()
            await asyncio.to_thread(writer.stop)
            raise
        store = cls(path, writer, readers, counters)
        store.applied_migrations = applied
        store.max_open_tool_calls = max_open_tool_calls
        return store

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
        readers = []
        try:
            for _ in range(READERS):
                with map_sqlite_errors(path):
                    reader = await aiosqlite.connect(uri, uri=True, isolation_level=None)
                    readers.append(reader)
                    await reader.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        except BaseException:
            for reader in readers:
                await reader.close()
            raise
        return cls(path, NoWriter(), readers, StorageCounters())

    async def close(self) -> None:
        """Finish queued writes, checkpoint (TRUNCATE) and close every connection."""
        for reader in self._all_readers:
            await reader.close()
        await asyncio.to_thread(self._writer.stop)
        if self.erasures.count():
            _log.warning(
                "event=erasure_pending_at_stop sessions=%d (their bytes leave the files at the next checkpoint, "
                "which the next daemon runs at start)",
                self.erasures.count(),
            )

    def subscribe(self, listener: ChangeListener) -> None:
        """Tell ``listener`` (on the loop) about every later commit and erasure.

        ``changed`` runs after each commit that changed sessions (one call per
        group commit); ``erased`` after a session was erased (delete, retention,
        import replace): positions restart at 1, so followers of the old
        session must stop.
        """
        self._listeners.add(listener)
        self._writer.on_commit = self._listeners.changed

    def _erased(self, session_id: str, count: int) -> None:
        if count:
            self.counters.sessions_deleted += 1
        self._listeners.erased(session_id)

    async def figures(self) -> StorageFigures:
        """Sessions, events, idempotency records, schema version, database and WAL bytes."""
        async with self._reader() as conn:
            sessions = (await conn.execute_fetchall("SELECT count(*) FROM sessions"))[0][0]
            events = (await conn.execute_fetchall("SELECT count(*) FROM events"))[0][0]
            version = (await conn.execute_fetchall("PRAGMA user_version"))[0][0]
            request_records = (await conn.execute_fetchall("SELECT count(*) FROM requests"))[0][0]

        def size(p: Path) -> int:
            try:
                return p.stat().st_size
            except FileNotFoundError:
                return 0

        return StorageFigures(
            sessions=int(sessions),
            events=int(events),
            request_records=int(request_records),
            schema_version=int(version),
            stored_bytes=size(self.path),
            log_bytes=size(Path(f"{self.path}-wal")),
        )

    # -- writes

    async def append(self, job: AppendJob) -> AppendResult:
        """Append validated messages, all or none.

        Raises:
            SequenceConflictError, ToolCallStateError, InvalidRequestError, StorageError.
        """
        limit = self.max_open_tool_calls
        result = await self._writer.submit(write_tx(writes.append, job, limit), job.session_id)
        if not result.replayed:
            self.counters.appends += 1
            self.counters.messages_written += len(job.messages)
        return result

    async def record_usage(
        self, session_id: str, delta: UsageDelta, *, request_id: str, workdir: str, trace_id: str
    ) -> UsageResult:
        """Add usage to the session's totals (creating the session if needed)."""
        fp = fingerprint("usage", session_id, repr(delta))
        return await self._writer.submit(
            write_tx(writes.record_usage, session_id, delta, request_id, fp, workdir, trace_id)
        )

    async def clear(
        self,
        session_id: str,
        *,
        request_id: str,
        expected_last_position: int,
        workdir: str,
        trace_id: str,
        erase: bool = False,
    ) -> ClearResult:
        """Record a clear: the visible history starts after it; usage is kept.

        With ``erase`` the history before it leaves the log and, after a checkpoint, the files
        (``writes.clear``; ``erasure_pending`` as for :meth:`delete`).
        """
        if not erase:
            fp = fingerprint("clear", session_id, expected_last_position)
            return await self._writer.submit(
                write_tx(writes.clear, session_id, request_id, fp, expected_last_position, workdir, trace_id),
                session_id,
            )
        fp = fingerprint("clear", session_id, expected_last_position, "erase")
        outcome, hook = checkpoint_outcome()
        result = await self._writer.submit(
            write_tx(writes.clear, session_id, request_id, fp, expected_last_position, workdir, trace_id, True),
            session_id,
            after_commit=hook,
        )
        if result.replayed:
            return dataclasses.replace(result, erasure_pending=session_id in self.erasures)
        pending = await self._erasure_outcome(session_id, result.events_erased, outcome)
        return dataclasses.replace(result, erasure_pending=pending)

    async def edit_tail(self, job: EditJob) -> EditResult:
        """Remove the tail of the visible history and append replacements, all or nothing (``storage/editing.py``).

        Raises:
            SequenceConflictError, InvalidRequestError, PreconditionError, ToolCallStateError, StorageError.
        """
        limit = self.max_open_tool_calls
        result = await self._writer.submit(write_tx(edit_tail, job, limit), job.session_id)
        if not result.replayed and job.replacements is not None:
            self.counters.appends += 1
            self.counters.messages_written += len(job.replacements.messages)
        return result

    async def record_event(
        self, session_id: str, event_type: str, payload: str, *, request_id: str, trace_id: str
    ) -> EventResult:
        """Store an audit event (permission denial, error)."""
        fp = fingerprint("event", session_id, event_type, payload)
        return await self._writer.submit(
            write_tx(writes.record_event, session_id, event_type, payload, request_id, fp, trace_id)
        )

    async def delete(self, session_id: str) -> DeleteResult:
        """Erase a session and checkpoint, so its bytes leave both files.

        The checkpoint does not wait for readers: if one holds an older
        snapshot, the result says ``erasure_pending`` and the erasure
        finishes in the background (``erasure.run``).
        """
        outcome, hook = checkpoint_outcome()
        count = await self._writer.submit(write_tx(writes.delete, session_id), after_commit=hook)
        self._erased(session_id, count)  # watchers end now, not after the checkpoint's grace
        pending = await self._erasure_outcome(session_id, count, outcome)
        return DeleteResult(count, pending)

    async def _erasure_outcome(self, session_id: str, count: int, outcome: list[bool]) -> bool:
        """Finish or record an erasure whose checkpoint did not complete; True if it is pending.

        The daemon's own reads are short: a few more no-wait checkpoints from
        another connection, within :data:`_ERASURE_GRACE_S`, usually finish
        it. Only this caller waits meanwhile; the writer goes on.
        """
        if not count or (outcome and outcome[0]):
            return False
        deadline = time.monotonic() + _ERASURE_GRACE_S
        while time.monotonic() < deadline:
            await asyncio.sleep(_ERASURE_RETRY_S)
            try:
                if await self.checkpoint():
                    return False
            except StorageError:
                break
        self.erasures.add(session_id)
        return True

    async def checkpoint(self) -> bool:
        """One no-wait TRUNCATE checkpoint from a connection of its own; True if the WAL is now empty.

        Raises:
            StorageError: the checkpoint failed (disk full, I/O error).
        """
        return await asyncio.to_thread(checkpoint_on_own_connection, self.path)

    async def prune_requests(self, cutoff_rfc3339: str, limit: int) -> int:
        """Delete at most ``limit`` idempotency records written before the cutoff, oldest first; returns how many.

        A retry whose record is gone is a new request (see ``idempotency.py``).
        """

        def run(conn: sqlite3.Connection) -> int:
            cur = conn.execute(
                "DELETE FROM requests WHERE (session_id, request_id) IN (SELECT session_id, request_id FROM requests "
                "WHERE created_at < ? ORDER BY created_at LIMIT ?)",
                (cutoff_rfc3339, limit),
            )
            return int(cur.rowcount)

        async with self._reader() as reader:
            cur = await reader.execute("SELECT 1 FROM requests WHERE created_at < ? LIMIT 1", (cutoff_rfc3339,))
            if await cur.fetchone() is None:
                return 0  # nothing to prune: no writer job (and no empty commit in the metrics)
        removed = await self._writer.submit(run)
        self.counters.requests_pruned += removed
        return removed

    async def sessions_not_updated_since(self, cutoff_rfc3339: str) -> list[str]:
        """Ids of sessions whose last change is older than ``cutoff_rfc3339``."""
        async with self._reader() as conn:
            rows = await conn.execute_fetchall(
                "SELECT session_id FROM sessions WHERE updated_at < ? ORDER BY updated_at", (cutoff_rfc3339,)
            )
        return [r[0] for r in rows]

    async def newest_update(self) -> str | None:
        """The newest ``updated_at`` of any session, or None (an empty store)."""
        async with self._reader() as conn:
            rows = await conn.execute_fetchall("SELECT max(updated_at) FROM sessions")
        return next((r[0] for r in rows if r[0] is not None), None)

    async def delete_if_not_updated_since(self, session_id: str, cutoff_rfc3339: str) -> int:
        """Delete the whole session only if it is still older than the cutoff (retention).

        The check runs in the writer, after every write queued before it (the
        caller spares the sessions written since the daemon started: ``retention.py``).
        """

        def run(conn: sqlite3.Connection) -> int:
            row, _now = SQLitePort(conn).session_row(session_id)
            if row is None or row.updated_at >= cutoff_rfc3339:
                return 0
            return write_tx(writes.delete, session_id)(conn)

        outcome, hook = checkpoint_outcome()
        count = await self._writer.submit(run, after_commit=hook)
        if count:
            self._erased(session_id, count)
            await self._erasure_outcome(session_id, count, outcome)
        return count

    async def import_session(self, session: ImportedSession, mode: ImportMode = "refuse") -> int:
        """Write an imported session, all or nothing, and rebuild its derived rows; returns events written.

        ``mode`` is ``refuse`` (the session must not exist), ``replace`` (erase
        it first) or ``merge`` (skip events already stored, append the rest
        after the existing history).

        Raises:
            PreconditionError: reason SESSION_EXISTS (mode refuse).
            InvalidRequestError: reason INVALID_IMPORT, the events are not a consistent history, or the
                session would have more open tool calls than :attr:`max_open_tool_calls`.
            StorageError: the write failed.
        """
        outcome, hook = checkpoint_outcome()
        written = await self._writer.submit(
            write_tx(import_session, session, mode, self.max_open_tool_calls),
            session.header.session_id,
            after_commit=hook if mode == "replace" else None,
        )
        if mode == "replace":
            self._listeners.erased(session.header.session_id)
            await self._erasure_outcome(session.header.session_id, 1, outcome)
        return written

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


_: type[Storage] = SQLiteStorage  # mypy proves that SQLiteStorage is a Storage
_checkpointing: type[Checkpointing] = SQLiteStorage
_backing_up: type[BackingUp] = SQLiteStorage
