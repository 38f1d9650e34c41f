"""EditTail and the erasing Clear in SQLite: ``*_in_tx`` functions that run in the writer's transaction.

An edit reads the tail it removes backwards from the end through the
``events_position`` index (``edits.TailWalk`` decides what each row means),
checks the pending calls of the removed entries by their keys in
``tool_calls``, writes the ``edit`` event, marks the removed events
``hidden_by`` it, drops the removed calls' rows and reopens the calls whose
results went, and then appends the replacements with Append's own
transaction code (``tx.append_in_tx``). Every statement goes through an
index by key or by a range of positions at the end: the cost is that of
the entries touched, not of the history.

An erasing clear deletes the session's history events (the rows with a
position), its tool-call rows and their search-index entries (FTS5
'optimize', as Delete), replaces the content hashes of its stored history
requests, and writes the clear (``tx.clear_in_tx``) saying how many events
went. The caller checkpoints after the commit, as for a Delete.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from ... import edits, rules
from ...events import encode_edit, message_from_payload
from ...model import ClearResult, EditJob, EditResult, Message, now_rfc3339
from .tx import (
    SessionRow,
    _ensure_session_in_tx,
    _erase_search_index_in_tx,
    _insert_event_in_tx,
    _stored_request_in_tx,
    append_in_tx,
    clear_in_tx,
    session_in_tx,
)

__all__ = ["edit_in_tx", "erase_clear_in_tx"]

#: Keys looked up per statement (well under SQLite's 32766 parameters).
_KEYS_PER_QUERY: Final = 500
_WALK_SQL: Final = (
    "SELECT position, type, hidden_by IS NOT NULL, CASE WHEN type = 'edit' THEN payload END, "
    "length(CAST(payload AS BLOB)) + coalesce(length(item), 0) FROM events "
    "WHERE session_id = ? AND position > ? AND position <= ? ORDER BY position DESC LIMIT ?"
)


def _chunks(values: Sequence[Any]) -> list[Sequence[Any]]:
    return [values[i : i + _KEYS_PER_QUERY] for i in range(0, len(values), _KEYS_PER_QUERY)]


def _removed_in_tx(conn: sqlite3.Connection, job: EditJob, row: SessionRow) -> list[Message]:
    """The visible entries the edit removes, in position order (read from the end of the history)."""
    walk = edits.TailWalk(
        remove_last=job.remove_last,
        after_position=job.after_position,
        clear_position=row.clear_position,
        last_position=row.last_position,
    )
    while not walk.done:
        floor, cursor = walk.window()
        rows = conn.execute(_WALK_SQL, (job.session_id, floor, cursor, walk.batch())).fetchall()
        if not rows:
            walk.exhausted()
            break
        for r in rows:
            walk.see(int(r[0]), str(r[1]), bool(r[2]), r[3], int(r[4] or 0))
    if job.remove_last:
        edits.check_remove_count(job.remove_last, row.message_count, len(walk.removed))
    positions = sorted(walk.removed)
    found: list[Any] = []
    for part in _chunks(positions):
        found += conn.execute(
            "SELECT position, type, trace_id, ts, payload, format, item FROM events "
            f"WHERE session_id = ? AND position IN ({','.join('?' * len(part))})",
            (job.session_id, *part),
        ).fetchall()
    found.sort(key=lambda r: r[0])
    return [message_from_payload(*r) for r in found]


def _pending_in_tx(conn: sqlite3.Connection, session_id: str, removed: Sequence[Message]) -> list[str]:
    """Pending calls still unanswered among the calls the removed entries made."""
    call_ids = [c.id for m in removed for c in m.tool_calls if c.id]
    out: list[str] = []
    for part in _chunks(call_ids):
        out += [
            str(r[0])
            for r in conn.execute(
                "SELECT call_id FROM tool_calls WHERE session_id = ? AND pending = 1 AND result_position IS NULL "
                f"AND call_id IN ({','.join('?' * len(part))})",
                (session_id, *part),
            )
        ]
    return out


def edit_in_tx(conn: sqlite3.Connection, job: EditJob, max_open_calls: int = 0) -> EditResult:
    """Edit the tail of a session in the caller's transaction (``max_open_calls``: as Append's; 0 for no limit).

    Raises:
        SequenceConflictError, InvalidRequestError, PreconditionError, ToolCallStateError: nothing written.
    """
    sid = job.session_id
    stored = _stored_request_in_tx(conn, sid, job.request_id)
    record = rules.replay_record(job.request_id, "edit", job.fingerprint, stored)
    if record is not None:
        return edits.edit_from_record(record)
    row = session_in_tx(conn, sid)
    last = row.last_position if row is not None else 0
    rules.check_expected(job.expected_last_position, last)
    if job.remove_last:
        edits.check_remove_count(job.remove_last, row.message_count if row is not None else 0)
    if job.after_position:
        edits.check_after_position(job.after_position, last)
    removed = _removed_in_tx(conn, job, row) if row is not None else []
    edits.check_pending(_pending_in_tx(conn, sid, removed), job.discard_pending)
    now = now_rfc3339()
    if row is None:
        row = _ensure_session_in_tx(conn, sid, job.workdir, now)
    position = row.last_position + 1
    _insert_event_in_tx(conn, sid, position, "edit", job.trace_id, now, encode_edit([m.position for m in removed]))
    conn.executemany(
        "UPDATE events SET hidden_by = ? WHERE session_id = ? AND position = ?",
        ((position, sid, m.position) for m in removed),
    )
    # A removed result reopens its call (unless the call goes too); a removed call leaves the index.
    conn.executemany(
        "UPDATE tool_calls SET result_position = NULL WHERE session_id = ? AND call_id = ? AND result_position = ?",
        ((sid, m.tool_call_id, m.position) for m in removed if m.tool_call_id),
    )
    conn.executemany(
        "DELETE FROM tool_calls WHERE session_id = ? AND call_id = ? AND assistant_position = ?",
        ((sid, c.id, m.position) for m in removed for c in m.tool_calls),
    )
    conn.execute(
        "UPDATE sessions SET last_position = ?, message_count = message_count - ?, updated_at = ?, "
        "workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
        (position, len(removed), now, job.workdir, job.workdir, sid),
    )
    first = last = 0
    if job.replacements is not None:
        appended = append_in_tx(conn, job.replacements, max_open_calls)
        first, last = appended.first_position, appended.last_position
    result = EditResult(removed, position, first, last, job.trace_id)
    if job.request_id:
        conn.execute(
            "INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
            "VALUES (?, ?, 'edit', ?, ?, ?)",
            (sid, job.request_id, job.fingerprint, edits.edit_record(result), now),
        )
    return result


def erase_clear_in_tx(
    conn: sqlite3.Connection,
    session_id: str,
    request_id: str,
    fp: str,
    expected: int,
    workdir: str,
    trace_id: str,
) -> ClearResult:
    """Erase the session's history and write a clear saying how many events went (caller's transaction).

    Raises:
        SequenceConflictError: nothing written.
    """
    record = rules.replay_record(request_id, "clear", fp, _stored_request_in_tx(conn, session_id, request_id))
    if record is not None:
        return rules.clear_from_record(record)
    row = session_in_tx(conn, session_id)
    rules.check_expected(expected, row.last_position if row is not None else 0)
    erased = 0
    if row is not None:
        # Through ``events_position``: every history event of the session, and no usage, state or audit event.
        erased = conn.execute(
            "DELETE FROM events WHERE session_id = ? AND position IS NOT NULL", (session_id,)
        ).rowcount
        conn.execute("DELETE FROM tool_calls WHERE session_id = ?", (session_id,))
        conn.execute(
            f"UPDATE requests SET fingerprint = ? WHERE session_id = ? "
            f"AND kind IN ({','.join('?' * len(rules.CONTENT_REQUEST_KINDS))})",
            (rules.ERASED_FINGERPRINT, session_id, *rules.CONTENT_REQUEST_KINDS),
        )
        if erased:
            _erase_search_index_in_tx(conn)
    return clear_in_tx(conn, session_id, request_id, fp, expected, workdir, trace_id, erased)
