"""The erasure's checkpoint: folding the WAL into the database once an erasing write commits.

The writes themselves are sequences in ``storage/`` run over :class:`~.port.SQLitePort`
(``engine.py``: a writer job each); the engine runs :func:`checkpoint` on the writer's connection
after the commit of an erasing write (Delete, an erasing Clear, retention, an import that
replaces), and :func:`checkpoint_on_own_connection` for the retry.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from .errors import map_sqlite_errors

__all__ = ["checkpoint", "checkpoint_on_own_connection"]

_log = logging.getLogger("claw_sessiond.store")


def checkpoint(conn: sqlite3.Connection) -> bool:
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


def checkpoint_on_own_connection(path: Path) -> bool:
    """:func:`checkpoint` from a short-lived connection of its own (the erasure retry; never the writer's)."""
    with map_sqlite_errors(path):
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            return checkpoint(conn)
        finally:
            conn.close()
