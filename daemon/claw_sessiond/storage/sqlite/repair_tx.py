"""The repair of interrupted calls in SQLite: writing a plan (``repair.py``) in the writer's transaction."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Sequence

from ... import repair as repairing
from ...events import EVENT_SCHEMA_VERSION, call_names
from ...model import HistoryCursor, LoadResult, Repair, now_rfc3339
from ...repair import RepairPlan
from .calls_tx import drops_in_tx, open_call, session_policy_in_tx
from .port import SQLitePort
from .tx import OPEN_CALLS_SQL, open_calls_in_tx, session_in_tx, session_meta

__all__ = ["repair_chunk_in_tx", "repair_in_tx"]


def repair_in_tx(
    conn: sqlite3.Connection,
    session_id: str,
    workdir: str,
    trace_id: str,
    is_live: Callable[[str], bool],
    plan: RepairPlan | None = None,
) -> LoadResult:
    """Repair interrupted calls in the caller's write transaction; the history is then read by pages.

    ``plan`` was made from a read at the same ``last_position``: if the
    session has not changed since (no append, clear or erase moves nothing
    else), it is written as is, so the writer thread only runs two
    ``executemany``; otherwise the repair is planned again here. A run that
    was live when planning may have ended since (its calls stay open until
    the next Load); runs never come back to life, so the plan never repairs
    a call that is now in flight.
    """
    row = session_in_tx(conn, session_id)
    if row is None:
        return LoadResult(session_meta(None, session_id, workdir), [])
    if plan is not None and plan.unchanged(row.created_at, row.clear_position, row.last_position):
        to_repair = list(plan.calls)
        payloads: Sequence[str] = plan.payloads
        dropped, hidden = plan.dropped, plan.hidden
        # Only calls appended by a run, or pending, can be in flight: no need to read the open calls being repaired.
        owned = conn.execute(OPEN_CALLS_SQL + " AND (run_id != '' OR pending != 0)", (session_id,)).fetchall()
        in_flight = repairing.in_flight_calls((open_call(r) for r in owned), is_live)
    else:
        split = repairing.split_calls(
            open_calls_in_tx(conn, session_id), is_live, session_policy_in_tx(conn, session_id)
        )
        to_repair, in_flight = split.repair, split.in_flight
        dropped, hidden = drops_in_tx(conn, session_id, split.dropped)
        names = _call_names_in_tx(conn, session_id, set(repairing.assistant_positions(to_repair)))
        payloads = repairing.synthetic_payloads(to_repair, names)
    repairs: list[Repair] = []
    if to_repair:
        now = now_rfc3339()
        repairs = repairing.place(to_repair, row.last_position)
        first = repairs[0].position
        conn.executemany(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES (?, ?, 'repair', ?, ?, ?, ?)",
            (
                (session_id, first + i, trace_id, now, EVENT_SCHEMA_VERSION, payload)
                for i, payload in enumerate(payloads)
            ),
        )
        conn.executemany(
            "UPDATE tool_calls SET result_position = ? WHERE session_id = ? AND call_id = ?",
            ((r.position, session_id, r.tool_call_id) for r in repairs),
        )
        position = repairs[-1].position
        conn.execute(
            "UPDATE sessions SET last_position = ?, message_count = message_count + ?, updated_at = ?, "
            "workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
            (position, len(repairs), now, workdir, workdir, session_id),
        )
        row = session_in_tx(conn, session_id)
        assert row is not None
    cursor = HistoryCursor(
        session_id,
        row.created_at,
        row.clear_position,
        row.last_position,
        tuple(c.tool_call_id for c in in_flight),
        dropped_ids=dropped,
    )
    meta = session_meta(row, session_id, workdir, SQLitePort(conn).settings(session_id))
    meta = dataclasses.replace(meta, message_count=meta.message_count - hidden)
    return LoadResult(meta, [], repairs, repairing.flights(in_flight), cursor)


def repair_chunk_in_tx(
    conn: sqlite3.Connection, session_id: str, trace_id: str, chunk: RepairPlan
) -> tuple[list[Repair], int] | None:
    """Write one chunk of a large repair (not the last); returns its repairs and the new last position.

    Calls answered since planning (a live result, or a concurrent Load's
    repair) are skipped. None if the session was cleared, erased or replaced
    since planning: the caller then plans again in its final transaction.
    """
    row = session_in_tx(conn, session_id)
    if row is None or not chunk.same_history(row.created_at, row.clear_position):
        return None
    still_open = {
        r[0]
        for r in conn.execute(
            f"SELECT call_id FROM tool_calls WHERE session_id = ? AND result_position IS NULL "
            f"AND call_id IN ({','.join('?' * len(chunk.calls))})",
            (session_id, *(c.tool_call_id for c in chunk.calls)),
        )
    }
    todo = [(c, p) for c, p in zip(chunk.calls, chunk.payloads, strict=True) if c.tool_call_id in still_open]
    if not todo:
        return [], row.last_position
    now = now_rfc3339()
    repairs = repairing.place([c for c, _p in todo], row.last_position)
    conn.executemany(
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
        "VALUES (?, ?, 'repair', ?, ?, ?, ?)",
        (
            (session_id, r.position, trace_id, now, EVENT_SCHEMA_VERSION, p)
            for r, (_c, p) in zip(repairs, todo, strict=True)
        ),
    )
    conn.executemany(
        "UPDATE tool_calls SET result_position = ? WHERE session_id = ? AND call_id = ?",
        ((r.position, session_id, r.tool_call_id) for r in repairs),
    )
    last = repairs[-1].position
    conn.execute(
        "UPDATE sessions SET last_position = ?, message_count = message_count + ?, updated_at = ? WHERE session_id = ?",
        (last, len(repairs), now, session_id),
    )
    return repairs, last


def _call_names_in_tx(conn: sqlite3.Connection, session_id: str, positions: set[int]) -> dict[str, str]:
    names: dict[str, str] = {}
    for pos in positions:
        found = conn.execute(
            "SELECT payload FROM events WHERE session_id = ? AND position = ?", (session_id, pos)
        ).fetchone()
        if found:
            names.update(call_names(found[0]))
    return names
