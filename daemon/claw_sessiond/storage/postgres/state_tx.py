"""Session state, scope states and labels in PostgreSQL: their columns, and their writes in a transaction.

The same layout as the SQLite backend's (``storage/sqlite/state_tx.py``): a
session's settings are columns of ``sessions`` (``state``, ``labels`` as JSON
mirrored into ``session_labels`` rows, ``tool_policy``, ``forked_from``,
``forked_at_position``, ``incarnation``); shared scopes are rows of
``scope_states``. The decisions are ``state.py``'s. Every ``*_in_tx``
coroutine runs in the caller's transaction, whose first statement locked the
session row, so a refused delta rolls back the whole request.

Concurrency: a scope belongs to no session, so two sessions' writes may change
one scope at once. Each transaction locks the scope rows it changes
(``SELECT … FOR UPDATE`` after an ``INSERT … ON CONFLICT DO NOTHING`` that makes
sure the row exists), all of them before the first change and in sorted order,
so no two writers deadlock and no delta is lost.
"""

from __future__ import annotations

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
#: How many columns :data:`SETTINGS_COLS` names.
SETTINGS_COUNT: Final = len(SETTINGS_COLS.split(","))


def settings_of(values: Sequence[Any]) -> SessionSettings:
    """The :class:`SessionSettings` of a ``SELECT {SETTINGS_COLS}`` result."""
    return SessionSettings(
        str(values[0]), parse_labels(str(values[1])), str(values[2]), str(values[3]), int(values[4]), str(values[5])
    )


async def settings_in_tx(conn: Any, session_id: str) -> SessionSettings | None:
    """The session's settings (None if it is not stored)."""
    found = await conn.fetchrow(f"SELECT {SETTINGS_COLS} FROM sessions WHERE session_id = $1", session_id)
    return None if found is None else settings_of(found)


async def insert_session_event_in_tx(
    conn: Any, session_id: str, event_type: str, trace_id: str, ts: str, payload: str
) -> None:
    """A session-level event (``state`` or ``session_settings``): no position."""
    await conn.execute(
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
        "VALUES ($1, NULL, $2, $3, $4, $5, $6)",
        session_id,
        event_type,
        trace_id,
        ts,
        EVENT_SCHEMA_VERSION,
        payload,
    )


async def _lock_scopes_in_tx(conn: Any, scopes: Sequence[str], now: str) -> dict[str, str]:
    """Make sure each scope has a row, lock them all in sorted order; their states now."""
    wanted = sorted(set(scopes))
    await conn.execute(
        "INSERT INTO scope_states(scope, state, updated_at) SELECT s, $2, $3 FROM unnest($1::text[]) AS s "
        "ORDER BY s ON CONFLICT (scope) DO NOTHING",
        wanted,
        EMPTY,
        now,
    )
    rows = await conn.fetch(
        "SELECT scope, state FROM scope_states WHERE scope = ANY($1::text[]) ORDER BY scope FOR UPDATE", wanted
    )
    return {str(r[0]): str(r[1]) for r in rows}


async def apply_deltas_in_tx(conn: Any, session_id: str, deltas: Sequence[StateDelta], trace_id: str, now: str) -> None:
    """Apply deltas in order (the session's own state, or a shared scope's), each recorded as a ``state`` event.

    The session must be stored (and its row locked by the caller). Each state is read once and
    written once.

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE, a state would exceed its bound (``state_deltas[i]``).
    """
    scopes = [d.scope for d in deltas if d.scope]
    shared = await _lock_scopes_in_tx(conn, scopes, now) if scopes else {}
    changed: set[str] = set()
    own: str | None = None
    for i, delta in enumerate(deltas):
        where = f"state_deltas[{i}]"
        if delta.scope:
            shared[delta.scope] = state_after(shared.get(delta.scope, EMPTY), delta.delta, where)
            changed.add(delta.scope)
        else:
            if own is None:
                own = str(await conn.fetchval("SELECT state FROM sessions WHERE session_id = $1", session_id))
            own = state_after(own, delta.delta, where)
        await insert_session_event_in_tx(conn, session_id, "state", trace_id, now, state_payload(delta))
    if changed:
        await conn.executemany(
            "UPDATE scope_states SET state = $2, updated_at = $3 WHERE scope = $1",
            [(scope, shared[scope], now) for scope in sorted(changed)],
        )
    if own is not None:
        await conn.execute("UPDATE sessions SET state = $1 WHERE session_id = $2", own, session_id)


async def write_labels_in_tx(conn: Any, session_id: str, labels: Mapping[str, str]) -> None:
    """Replace the session's labels: the JSON column and its ``session_labels`` rows."""
    await conn.execute("UPDATE sessions SET labels = $1 WHERE session_id = $2", labels_json(labels), session_id)
    await conn.execute("DELETE FROM session_labels WHERE session_id = $1", session_id)
    if labels:
        await conn.executemany(
            "INSERT INTO session_labels(session_id, key, value) VALUES ($1, $2, $3)",
            [(session_id, k, v) for k, v in labels.items()],
        )


async def rebuild_settings_in_tx(conn: Any, session_id: str) -> SettingsFold:
    """Recompute an imported session's state, labels, tool policy and lineage from its events (``fold_settings``).

    Raises:
        InvalidRequestError: reason INVALID_IMPORT, the folded state is too large.
    """
    rows = await conn.fetch(
        "SELECT type, payload FROM events WHERE session_id = $1 AND position IS NULL "
        "AND type IN ('state', 'session_settings') ORDER BY event_id",
        session_id,
    )
    fold = fold_settings(session_id, ((str(r[0]), str(r[1])) for r in rows))
    await conn.execute(
        "UPDATE sessions SET state = $1, tool_policy = $2, forked_from = $3, forked_at_position = $4 "
        "WHERE session_id = $5",
        fold.state,
        fold.tool_policy,
        fold.forked_from,
        fold.forked_at_position,
        session_id,
    )
    await write_labels_in_tx(conn, session_id, fold.labels)
    return fold
