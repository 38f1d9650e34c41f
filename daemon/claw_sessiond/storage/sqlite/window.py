"""Bounded Loads in SQLite: where a window of the history starts, and what it holds.

A bounded Load (``LoadRequest.last`` / ``after_position`` / ``after_time``,
:class:`~claw_sessiond.model.LoadWindow`) returns the visible entries from a
start position ``S`` to the end, in the full Load's order restricted to them
(``history.project_window``). Its cost does not depend on the history's length:

- ``S`` is found through ``events_position`` read backwards from the end
  (``last``: N index entries), directly (``after_position``), or through
  ``events_session_ts`` (``after_time``: the index entries after the time);
- whether anything visible lies before ``S`` (``complete``) is one step
  backwards from ``S``;
- the window's tool results whose call was made before ``S`` (they come
  first, as in the full history) are found from the window's results and
  the ``tool_calls`` primary key;
- the window's entries are read page by page like a full Load's
  (``reads.py``), from ``S`` on.

Nothing here reads an event before ``S`` except that one step, and the
open calls a Load reads anyway (through ``tool_calls_open``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import aiosqlite

from ...history import project_window
from ...model import LoadWindow, Message
from ..nul_text import decoded_sql, payload_sql
from . import reads

__all__ = ["WindowRead", "read_window"]

#: SQL: the call id of the result ``e`` as stored in ``tool_calls`` (``json_extract`` alone returns an id only up to
#: a NUL: an id holding one would not find its call).
_RESULT_CALL_ID: Final = decoded_sql(f"json_extract({payload_sql('e.payload', 'char')}, '$.tool_call_id')", "char")

#: History events that are entries (not a clear, not an edit record), and not hidden by an edit.
_VISIBLE: Final = "type NOT IN ('clear', 'edit') AND hidden_by IS NULL"


@dataclass(frozen=True, slots=True)
class WindowRead:
    """A window's bounds, and its entries if they fit one page."""

    start_after: int
    """The window is the visible entries after this position (up to the bound of the read)."""
    complete: bool
    """True if no visible entry lies before the window."""
    lead: tuple[int, ...]
    """Positions of the window's results of calls made before it, in the order they come first."""
    messages: list[Message] | None
    """The window in the full Load's order, or None if it is larger than one page (read it by pages)."""
    events_read: int
    """History events read (the window's first page)."""


async def _one(conn: aiosqlite.Connection, sql: str, params: Sequence[Any]) -> Any:
    rows = list(await conn.execute_fetchall(sql, params))
    return rows[0][0] if rows else None


async def _start(
    conn: aiosqlite.Connection, session_id: str, clear_position: int, last_position: int, window: LoadWindow
) -> int:
    """The first position of the window (``last_position + 1`` for an empty one)."""
    if window.last:
        found = await _one(
            conn,
            f"SELECT position FROM events WHERE session_id = ? AND position > ? AND position <= ? AND {_VISIBLE} "
            "ORDER BY position DESC LIMIT 1 OFFSET ?",
            (session_id, clear_position, last_position, window.last - 1),
        )
        return clear_position + 1 if found is None else int(found)
    if window.after_time:
        # Through the index of history times: the entries stored after the time, not the history.
        found = await _one(
            conn,
            "SELECT min(position) FROM events INDEXED BY events_session_ts "
            "WHERE session_id = ? AND ts > ? AND position IS NOT NULL AND position > ? AND position <= ?",
            (session_id, window.after_time, clear_position, last_position),
        )
        return last_position + 1 if found is None else int(found)
    return max(window.after_position, clear_position) + 1


async def read_window(
    conn: aiosqlite.Connection,
    session_id: str,
    clear_position: int,
    last_position: int,
    window: LoadWindow,
    reading: reads.Reading,
) -> WindowRead:
    """Read a window's bounds (and its entries, if they fit one page) in the caller's read transaction."""
    start = await _start(conn, session_id, clear_position, last_position, window)
    before = await _one(
        conn,
        f"SELECT position FROM events WHERE session_id = ? AND position > ? AND position < ? AND {_VISIBLE} "
        "ORDER BY position DESC LIMIT 1",
        (session_id, clear_position, start),
    )
    lead_rows = await conn.execute_fetchall(
        "SELECT e.position FROM events AS e JOIN tool_calls AS t "
        f"ON t.session_id = e.session_id AND t.call_id = {_RESULT_CALL_ID} "
        "WHERE e.session_id = ? AND e.position >= ? AND e.position <= ? AND e.type IN ('tool_result', 'repair') "
        "AND e.hidden_by IS NULL AND t.assistant_position < ? ORDER BY t.assistant_position, e.position",
        (session_id, start, last_position, start),
    )
    lead = tuple(int(r[0]) for r in lead_rows)
    rows, fits = await reads.main_rows(conn, session_id, start - 1, last_position, reading.cols)
    decode = reading.decode
    messages = project_window([decode(*r) for r in rows], lead) if fits else None
    return WindowRead(start - 1, before is None, lead, messages, len(rows))
