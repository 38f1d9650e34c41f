"""Repair in PostgreSQL: a repair plan (``repair.py``) written in a transaction (an import's sequence is
``storage/importing.py``).

The repair runs in the transaction that bounds what the Load returns: the
session row is locked first, the open calls are read and planned again
under the lock (``repair.plan_repair``, with the live runs), and the
synthetic results are written; a concurrent Load waits for the lock and
then finds nothing left to repair, so each call is repaired once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ... import repair as repairing
from ...events import EVENT_SCHEMA_VERSION, call_names
from ...model import HistoryCursor, LoadResult, Repair
from ..nul_text import db_text
from .calls_tx import drops_in_tx, session_policy_in_tx
from .port import PostgresPort
from .tx import (
    lock_session_in_tx,
    open_calls_in_tx,
    session_meta,
)

__all__ = ["repair_in_tx"]


async def repair_in_tx(
    conn: Any, session_id: str, workdir: str, trace_id: str, is_live: Callable[[str], bool]
) -> LoadResult:
    """Repair interrupted calls in the caller's transaction; the history is then read by pages (a cursor)."""
    row, now = await lock_session_in_tx(conn, session_id)
    if row is None:
        return LoadResult(session_meta(None, session_id, workdir), [])
    split = repairing.split_calls(
        await open_calls_in_tx(conn, session_id), is_live, await session_policy_in_tx(conn, session_id)
    )
    to_repair, in_flight = split.repair, split.in_flight
    dropped, hidden = await drops_in_tx(conn, session_id, split.dropped)
    repairs: list[Repair] = []
    if to_repair:
        names: dict[str, str] = {}
        for r in await conn.fetch(
            "SELECT payload FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])",
            session_id,
            repairing.assistant_positions(to_repair),
        ):
            names.update(call_names(r[0]))
        payloads = repairing.synthetic_payloads(to_repair, names)
        repairs = repairing.place(to_repair, row.last_position)
        await conn.executemany(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES ($1, $2, 'repair', $3, $4, $5, $6)",
            [
                (session_id, r.position, trace_id, now, EVENT_SCHEMA_VERSION, p)
                for r, p in zip(repairs, payloads, strict=True)
            ],
        )
        await conn.executemany(
            "UPDATE tool_calls SET result_position = $1 WHERE session_id = $2 AND call_id = $3",
            [(r.position, session_id, db_text(r.tool_call_id)) for r in repairs],
        )
        await conn.execute(
            "UPDATE sessions SET last_position = $1, message_count = message_count + $2, updated_at = $3, "
            "workdir = CASE WHEN $4 <> '' THEN $4 ELSE workdir END WHERE session_id = $5",
            repairs[-1].position,
            len(repairs),
            now,
            workdir,
            session_id,
        )
        row, now = await lock_session_in_tx(conn, session_id)
        assert row is not None
    cursor = HistoryCursor(
        session_id,
        row.created_at,
        row.clear_position,
        row.last_position,
        tuple(c.tool_call_id for c in in_flight),
        dropped_ids=dropped,
    )
    meta = session_meta(row, session_id, workdir, await PostgresPort(conn).settings(session_id))
    meta = dataclasses.replace(meta, message_count=meta.message_count - hidden)
    return LoadResult(meta, [], repairs, repairing.flights(in_flight), cursor)
