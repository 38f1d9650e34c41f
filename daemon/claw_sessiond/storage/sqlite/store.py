"""The only module that speaks SQL: one write connection on one thread, read connections for Load.

Writes go through :class:`_Writer`: one thread, one ``sqlite3`` connection,
one queue. Whatever is queued while a transaction commits is taken together
into the next ``BEGIN IMMEDIATE`` transaction (group commit); each request
runs inside its own SAVEPOINT, so a request that fails validation against the
stored state is rolled back alone and its neighbours still commit. A reply is
delivered only after COMMIT returned (``synchronous=FULL``, read back at
open). If the commit itself fails, every request of the batch gets the
storage error: nothing was acknowledged.

Reads (Load without repair, listings, exports) use aiosqlite connections
opened read-only. A Load that finds interrupted tool calls hands over to the
writer, which re-reads, repairs and reads the history in one transaction.

sqlite3 errors are translated here, once, by :func:`_map_sqlite_errors`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import os
import queue
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import aiosqlite

from ... import repair as repairing
from ... import rules
from ...config import DEFAULT_MAX_OPEN_TOOL_CALLS
from ...erasure import PendingErasures
from ...errors import (
    CorruptDatabaseError,
    Reason,
    SessiondError,
    SessionNotFoundError,
    ShuttingDownError,
    StorageError,
    StorageFullError,
    StorageUnavailableError,
)
from ...events import (
    CLEAR_PAYLOAD,
    EVENT_SCHEMA_VERSION,
    call_names,
    decode_events,
    encode_usage,
    fingerprint,
    message_from_payload,
)
from ...export import ExportHeader, ImportedSession
from ...history import OpenCall, project
from ...model import (
    AppendJob,
    AppendResult,
    ClearResult,
    DeleteResult,
    Event,
    EventResult,
    HistoryCursor,
    ImportMode,
    LoadResult,
    Message,
    ModelUsage,
    PreparedMessage,
    Repair,
    SessionMeta,
    SessionSummary,
    Usage,
    UsageDelta,
    UsageResult,
    now_rfc3339,
)
from ...queries import SearchFilter, SearchRow, UsageRow
from ...repair import RepairPlan
from ...rules import StoredRequest
from . import queries, reads, schema

__all__ = [
    "BACKUP_CHUNK_BYTES",
    "AppendJob",
    "CopyFigures",
    "ImportMode",
    "PreparedMessage",
    "SQLiteStorage",
    "StoreCounters",
    "check_copy",
    "check_database_file",
    "copy_database",
    "create_private_file",
    "fingerprint",
    "message_from_payload",
]

_log = logging.getLogger("claw_sessiond.store")
T = TypeVar("T")

_SQLITE_HEADER: Final = b"SQLite format 3\x00"
_MAX_INT64: Final = 2**63 - 1
_READERS: Final = 2
#: How long an erasing call retries its checkpoint before reporting the erasure as pending.
_ERASURE_GRACE_S: Final = 0.25
_ERASURE_RETRY_S: Final = 0.01
#: Read connections kept for bulk reads (ListSessions scans, Export pages, pages of large
#: Loads), so that short reads never queue behind them (see ``reads.py``).
_BULK_READERS: Final = 1


# ---------------------------------------------------------------- errors


@contextlib.contextmanager
def _map_sqlite_errors(path: Path | None = None) -> Iterator[None]:
    """Translate sqlite3 errors into domain storage errors (keyed on the error name, never text)."""
    try:
        yield
    except sqlite3.Error as exc:
        name = getattr(exc, "sqlite_errorname", "") or ""
        where = f" ({path})" if path else ""
        if name == "SQLITE_FULL":
            raise StorageFullError(f"storage is full{where}: {exc}", reason=Reason.STORAGE_FULL) from exc
        if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or name.startswith("SQLITE_CORRUPT"):
            raise CorruptDatabaseError(f"database is corrupt{where}: {exc}", reason=Reason.CORRUPT_DATABASE) from exc
        raise StorageUnavailableError(
            f"storage failed{where}: {name or type(exc).__name__}: {exc}", reason=Reason.STORAGE_UNAVAILABLE
        ) from exc


# ---------------------------------------------------------------- counters


@dataclass
class StoreCounters:
    """Running figures since start (read by metrics and GetStats)."""

    appends: int = 0
    messages_written: int = 0
    repairs: int = 0
    write_failures: int = 0
    commits: int = 0
    sessions_deleted: int = 0
    retention_deleted: int = 0
    requests_pruned: int = 0
    commit_observers: list[Callable[[int, float, bool], None]] = field(default_factory=list)


# ---------------------------------------------------------------- start-up checks


def check_database_file(path: Path) -> None:
    """Refuse a database file that is not a healthy claw-sessiond database, without writing it.

    Opens the file read-only (``mode=ro``: the file descriptor cannot write),
    checks the header, runs ``PRAGMA quick_check`` and the schema version.
    Without a WAL the file is opened ``immutable=1`` so that not even an
    empty ``-wal`` is created. With a WAL, the database's identity read from
    the main file alone must match the one seen through the WAL: SQLite
    replays any WAL whose checksums are valid, so a WAL copied from another
    database would silently turn this one into (a mix with) that one. A
    missing or empty file is a new database and passes.

    Raises:
        CorruptDatabaseError: naming the file and what is wrong.
    """
    if not path.exists() or path.stat().st_size == 0:
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise CorruptDatabaseError(
                f"{path}: database is missing or empty but {wal} holds data; refusing to start",
                reason=Reason.CORRUPT_DATABASE,
            )
        return
    with open(path, "rb") as fh:
        header = fh.read(100)
    if not header.startswith(_SQLITE_HEADER):
        raise CorruptDatabaseError(f"{path}: not an SQLite database (bad header)", reason=Reason.CORRUPT_DATABASE)
    wal = Path(f"{path}-wal")
    has_wal = wal.exists() and wal.stat().st_size > 0
    # immutable=1: the main file alone, no WAL, no -shm, no locks (we hold the workspace lock).
    file_only = f"file:{path}?mode=ro&immutable=1"
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro" if has_wal else file_only, uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise CorruptDatabaseError(f"{path}: cannot open: {exc}", reason=Reason.CORRUPT_DATABASE) from exc
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
        if [r[0] for r in rows] != ["ok"]:
            detail = "; ".join(str(r[0]) for r in rows[:3])
            raise CorruptDatabaseError(f"{path}: quick_check failed: {detail}", reason=Reason.CORRUPT_DATABASE)
        try:
            schema.pending(conn)
        except CorruptDatabaseError as exc:
            raise CorruptDatabaseError(f"{path}: {exc.message}", reason=Reason.CORRUPT_DATABASE) from exc
        if has_wal:
            seen = _identity(conn)
            stored = _identity_of_main_file(file_only)
            if stored is not None and stored != seen:
                raise CorruptDatabaseError(
                    f"{wal}: this WAL file belongs to another database ({seen or 'unknown'}), not to {path} "
                    f"({stored}); refusing to replay it. Move the WAL file away to start with {path} as it is",
                    reason=Reason.CORRUPT_DATABASE,
                )
    except sqlite3.Error as exc:
        raise CorruptDatabaseError(
            f"{path}: {getattr(exc, 'sqlite_errorname', '') or 'error'}: {exc}", reason=Reason.CORRUPT_DATABASE
        ) from exc
    finally:
        conn.close()


_IDENTITY_PREFIX: Final = "claw-sessiond:"


def _identity(conn: sqlite3.Connection) -> str | None:
    """The database's random identity (None if it has none yet, or is not ours).

    It is a row of ``sqlite_sequence``: that one-page table is rewritten by
    every event insert (``events`` is AUTOINCREMENT), so every WAL that holds
    a write holds the page with the identity of the database that wrote it.
    """
    found = conn.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_sequence'").fetchone()
    if found is None:
        return None
    row = conn.execute(
        "SELECT name FROM sqlite_sequence WHERE substr(name, 1, ?) = ? ORDER BY name LIMIT 1",
        (len(_IDENTITY_PREFIX), _IDENTITY_PREFIX),
    ).fetchone()
    return str(row[0]) if row else None


def _identity_of_main_file(uri: str) -> str | None:
    """The identity in the main file alone, or None if that cannot be read.

    Without its WAL the main file need not be consistent: a checkpoint that
    failed half-way (disk full, crash) leaves pages of several commits in it,
    and SQLite may call it malformed. Only the identity row matters here, and
    every version of its page holds the same row, so an unreadable file
    means "unknown", not "foreign".
    """
    try:
        alone = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        return _identity(alone)
    except sqlite3.Error:
        return None
    finally:
        alone.close()


def _ensure_identity(conn: sqlite3.Connection) -> bool:
    """Give the database its identity if it has none; True if one was written."""
    if _identity(conn) is not None:
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT INTO sqlite_sequence(name, seq) VALUES (?, 0)", (_IDENTITY_PREFIX + uuid.uuid4().hex,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


def _space_hint(path: Path) -> str:
    """A hint for start-up errors on a full file system (SQLite reports a full -shm as an I/O error)."""
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return ""
    return f" (the file system holding {path.parent} is full: {free} bytes free)" if free < 64 * 1024 else ""


def _probe_writable(conn: sqlite3.Connection) -> None:
    """Fail now, not at the first Append, if the database cannot be written.

    SQLite silently opens a file it may not write (read-only mount, file
    mode) read-only; only a write says so (``SQLITE_READONLY``). The probe
    rewrites ``user_version`` with its own value and rolls back.
    """
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"PRAGMA user_version = {version}")
    finally:
        conn.execute("ROLLBACK")


def _open_write_connection(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise StorageUnavailableError(f"{path}: journal_mode=WAL did not take effect (got {mode!r})")
    conn.execute("PRAGMA synchronous = FULL")
    sync = conn.execute("PRAGMA synchronous").fetchone()[0]
    if int(sync) != 2:
        conn.close()
        raise StorageUnavailableError(f"{path}: synchronous=FULL did not take effect (got {sync!r})")
    # Deleted content must not linger in freed pages (right to erasure).
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("PRAGMA foreign_keys = OFF")
    # Statement journals and sort files (the search index's triggers and merges need them) stay in
    # memory: no temporary files outside .claw/, which a sandbox (ProtectSystem=strict) may not allow,
    # and no transcript text in a world-visible temporary folder.
    conn.execute("PRAGMA temp_store = MEMORY")
    return conn


# ---------------------------------------------------------------- backup and restore

#: Largest piece of a backup per Backup reply (and per read of the copy).
BACKUP_CHUNK_BYTES: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class CopyFigures:
    """What a copy of the database holds, read from the copy itself."""

    sessions: int
    events: int
    bytes: int
    schema_version: int


def create_private_file(path: Path) -> None:
    """Create ``path`` empty, 0600, refusing an existing file or a link there (``O_EXCL | O_NOFOLLOW``)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _figures_of(conn: sqlite3.Connection, path: Path) -> CopyFigures:
    sessions = int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])
    events = int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    return CopyFigures(sessions, events, path.stat().st_size, version)


