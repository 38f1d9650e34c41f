"""Bounded Loads in PostgreSQL: where a window of the history starts, and what it holds.

The same reads as the SQLite backend's ``window.py`` (whose docstring
explains the cost bound): the start position through ``events_position``
read backwards (``last``), directly (``after_position``) or by time
(``after_time``); one step back for ``complete``; the window's results of
calls made before it (``lead``); and the first page of the window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ...history import project_window
from ...model import LoadWindow, Message
from . import reads
from .texts import payload_json

__all__ = ["WindowRead", "read_window"]

#: History events that are entries (not a clear, not an edit record), and not hidden by an edit.
_VISIBLE: Final = "type NOT IN ('clear', 'edit') AND hidden_by IS NULL"


@dataclass(frozen=True, slots=True)
class WindowRead:
    """A window's bounds, and its entries if they fit one page (see the SQLite ``window.WindowRead``)."""

    start_after: int
    complete: bool
    lead: tuple[int, ...]
    messages: list[Message] | None
    events_read: int


async def _start(conn: Any, session_id: str, clear_position: int, last_position: int, window: LoadWindow) -> int:
    """The first position of the window (``last_position + 1`` for an empty one)."""
    if window.last:
        found = await conn.fetchval(
            f"SELECT position FROM events WHERE session_id = $1 AND position > $2 AND position <= $3 AND {_VISIBLE} "
            "ORDER BY position DESC LIMIT 1 OFFSET $4",
            session_id,
            clear_position,
            last_position,
            window.last - 1,
        )
        return clear_position + 1 if found is None else int(found)
    if window.after_time:
        found = await conn.fetchval(
            "SELECT min(position) FROM events "
            "WHERE session_id = $1 AND ts > $2 AND position IS NOT NULL AND position > $3 AND position <= $4",
            session_id,
            window.after_time,
            clear_position,
            last_position,
        )
        return last_position + 1 if found is None else int(found)
    return max(window.after_position, clear_position) + 1


async def read_window(
    conn: Any, session_id: str, clear_position: int, last_position: int, window: LoadWindow, decode: reads.Decode
) -> WindowRead:
    """Read a window's bounds (and its entries, if they fit one page) in the caller's read transaction."""
    start = await _start(conn, session_id, clear_position, last_position, window)
    before = await conn.fetchval(
        f"SELECT position FROM events WHERE session_id = $1 AND position > $2 AND position < $3 AND {_VISIBLE} "
        "ORDER BY position DESC LIMIT 1",
        session_id,
        clear_position,
        start,
    )
    lead_rows = await conn.fetch(
        "SELECT e.position FROM events AS e JOIN tool_calls AS t "
        f"ON t.session_id = e.session_id AND t.call_id = ({payload_json('e.payload')} ->> 'tool_call_id') "
        "WHERE e.session_id = $1 AND e.position >= $2 AND e.position <= $3 AND e.type IN ('tool_result', 'repair') "
        "AND e.hidden_by IS NULL AND t.assistant_position < $2 ORDER BY t.assistant_position, e.position",
        session_id,
        start,
        last_position,
    )
    lead = tuple(int(r[0]) for r in lead_rows)
    rows, fits = await reads.main_rows(conn, session_id, start - 1, last_position)
    messages = (
        project_window([decode(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows], lead) if fits else None
    )
    return WindowRead(start - 1, before is None, lead, messages, len(rows))
