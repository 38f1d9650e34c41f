"""The PostgreSQL side of the writes not yet written once over the port: ``*_in_tx`` coroutines.

Append, RecordUsage, Clear, RecordEvent and Delete are sequences in ``storage/writes.py`` run
over :class:`~.port.PostgresPort` (:func:`~.port.write_tx`), whose docstring states the order
rule (the session row locked first) and the clock; the names here run them, or one port verb,
for the transaction code that still calls them (edits, sessions, import, repair, Load).
"""

from __future__ import annotations

from typing import Any

from ...model import AppendJob, AppendResult, ClearResult
from ...rules import StoredRequest
from .. import writes
from ..port import SESSION_COLS, SessionRow, new_incarnation, session_meta, session_row
from .port import NOW_SQL, PostgresPort, write_tx

__all__ = [
    "NOW_SQL",
    "SESSION_COLS",
    "SessionRow",
    "append_in_tx",
    "clear_in_tx",
    "delete_in_tx",
    "lock_session_in_tx",
    "new_incarnation",
    "open_call_count_in_tx",
    "session_meta",
    "session_row",
]


async def lock_session_in_tx(
    conn: Any, session_id: str, *, create_workdir: str | None = None
) -> tuple[SessionRow | None, str]:
    """Lock the session's row (the first statement of every write) and read the transaction's time.

    With ``create_workdir`` (not None) a missing row is created first, so
    there is always a row to lock; a write that fails rolls the creation
    back with everything else. Returns the row (None if not stored and not
    created) and the time as text.
    """
    port = PostgresPort(conn)
    if create_workdir is None:
        return await port.session_row(session_id)
    return await port.ensure_session(session_id, create_workdir)


async def _stored_request_in_tx(conn: Any, session_id: str, request_id: str) -> StoredRequest | None:
    """The record of an earlier request with this id on this session, or None (also for no id)."""
    return await PostgresPort(conn).stored_request(session_id, request_id) if request_id else None


async def open_call_count_in_tx(conn: Any, session_id: str) -> int:
    return await PostgresPort(conn).open_call_count(session_id)


async def append_in_tx(conn: Any, job: AppendJob, max_open_calls: int = 0) -> AppendResult:
    """Append ``job`` in the caller's transaction (``writes.append``; ``max_open_calls``: 0 for no limit)."""
    return await write_tx(writes.append, job, max_open_calls)(conn)


async def clear_in_tx(
    conn: Any,
    session_id: str,
    request_id: str,
    fp: str,
    expected: int,
    workdir: str,
    trace_id: str,
    erased: int | None = None,
) -> ClearResult:
    """Write a clear (``writes.clear``; ``erased``: the events an erasing clear removed just before)."""
    return await write_tx(writes.clear, session_id, request_id, fp, expected, workdir, trace_id, erased)(conn)


async def delete_in_tx(conn: Any, session_id: str) -> int:
    """Delete every row of the session (``writes.delete``: its row locked first); returns how many events it had."""
    return await write_tx(writes.delete, session_id)(conn)
