"""The database file before and at open: header, quick_check, WAL identity, write probe, PRAGMAs, privacy.

A file that is not a healthy claw-sessiond database is refused without being
written (:func:`check_database_file`). The write connection is checked to
have taken ``journal_mode=WAL`` and ``synchronous=FULL`` (read back, not
assumed), with ``secure_delete`` on (right to erasure). The database's
random identity, kept in ``sqlite_sequence``, lets a WAL copied from another
database be detected before SQLite replays it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, cast

from ...errors import CorruptDatabaseError, StorageUnavailableError
from . import schema

__all__ = [
    "SQLITE_HEADER",
    "check_database_file",
    "checked_database",
    "ensure_identity",
    "make_private",
    "open_write_connection",
    "probe_writable",
    "space_hint",
]

SQLITE_HEADER: Final = b"SQLite format 3\x00"

# Bytes and None are bound as they are, through adapters that return the value itself: without an
# adapter of its own, ``sqlite3`` asks the value's type for an adaptation protocol at every bind (on
# Python 3.11 an AttributeError formatted and dropped per value), and an Append binds three or four
# such values per entry (its item, client id, format and encoded reply form; port.py leaves out
# the columns no entry of an append sets).
sqlite3.register_adapter(bytes, bytes.__bytes__)
sqlite3.register_adapter(type(None), cast("Callable[[None], None]", {}.get))


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
            raise CorruptDatabaseError(f"{path}: database is missing or empty but {wal} holds data; refusing to start")
        return
    with open(path, "rb") as fh:
        header = fh.read(100)
    if not header.startswith(SQLITE_HEADER):
        raise CorruptDatabaseError(f"{path}: not an SQLite database (bad header)")
    wal = Path(f"{path}-wal")
    has_wal = wal.exists() and wal.stat().st_size > 0
    # immutable=1: the main file alone, no WAL, no -shm, no locks (we hold the workspace lock).
    file_only = f"file:{path}?mode=ro&immutable=1"
    with checked_database(path, f"file:{path}?mode=ro" if has_wal else file_only, "quick_check") as conn:
        if has_wal:
            seen = _identity(conn)
            stored = _identity_of_main_file(file_only)
            if stored is not None and stored != seen:
                raise CorruptDatabaseError(
                    f"{wal}: this WAL file belongs to another database ({seen or 'unknown'}), not to {path} "
                    f"({stored}); refusing to replay it. Move the WAL file away to start with {path} as it is"
                )


@contextlib.contextmanager
def checked_database(path: Path, uri: str, check: str, *, ours: bool = False) -> Iterator[sqlite3.Connection]:
    """A connection to the database at ``path``, opened by ``uri``, that passed ``PRAGMA check`` (``quick_check``
    or ``integrity_check``), with ``ours`` this application's ``application_id``, and the schema version (ours,
    not newer than this code); closed after the block.

    Raises:
        CorruptDatabaseError: naming the file and what is wrong (an SQLite error in the block too).
    """
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise CorruptDatabaseError(f"{path}: cannot open: {exc}") from exc
    try:
        rows = [str(r[0]) for r in conn.execute(f"PRAGMA {check}").fetchall()]
        if rows != ["ok"]:
            raise CorruptDatabaseError(f"{path}: {check} failed: {'; '.join(rows[:3])}")
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        if ours and app_id != schema.APPLICATION_ID:
            raise CorruptDatabaseError(f"{path}: not a claw-sessiond database (application_id {app_id:#x})")
        try:
            schema.pending(conn)
        except CorruptDatabaseError as exc:
            raise CorruptDatabaseError(f"{path}: {exc.message}") from exc
        yield conn
    except sqlite3.Error as exc:
        raise CorruptDatabaseError(f"{path}: {getattr(exc, 'sqlite_errorname', '') or 'error'}: {exc}") from exc
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


def ensure_identity(conn: sqlite3.Connection) -> bool:
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


def space_hint(path: Path) -> str:
    """A hint for start-up errors on a full file system (SQLite reports a full -shm as an I/O error)."""
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return ""
    return f" (the file system holding {path.parent} is full: {free} bytes free)" if free < 64 * 1024 else ""


def probe_writable(conn: sqlite3.Connection) -> None:
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


def open_write_connection(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
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


def make_private(path: Path) -> None:
    """chmod 0600 the database and its ``-wal`` and ``-shm`` (those that exist).

    Raises:
        StorageUnavailableError: a file cannot be made private.
    """
    try:
        for perm_path in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            with contextlib.suppress(FileNotFoundError):
                os.chmod(perm_path, 0o600)
    except OSError as exc:
        raise StorageUnavailableError(f"{exc.filename}: cannot make it private (chmod 0600): {exc.strerror}") from exc
