"""Tool calls and tool results in PostgreSQL under the caller's tool policy (``policy.py``).

The same decisions as the SQLite backend's ``calls_tx.py`` (``rules.admit_tool_result``:
paired, stored as an orphan, or superseding a synthetic repair; calls indexed with their
``pending`` flag and repair mode), in the caller's transaction, with the session row locked.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from ... import rules
from ...events import encode_message
from ...model import AppendJob, PreparedMessage
from ...policy import ToolPolicy, merge_policies, policy_from_json
from ..nul_text import db_text

__all__ = ["PolicyOf", "answer_in_tx", "insert_calls_in_tx", "session_policy_in_tx"]

_log = logging.getLogger("claw_sessiond.store")


class PolicyOf:
    """The policy an append runs under (its own merged over its session's), read once, when first asked."""

    __slots__ = ("_conn", "_job", "_policy")

    def __init__(self, conn: Any, job: AppendJob) -> None:
        self._conn = conn
        self._job = job
        self._policy: ToolPolicy | None = None

    async def get(self) -> ToolPolicy:
        if self._policy is None:
            stored = await session_policy_in_tx(self._conn, self._job.session_id)
            self._policy = merge_policies(stored, self._job.tool_policy)
        return self._policy


async def answer_in_tx(
    conn: Any, session_id: str, prepared: PreparedMessage, position: int, policy: PolicyOf
) -> tuple[str, int]:
    """Admit a tool result stored at ``position``; returns its payload and how many entries it hid (0 or 1).

    Raises:
        ToolCallStateError: reason UNKNOWN_TOOL_CALL or TOOL_CALL_ALREADY_ANSWERED.
    """
    msg = prepared.message
    found = await conn.fetchrow(
        "SELECT result_position FROM tool_calls WHERE session_id = $1 AND call_id = $2",
        session_id,
        db_text(msg.tool_call_id),
    )
    known = found is not None
    answered_at: int | None = None if found is None or found[0] is None else int(found[0])
    by_repair = False
    if answered_at is not None:
        kind = await conn.fetchval(
            "SELECT type FROM events WHERE session_id = $1 AND position = $2", session_id, answered_at
        )
        by_repair = kind == "repair"
    admission = rules.admit_tool_result(
        msg.tool_call_id,
        known,
        answered_at,
        answered_by_repair=by_repair,
        allow_orphan=not known and (await policy.get()).allow_orphan_results,
    )
    if admission == "orphan":
        return encode_message(dataclasses.replace(msg, orphan=True)), 0
    await conn.execute(
        "UPDATE tool_calls SET result_position = $1 WHERE session_id = $2 AND call_id = $3",
        position,
        session_id,
        db_text(msg.tool_call_id),
    )
    if admission == "pair":
        return prepared.payload, 0
    assert answered_at is not None
    await conn.execute(
        "UPDATE events SET hidden_by = $1 WHERE session_id = $2 AND position = $3", position, session_id, answered_at
    )
    _log.info(
        "event=repair_superseded session=%s repair_position=%d result_position=%d", session_id, answered_at, position
    )
    return encode_message(dataclasses.replace(msg, supersedes=answered_at)), 1


async def insert_calls_in_tx(conn: Any, session_id: str, prepared: PreparedMessage, position: int, run_id: str) -> None:
    """Index the calls an assistant message makes (an id-less call is not indexed).

    Raises:
        InvalidRequestError: reason DUPLICATE_TOOL_CALL_ID, a call id already in the visible history.
    """
    for index, call in enumerate(prepared.message.tool_calls):
        if not call.id:
            continue
        inserted = await conn.fetchval(
            "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, run_id, pending, repair_mode) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING 1",
            session_id,
            db_text(call.id),
            position,
            index,
            run_id,
            bool(call.pending),
            call.repair_mode,
        )
        rules.check_call_inserted(call.id, inserted is not None)


async def session_policy_in_tx(conn: Any, session_id: str) -> ToolPolicy:
    """The session's stored tool policy (empty for an unknown session)."""
    return policy_from_json(await conn.fetchval("SELECT tool_policy FROM sessions WHERE session_id = $1", session_id))
