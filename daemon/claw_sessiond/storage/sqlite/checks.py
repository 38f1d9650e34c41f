"""Looking at a database file from outside the daemon, read-only: ``doctor``'s checks, and what a file holds.

Both open the file with ``mode=ro`` connections, which can never write: safe
beside a live daemon, and under the workspace lock with none running.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ...errors import CorruptDatabaseError, SessiondError
from ..base import StorageCheck
from . import schema
from .files import SQLITE_HEADER, check_database_file

__all__ = ["check_database", "stored_sessions"]


def check_database(db: Path) -> list[StorageCheck]:
    """Header, ``PRAGMA quick_check`` and schema version of the database at ``db``, read-only.

    Checks are named ``database`` (the file is missing, not SQLite, or cannot
    be opened), ``quick_check`` and ``schema_version`` (``warn`` when the
    daemon will migrate it at start).
    """
    if not db.exists():
        return [StorageCheck("database", "warn", f"{db} does not exist yet (created at the daemon's first start)")]
    with open(db, "rb") as fh:
        header = fh.read(16)
    if db.stat().st_size and header != SQLITE_HEADER:
        return [StorageCheck("database", "fail", f"{db}: not an SQLite database (bad header)")]
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        return [StorageCheck("database", "fail", f"{db}: cannot open read-only: {exc}")]
    checks: list[StorageCheck] = []
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
        if rows == ["ok"]:
            checks.append(StorageCheck("quick_check", "ok", "ok"))
        else:
            checks.append(StorageCheck("quick_check", "fail", "; ".join(rows[:5])))
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        try:
            pending = schema.pending(conn)
        except CorruptDatabaseError as exc:
            checks.append(StorageCheck("schema_version", "fail", f"{version}: {exc.message}"))
        else:
            if pending:
                names = ", ".join(m.name for m in pending)
                checks.append(
                    StorageCheck("schema_version", "warn", f"{version}; the daemon will migrate at start: {names}")
                )
            else:
                checks.append(StorageCheck("schema_version", "ok", str(version)))
    except sqlite3.Error as exc:
        checks.append(StorageCheck("quick_check", "fail", f"{getattr(exc, 'sqlite_errorname', '') or 'error'}: {exc}"))
    finally:
        conn.close()
    return checks


def stored_sessions(db: Path) -> int | None:
    """Sessions stored in the database at ``db`` (0: none, or no file; None: it cannot be read).

    A missing or empty file beside a WAL that holds data cannot be read (None):
    that WAL may hold sessions.
    """
    wal = Path(f"{db}-wal")
    if not db.exists() or db.stat().st_size == 0:
        return None if wal.exists() and wal.stat().st_size > 0 else 0
    try:
        check_database_file(db)
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
        try:
            found = conn.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sessions'").fetchone()
            return int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0]) if found else 0
        finally:
            conn.close()
    except (SessiondError, sqlite3.Error):
        return None
