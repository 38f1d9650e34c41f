"""EditTail and the erasing Clear in PostgreSQL, in the caller's transaction with the session row locked.

The same steps as the SQLite backend's ``edit_tx.py`` (whose docstring
explains them): the tail is read backwards from the end (``edits.TailWalk``
decides what each row means), pending calls are checked, the ``edit`` event
is written and the removed events marked ``hidden_by`` it, their calls
leave the index or reopen, and the replacements go through Append's own
transaction code. An erasing clear deletes the history events and tool-call
rows, replaces the content hashes of its stored history requests and writes
the clear with the count; the bytes go with the next vacuum (logical
erasure, docs/postgres.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ... import edits, rules
from ...events import encode_edit, message_from_payload
from ...model import ClearResult, EditJob, EditResult, Message
from ..nul_text import db_text, from_db_text
from .tx import SessionRow, _insert_event_in_tx, _stored_request_in_tx, append_in_tx, clear_in_tx, lock_session_in_tx

__all__ = ["edit_in_tx", "erase_clear_in_tx"]

_WALK_SQL: Final = (
    "SELECT position, type, hidden_by IS NOT NULL, CASE WHEN type = 'edit' THEN payload END, "
    "octet_length(payload) + coalesce(octet_length(item), 0) FROM events "
    "WHERE session_id = $1 AND position > $2 AND position <= $3 ORDER BY position DESC LIMIT $4"
)


async def _removed_in_tx(conn: Any, job: EditJob, row: SessionRow) -> list[Message]:
    """The visible entries the edit removes, in position order (read from the end of the history)."""
    walk = edits.TailWalk(
        remove_last=job.remove_last,
        after_position=job.after_position,
        clear_position=row.clear_position,
        last_position=row.last_position,
    )
    while not walk.done:
        floor, cursor = walk.window()
        rows = await conn.fetch(_WALK_SQL, job.session_id, floor, cursor, walk.batch())
        if not rows:
            walk.exhausted()
            break
        for r in rows:
            walk.see(int(r[0]), str(r[1]), bool(r[2]), r[3], int(r[4] or 0))
    if job.remove_last:
        edits.check_remove_count(job.remove_last, row.message_count, len(walk.removed))
    found = await conn.fetch(
        "SELECT position, type, trace_id, ts, payload, format, item FROM events "
        "WHERE session_id = $1 AND position = ANY($2::bigint[]) ORDER BY position",
        job.session_id,
        sorted(walk.removed),
    )
    return [message_from_payload(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6]) for r in found]


async def _pending_in_tx(conn: Any, session_id: str, removed: Sequence[Message]) -> list[str]:
    """Pending calls still unanswered among the calls the removed entries made."""
    call_ids = [c.id for m in removed for c in m.tool_calls if c.id]
    if not call_ids:
        return []
    rows = await conn.fetch(
        "SELECT call_id FROM tool_calls WHERE session_id = $1 AND pending AND result_position IS NULL "
        "AND call_id = ANY($2::text[])",
        session_id,
        [db_text(c) for c in call_ids],
    )
    return [from_db_text(r[0]) for r in rows]


async def edit_in_tx(conn: Any, job: EditJob, max_open_calls: int = 0) -> EditResult:
    """Edit the tail of a session in the caller's transaction (``max_open_calls``: as Append's).

    Raises:
        SequenceConflictError, InvalidRequestError, PreconditionError, ToolCallStateError: nothing written.
    """
    sid = job.session_id
    row, now = await lock_session_in_tx(conn, sid)
    record = rules.replay_record(
        job.request_id, "edit", job.fingerprint, await _stored_request_in_tx(conn, sid, job.request_id)
    )
    if record is not None:
        return edits.edit_from_record(record)
    last = row.last_position if row is not None else 0
    rules.check_expected(job.expected_last_position, last)
    if job.remove_last:
        edits.check_remove_count(job.remove_last, row.message_count if row is not None else 0)
    if job.after_position:
        edits.check_after_position(job.after_position, last)
    removed = await _removed_in_tx(conn, job, row) if row is not None else []
    edits.check_pending(await _pending_in_tx(conn, sid, removed), job.discard_pending)
    if row is None:
        row, now = await lock_session_in_tx(conn, sid, create_workdir=job.workdir)
        assert row is not None
    position = row.last_position + 1
    await _insert_event_in_tx(
        conn, sid, position, "edit", job.trace_id, now, encode_edit([m.position for m in removed])
    )
    if removed:
        await conn.executemany(
            "UPDATE events SET hidden_by = $1 WHERE session_id = $2 AND position = $3",
            [(position, sid, m.position) for m in removed],
        )
        # A removed result reopens its call (unless the call goes too); a removed call leaves the index.
        await conn.executemany(
            "UPDATE tool_calls SET result_position = NULL WHERE session_id = $1 AND call_id = $2 "
            "AND result_position = $3",
            [(sid, db_text(m.tool_call_id), m.position) for m in removed if m.tool_call_id],
        )
        await conn.executemany(
            "DELETE FROM tool_calls WHERE session_id = $1 AND call_id = $2 AND assistant_position = $3",
            [(sid, db_text(c.id), m.position) for m in removed for c in m.tool_calls],
        )
    await conn.execute(
        "UPDATE sessions SET last_position = $1, message_count = message_count - $2, updated_at = $3, "
        "workdir = CASE WHEN $4 <> '' THEN $4 ELSE workdir END WHERE session_id = $5",
        position,
        len(removed),
        now,
        job.workdir,
        sid,
    )
    first = last = 0
    if job.replacements is not None:
        appended = await append_in_tx(conn, job.replacements, max_open_calls)
        first, last = appended.first_position, appended.last_position
    result = EditResult(removed, position, first, last, job.trace_id)
    if job.request_id:
        await conn.execute(
            "INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
            "VALUES ($1, $2, 'edit', $3, $4, $5)",
            sid,
            job.request_id,
            job.fingerprint,
            edits.edit_record(result),
            now,
        )
    return result


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
