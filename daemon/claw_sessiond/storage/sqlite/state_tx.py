"""Session state, scope states and labels in SQLite: the columns they live in, and their writes in a transaction.

A session's settings are columns of ``sessions`` (schema v4): ``state``,
``labels`` (JSON, mirrored into ``session_labels`` rows for exact-match
listing), ``tool_policy``, ``forked_from``, ``forked_at_position`` and
``incarnation``; shared scopes are rows of ``scope_states``. The decisions
(how a delta applies, the size bound, label rules) are ``state.py``'s; this
module reads, asks and writes. Every function ending in ``_in_tx`` runs in the
writer's transaction (Append's, UpdateSession's, ...), so a refused delta rolls
back the whole request.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...events import EVENT_SCHEMA_VERSION
from ...model import SessionSettings, StateDelta
from ...state import EMPTY, SettingsFold, fold_settings, labels_json, parse_labels, state_after, state_payload

__all__ = [
    "SETTINGS_COLS",
    "SETTINGS_COUNT",
    "apply_deltas_in_tx",
    "insert_session_event_in_tx",
    "rebuild_settings_in_tx",
    "settings_in_tx",
    "settings_of",
    "write_labels_in_tx",
]

#: The settings columns of ``sessions``, in the order :func:`settings_of` reads them.
SETTINGS_COLS: Final = "state, labels, tool_policy, forked_from, forked_at_position, incarnation"
#: How many columns :data:`SETTINGS_COLS` names (the last ones of a ``SELECT {SESSION_COLS}, {SETTINGS_COLS}``).
SETTINGS_COUNT: Final = len(SETTINGS_COLS.split(","))


def settings_of(values: Sequence[Any]) -> SessionSettings:
    """The :class:`SessionSettings` of a ``SELECT {SETTINGS_COLS}`` result."""
    return SessionSettings(
        str(values[0]), parse_labels(str(values[1])), str(values[2]), str(values[3]), int(values[4]), str(values[5])
    )


def settings_in_tx(conn: sqlite3.Connection, session_id: str) -> SessionSettings | None:
    """The session's settings (None if it is not stored; caller's transaction)."""
    found = conn.execute(f"SELECT {SETTINGS_COLS} FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    return None if found is None else settings_of(found)


def insert_session_event_in_tx(
    conn: sqlite3.Connection, session_id: str, event_type: str, trace_id: str, ts: str, payload: str
) -> None:
    """A session-level event (``state`` or ``session_settings``): no position."""
    conn.execute(
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
        "VALUES (?, NULL, ?, ?, ?, ?, ?)",
        (session_id, event_type, trace_id, ts, EVENT_SCHEMA_VERSION, payload),
    )


def apply_deltas_in_tx(
    conn: sqlite3.Connection, session_id: str, deltas: Sequence[StateDelta], trace_id: str, now: str
) -> None:
    """Apply deltas in order (the session's own state, or a shared scope's), each recorded as a ``state`` event.

    The session must be stored. The session's own state is read once and written once.

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE, a state would exceed its bound (``state_deltas[i]``).
    """
    own: str | None = None
    for i, delta in enumerate(deltas):
        where = f"state_deltas[{i}]"
        if delta.scope:
            found = conn.execute("SELECT state FROM scope_states WHERE scope = ?", (delta.scope,)).fetchone()
            new = state_after(str(found[0]) if found else EMPTY, delta.delta, where)
            conn.execute(
                "INSERT INTO scope_states(scope, state, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(scope) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                (delta.scope, new, now),
            )
        else:
            if own is None:
                own = str(conn.execute("SELECT state FROM sessions WHERE session_id = ?", (session_id,)).fetchone()[0])
            own = state_after(own, delta.delta, where)
        insert_session_event_in_tx(conn, session_id, "state", trace_id, now, state_payload(delta))
    if own is not None:
        conn.execute("UPDATE sessions SET state = ? WHERE session_id = ?", (own, session_id))


def write_labels_in_tx(conn: sqlite3.Connection, session_id: str, labels: Mapping[str, str]) -> None:
    """Replace the session's labels: the JSON column and its ``session_labels`` rows (at most 32)."""
    conn.execute("UPDATE sessions SET labels = ? WHERE session_id = ?", (labels_json(labels), session_id))
    conn.execute("DELETE FROM session_labels WHERE session_id = ?", (session_id,))
    conn.executemany(
        "INSERT INTO session_labels(session_id, key, value) VALUES (?, ?, ?)",
        [(session_id, k, v) for k, v in labels.items()],
    )


def rebuild_settings_in_tx(conn: sqlite3.Connection, session_id: str) -> SettingsFold:
    """Recompute an imported session's state, labels, tool policy and lineage from its events (``fold_settings``).

    Raises:
        InvalidRequestError: reason INVALID_IMPORT, the folded state is too large.
    """
    rows = conn.execute(
        "SELECT type, payload FROM events WHERE session_id = ? AND position IS NULL "
        "AND type IN ('state', 'session_settings') ORDER BY event_id",
        (session_id,),
    ).fetchall()
    fold = fold_settings(session_id, ((str(t), str(p)) for t, p in rows))
    conn.execute(
        "UPDATE sessions SET state = ?, tool_policy = ?, forked_from = ?, forked_at_position = ? WHERE session_id = ?",
        (fold.state, fold.tool_policy, fold.forked_from, fold.forked_at_position, session_id),
    )
    write_labels_in_tx(conn, session_id, fold.labels)
    return fold
