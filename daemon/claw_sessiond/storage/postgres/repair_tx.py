"""Import in PostgreSQL: an imported session written in a transaction (its derived rows rebuilt by
``rules.fold_events``, its settings by ``state.fold_settings``).

A Load's repair is ``storage/loading.py`` over this backend's port (``port.py``).
"""

from __future__ import annotations

from typing import Any, Final

from ... import rules
from ...errors import Reason, StorageUnavailableError
from ...export import ImportedSession
from ...model import ImportMode, Usage
from ..nul_text import db_text
from .state_tx import rebuild_settings_in_tx
from .tx import (
    NOW_SQL,
    SESSION_COLS,
    SessionRow,
    delete_in_tx,
    lock_session_in_tx,
    new_incarnation,
    open_call_count_in_tx,
)

__all__ = ["import_in_tx"]

#: Rounds of "no row, but the claim conflicted" before an import gives way (each needs another
#: transaction to create and then delete the id in between).
_CLAIM_ATTEMPTS: Final = 3


async def import_in_tx(conn: Any, session: ImportedSession, mode: ImportMode, max_open_calls: int = 0) -> int:
    """Write an imported session's events and rebuild its derived rows (``rules.fold_events``); events written."""
    header = session.header
    sid = header.session_id
    row = await _claim_or_lock_in_tx(conn, sid)
    events = list(session.events)
    created_at, updated_at, workdir = header.created_at, header.updated_at, header.workdir
    offset = 0
    rules.check_import_mode(sid, row is not None, mode)
    kept: str | None = None
    if row is not None:
        if mode == "replace":
            await delete_in_tx(conn, sid)
        else:  # merge: skip events already stored (same type, time, trace and payload), append the rest
            kept = await conn.fetchval("SELECT incarnation FROM sessions WHERE session_id = $1", sid)
            stored = {
                rules.stored_event_key(*r)
                for r in await conn.fetch("SELECT type, ts, trace_id, payload FROM events WHERE session_id = $1", sid)
            }
            events, offset = rules.merge_events(stored, events, row.last_position)
            created_at, workdir = row.created_at, row.workdir or workdir
            updated_at = max(row.updated_at, updated_at)
    await conn.executemany(
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
        "client_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        [
            (
                sid,
                None if e.position is None else e.position + offset,
                e.type,
                e.trace_id,
                e.ts,
                e.schema_version,
                rules.shifted_edit(e.payload, offset) if e.type == "edit" and offset else e.payload,
                e.format,
                e.item,
                None if e.client_id is None else db_text(e.client_id),
            )
            for e in events
        ],
    )
    rows = await conn.fetch("SELECT position, type, payload FROM events WHERE session_id = $1 ORDER BY event_id", sid)
    fold = rules.fold_events(sid, [(None if r[0] is None else int(r[0]), r[1], r[2]) for r in rows])
    for table in ("tool_calls", "usage_by_model", "sessions"):
        await conn.execute(f"DELETE FROM {table} WHERE session_id = $1", sid)
    await conn.execute(
        f"INSERT INTO sessions({SESSION_COLS}, incarnation) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        sid,
        workdir,
        created_at,
        updated_at,
        fold.last_position,
        fold.clear_position,
        fold.message_count,
        *_usage_values(fold.usage),
        kept or new_incarnation(),
    )
    await conn.executemany(
        "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, result_position, pending, "
        "repair_mode) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        [
            (
                sid,
                db_text(call_id),
                c.assistant_position,
                c.call_index,
                c.result_position,
                bool(c.pending),
                c.repair_mode,
            )
            for call_id, c in fold.calls.items()
        ],
    )
    # Synthetic repairs superseded by a real result stay in the log, out of the projection.
    await conn.executemany(
        "UPDATE events SET hidden_by = $1 WHERE session_id = $2 AND position = $3",
        [(by, sid, position) for position, by in fold.hidden.items()],
    )
    await conn.executemany(
        "INSERT INTO usage_by_model(session_id, model, pricing_version, input_tokens, output_tokens, "
        "cache_read_tokens, cache_write_tokens, cost_micros, currency) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        [(sid, db_text(model), db_text(version), *_usage_values(v)) for (model, version), v in fold.by_model.items()],
    )
    await rebuild_settings_in_tx(conn, sid)  # state, labels, tool policy and lineage, from the same events
    if max_open_calls:
        rules.check_imported_open_calls(await open_call_count_in_tx(conn, sid), max_open_calls, sid)
    return len(events)


async def _claim_or_lock_in_tx(conn: Any, session_id: str) -> SessionRow | None:
    """The stored session's row, locked; or None after claiming the id with a row of this transaction.

    Two imports (or an import and a CreateSession, a fork, an Append) of one new id at once: without
    the claim both would find no row, and the second would end on the unique keys of ``events`` or
    ``sessions`` (UNAVAILABLE). The claim's ``ON CONFLICT DO NOTHING`` waits for the other
    transaction; once it has committed the row is there, locked here, and the import decides on it
    (SESSION_EXISTS in mode refuse). The placeholder row is replaced by the rebuilt one below.
    """
    for _ in range(_CLAIM_ATTEMPTS):
        row, _now = await lock_session_in_tx(conn, session_id)
        if row is not None:
            return row
        claimed = await conn.fetchval(
            "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation) "
            f"VALUES ($1, '', {NOW_SQL}, {NOW_SQL}, $2) ON CONFLICT (session_id) DO NOTHING RETURNING 1",
            session_id,
            new_incarnation(),
        )
        if claimed is not None:
            return None
    # Created and deleted again by others between our statements, every time: give way.
    raise StorageUnavailableError(
        f"session {session_id!r} is being created and deleted by others at once; try the import again",
        reason=Reason.STORAGE_UNAVAILABLE,
    )


def _usage_values(u: Usage) -> tuple[int, int, int, int, int, str]:
    return (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_micros, u.currency)
