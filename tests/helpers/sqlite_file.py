"""The SQLite files of a workspace themselves: for tests/storage/sqlite/ and tests.helpers.inspect only.

Everything here reads the database only through read-only connections, so
a helper can never be the thing that changed the file; the exceptions say so in their
names (:func:`install_old_database`, :func:`grow_while_stopped`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

#: Databases written by earlier versions (tests/storage/sqlite/fixtures/make_fixtures.py).
OLD_DATABASES = Path(__file__).resolve().parents[1] / "storage" / "sqlite" / "fixtures"


def db_path(workspace: Path) -> Path:
    """``<workspace>/.claw/sessions.db``."""
    return workspace / ".claw" / "sessions.db"


def sha256_of(path: Path) -> str | None:
    """Hex digest of a file's bytes, or None if it does not exist."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def file_digests(db: Path) -> dict[str, str | None]:
    """Digests of the database and its WAL (None for a missing file)."""
    return {"db": sha256_of(db), "wal": sha256_of(Path(f"{db}-wal"))}


def file_bytes(workspace: Path) -> bytes:
    """The bytes of the workspace's database followed by those of its WAL (if there is one)."""
    db = db_path(workspace)
    wal = Path(f"{db}-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


@contextlib.contextmanager
def read_only(db: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection (``mode=ro``) that is always closed."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        yield conn
    finally:
        conn.close()


def dump(db: Path) -> list[str]:
    """The whole database as SQL text (``iterdump``) through a read-only connection."""
    with read_only(db) as conn:
        return list(conn.iterdump())


def integrity(db: Path) -> list[str]:
    """``PRAGMA integrity_check`` rows (``["ok"]`` when healthy)."""
    with read_only(db) as conn:
        return [str(r[0]) for r in conn.execute("PRAGMA integrity_check").fetchall()]


def install_old_database(workspace: Path, name: str) -> None:
    """Put a database an earlier version wrote into ``workspace`` (as its daemon left it: .claw/ 0700, file 0600)."""
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700, exist_ok=True)
    target = claw / "sessions.db"
    shutil.copyfile(OLD_DATABASES / name, target)
    os.chmod(target, 0o600)


def grow_while_stopped(db: Path, template: str, session_ids: Iterable[str], events_each: int) -> None:
    """Add a session per id, each a copy of session ``template``'s row with ``events_each`` copies of its first
    event (positions 1 to ``events_each``), to a database no daemon has open, in one transaction.

    How a test builds a database of tens of thousands of sessions in seconds where the daemon's own writer
    takes a minute; for tests whose subject is reading such a database, not building it. The daemon must be
    stopped (it holds no lock then, and its caches would not know the rows).
    """
    conn = sqlite3.connect(db)
    try:
        with conn:
            row = conn.execute("SELECT * FROM sessions WHERE session_id = ?", (template,)).fetchone()
            cols = [r[1] for r in conn.execute("PRAGMA table_info(sessions)")]
            event = conn.execute(
                "SELECT * FROM events WHERE session_id = ? ORDER BY event_id LIMIT 1", (template,)
            ).fetchone()
            event_cols = [r[1] for r in conn.execute("PRAGMA table_info(events)")]
            sid = cols.index("session_id")
            eid, esid, epos = (event_cols.index(c) for c in ("event_id", "session_id", "position"))
            sessions, events = [], []
            for session_id in session_ids:
                copy = list(row)
                copy[sid] = session_id
                sessions.append(copy)
                for position in range(1, events_each + 1):
                    e = list(event)
                    e[eid], e[esid], e[epos] = None, session_id, position
                    events.append(e)
            conn.executemany(f"INSERT INTO sessions VALUES ({','.join('?' * len(cols))})", sessions)
            conn.executemany(f"INSERT INTO events VALUES ({','.join('?' * len(event_cols))})", events)
    finally:
        conn.close()
