"""The SQLite transaction code of the writes: ``*_in_tx`` functions run in the writer's transaction.

Each reads what a rule needs, asks the rule (``rules.py``, ``events.py``)
and writes; the decisions are never made here. A function that needs the
caller's transaction says so in its name: only the writer opens transactions.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ... import rules
from ...entry_wire import encode_entry
from ...events import EVENT_SCHEMA_VERSION, encode_clear, encode_usage, message_from_payload
from ...model import (
    AppendJob,
    AppendResult,
    ClearResult,
    EventResult,
    PreparedMessage,
    Usage,
    UsageDelta,
    UsageResult,
    now_rfc3339,
)
from ...rules import StoredRequest
from ..port import SESSION_COLS, SessionRow, new_incarnation, session_meta, session_row
from .calls_tx import PolicyOf, answer_in_tx, insert_calls_in_tx
from .errors import map_sqlite_errors
from .state_tx import apply_deltas_in_tx

__all__ = [
    "SESSION_COLS",
    "SessionRow",
    "add_usage_in_tx",
    "append_in_tx",
    "checkpoint_on_own_connection",
    "checkpoint_outcome",
    "clear_in_tx",
    "client_id_position_in_tx",
    "delete_in_tx",
    "new_incarnation",
    "open_call_count_in_tx",
    "record_event_in_tx",
    "session_in_tx",
    "session_meta",
    "session_row",
    "usage_in_tx",
]

_log = logging.getLogger("claw_sessiond.store")


def session_in_tx(conn: sqlite3.Connection, session_id: str) -> SessionRow | None:
    """The session's row, or None if it is not stored (caller's transaction)."""
    return session_row(
        conn.execute(f"SELECT {SESSION_COLS} FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    )


def _ensure_session_in_tx(conn: sqlite3.Connection, session_id: str, workdir: str, now: str) -> SessionRow:
    row = session_in_tx(conn, session_id)
    if row is not None:
        return row
    conn.execute(
        "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation) VALUES (?, ?, ?, ?, ?)",
        (session_id, workdir, now, now, new_incarnation()),
    )
    return SessionRow(session_id, workdir, now, now, 0, 0, 0, Usage())


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


def _insert_entry_in_tx(
    conn: sqlite3.Connection,
    session_id: str,
    position: int,
    prepared: PreparedMessage,
    trace_id: str,
    ts: str,
    payload: str | None = None,
) -> None:
    """Store one entry: its payload (``payload`` if given: for example with ``supersedes`` added), and
    beside it its item (byte for byte) and client id, where set, and its encoded reply form.

    The encoded form is made from the row as a Load reads it back (``message_from_payload`` of these
    very columns), so it is by construction what a Load would encode from the row (``entry_wire.py``).
    """
    msg = prepared.message
    payload = prepared.payload if payload is None else payload
    fmt = msg.format or None
    item = msg.item if msg.format else None
    encoded = encode_entry(message_from_payload(position, prepared.event_type, trace_id, ts, payload, fmt, item))
    if not (fmt or msg.client_id):
        conn.execute(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, encoded) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, position, prepared.event_type, trace_id, ts, EVENT_SCHEMA_VERSION, payload, encoded),
        )
        return
    conn.execute(
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
        "client_id, encoded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            position,
            prepared.event_type,
            trace_id,
            ts,
            EVENT_SCHEMA_VERSION,
            payload,
            fmt,
            item,
            msg.client_id or None,
            encoded,
        ),
    )


def client_id_position_in_tx(conn: sqlite3.Connection, session_id: str, client_id: str, after: int) -> int | None:
    """Position of the visible entry (after the clear at ``after``, not hidden) with this client id, or None."""
    found = conn.execute(
        "SELECT position FROM events WHERE session_id = ? AND client_id = ? AND position > ? AND hidden_by IS NULL "
        "LIMIT 1",
        (session_id, client_id, after),
    ).fetchone()
    return None if found is None else int(found[0])


def open_call_count_in_tx(conn: sqlite3.Connection, session_id: str) -> int:
    # Counts entries of the partial index ``tool_calls_open``: at most the limit plus one append.
    return int(
        conn.execute(
            "SELECT count(*) FROM tool_calls INDEXED BY tool_calls_open "
            "WHERE session_id = ? AND result_position IS NULL",
            (session_id,),
        ).fetchone()[0]
    )


def append_in_tx(conn: sqlite3.Connection, job: AppendJob, max_open_calls: int = 0) -> AppendResult:
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
    row = session_in_tx(conn, job.session_id)
    rules.check_expected(job.expected_last_position, row.last_position if row else 0)
    if row is None:
        row = _ensure_session_in_tx(conn, job.session_id, job.workdir, now)
    position = row.last_position
    first = position + 1
    usage = row.usage
    policy = PolicyOf(conn, job)
    if rules.has_unparsed_calls(job.messages):
        rules.check_unparsed_calls(job.messages, policy().allow_unparsed_calls)
    hidden = 0  # synthetic repairs superseded by this append's results
    for prepared in job.messages:
        position += 1
        msg = prepared.message
        if msg.client_id:
            rules.check_client_id_free(
                msg.client_id, client_id_position_in_tx(conn, job.session_id, msg.client_id, row.clear_position)
            )
        payload = prepared.payload
        if msg.role == "tool":
            payload, hid = answer_in_tx(conn, job.session_id, prepared, position, policy)
            hidden += hid
        if msg.tool_calls:
            insert_calls_in_tx(conn, job.session_id, prepared, position, job.run_id)
        _insert_entry_in_tx(conn, job.session_id, position, prepared, job.trace_id, now, payload)
        if msg.usage is not None:
            usage = add_usage_in_tx(conn, job.session_id, usage, msg.usage, now, job.trace_id)
    if max_open_calls and rules.makes_calls(job.messages):
        rules.check_open_calls(open_call_count_in_tx(conn, job.session_id), max_open_calls, job.session_id)
    if job.state_deltas:  # in this transaction: a refused delta refuses the whole append
        apply_deltas_in_tx(conn, job.session_id, job.state_deltas, job.trace_id, now)
    conn.execute(
        "UPDATE sessions SET last_position = ?, message_count = message_count + ?, updated_at = ?, "
        "workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
        (position, len(job.messages) - hidden, now, job.workdir, job.workdir, job.session_id),
    )
    result = AppendResult(first, position, now, job.trace_id)
    _remember_in_tx(conn, job.session_id, job.request_id, "append", job.fingerprint, result)
    return result


def usage_in_tx(
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
    new = add_usage_in_tx(conn, session_id, row.usage, delta, now, trace_id)
    conn.execute(
        "UPDATE sessions SET updated_at = ?, workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
        (now, workdir, workdir, session_id),
    )
    result = UsageResult(new, trace_id)
    _remember_in_tx(conn, session_id, request_id, "usage", fp, result)
    return result


def add_usage_in_tx(
    conn: sqlite3.Connection, session_id: str, old: Usage, delta: UsageDelta, now: str, trace_id: str
) -> Usage:
    """Add ``delta`` to the session's totals (``old``: its totals now) and its model's, and log a usage event.

    Shared by RecordUsage and by an Append whose entries carry usage (the report reads the usage events).

    Raises:
        PreconditionError, InvalidRequestError: as ``rules.add_usage``.
    """
    new = rules.add_usage(old, delta, session_id)
    conn.execute(
        "UPDATE sessions SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, "
        "cost_micros = ?, currency = ? WHERE session_id = ?",
        (
            new.input_tokens,
            new.output_tokens,
            new.cache_read_tokens,
            new.cache_write_tokens,
            new.cost_micros,
            new.currency,
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
    return new


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
    """Write a clear (``erased``: the events an erasing clear removed just before, in this transaction)."""
    record = rules.replay_record(request_id, "clear", fp, _stored_request_in_tx(conn, session_id, request_id))
    if record is not None:
        return rules.clear_from_record(record)
    now = now_rfc3339()
    row = session_in_tx(conn, session_id)
    rules.check_expected(expected, row.last_position if row else 0)
    if row is None:
        row = _ensure_session_in_tx(conn, session_id, workdir, now)
    position = row.last_position + 1
    _insert_event_in_tx(conn, session_id, position, "clear", trace_id, now, encode_clear(erased))
    conn.execute("DELETE FROM tool_calls WHERE session_id = ?", (session_id,))
    conn.execute(
        "UPDATE sessions SET last_position = ?, clear_position = ?, message_count = 0, updated_at = ?, "
        "workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
        (position, position, now, workdir, workdir, session_id),
    )
    result = ClearResult(position, trace_id, events_erased=erased or 0)
    _remember_in_tx(conn, session_id, request_id, "clear", fp, result)
    return result


def record_event_in_tx(
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


_SESSION_TABLES: Final = ("events", "tool_calls", "requests", "usage_by_model", "session_labels", "sessions")


def delete_in_tx(conn: sqlite3.Connection, session_id: str) -> int:
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
