"""Tool calls and tool results in SQLite under the caller's tool policy (``policy.py``), in the writer's transaction.

An append's tool results are admitted by ``rules.admit_tool_result`` (paired,
stored as an orphan, or superseding a synthetic repair) and its calls join
the tool-call index with their ``pending`` flag and repair mode; the
session's policy is read only when a decision needs it (an unknown call, an
unparsed call), so an ordinary append reads nothing more than before.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from ... import rules
from ...events import encode_message
from ...history import OpenCall
from ...model import AppendJob, PreparedMessage
from ...policy import ToolPolicy, merge_policies, policy_from_json

__all__ = [
    "OPEN_CALLS_SQL",
    "PolicyOf",
    "answer_in_tx",
    "insert_calls_in_tx",
    "open_call",
    "session_policy_in_tx",
]

_log = logging.getLogger("claw_sessiond.store")

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
    found = conn.execute("SELECT tool_policy FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    return policy_from_json(found[0] if found else None)


class PolicyOf:
    """The policy an append runs under (its own merged over its session's), read once, when first asked."""

    __slots__ = ("_conn", "_job", "_policy")

    def __init__(self, conn: sqlite3.Connection, job: AppendJob) -> None:
        self._conn = conn
        self._job = job
        self._policy: ToolPolicy | None = None

    def __call__(self) -> ToolPolicy:
        if self._policy is None:
            self._policy = merge_policies(session_policy_in_tx(self._conn, self._job.session_id), self._job.tool_policy)
        return self._policy


def answer_in_tx(
    conn: sqlite3.Connection, session_id: str, prepared: PreparedMessage, position: int, policy: PolicyOf
) -> tuple[str, int]:
    """Admit a tool result stored at ``position``; returns its payload and how many entries it hid (0 or 1).

    A result for a call whose only answer is a synthetic repair supersedes it:
    the result's payload records the repair's position (``supersedes``), the
    repair is hidden by the result (``hidden_by``) and the call's result moves
    to the result. A result for an unknown call is stored with ``orphan`` when
    the policy allows it, and pairs with nothing.

    Raises:
        ToolCallStateError: reason UNKNOWN_TOOL_CALL or TOOL_CALL_ALREADY_ANSWERED.
    """
    msg = prepared.message
    found = conn.execute(
        "SELECT result_position FROM tool_calls WHERE session_id = ? AND call_id = ?", (session_id, msg.tool_call_id)
    ).fetchone()
    known = found is not None
    answered_at: int | None = found[0] if known else None
    by_repair = False
    if answered_at is not None:
        kind = conn.execute(
            "SELECT type FROM events WHERE session_id = ? AND position = ?", (session_id, answered_at)
        ).fetchone()
        by_repair = kind is not None and kind[0] == "repair"
    admission = rules.admit_tool_result(
        msg.tool_call_id,
        known,
        answered_at,
        answered_by_repair=by_repair,
        allow_orphan=not known and policy().allow_orphan_results,
    )
    if admission == "orphan":
        return encode_message(dataclasses.replace(msg, orphan=True)), 0
    conn.execute(
        "UPDATE tool_calls SET result_position = ? WHERE session_id = ? AND call_id = ?",
        (position, session_id, msg.tool_call_id),
    )
    if admission == "pair":
        return prepared.payload, 0
    assert answered_at is not None
    conn.execute(
        "UPDATE events SET hidden_by = ? WHERE session_id = ? AND position = ?", (position, session_id, answered_at)
    )
    # The audit trail: the result's payload names the repair it superseded; the log line says it happened.
    _log.info(
        "event=repair_superseded session=%s repair_position=%d result_position=%d", session_id, answered_at, position
    )
    return encode_message(dataclasses.replace(msg, supersedes=answered_at)), 1


def insert_calls_in_tx(
    conn: sqlite3.Connection, session_id: str, prepared: PreparedMessage, position: int, run_id: str
) -> None:
    """Index the calls an assistant message makes (an id-less call is not indexed: never paired or repaired).

    Raises:
        InvalidRequestError: reason DUPLICATE_TOOL_CALL_ID, a call id already in the visible history.
    """
    for index, call in enumerate(prepared.message.tool_calls):
        if not call.id:
            continue
        cur = conn.execute(
            "INSERT OR IGNORE INTO tool_calls(session_id, call_id, assistant_position, call_index, run_id, "
            "pending, repair_mode) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session_id, call.id, position, index, run_id, int(call.pending), call.repair_mode),
        )
        rules.check_call_inserted(call.id, cur.rowcount != 0)


#: Positions looked up per query (well under SQLite's 32766 parameters).
_IDS_PER_QUERY: Final = 500
