"""Copies of the database: the online backup (daemon running or not), and checking a copy read-only.

The source is only ever opened read-only, so a live daemon's writer is never
blocked and nothing of the source changes. A copy is a self-contained file
(rollback journal, no ``-wal``), fsynced, and its figures are read from the
copy itself.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from ...errors import CorruptDatabaseError
from ..base import CopyFigures
from .errors import map_sqlite_errors
from .files import SQLITE_HEADER, checked_database

__all__ = ["check_copy", "copy_database", "create_private_file", "remove_stale_backups"]


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


def remove_stale_backups(folder: Path) -> None:
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
    with map_sqlite_errors(source):
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
        raise CorruptDatabaseError(f"{path}: cannot read: {exc.strerror}") from exc
    if not header.startswith(SQLITE_HEADER):
        raise CorruptDatabaseError(f"{path}: not an SQLite database (bad header)")
    with checked_database(path, f"file:{path}?mode=ro", "integrity_check", ours=True) as conn:
        return _figures_of(conn, path)
