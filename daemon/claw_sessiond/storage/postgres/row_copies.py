"""A session's rows read and written whole in PostgreSQL: the port verbs of Import and of Fork's call index.

:class:`~claw_sessiond.storage.postgres.port.PostgresPort` answers these verbs by calling the
functions here, in the caller's transaction, as it calls ``read_port.py``'s for a Load's reads
(``storage/importing.py`` and ``storage/sessions.py`` decide what is copied). Strings that may
hold NUL are stored in their NUL-free form (``nul_text.db_text``).

Must never: decide, begin, commit or roll back a transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...export import ImportedEvent
from ...history import IndexedCall
from ...model import Usage
from ..nul_text import db_text, from_db_text
from ..port import SESSION_COLS, SessionRow, usage_values

__all__ = ["events_of", "index_calls", "indexed_calls", "insert_events", "insert_model_usage", "insert_session_row"]


async def indexed_calls(conn: Any, session_id: str, call_ids: Sequence[str]) -> list[IndexedCall]:
    """The indexed tool calls of the session among ``call_ids`` (``Port.indexed_calls``)."""
    rows = await conn.fetch(
        "SELECT call_id, assistant_position, call_index, result_position, pending, repair_mode, "
        "synthetic_position FROM tool_calls WHERE session_id = $1 AND call_id = ANY($2::text[])",
        session_id,
        [db_text(c) for c in call_ids],
    )
    return [
        IndexedCall(
            from_db_text(r[0]),
            int(r[1]),
            int(r[2]),
            None if r[3] is None else int(r[3]),
            bool(r[4]),
            str(r[5]),
            None if r[6] is None else int(r[6]),
        )
        for r in rows
    ]


async def index_calls(conn: Any, session_id: str, calls: Sequence[IndexedCall]) -> None:
    """Index ``calls`` for the session as they are given (``Port.index_calls``)."""
    if calls:
        await conn.executemany(
            "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, result_position, "
            "run_id, pending, repair_mode, synthetic_position) VALUES ($1, $2, $3, $4, $5, '', $6, $7, $8)",
            [
                (
                    session_id,
                    db_text(c.call_id),
                    c.assistant_position,
                    c.call_index,
                    c.result_position,
                    bool(c.pending),
                    c.repair_mode,
                    c.synthetic_position,
                )
                for c in calls
            ],
        )


async def events_of(conn: Any, session_id: str) -> list[tuple[int | None, str, str, str, str]]:
    """Every event of the session in log order (``Port.events_of``)."""
    rows = await conn.fetch(
        "SELECT position, type, ts, trace_id, payload FROM events WHERE session_id = $1 ORDER BY event_id",
        session_id,
    )
    return [(None if r[0] is None else int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]


async def insert_events(conn: Any, session_id: str, events: Sequence[ImportedEvent]) -> None:
    """Insert imported events as they are (``Port.insert_events``)."""
    if events:
        await conn.executemany(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, "
            "item, client_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            [
                (
                    session_id,
                    e.position,
                    e.type,
                    e.trace_id,
                    e.ts,
                    e.schema_version,
                    e.payload,
                    e.format,
                    e.item,
                    None if e.client_id is None else db_text(e.client_id),
                )
                for e in events
            ],
        )


async def insert_session_row(conn: Any, row: SessionRow, incarnation: str) -> None:
    """Insert a rebuilt session row (``Port.insert_session_row``)."""
    await conn.execute(
        f"INSERT INTO sessions({SESSION_COLS}, incarnation) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        row.session_id,
        row.workdir,
        row.created_at,
        row.updated_at,
        row.last_position,
        row.clear_position,
        row.message_count,
        *usage_values(row.usage),
        incarnation,
    )


async def insert_model_usage(conn: Any, session_id: str, by_model: Mapping[tuple[str, str], Usage]) -> None:
    """Insert the session's usage by model and pricing version (``Port.insert_model_usage``)."""
    if by_model:
        await conn.executemany(
            "INSERT INTO usage_by_model(session_id, model, pricing_version, input_tokens, output_tokens, "
            "cache_read_tokens, cache_write_tokens, cost_micros, currency) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            [
                (session_id, db_text(model), db_text(version), *usage_values(u))
                for (model, version), u in by_model.items()
            ],
        )
