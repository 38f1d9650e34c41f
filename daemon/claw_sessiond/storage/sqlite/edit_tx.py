"""The erasing Clear in SQLite: a function that runs in the writer's transaction (EditTail's sequence is
``storage/editing.py``).

An erasing clear deletes the session's history events (the rows with a
position), its tool-call rows and their search-index entries (FTS5
'optimize', as Delete), replaces the content hashes of its stored history
requests, and writes the clear (``tx.clear_in_tx``) saying how many events
went. The caller checkpoints after the commit, as for a Delete.
"""

from __future__ import annotations

import sqlite3

from ... import rules
from ...model import ClearResult
from .tx import (
    _erase_search_index_in_tx,
    _stored_request_in_tx,
    clear_in_tx,
    session_in_tx,
)

__all__ = ["erase_clear_in_tx"]


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
