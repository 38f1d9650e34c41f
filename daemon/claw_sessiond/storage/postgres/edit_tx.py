"""The erasing Clear in PostgreSQL, in the caller's transaction with the session row locked (EditTail's
sequence is ``storage/editing.py``).

An erasing clear deletes the history events and tool-call rows, replaces the
content hashes of its stored history requests and writes the clear with the
count; the bytes go with the next vacuum (logical erasure, docs/postgres.md).
"""

from __future__ import annotations

from typing import Any

from ... import rules
from ...model import ClearResult
from .tx import _stored_request_in_tx, clear_in_tx, lock_session_in_tx

__all__ = ["erase_clear_in_tx"]


async def erase_clear_in_tx(
    conn: Any, session_id: str, request_id: str, fp: str, expected: int, workdir: str, trace_id: str
) -> ClearResult:
    """Erase the session's history and write a clear saying how many events went (caller's transaction).

    Raises:
        SequenceConflictError: nothing written.
    """
    row, _now = await lock_session_in_tx(conn, session_id)
    record = rules.replay_record(request_id, "clear", fp, await _stored_request_in_tx(conn, session_id, request_id))
    if record is not None:
        return rules.clear_from_record(record)
    rules.check_expected(expected, row.last_position if row is not None else 0)
    erased = 0
    if row is not None:
        done = await conn.execute("DELETE FROM events WHERE session_id = $1 AND position IS NOT NULL", session_id)
        erased = int(done.split()[-1])
        await conn.execute("DELETE FROM tool_calls WHERE session_id = $1", session_id)
        await conn.execute(
            "UPDATE requests SET fingerprint = $1 WHERE session_id = $2 AND kind = ANY($3::text[])",
            rules.ERASED_FINGERPRINT,
            session_id,
            list(rules.CONTENT_REQUEST_KINDS),
        )
    return await clear_in_tx(conn, session_id, request_id, fp, expected, workdir, trace_id, erased)
