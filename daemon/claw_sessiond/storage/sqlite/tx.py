"""The SQLite side of the writes not yet written once over the port, and the erasure's checkpoint.

Append, RecordUsage, Clear, RecordEvent and Delete are sequences in ``storage/writes.py`` run
over :class:`~.port.SQLitePort` (:func:`~.port.write_tx`); the ``*_in_tx`` names here run them, or
one port verb, for the transaction code that still calls them (edits, sessions, import, repair).
A function that needs the caller's transaction says so in its name: only the writer opens
transactions.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

from ...model import AppendJob, AppendResult, ClearResult
from ...rules import StoredRequest
from .. import writes
from ..port import SESSION_COLS, SessionRow, new_incarnation, session_meta, session_row
from .errors import map_sqlite_errors
from .port import SQLitePort, erase_search_index_in_tx, write_tx

__all__ = [
    "SESSION_COLS",
    "SessionRow",
    "append_in_tx",
    "checkpoint_on_own_connection",
    "checkpoint_outcome",
    "clear_in_tx",
    "delete_in_tx",
    "erase_search_index_in_tx",
    "new_incarnation",
    "open_call_count_in_tx",
    "session_in_tx",
    "session_meta",
    "session_row",
]

_log = logging.getLogger("claw_sessiond.store")

_erase_search_index_in_tx = erase_search_index_in_tx  # the name the edit transaction imports


def session_in_tx(conn: sqlite3.Connection, session_id: str) -> SessionRow | None:
    """The session's row, or None if it is not stored (caller's transaction)."""
    return SQLitePort(conn).session_row(session_id)[0]


def _stored_request_in_tx(conn: sqlite3.Connection, session_id: str, request_id: str) -> StoredRequest | None:
    """The record of an earlier request with this id on this session, or None (also for no id)."""
    return SQLitePort(conn).stored_request(session_id, request_id) if request_id else None


def open_call_count_in_tx(conn: sqlite3.Connection, session_id: str) -> int:
    return SQLitePort(conn).open_call_count(session_id)


def append_in_tx(conn: sqlite3.Connection, job: AppendJob, max_open_calls: int = 0) -> AppendResult:
    """Append ``job`` in the caller's transaction (``writes.append``; ``max_open_calls``: 0 for no limit)."""
    return write_tx(writes.append, job, max_open_calls)(conn)


def clear_in_tx(
    conn: sqlite3.Connection,
    session_id: str,
    request_id: str,
    fp: str,
    expected: int,
    workdir: str,
    trace_id: str,
    erased: int | None = None,
) -> ClearResult:
    """Write a clear (``writes.clear``; ``erased``: the events an erasing clear removed just before)."""
    return write_tx(writes.clear, session_id, request_id, fp, expected, workdir, trace_id, erased)(conn)


def delete_in_tx(conn: sqlite3.Connection, session_id: str) -> int:
    """Delete every row of the session (``writes.delete``); returns how many events it had."""
    return write_tx(writes.delete, session_id)(conn)


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


def checkpoint_outcome() -> tuple[list[bool], Callable[[sqlite3.Connection], None]]:
    """An after-commit hook running :func:`_checkpoint`, and the list its result lands in."""
    outcome: list[bool] = []

    def hook(conn: sqlite3.Connection) -> None:
        outcome.append(_checkpoint(conn))

    return outcome, hook


def checkpoint_on_own_connection(path: Path) -> bool:
    """:func:`_checkpoint` from a short-lived connection of its own (the erasure retry; never the writer's)."""
    with map_sqlite_errors(path):
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            return _checkpoint(conn)
        finally:
            conn.close()
