"""The open tool calls of a SQLite session, its tool policy, and the calls a Load drops, in the writer's transaction.

An append's tool results and calls are admitted and indexed by ``storage/writes.py`` over the port.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from ... import repair as repairing
from ...history import OpenCall
from ...policy import ToolPolicy
from .port import SQLitePort

__all__ = ["OPEN_CALLS_SQL", "drops_in_tx", "open_call", "session_policy_in_tx"]

#: The open tool calls of a session (columns in the order of ``history.OpenCall``): shared by
#: Load's read path (aiosqlite) and the writer's repair path (sqlite3), so they cannot drift.
#: Through the partial index of open calls: left to itself the planner walks the primary key,
#: every call the session ever made (a Load's cost then grew with the history).
OPEN_CALLS_SQL: Final = (
    "SELECT call_id, assistant_position, call_index, run_id, pending, repair_mode FROM tool_calls "
    "INDEXED BY tool_calls_open WHERE session_id = ? AND result_position IS NULL"
)


def open_call(row: Sequence[Any]) -> OpenCall:
    """An :data:`OPEN_CALLS_SQL` row as an :class:`~claw_sessiond.history.OpenCall`."""
    return OpenCall(str(row[0]), int(row[1]), int(row[2]), str(row[3]), bool(row[4]), str(row[5]))


def session_policy_in_tx(conn: sqlite3.Connection, session_id: str) -> ToolPolicy:
    """The session's stored tool policy (empty for an unknown session) (caller's transaction)."""
    return SQLitePort(conn).session_policy(session_id)


#: Positions looked up per query (well under SQLite's 32766 parameters).
_IDS_PER_QUERY: Final = 500


def drops_in_tx(conn: sqlite3.Connection, session_id: str, dropped: list[OpenCall]) -> tuple[tuple[str, ...], int]:
    """The ids of the calls a Load drops, and how many entries that hides whole (caller's transaction)."""
    if not dropped:
        return (), 0
    positions = repairing.drop_positions(dropped)
    entries: list[tuple[int, str, bool]] = []
    for i in range(0, len(positions), _IDS_PER_QUERY):
        part = positions[i : i + _IDS_PER_QUERY]
        entries.extend(
            (int(r[0]), str(r[1]), bool(r[2]))
            for r in conn.execute(
                "SELECT position, payload, item IS NOT NULL FROM events WHERE session_id = ? "
                f"AND position IN ({','.join('?' * len(part))})",
                (session_id, *part),
            )
        )
    ids = tuple(c.tool_call_id for c in dropped)
    return ids, repairing.hidden_count(entries, set(ids))