def _remove_stale_backups(folder: Path) -> None:
    """Remove backup copies a previous daemon left when it died mid-Backup (we hold the lock: none is in use)."""
    for stale in folder.glob(".backup-*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            if stale.is_file() and not stale.is_symlink():
                stale.unlink()


def copy_database(source: Path, target: Path, busy_timeout_ms: int = 5000, *, locked: bool = False) -> CopyFigures:
    """Copy the database at ``source`` into the existing empty file ``target`` (SQLite's online backup API).

    The source is opened read-only (``mode=ro``: it cannot write, so a live
    daemon's writer is never blocked and nothing of the source changes). The
    whole copy is one backup step, so it reads one snapshot: every commit
    before it, none after. The copy is then switched to a rollback journal
    (one self-contained file, no ``-wal`` beside it), fsynced, and its
    figures are read from the copy. ``locked``: the caller holds the
    workspace lock (no daemon runs), so a source without WAL data is read
    ``immutable=1`` and nothing is created beside it.

    Raises:
        StorageError: reading the source or writing the copy failed.
    """
    with _map_sqlite_errors(source):
        wal = Path(f"{source}-wal")
        frozen = locked and not (wal.exists() and wal.stat().st_size > 0)
        uri = f"file:{source}?mode=ro" + ("&immutable=1" if frozen else "")
        src = sqlite3.connect(uri, uri=True, isolation_level=None)
        try:
            src.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            dst = sqlite3.connect(str(target), isolation_level=None)
            try:
                src.backup(dst)  # pages=-1: the whole database in one step, one read transaction
                dst.execute("PRAGMA journal_mode = DELETE")
                figures = _figures_of(dst, target)
            finally:
                dst.close()
        finally:
            src.close()
    _fsync_file(target)
    return CopyFigures(figures.sessions, figures.events, target.stat().st_size, figures.schema_version)


def check_copy(path: Path) -> CopyFigures:
    """Verify a database copy read-only and return its figures.

    Checks the header, ``PRAGMA integrity_check`` (every page, every index),
    ``application_id`` and the schema version (ours, not newer than this
    code), then counts sessions and events. Never writes the file.

    Raises:
        CorruptDatabaseError: naming the file and what is wrong.
    """
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise CorruptDatabaseError(f"{path}: cannot read: {exc.strerror}", reason=Reason.CORRUPT_DATABASE) from exc
    if not header.startswith(_SQLITE_HEADER):
        raise CorruptDatabaseError(f"{path}: not an SQLite database (bad header)", reason=Reason.CORRUPT_DATABASE)
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise CorruptDatabaseError(f"{path}: cannot open: {exc}", reason=Reason.CORRUPT_DATABASE) from exc
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check").fetchall()]
        if rows != ["ok"]:
            raise CorruptDatabaseError(
                f"{path}: integrity_check failed: {'; '.join(rows[:3])}", reason=Reason.CORRUPT_DATABASE
            )
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        if app_id != schema.APPLICATION_ID:
            raise CorruptDatabaseError(
                f"{path}: not a claw-sessiond database (application_id {app_id:#x})", reason=Reason.CORRUPT_DATABASE
            )
        try:
            schema.pending(conn)
        except CorruptDatabaseError as exc:
            raise CorruptDatabaseError(f"{path}: {exc.message}", reason=Reason.CORRUPT_DATABASE) from exc
        return _figures_of(conn, path)
    except sqlite3.Error as exc:
        raise CorruptDatabaseError(
            f"{path}: {getattr(exc, 'sqlite_errorname', '') or 'error'}: {exc}", reason=Reason.CORRUPT_DATABASE
        ) from exc
    finally:
        conn.close()


# ---------------------------------------------------------------- the writer


@dataclass
class _Job:
    fn: Callable[[sqlite3.Connection], Any]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    sessions: tuple[str, ...] = ()
    after_commit: Callable[[sqlite3.Connection], None] | None = None


_STOP: Final = object()


class _Writer:
    """One thread owning the write connection; group-commits queued jobs."""

    def __init__(self, conn: sqlite3.Connection, path: Path, max_batch: int, counters: StoreCounters) -> None:
        self._conn = conn
        self._path = path
        self._max_batch = max_batch
        self._counters = counters
        self._queue: queue.SimpleQueue[_Job | object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="claw-sessiond-writer", daemon=True)
        self.on_commit: Callable[[set[str]], None] | None = None
        self._stopped = False
        self._thread.start()

    async def submit(self, fn: Callable[[sqlite3.Connection], T], *sessions: str, after_commit: Any = None) -> T:
        if self._stopped:
            raise ShuttingDownError("claw-sessiond is shutting down; retry in a moment")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[T] = loop.create_future()
        self._queue.put(_Job(fn, fut, loop, sessions, after_commit))
        return await fut

    def stop(self) -> None:
        self._stopped = True
        self._queue.put(_STOP)
        self._thread.join()
        # A job that raced in behind the stop marker is refused, never left waiting.
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(job, _Job):
                job.loop.call_soon_threadsafe(
                    _settle, job.future, False, ShuttingDownError("claw-sessiond is shutting down; retry in a moment")
                )

    # -- thread side

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                break
            assert isinstance(first, _Job)
            batch = [first]
            stop_after = False
            while len(batch) < self._max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop_after = True
                    break
                assert isinstance(nxt, _Job)
                batch.append(nxt)
            try:
                self._run_batch(batch)
            except BaseException as exc:  # never let the writer thread die with callers waiting
                _log.exception("event=writer_batch_crashed")
                self._counters.write_failures += 1
                with contextlib.suppress(sqlite3.Error):
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                failure = StorageUnavailableError(f"write failed unexpectedly: {type(exc).__name__}")
                for job in batch:
                    job.loop.call_soon_threadsafe(_settle, job.future, False, failure)
            if stop_after:
                break
        self._close()

    def _close(self) -> None:
        try:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            _log.warning("event=checkpoint_failed error=%s", exc)
        self._conn.close()

    def _run_batch(self, batch: list[_Job]) -> None:
        started = time.perf_counter()
        results: list[tuple[bool, Any]] = []
        conn = self._conn
        try:
            with _map_sqlite_errors(self._path):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for job in batch:
                        results.append(self._run_in_savepoint(job))
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except StorageError as exc:
            if len(batch) > 1:
                # A storage failure inside the batch: retry each request alone so
                # that one request's failure is only its own.
                for job in batch:
                    self._run_batch([job])
                return
            self._counters.write_failures += 1
            _log.error("event=write_failed error=%s", exc.message)
            self._observe(len(batch), started, False)
            self._deliver(batch, [(False, exc)] * len(batch))
            return
        # Committed: from here on nothing may turn the batch into a failure.
        self._counters.commits += 1
        self._observe(len(batch), started, True)
        for job in batch:
            if job.after_commit is not None:
                try:
                    job.after_commit(conn)
                except Exception as exc:
                    _log.warning("event=after_commit_failed error=%s", exc)
        self._deliver(batch, results)

    def _run_in_savepoint(self, job: _Job) -> tuple[bool, Any]:
        conn = self._conn
        conn.execute("SAVEPOINT job")
        try:
            value = job.fn(conn)
        except SessiondError as exc:
            conn.execute("ROLLBACK TO job")
            conn.execute("RELEASE job")
            return (False, exc)
        except sqlite3.Error:
            raise
        except Exception as exc:  # a bug: fail this request alone, keep the batch
            _log.exception("event=job_crashed")
            conn.execute("ROLLBACK TO job")
            conn.execute("RELEASE job")
            return (False, exc)
        conn.execute("RELEASE job")
        return (True, value)

    def _observe(self, size: int, started: float, ok: bool) -> None:
        elapsed = time.perf_counter() - started
        for observer in self._counters.commit_observers:
            try:
                observer(size, elapsed, ok)
            except Exception:  # metrics must never fail a write
                _log.exception("event=commit_observer_failed")

    def _deliver(self, batch: list[_Job], results: list[tuple[bool, Any]]) -> None:
        # One wake-up of each loop per batch, not one per job: every
        # call_soon_threadsafe writes to the loop's self-pipe and costs the loop a
        # turn; under load a batch holds dozens of jobs (README, Benchmarks).
        changed: set[str] = set()
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
        for job, (ok, value) in zip(batch, results, strict=True):
            if ok:
                changed.update(job.sessions)
            by_loop.setdefault(job.loop, []).append((job.future, ok, value))
        for loop, settled in by_loop.items():
            loop.call_soon_threadsafe(_settle_all, settled)
        if changed and self.on_commit is not None and batch:
            batch[0].loop.call_soon_threadsafe(self.on_commit, changed)


class _NoWriter(_Writer):
    """The writer of a read-only :class:`SQLiteStorage` (the daemon is down): it refuses every write."""

    def __init__(self) -> None:  # no connection, no thread
        self.on_commit = None
        self._stopped = True

    async def submit(self, fn: Callable[[sqlite3.Connection], T], *sessions: str, after_commit: Any = None) -> T:
        raise StorageUnavailableError("read-only view of the database (no daemon running): nothing can be written")

    def stop(self) -> None:
        return None


def _settle_all(settled: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for fut, ok, value in settled:
        _settle(fut, ok, value)


def _settle(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if fut.done():  # the caller went away (cancelled); the write stands, its retry replays it
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


# ---------------------------------------------------------------- SQL helpers (caller's transaction)

_SESSION_COLS: Final = (
    "session_id, workdir, created_at, updated_at, last_position, clear_position, message_count, "
    "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_micros, currency"
)


#: The visible history (position order) and the open tool calls of a session: shared by
#: Load's read path (aiosqlite) and the writer's repair path (sqlite3), so they cannot drift.
_HISTORY_SQL: Final = (
    "SELECT position, type, trace_id, ts, payload FROM events "
    "WHERE session_id = ? AND position > ? AND type != 'clear' ORDER BY position"
)
_OPEN_CALLS_SQL: Final = (
    "SELECT call_id, assistant_position, call_index, run_id FROM tool_calls "
    "WHERE session_id = ? AND result_position IS NULL"
)


@dataclass(slots=True)
class _Row:
    session_id: str
    workdir: str
    created_at: str
    updated_at: str
    last_position: int
    clear_position: int
    message_count: int
    usage: Usage


def _row(values: Sequence[Any] | None) -> _Row | None:
    if values is None:
        return None
    return _Row(values[0], values[1], values[2], values[3], values[4], values[5], values[6], Usage(*values[7:13]))


def _meta(row: _Row | None, session_id: str, workdir: str | None) -> SessionMeta:
    if row is None:
        return SessionMeta(session_id, workdir or "", None, None, Usage(), 0, False, 0)
    return SessionMeta(
        session_id,
        workdir if workdir else row.workdir,
        row.created_at,
        row.updated_at,
        row.usage,
        row.last_position,
        True,
        row.message_count,
    )


def _session_in_tx(conn: sqlite3.Connection, session_id: str) -> _Row | None:
    return _row(conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE session_id = ?", (session_id,)).fetchone())


def _ensure_session_in_tx(conn: sqlite3.Connection, session_id: str, workdir: str, now: str) -> _Row:
    row = _session_in_tx(conn, session_id)
    if row is not None:
        return row
    conn.execute(
        "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation) VALUES (?, ?, ?, ?, ?)",
        (session_id, workdir, now, now, _new_incarnation()),
    )
    return _Row(session_id, workdir, now, now, 0, 0, 0, Usage())


def _new_incarnation() -> str:
    """A random id for a newly created session row (Watch follows one incarnation only)."""
    return uuid.uuid4().hex[:16]


def _stored_request_in_tx(conn: sqlite3.Connection, session_id: str, request_id: str) -> StoredRequest | None:
    """The record of an earlier request with this id on this session, or None (also for no id)."""
    if not request_id:
        return None
    found = conn.execute(
        "SELECT kind, fingerprint, result FROM requests WHERE session_id = ? AND request_id = ?",
        (session_id, request_id),
    ).fetchone()
    return None if found is None else StoredRequest(found[0], found[1], found[2])


def _remember_in_tx(
    conn: sqlite3.Connection,
    session_id: str,
    request_id: str,
    kind: str,
    fp: str,
    result: AppendResult | UsageResult | ClearResult | EventResult,
) -> None:
    if request_id:
        conn.execute(
            "INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, request_id, kind, fp, rules.result_record(result), now_rfc3339()),
        )


def _insert_event_in_tx(
    conn: sqlite3.Connection,
    session_id: str,
    position: int | None,
    event_type: str,
    trace_id: str,
    ts: str,
    payload: str,
) -> int:
    cur = conn.execute(
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (session_id, position, event_type, trace_id, ts, EVENT_SCHEMA_VERSION, payload),
    )
    return int(cur.lastrowid or 0)


def _open_calls_in_tx(conn: sqlite3.Connection, session_id: str) -> list[OpenCall]:
    rows = conn.execute(
        _OPEN_CALLS_SQL,
        (session_id,),
    ).fetchall()
    return [OpenCall(*r) for r in rows]


def _open_call_count_in_tx(conn: sqlite3.Connection, session_id: str) -> int:
    # Counts entries of the partial index ``tool_calls_open``: at most the limit plus one append.
    return int(
        conn.execute(
            "SELECT count(*) FROM tool_calls WHERE session_id = ? AND result_position IS NULL", (session_id,)
        ).fetchone()[0]
    )


def _append_in_tx(conn: sqlite3.Connection, job: AppendJob, max_open_calls: int = 0) -> AppendResult:
    """Append ``job`` in the caller's transaction (``max_open_calls``: 0 for no limit).

    Only an append that makes new calls can exceed the limit, so only such an
    append counts the session's open calls (after its own writes, so that the
    results it carries count too; a refusal rolls back its savepoint).
    """
    stored = _stored_request_in_tx(conn, job.session_id, job.request_id)
    record = rules.replay_record(job.request_id, "append", job.fingerprint, stored)
    if record is not None:
        return rules.append_from_record(record)
    now = now_rfc3339()
    row = _session_in_tx(conn, job.session_id)
    rules.check_expected(job.expected_last_position, row.last_position if row else 0)
    if row is None:
        row = _ensure_session_in_tx(conn, job.session_id, job.workdir, now)
    position = row.last_position
    first = position + 1
    for prepared in job.messages:
        position += 1
        msg = prepared.message
        if msg.role == "tool":
            found = conn.execute(
                "SELECT result_position FROM tool_calls WHERE session_id = ? AND call_id = ?",
                (job.session_id, msg.tool_call_id),
            ).fetchone()
            rules.admit_tool_result(msg.tool_call_id, found is not None, found[0] if found is not None else None)
            conn.execute(
                "UPDATE tool_calls SET result_position = ? WHERE session_id = ? AND call_id = ?",
                (position, job.session_id, msg.tool_call_id),
            )
        for index, call in enumerate(msg.tool_calls):
            cur = conn.execute(
                "INSERT OR IGNORE INTO tool_calls(session_id, call_id, assistant_position, call_index, run_id) "
                "VALUES (?, ?, ?, ?, ?)",
                (job.session_id, call.id, position, index, job.run_id),
            )
            rules.check_call_inserted(call.id, cur.rowcount != 0)
        _insert_event_in_tx(conn, job.session_id, position, prepared.event_type, job.trace_id, now, prepared.payload)
    if max_open_calls and rules.makes_calls(job.messages):
        rules.check_open_calls(_open_call_count_in_tx(conn, job.session_id), max_open_calls, job.session_id)
    conn.execute(
        "UPDATE sessions SET last_position = ?, message_count = message_count + ?, updated_at = ?, "
        "workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
        (position, len(job.messages), now, job.workdir, job.workdir, job.session_id),
    )
    result = AppendResult(first, position, now, job.trace_id)
    _remember_in_tx(conn, job.session_id, job.request_id, "append", job.fingerprint, result)
    return result


def _repair_in_tx(
    conn: sqlite3.Connection,
    session_id: str,
    workdir: str,
    trace_id: str,
    is_live: Callable[[str], bool],
    plan: RepairPlan | None = None,
) -> LoadResult:
    """Repair interrupted calls in the caller's write transaction; the history is then read by pages.

    ``plan`` was made from a read at the same ``last_position``: if the
    session has not changed since (no append, clear or erase moves nothing
    else), it is written as is, so the writer thread only runs two
    ``executemany``; otherwise the repair is planned again here. A run that
    was live when planning may have ended since (its calls stay open until
    the next Load); runs never come back to life, so the plan never repairs
    a call that is now in flight.
    """
    row = _session_in_tx(conn, session_id)
    if row is None:
        return LoadResult(_meta(None, session_id, workdir), [])
    if plan is not None and plan.unchanged(row.created_at, row.clear_position, row.last_position):
        to_repair = list(plan.calls)
        payloads: Sequence[str] = plan.payloads
        # Only calls appended by a run can be in flight: no need to read the open calls being repaired.
        owned = conn.execute(_OPEN_CALLS_SQL + " AND run_id != ''", (session_id,)).fetchall()
        in_flight = repairing.in_flight_calls((OpenCall(*r) for r in owned), is_live)
    else:
        to_repair, in_flight = repairing.plan_repair(_open_calls_in_tx(conn, session_id), is_live)
        names = _call_names_in_tx(conn, session_id, set(repairing.assistant_positions(to_repair)))
        payloads = repairing.synthetic_payloads(to_repair, names)
    repairs: list[Repair] = []
    if to_repair:
        now = now_rfc3339()
        repairs = repairing.place(to_repair, row.last_position)
        first = repairs[0].position
        conn.executemany(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES (?, ?, 'repair', ?, ?, ?, ?)",
            (
                (session_id, first + i, trace_id, now, EVENT_SCHEMA_VERSION, payload)
                for i, payload in enumerate(payloads)
            ),
        )
        conn.executemany(
            "UPDATE tool_calls SET result_position = ? WHERE session_id = ? AND call_id = ?",
            ((r.position, session_id, r.tool_call_id) for r in repairs),
        )
        position = repairs[-1].position
        conn.execute(
            "UPDATE sessions SET last_position = ?, message_count = message_count + ?, updated_at = ?, "
            "workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
            (position, len(repairs), now, workdir, workdir, session_id),
        )
        row = _session_in_tx(conn, session_id)
        assert row is not None
    cursor = HistoryCursor(
        session_id, row.created_at, row.clear_position, row.last_position, tuple(c.tool_call_id for c in in_flight)
    )
    return LoadResult(_meta(row, session_id, workdir), [], repairs, repairing.flights(in_flight), cursor)


def _repair_chunk_in_tx(
    conn: sqlite3.Connection, session_id: str, trace_id: str, chunk: RepairPlan
) -> tuple[list[Repair], int] | None:
    """Write one chunk of a large repair (not the last); returns its repairs and the new last position.

    Calls answered since planning (a live result, or a concurrent Load's
    repair) are skipped. None if the session was cleared, erased or replaced
    since planning: the caller then plans again in its final transaction.
    """
    row = _session_in_tx(conn, session_id)
    if row is None or not chunk.same_history(row.created_at, row.clear_position):
        return None
    still_open = {
        r[0]
        for r in conn.execute(
            f"SELECT call_id FROM tool_calls WHERE session_id = ? AND result_position IS NULL "
            f"AND call_id IN ({','.join('?' * len(chunk.calls))})",
            (session_id, *(c.tool_call_id for c in chunk.calls)),
        )
    }
    todo = [(c, p) for c, p in zip(chunk.calls, chunk.payloads, strict=True) if c.tool_call_id in still_open]
    if not todo:
        return [], row.last_position
    now = now_rfc3339()
    repairs = repairing.place([c for c, _p in todo], row.last_position)
    conn.executemany(
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
        "VALUES (?, ?, 'repair', ?, ?, ?, ?)",
        (
            (session_id, r.position, trace_id, now, EVENT_SCHEMA_VERSION, p)
            for r, (_c, p) in zip(repairs, todo, strict=True)
        ),
    )
    conn.executemany(
        "UPDATE tool_calls SET result_position = ? WHERE session_id = ? AND call_id = ?",
        ((r.position, session_id, r.tool_call_id) for r in repairs),
    )
    last = repairs[-1].position
    conn.execute(
        "UPDATE sessions SET last_position = ?, message_count = message_count + ?, updated_at = ? WHERE session_id = ?",
        (last, len(repairs), now, session_id),
    )
    return repairs, last


def _call_names_in_tx(conn: sqlite3.Connection, session_id: str, positions: set[int]) -> dict[str, str]:
    names: dict[str, str] = {}
    for pos in positions:
        found = conn.execute(
            "SELECT payload FROM events WHERE session_id = ? AND position = ?", (session_id, pos)
        ).fetchone()
        if found:
            names.update(call_names(found[0]))
    return names


def _usage_in_tx(
    conn: sqlite3.Connection,
    session_id: str,
    delta: UsageDelta,
    request_id: str,
    fp: str,
    workdir: str,
    trace_id: str,
) -> UsageResult:
    record = rules.replay_record(request_id, "usage", fp, _stored_request_in_tx(conn, session_id, request_id))
    if record is not None:
        return rules.usage_from_record(record)
    now = now_rfc3339()
    row = _ensure_session_in_tx(conn, session_id, workdir, now)
    new = rules.add_usage(row.usage, delta, session_id)
    conn.execute(
        "UPDATE sessions SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, "
        "cost_micros = ?, currency = ?, updated_at = ?, workdir = CASE WHEN ? != '' THEN ? ELSE workdir END "
        "WHERE session_id = ?",
        (
            new.input_tokens,
            new.output_tokens,
            new.cache_read_tokens,
            new.cache_write_tokens,
            new.cost_micros,
            new.currency,
            now,
            workdir,
            workdir,
            session_id,
        ),
    )
    conn.execute(
        "INSERT INTO usage_by_model(session_id, model, pricing_version, input_tokens, output_tokens, "
        "cache_read_tokens, cache_write_tokens, cost_micros, currency) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(session_id, model, pricing_version) DO UPDATE SET "
        "input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens, "
        "cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens, "
        "cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens, "
        "cost_micros = cost_micros + excluded.cost_micros, "
        "currency = CASE WHEN currency = '' THEN excluded.currency ELSE currency END",
        (
            session_id,
            delta.model,
            delta.pricing_version,
            delta.input_tokens,
            delta.output_tokens,
            delta.cache_read_tokens,
            delta.cache_write_tokens,
            delta.cost_micros,
            rules.charged_currency(delta),
        ),
    )
    _insert_event_in_tx(conn, session_id, None, "usage", trace_id, now, encode_usage(delta))
    result = UsageResult(new, trace_id)
    _remember_in_tx(conn, session_id, request_id, "usage", fp, result)
    return result


def _clear_in_tx(
    conn: sqlite3.Connection, session_id: str, request_id: str, fp: str, expected: int, workdir: str, trace_id: str
) -> ClearResult:
    record = rules.replay_record(request_id, "clear", fp, _stored_request_in_tx(conn, session_id, request_id))
    if record is not None:
        return rules.clear_from_record(record)
    now = now_rfc3339()
    row = _session_in_tx(conn, session_id)
    rules.check_expected(expected, row.last_position if row else 0)
    if row is None:
        row = _ensure_session_in_tx(conn, session_id, workdir, now)
    position = row.last_position + 1
    _insert_event_in_tx(conn, session_id, position, "clear", trace_id, now, CLEAR_PAYLOAD)
    conn.execute("DELETE FROM tool_calls WHERE session_id = ?", (session_id,))
    conn.execute(
        "UPDATE sessions SET last_position = ?, clear_position = ?, message_count = 0, updated_at = ?, "
        "workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
        (position, position, now, workdir, workdir, session_id),
    )
    result = ClearResult(position, trace_id)
    _remember_in_tx(conn, session_id, request_id, "clear", fp, result)
    return result


def _record_event_in_tx(
    conn: sqlite3.Connection, session_id: str, event_type: str, payload: str, request_id: str, fp: str, trace_id: str
) -> EventResult:
    record = rules.replay_record(request_id, "event", fp, _stored_request_in_tx(conn, session_id, request_id))
    if record is not None:
        return rules.event_from_record(record)
    now = now_rfc3339()
    _ensure_session_in_tx(conn, session_id, "", now)
    event_id = _insert_event_in_tx(conn, session_id, None, event_type, trace_id, now, payload)
    conn.execute("UPDATE sessions SET updated_at = ? WHERE session_id = ?", (now, session_id))
    result = EventResult(event_id, trace_id)
    _remember_in_tx(conn, session_id, request_id, "event", fp, result)
    return result


_SESSION_TABLES: Final = ("events", "tool_calls", "requests", "usage_by_model", "sessions")


def _delete_in_tx(conn: sqlite3.Connection, session_id: str) -> int:
    count = int(conn.execute("SELECT count(*) FROM events WHERE session_id = ?", (session_id,)).fetchone()[0])
    for table in _SESSION_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
    if count:
        _erase_search_index_in_tx(conn)
    return count


def _erase_search_index_in_tx(conn: sqlite3.Connection) -> None:
    """Take deleted messages' words out of the search index's pages, not just mark them deleted.

    The delete trigger (schema v3) only adds FTS5 tombstones: the words stay in
    the older index segments until a merge reaches them. 'optimize' merges every
    segment into one now, so with ``secure_delete`` the freed pages are zeroed
    and the checkpoint that follows every erasure clears the WAL. It rewrites the
    whole index (measured: 0.2 s for 50 000 messages), in the erasing transaction.
    """
    conn.execute("INSERT INTO message_fts(message_fts) VALUES ('optimize')")


def _checkpoint(conn: sqlite3.Connection) -> bool:
    """Fold the WAL into the database and truncate it, without waiting; True if that completed.

    With ``secure_delete`` on, this is what takes deleted bytes out of both
    files. A reader holding an older snapshot makes it stop part-way and
    report busy (https://sqlite.org/pragma.html#pragma_wal_checkpoint: the
    row is ``busy, log, checkpointed``). The busy timeout is 0 meanwhile:
    waiting here would hold up every queued write for up to the timeout
    (the caller records the erasure as pending and retries in the background).
    """
    timeout_ms = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        busy, log, checkpointed = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout = {timeout_ms}")
    if busy:
        _log.debug("event=checkpoint_busy log=%s checkpointed=%s", log, checkpointed)
    return not busy and log == 0


def _checkpoint_outcome() -> tuple[list[bool], Callable[[sqlite3.Connection], None]]:
    """An after-commit hook running :func:`_checkpoint`, and the list its result lands in."""
    outcome: list[bool] = []

    def hook(conn: sqlite3.Connection) -> None:
        outcome.append(_checkpoint(conn))

    return outcome, hook


def _checkpoint_on_own_connection(path: Path) -> bool:
    """:func:`_checkpoint` from a short-lived connection of its own (the erasure retry; never the writer's)."""
    with _map_sqlite_errors(path):
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            return _checkpoint(conn)
        finally:
            conn.close()


# ---------------------------------------------------------------- import (caller's transaction)


def _import_in_tx(conn: sqlite3.Connection, session: ImportedSession, mode: ImportMode, max_open_calls: int = 0) -> int:
    """Write an imported session's events and rebuild its derived rows; returns events written."""
    header = session.header
    sid = header.session_id
    row = _session_in_tx(conn, sid)
    events = list(session.events)
    created_at, updated_at, workdir = header.created_at, header.updated_at, header.workdir
    offset = 0
    rules.check_import_mode(sid, row is not None, mode)
    if row is not None:
        if mode == "replace":
            _delete_in_tx(conn, sid)
        else:  # merge: skip events already stored (same type, time, trace and payload), append the rest
            stored = {
                rules.stored_event_key(*r)
                for r in conn.execute("SELECT type, ts, trace_id, payload FROM events WHERE session_id = ?", (sid,))
            }
            events, offset = rules.merge_events(stored, events, row.last_position)
            created_at, workdir = row.created_at, row.workdir or workdir
            updated_at = max(row.updated_at, updated_at)
    for e in events:
        position = None if e.position is None else e.position + offset
        conn.execute(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (sid, position, e.type, e.trace_id, e.ts, e.schema_version, e.payload),
        )
    _rebuild_in_tx(conn, sid, workdir, created_at, updated_at)
    if max_open_calls:
        # Refused rather than stored: its repair would hold the writer beyond the bound.
        rules.check_imported_open_calls(_open_call_count_in_tx(conn, sid), max_open_calls, sid)
    return len(events)


def _rebuild_in_tx(conn: sqlite3.Connection, session_id: str, workdir: str, created_at: str, updated_at: str) -> None:
    """Recompute a session's row, tool-call index and usage tables from its events (``rules.fold_events``).

    Raises:
        InvalidRequestError: reason INVALID_IMPORT, if the events are not a consistent history.
    """
    rows = conn.execute(
        "SELECT position, type, payload FROM events WHERE session_id = ? ORDER BY event_id", (session_id,)
    ).fetchall()
    fold = rules.fold_events(session_id, rows)
    u = fold.usage
    # A merge keeps the session's incarnation (its watchers follow on); a new or replaced session gets a new one.
    kept = conn.execute("SELECT incarnation FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    for table in ("tool_calls", "usage_by_model", "sessions"):
        conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
    conn.execute(
        f"INSERT INTO sessions({_SESSION_COLS}, incarnation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            workdir,
            created_at,
            updated_at,
            fold.last_position,
            fold.clear_position,
            fold.message_count,
            *_usage_values(u),
            kept[0] if kept else _new_incarnation(),
        ),
    )
    conn.executemany(
        "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, result_position) "
        "VALUES (?, ?, ?, ?, ?)",
        [
            (session_id, call_id, c.assistant_position, c.call_index, c.result_position)
            for call_id, c in fold.calls.items()
        ],
    )
    conn.executemany(
        "INSERT INTO usage_by_model(session_id, model, pricing_version, input_tokens, output_tokens, "
        "cache_read_tokens, cache_write_tokens, cost_micros, currency) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(session_id, model, version, *_usage_values(v)) for (model, version), v in fold.by_model.items()],
    )


def _usage_values(u: Usage) -> tuple[int, int, int, int, int, str]:
    return (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_micros, u.currency)


# ---------------------------------------------------------------- the store


class SQLiteStorage:
    """Sessions in one SQLite database. All methods are coroutines on the daemon's loop.

    Use :meth:`open` to create one; :meth:`close` checkpoints the WAL.
    """

    def __init__(self, path: Path, writer: _Writer, readers: list[aiosqlite.Connection], counters: StoreCounters):
        self.path = path
        self._writer = writer
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._bulk: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        bulk = min(_BULK_READERS, len(readers) - 1)  # the last ones serve bulk reads only
        for i, reader in enumerate(readers):
            (self._bulk if i >= len(readers) - bulk else self._readers).put_nowait(reader)
        self._all_readers = readers
        self._has_bulk = bulk > 0
        self.counters = counters
        #: Most open (unanswered) tool calls per session (0: no limit); set from the config.
        self.max_open_tool_calls: int = DEFAULT_MAX_OPEN_TOOL_CALLS
        self._erase_listener: Callable[[str], None] | None = None
        self.applied_migrations: list[str] = []
        #: Erased sessions whose bytes may still be in the files (see ``erasure.py``).
        self.erasures = PendingErasures()
        #: Sessions written since start → monotonic time of the last write (retention spares them).
        self._written: dict[str, float] = {}
        self._backup_lock = asyncio.Lock()

    # -- life cycle

    @classmethod
    async def open(cls, path: Path, *, busy_timeout_ms: int = 5000, max_group_commit: int = 512) -> SQLiteStorage:
        """Check, open and migrate the database at ``path``.

        Raises:
            CorruptDatabaseError: the file is damaged or not ours (its bytes are not touched).
            StorageError: the file cannot be opened for writing (read-only file system, ...).
        """
        await asyncio.to_thread(check_database_file, path)
        await asyncio.to_thread(_remove_stale_backups, path.parent)

        def open_writer() -> tuple[sqlite3.Connection, list[str]]:
            with _map_sqlite_errors(path):
                conn = _open_write_connection(path, busy_timeout_ms)
                try:
                    applied = schema.migrate(conn)
                    _probe_writable(conn)
                    if _ensure_identity(conn) or applied:
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
            raise StorageUnavailableError(f"{path}: cannot open for writing: {exc.message}{_space_hint(path)}") from exc
        try:
            for perm_path in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                with contextlib.suppress(FileNotFoundError):
                    os.chmod(perm_path, 0o600)
        except OSError as exc:
            conn.close()
            raise StorageUnavailableError(
                f"{exc.filename}: cannot make it private (chmod 0600): {exc.strerror}"
            ) from exc
        counters = StoreCounters()
        writer = _Writer(conn, path, max_group_commit, counters)
        readers = []
        try:
            for _ in range(_READERS + _BULK_READERS):
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
        return store

    @classmethod
    async def open_read_only(cls, path: Path, *, busy_timeout_ms: int = 5000) -> SQLiteStorage:
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
            for _ in range(_READERS + _BULK_READERS):
                with _map_sqlite_errors(path):
                    reader = await aiosqlite.connect(uri, uri=True, isolation_level=None)
                    readers.append(reader)
                    await reader.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        except BaseException:
            for reader in readers:
                await reader.close()
            raise
        return cls(path, _NoWriter(), readers, StoreCounters())

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

    def set_erase_listener(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(session_id)`` on the loop after a session was erased (delete, retention, import replace).

        Positions restart at 1 after an erase, so followers of the old session must stop.
        """
        self._erase_listener = listener

    def _erased(self, session_id: str, count: int) -> None:
        if count:
            self.counters.sessions_deleted += 1
        if self._erase_listener is not None:
            self._erase_listener(session_id)

    def set_commit_listener(self, listener: Callable[[set[str]], None]) -> None:
        """Call ``listener(session_ids)`` on the loop after each commit that changed them."""
        self._writer.on_commit = listener

    @contextlib.asynccontextmanager
    async def _reader(self) -> Any:
        conn = await self._readers.get()
        try:
            with _map_sqlite_errors(self.path):
                yield conn
        finally:
            self._readers.put_nowait(conn)

    @contextlib.asynccontextmanager
    async def _bulk_reader(self) -> Any:
        """A connection for one step of a long read (scan chunk, export or history page)."""
        pool = self._bulk if self._has_bulk else self._readers
        conn = await pool.get()
        try:
            with _map_sqlite_errors(self.path):
                yield conn
        finally:
            pool.put_nowait(conn)

    # -- reads and Load

    async def load(
        self,
        session_id: str,
        workdir: str,
        trace_id: str,
        is_live: Callable[[str], bool] = lambda _r: False,
        *,
        repair: bool = True,
    ) -> LoadResult:
        """Get-or-create read: nothing is written for an unknown or paired session.

        Interrupted calls (open, not owned by a live run) are planned here and
        written by the writer: in one transaction, or, for more than
        :data:`~claw_sessiond.repair.REPAIR_CHUNK` calls, in paced chunks whose last one is written in
        the transaction that bounds what this Load returns (see below). A history that fits one
        page (``reads.PAGE_BYTES``) comes back in ``messages``; a larger one
        (or one just repaired) comes back as a ``cursor`` for
        :meth:`history_pages`, bounded by the last position the read (or
        the repair's transaction) saw.
        With ``repair=False`` nothing is ever written: interrupted calls stay open.
        """
        async with self._reader() as conn:
            try:
                await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
                cur = await conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE session_id = ?", (session_id,))
                row = _row(await cur.fetchone())
                if row is None:
                    return LoadResult(_meta(None, session_id, workdir), [])
                rows = await conn.execute_fetchall(
                    _OPEN_CALLS_SQL,
                    (session_id,),
                )
                # Up to --max-open-tool-calls rows: built in slices, yielding between them.
                calls: list[OpenCall] = []
                for i in range(0, len(rows), repairing.PLAN_SLICE):
                    if i:
                        await asyncio.sleep(0)
                    calls.extend(OpenCall(*r) for r in rows[i : i + repairing.PLAN_SLICE])
                to_repair, in_flight = repairing.plan_repair(calls, is_live)
                if not to_repair or not repair:
                    flights = repairing.flights(in_flight)
                    page = await reads.first_history_page(
                        conn, session_id, row.clear_position, row.last_position, message_from_payload
                    )
                    if page is not None:
                        return LoadResult(_meta(row, session_id, workdir), project(page), [], flights)
                    cursor = HistoryCursor(
                        session_id,
                        row.created_at,
                        row.clear_position,
                        row.last_position,
                        tuple(c.tool_call_id for c in in_flight),
                    )
                    return LoadResult(_meta(row, session_id, workdir), [], [], flights, cursor)
                assistants = await reads.rows_at_positions(conn, session_id, repairing.assistant_positions(to_repair))
            finally:
                await conn.execute("COMMIT")
        payloads = await repairing.plan_payloads(to_repair, assistants)
        # A large repair is written in chunks of REPAIR_CHUNK calls, one writer job each,
        # so that other requests' transactions run between them (the writer is never
        # held for more than one chunk). The last chunk is written by ``_repair_in_tx``
        # in the transaction that also reads what this Load returns, which re-plans if
        # anything changed meanwhile: the history returned is fully repaired. If the
        # caller goes away between chunks, the chunks written stand (each is whole, in
        # call order) and the next Load repairs the rest.
        earlier: list[Repair] = []
        start, last = 0, row.last_position
        plan: RepairPlan | None = None
        while len(to_repair) - start > repairing.REPAIR_CHUNK:
            chunk = RepairPlan(
                row.created_at,
                row.clear_position,
                last,
                tuple(to_repair[start : start + repairing.REPAIR_CHUNK]),
                payloads[start : start + repairing.REPAIR_CHUNK],
            )
            start += repairing.REPAIR_CHUNK
            began = time.perf_counter()
            done = await self._writer.submit(
                functools.partial(_repair_chunk_in_tx, session_id=session_id, trace_id=trace_id, chunk=chunk),
                session_id,
            )
            if done is None:  # cleared, erased or replaced meanwhile: plan again in the last transaction
                break
            earlier.extend(done[0])
            last = done[1]
            # Paced like an export: pause as long as the chunk took, so that a large repair
            # takes at most about half of the writer's (and the machine's) time.
            await asyncio.sleep((time.perf_counter() - began) * repairing.REPAIR_PAUSE_RATIO)
        else:
            plan = RepairPlan(row.created_at, row.clear_position, last, tuple(to_repair[start:]), payloads[start:])
        result = await self._writer.submit(
            lambda c: _repair_in_tx(c, session_id, workdir, trace_id, is_live, plan), session_id
        )
        if earlier:
            self.counters.repairs += len(earlier)
            result = dataclasses.replace(result, repairs=earlier + result.repairs)
        self.counters.repairs += len(result.repairs) - len(earlier)
        if result.repairs:
            _log.info("event=repaired session=%s calls=%d", session_id, len(result.repairs))
        return result

    def history_pages(self, cursor: HistoryCursor) -> AsyncGenerator[list[Message], None]:
        """The visible history of a :class:`LoadResult` cursor, page by page (see ``reads.py``)."""
        return reads.history_pages(self._bulk_reader, cursor, message_from_payload)

    async def history_after(
        self, session_id: str, after_position: int, limit: int
    ) -> tuple[list[tuple[int, Message | None]], bool]:
        """History events (position, message or None for a clear) after a position, in commit order.

        At most ``limit`` events and about ``reads.PAGE_BYTES`` payload bytes;
        the flag says whether more may follow.
        """
        rows, more = await reads.history_rows_after(self._reader, session_id, after_position, limit)
        return [(r[0], None if r[1] == "clear" else message_from_payload(*r)) for r in rows], more

    async def watch_batch(
        self, session_id: str, after_position: int, limit: int
    ) -> tuple[str | None, list[tuple[int, Message | None]], bool]:
        """The session's incarnation (None if it is not stored) and its history events after a position.

        Both are read in one snapshot, so the events belong to that incarnation. At most ``limit``
        events and about ``reads.PAGE_BYTES`` payload bytes; the flag says whether more may follow.
        """
        incarnation, rows, more = await reads.watch_rows_after(self._reader, session_id, after_position, limit)
        return incarnation, [(r[0], None if r[1] == "clear" else message_from_payload(*r)) for r in rows], more

    async def list_sessions(
        self, id_contains: str, limit: int, after: tuple[str, str] | None = None
    ) -> list[SessionSummary]:
        """Sessions whose id contains ``id_contains``, most recently updated first.

        ``after`` is the (updated_at, session_id) of the last row of the previous page (keyset
        paging). Scans in chunks (``reads.SCAN_ROWS``), so a filter that matches nothing does
        not hold a read connection for the whole table.
        """
        pattern = "%" + id_contains.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"

        def summary(values: Sequence[Any]) -> SessionSummary:
            r = _row(values)
            assert r is not None
            return SessionSummary(r.session_id, r.workdir, r.updated_at, r.message_count, r.last_position, r.usage)

        return await reads.scan_sessions(self._bulk_reader, pattern, limit, summary, _SESSION_COLS, after)

    async def count_sessions(self, id_contains: str) -> int:
        """How many sessions :meth:`list_sessions` would list over all its pages.

        One statement on the bulk read connection, so short reads never queue behind it.
        """
        pattern = "%" + id_contains.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        async with self._bulk_reader() as conn:
            rows = await conn.execute_fetchall(
                "SELECT count(*) FROM sessions WHERE session_id LIKE ? ESCAPE '\\'", (pattern,)
            )
        return int(next(iter(rows))[0])

    async def usage_by_model(self, session_id: str) -> tuple[Usage, list[ModelUsage]]:
        """Session totals and the per-model breakdown.

        Raises:
            SessionNotFoundError: the session is not stored.
        """
        async with self._reader() as conn:
            cur = await conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE session_id = ?", (session_id,))
            row = _row(await cur.fetchone())
            if row is None:
                raise SessionNotFoundError(f"session {session_id!r} is not stored", session_id=session_id)
            rows = await conn.execute_fetchall(
                "SELECT model, pricing_version, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
                "cost_micros, currency FROM usage_by_model WHERE session_id = ? ORDER BY model, pricing_version",
                (session_id,),
            )
        return row.usage, [ModelUsage(r[0], r[1], Usage(*r[2:8])) for r in rows]

    async def events(self, session_id: str | None, after_event_id: int = 0, limit: int = 1000) -> list[Event]:
        """Events of one session (or all) in event-id order, for export."""
        sql = "SELECT event_id, session_id, position, type, trace_id, ts, schema_version, payload FROM events "
        params: tuple[Any, ...]
        if session_id is None:
            sql += "WHERE event_id > ? ORDER BY event_id LIMIT ?"
            params = (after_event_id, limit)
        else:
            sql += "WHERE session_id = ? AND event_id > ? ORDER BY event_id LIMIT ?"
            params = (session_id, after_event_id, limit)
        async with self._reader() as conn:
            rows = await conn.execute_fetchall(sql, params)
        return decode_events(rows)

    async def session_meta(self, session_id: str) -> SessionMeta:
        """Stored metadata of a session (``stored`` False if it has no row)."""
        async with self._reader() as conn:
            cur = await conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE session_id = ?", (session_id,))
            return _meta(_row(await cur.fetchone()), session_id, None)

    async def figures(self) -> dict[str, int]:
        """Sessions, events, database and WAL bytes, schema version."""
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

        return {
            "sessions": int(sessions),
            "events": int(events),
            "database_bytes": size(self.path),
            "wal_bytes": size(Path(f"{self.path}-wal")),
            "schema_version": int(version),
            "request_records": int(request_records),
        }

    # -- writes

    async def append(self, job: AppendJob) -> AppendResult:
        """Append validated messages, all or none.

        Raises:
            SequenceConflictError, ToolCallStateError, InvalidRequestError, StorageError.
        """
        self._touch(job.session_id)
        limit = self.max_open_tool_calls
        result = await self._writer.submit(lambda c: _append_in_tx(c, job, limit), job.session_id)
        if not result.replayed:
            self.counters.appends += 1
            self.counters.messages_written += len(job.messages)
        return result

    async def record_usage(
        self, session_id: str, delta: UsageDelta, *, request_id: str, workdir: str, trace_id: str
    ) -> UsageResult:
        """Add usage to the session's totals (creating the session if needed)."""
        fp = fingerprint("usage", session_id, repr(delta))
        self._touch(session_id)
        return await self._writer.submit(
            lambda c: _usage_in_tx(c, session_id, delta, request_id, fp, workdir, trace_id)
        )

    async def clear(
        self, session_id: str, *, request_id: str, expected_last_position: int, workdir: str, trace_id: str
    ) -> ClearResult:
        """Record a clear: the visible history starts after it; usage is kept."""
        fp = fingerprint("clear", session_id, expected_last_position)
        self._touch(session_id)
        return await self._writer.submit(
            lambda c: _clear_in_tx(c, session_id, request_id, fp, expected_last_position, workdir, trace_id),
            session_id,
        )

    async def record_event(
        self, session_id: str, event_type: str, payload: str, *, request_id: str, trace_id: str
    ) -> EventResult:
        """SQLiteStorage an audit event (permission denial, error)."""
        fp = fingerprint("event", session_id, event_type, payload)
        self._touch(session_id)
        return await self._writer.submit(
            lambda c: _record_event_in_tx(c, session_id, event_type, payload, request_id, fp, trace_id)
        )

    async def delete(self, session_id: str) -> DeleteResult:
        """Erase a session and checkpoint, so its bytes leave both files.

        The checkpoint does not wait for readers: if one holds an older
        snapshot, the result says ``erasure_pending`` and the erasure
        finishes in the background (``erasure.run``).
        """
        outcome, hook = _checkpoint_outcome()
        count = await self._writer.submit(lambda c: _delete_in_tx(c, session_id), after_commit=hook)
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
        return await asyncio.to_thread(_checkpoint_on_own_connection, self.path)

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

    def _touch(self, session_id: str) -> None:
        """Remember that ``session_id`` is written now (before the write is queued, so retention sees it)."""
        self._written[session_id] = time.monotonic()

    def written_since_start(self, session_id: str) -> bool:
        """True if the session was written since the daemon started (and not forgotten since)."""
        return session_id in self._written

    def forget_written_before(self, monotonic_s: float) -> int:
        """Forget sessions last written before ``monotonic_s`` (``time.monotonic``); returns how many."""
        old = [sid for sid, at in self._written.items() if at < monotonic_s]
        for sid in old:
            del self._written[sid]
        return len(old)

    async def delete_if_not_updated_since(self, session_id: str, cutoff_rfc3339: str) -> int:
        """Delete the whole session only if it is still older than the cutoff (retention).

        A session written since the daemon started (see :meth:`written_since_start`)
        is never deleted here, whatever its stored time says: that time is
        wall-clock, and the wall clock may have been wrong or stepped since.
        The check runs in the writer, after every write queued before it.
        """

        def run(conn: sqlite3.Connection) -> int:
            if session_id in self._written:
                return 0
            row = _session_in_tx(conn, session_id)
            if row is None or row.updated_at >= cutoff_rfc3339:
                return 0
            return _delete_in_tx(conn, session_id)

        outcome, hook = _checkpoint_outcome()
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
        outcome, hook = _checkpoint_outcome()
        written = await self._writer.submit(
            lambda c: _import_in_tx(c, session, mode, self.max_open_tool_calls),
            session.header.session_id,
            after_commit=hook if mode == "replace" else None,
        )
        if mode == "replace":
            if self._erase_listener is not None:
                self._erase_listener(session.header.session_id)
            await self._erasure_outcome(session.header.session_id, 1, outcome)
        return written

    async def export_session(self, session_id: str) -> tuple[ExportHeader, list[Event]] | None:
        """One session's header and every event, read in one snapshot (None if it is not stored)."""
        async with self._reader() as conn:
            await conn.execute("BEGIN")
            try:
                cur = await conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE session_id = ?", (session_id,))
                row = _row(await cur.fetchone())
                if row is None:
                    return None
                rows = await conn.execute_fetchall(
                    "SELECT event_id, session_id, position, type, trace_id, ts, schema_version, payload FROM events "
                    "WHERE session_id = ? ORDER BY event_id",
                    (session_id,),
                )
            finally:
                await conn.execute("COMMIT")
        events = decode_events(rows)
        return ExportHeader(session_id, row.workdir, row.created_at, row.updated_at, len(events)), events

    async def export_start(self, session_id: str) -> tuple[ExportHeader, HistoryCursor, int] | None:
        """A session's export header, a cursor and the last event id to export (None if not stored).

        The header's event count and the id bound are read in one snapshot;
        :meth:`export_pages` then reads the events up to that id page by page.
        """
        async with self._reader() as conn:
            try:
                await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
                cur = await conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE session_id = ?", (session_id,))
                row = _row(await cur.fetchone())
                if row is None:
                    return None
                found = await conn.execute_fetchall(
                    "SELECT count(*), coalesce(max(event_id), 0) FROM events WHERE session_id = ?", (session_id,)
                )
            finally:
                await conn.execute("COMMIT")
        count, max_id = (int(v) for v in next(iter(found)))
        header = ExportHeader(session_id, row.workdir, row.created_at, row.updated_at, count)
        return header, HistoryCursor(session_id, row.created_at, row.clear_position, row.last_position), max_id

    def export_pages(self, cursor: HistoryCursor, max_event_id: int) -> AsyncGenerator[list[Any], None]:
        """Raw event rows of an export, page by page (decode with ``reads.decode_events``)."""
        return reads.export_pages(self._bulk_reader, cursor, max_event_id)

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

    async def session_ids(self) -> list[str]:
        """Every stored session id, oldest first (the order of a full export)."""
        async with self._reader() as conn:
            rows = await conn.execute_fetchall("SELECT session_id FROM sessions ORDER BY created_at, session_id")
        return [r[0] for r in rows]

    # -- cross-session reads for people (queries.py)

    async def search(self, match: str, filters: SearchFilter, limit: int) -> tuple[list[SearchRow], bool]:
        """Full-text search on a bulk read connection, bounded in time (see ``queries.search``).

        Raises:
            InvalidRequestError: malformed FTS5 query, or the search took too long.
        """
        async with self._bulk_reader() as conn:
            return await queries.search(conn, match, filters, limit)

    async def usage_report(self, since: str, until: str, *, by_session: bool) -> tuple[list[UsageRow], bool]:
        """Usage events grouped by day, model, pricing version and currency (see ``queries.usage_report``)."""
        async with self._bulk_reader() as conn:
            return await queries.usage_report(conn, since, until, by_session=by_session)

    async def follow_start(self, last: int) -> int:
        """The event id a follow-all starts after (see ``queries.follow_start``)."""
        async with self._reader() as conn:
            return await queries.follow_start(conn, last)

    async def follow_batch(
        self, after_event_id: int, limit: int
    ) -> tuple[list[tuple[int, str, int, Message | None]], bool]:
        """History events of every session after an event id.

        Returns ``(event_id, session_id, position, message or None for a clear)`` rows and True if more may follow.
        """
        async with self._reader() as conn:
            rows, more = await queries.follow_rows_after(conn, after_event_id, limit)
        out = [
            (
                int(r[0]),
                str(r[1]),
                int(r[2]),
                None if r[3] == "clear" else message_from_payload(int(r[2]), r[3], r[4], r[5], r[6]),
            )
            for r in rows
        ]
        return out, more
