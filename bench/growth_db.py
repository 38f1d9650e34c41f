"""Big databases for the growth section, written offline instead of through 100,000 RPCs.

The daemon creates the schema itself (it is started once on the empty
workspace and stopped); then the rows are written with ``sqlite3`` straight
into its tables, in the form the daemon writes them (the same columns, the
same JSON payload, RFC 3339 timestamps with microseconds), in one
transaction: the FTS5 triggers the daemon's schema installs index every
message as it would. The growth section then checks through the daemon that
it reads them back (count, Load, search hits) before timing anything.

Nothing here is used by the daemon; these files exist only for the benchmark.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import secrets
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from bench.procs import Daemon
from bench.worker import content

__all__ = [
    "CACHE",
    "COMMON",
    "NEEDLE",
    "NEEDLE_HITS",
    "cached_workspace",
    "fill_to_bytes",
    "new_workspace",
    "write_sessions",
]

#: Built databases are kept here between runs (``$CLAW_BENCH_CACHE``; delete it to rebuild).
CACHE = Path(os.environ.get("CLAW_BENCH_CACHE") or Path.home() / ".cache" / "claw-sessiond-bench")

#: A word stored in exactly :data:`NEEDLE_HITS` messages at every size (a selective search).
NEEDLE = "zanzibar"
NEEDLE_HITS = 10
#: A word stored in every session's first message (a search that matches everything).
COMMON = "alpha"

_BASE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _ts(offset_us: int) -> str:
    return (_BASE + dt.timedelta(microseconds=offset_us)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_workspace(path: Path) -> Path:
    """A workspace whose empty database the daemon created (schema migrated); returns the database path."""
    path.mkdir(parents=True, exist_ok=True)
    Daemon(path).close()
    return path / ".claw" / "sessions.db"


def _source_key() -> str:
    """Changes whenever this builder or the daemon's schema changes (a cached file is then rebuilt)."""
    from claw_sessiond.storage.sqlite import schema

    text = Path(__file__).read_bytes() + Path(schema.__file__).read_bytes()
    return f"v{schema.SCHEMA_VERSION}-{hashlib.sha256(text).hexdigest()[:10]}"


def cached_workspace(ws: Path, name: str, build: Callable[[Path], object]) -> bool:
    """Make ``ws`` a workspace holding the database ``build`` writes, built once and then copied from :data:`CACHE`.

    ``build`` gets the path of a database the daemon just created and fills it.
    Returns True if the database came from the cache.
    """
    cached = CACHE / f"{name}-{_source_key()}.db"
    hit = cached.exists()
    if not hit:
        CACHE.mkdir(parents=True, exist_ok=True)
        scratch = CACHE / f"build-{name}-{os.getpid()}"
        shutil.rmtree(scratch, ignore_errors=True)
        db = new_workspace(scratch)
        build(db)  # ends with a TRUNCATE checkpoint: the main file holds everything
        os.replace(db, cached)
        shutil.rmtree(scratch, ignore_errors=True)
    (ws / ".claw").mkdir(parents=True, mode=0o700)
    shutil.copyfile(cached, ws / ".claw" / "sessions.db")
    return hit


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # a bench fixture: the daemon is down and the file is rebuilt if lost
    return conn


def _session_row(sid: str, at: str, messages: int) -> tuple[object, ...]:
    return (sid, "", at, at, messages, messages, secrets.token_hex(8))


_SESSION_SQL = (
    "INSERT INTO sessions(session_id, workdir, created_at, updated_at, last_position, message_count, incarnation) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_EVENT_SQL = (
    "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) VALUES (?, ?, ?, ?, ?, 1, ?)"
)


def insert_events(conn: sqlite3.Connection, rows: Iterable[tuple[object, ...]]) -> None:
    """Insert history events and index their messages for Search, as the daemon's writes do (schema v6+)."""
    from claw_sessiond.storage.sqlite.port import index_messages_after

    (last,) = conn.execute("SELECT coalesce(max(event_id), 0) FROM events").fetchone()
    conn.executemany(_EVENT_SQL, rows)
    index_messages_after(conn, last)


def write_sessions(db: Path, n: int) -> None:
    """``n`` sessions of two messages each (user, assistant), each updated at its own time.

    Session ``i``'s user message holds :data:`COMMON`; :data:`NEEDLE_HITS` of them,
    spread over the whole range, also hold :data:`NEEDLE`.
    """
    every = max(1, n // NEEDLE_HITS)
    conn = _connect(db)
    try:
        conn.execute("BEGIN")
        sessions = []
        events = []
        for i in range(n):
            sid = f"g{i:07d}"
            at = _ts(i * 1000)
            trace = secrets.token_hex(16)
            word = f" {NEEDLE}" if i % every == 0 and i // every < NEEDLE_HITS else ""
            user = json.dumps({"role": "user", "content": f"question {i} {COMMON}{word} about the build"})
            reply = json.dumps({"role": "assistant", "content": f"answer {i} beta gamma"})
            sessions.append(_session_row(sid, at, 2))
            events.append((sid, 1, "user_message", trace, at, user))
            events.append((sid, 2, "assistant_message", trace, at, reply))
            if len(events) >= 20_000:
                conn.executemany(_SESSION_SQL, sessions)
                insert_events(conn, events)
                sessions, events = [], []
        conn.executemany(_SESSION_SQL, sessions)
        insert_events(conn, events)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def _bulk_events(sid: str, start: int, count: int, payload: int) -> Iterator[tuple[object, ...]]:
    """History events as the daemon writes a plain ``Message.user`` (no item, no client id)."""
    trace = secrets.token_hex(16)
    for pos in range(start + 1, start + count + 1):
        body = json.dumps({"role": "user", "content": content(98, pos, payload)})
        yield (sid, pos, "user_message", trace, _ts(pos), body)


def fill_to_bytes(db: Path, target_bytes: int, payload: int, per_session: int = 50_000) -> int:
    """Add sessions of ``per_session`` 1 KB messages until the database file holds ``target_bytes``.

    Returns the number of messages written.
    """
    conn = _connect(db)
    written = 0
    try:
        k = 0
        while True:
            (pages,) = conn.execute("PRAGMA page_count").fetchone()
            (page,) = conn.execute("PRAGMA page_size").fetchone()
            if pages * page >= target_bytes:
                break
            left = max(1000, (target_bytes - pages * page) // (payload + 300))
            count = min(per_session, left)
            sid = f"bulk-{k}"
            conn.execute("BEGIN")
            conn.execute(_SESSION_SQL, _session_row(sid, _ts(k), count))
            insert_events(conn, _bulk_events(sid, 0, count, payload))
            conn.execute("COMMIT")
            written += count
            k += 1
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return written
