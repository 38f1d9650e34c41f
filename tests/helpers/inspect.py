"""What a daemon stored, read from its storage without asking the daemon, in backend-neutral terms.

Tests outside a backend's own folder (``tests/storage/<backend>/``) inspect storage only through
:func:`stored`, never through the backend's files or connections::

    s = stored(workspace)           # or stored(daemon)
    [e.type for e in s.events("demo")], s.sessions()[0].workdir, s.request_records()

Every call reads afresh (nothing is held open between calls, so a test never keeps a reader that
the daemon would have to wait for) and changes nothing; the one writer, :func:`grow_while_stopped`,
says so in its name. On SQLite: a read-only connection to
``.claw/sessions.db``; when the running test is on PostgreSQL (``tests/helpers/backend.py``) the
workspace's PostgreSQL database (``inspect_postgres.py``). :func:`stored` picks one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tests.helpers import sqlite_file
from tests.helpers.backend import database_url_for, on_postgres
from tests.helpers.daemon import DaemonProcess
from tests.helpers.sqlite_file import db_path, dump, integrity, read_only


@dataclass(frozen=True)
class StoredEvent:
    """One event of the log, as stored."""

    event_id: int  # the log's total order
    session_id: str
    position: int | None  # history events have one, usage and audit events none
    type: str
    payload: Any  # the parsed JSON payload
    format: str = ""  # an entry's item: its format tag ...
    item: bytes = b""  # ... and its bytes
    hidden_by: int | None = None  # the position of the edit that took it out of the projection


@dataclass(frozen=True)
class StoredSession:
    """One stored session: its metadata and running totals."""

    session_id: str
    workdir: str
    created_at: str
    updated_at: str
    last_position: int
    clear_position: int
    message_count: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_micros: int
    currency: str


class Stored(Protocol):
    """What the tests may ask of any backend about what it holds."""

    def sessions(self) -> list[StoredSession]:
        """Every stored session, by session id."""
        ...

    def events(self, session_id: str | None = None) -> list[StoredEvent]:
        """The events of one session (or of all), in log order."""
        ...

    def request_records(self) -> int:
        """How many request-id (idempotency) records are kept."""
        ...

    def snapshot(self) -> object:
        """A value equal to another snapshot exactly when nothing stored differs between the two."""
        ...

    def write_ahead_log_empty(self) -> bool:
        """Nothing is left in a write-ahead log beside the store (true for a backend without one)."""
        ...

    def integrity_problems(self) -> list[str]:
        """What the backend's own consistency check finds wrong (nothing: an empty list)."""
        ...


class SqliteStored:
    """:class:`Stored` of a workspace's SQLite database, through read-only connections."""

    _SESSION_COLUMNS = ", ".join(StoredSession.__dataclass_fields__)

    def __init__(self, db: Path) -> None:
        self.db = db

    def sessions(self) -> list[StoredSession]:
        with read_only(self.db) as conn:
            rows = conn.execute(f"SELECT {self._SESSION_COLUMNS} FROM sessions ORDER BY session_id").fetchall()
        return [StoredSession(*row) for row in rows]

    def events(self, session_id: str | None = None) -> list[StoredEvent]:
        sql = (
            "SELECT event_id, session_id, position, type, payload, coalesce(format, ''), coalesce(item, x''), "
            "hidden_by FROM events"
        )
        where, args = ("", ()) if session_id is None else (" WHERE session_id = ?", (session_id,))
        with read_only(self.db) as conn:
            rows = conn.execute(f"{sql}{where} ORDER BY event_id", args).fetchall()
        return [StoredEvent(e, s, p, t, json.loads(payload), f, bytes(i), h) for e, s, p, t, payload, f, i, h in rows]

    def request_records(self) -> int:
        with read_only(self.db) as conn:
            return int(conn.execute("SELECT count(*) FROM requests").fetchone()[0])

    def snapshot(self) -> object:
        return dump(self.db)  # the whole database as SQL text

    def write_ahead_log_empty(self) -> bool:
        wal = Path(f"{self.db}-wal")  # emptied by the checkpoint (TRUNCATE) at a graceful stop
        return not wal.exists() or wal.stat().st_size == 0

    def integrity_problems(self) -> list[str]:
        found = integrity(self.db)  # PRAGMA integrity_check: ["ok"] when healthy
        return [] if found == ["ok"] else found


def stored(where: Path | DaemonProcess) -> Stored:
    """What is stored for a workspace (or for a daemon's workspace)."""
    workspace = where.workspace if isinstance(where, DaemonProcess) else where
    if on_postgres():  # the running test is on PostgreSQL: the workspace's database (tests/helpers/backend.py)
        from tests.helpers.inspect_postgres import PostgresStored

        return PostgresStored(database_url_for(workspace))
    return SqliteStored(db_path(workspace))


def grow_while_stopped(daemon: DaemonProcess, template: str, session_ids: Iterable[str], events_each: int) -> None:
    """Add copies of session ``template`` to a stopped daemon's SQLite store
    (:func:`tests.helpers.sqlite_file.grow_while_stopped`): for a test that reads many sessions, not one
    that stores them. A PostgreSQL test stores its data through the daemon.
    """
    assert daemon.proc is None or daemon.proc.poll() is not None, "stop the daemon first"
    if on_postgres():
        raise NotImplementedError("grow_while_stopped copies SQLite rows; on PostgreSQL store through the daemon")
    sqlite_file.grow_while_stopped(db_path(daemon.workspace), template, session_ids, events_each)
