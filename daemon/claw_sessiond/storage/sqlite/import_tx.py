"""Import in SQLite: an imported session's events written, and its derived rows rebuilt by ``rules.fold_events``
(and its settings by ``state.fold_settings``)."""

from __future__ import annotations

import sqlite3

from ... import rules
from ...export import ImportedSession
from ...model import ImportMode, Usage
from .state_tx import rebuild_settings_in_tx
from .tx import SESSION_COLS, delete_in_tx, new_incarnation, open_call_count_in_tx, session_in_tx

__all__ = ["import_in_tx"]


def import_in_tx(conn: sqlite3.Connection, session: ImportedSession, mode: ImportMode, max_open_calls: int = 0) -> int:
    """Write an imported session's events and rebuild its derived rows; returns events written."""
    header = session.header
    sid = header.session_id
    row = session_in_tx(conn, sid)
    events = list(session.events)
    created_at, updated_at, workdir = header.created_at, header.updated_at, header.workdir
    offset = 0
    rules.check_import_mode(sid, row is not None, mode)
    if row is not None:
        if mode == "replace":
            delete_in_tx(conn, sid)
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
        payload = rules.shifted_edit(e.payload, offset) if e.type == "edit" and offset else e.payload
        conn.execute(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
            "client_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (sid, position, e.type, e.trace_id, e.ts, e.schema_version, payload, e.format, e.item, e.client_id),
        )
    _rebuild_in_tx(conn, sid, workdir, created_at, updated_at)
    rebuild_settings_in_tx(conn, sid)  # state, labels, tool policy and lineage, from the same events
    if max_open_calls:
        # Refused rather than stored: its repair would hold the writer beyond the bound.
        rules.check_imported_open_calls(open_call_count_in_tx(conn, sid), max_open_calls, sid)
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
        f"INSERT INTO sessions({SESSION_COLS}, incarnation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            workdir,
            created_at,
            updated_at,
            fold.last_position,
            fold.clear_position,
            fold.message_count,
            *_usage_values(u),
            kept[0] if kept else new_incarnation(),
        ),
    )
    conn.executemany(
        "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, result_position, pending, "
        "repair_mode) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (session_id, call_id, c.assistant_position, c.call_index, c.result_position, int(c.pending), c.repair_mode)
            for call_id, c in fold.calls.items()
        ],
    )
    # What the edits took out of the projection, and synthetic repairs superseded by a real result: the log
    # keeps them, out of the projection.
    conn.executemany(
        "UPDATE events SET hidden_by = ? WHERE session_id = ? AND position = ?",
        [(by, session_id, position) for position, by in fold.hidden.items()],
    )
    conn.executemany(
        "INSERT INTO usage_by_model(session_id, model, pricing_version, input_tokens, output_tokens, "
        "cache_read_tokens, cache_write_tokens, cost_micros, currency) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(session_id, model, version, *_usage_values(v)) for (model, version), v in fold.by_model.items()],
    )


def _usage_values(u: Usage) -> tuple[int, int, int, int, int, str]:
    return (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_micros, u.currency)
