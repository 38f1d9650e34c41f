"""A Load's snapshot reads in PostgreSQL (``storage/port.py``'s :class:`~claw_sessiond.storage.port.ReadPort`).

:class:`PostgresReadPort` answers the reads of ``storage/loading.py``'s snapshot on a pooled
connection inside a ``REPEATABLE READ READ ONLY`` transaction (``reads.snapshot``). The reads
the repair transaction shares with it (the row and settings, the open calls, the entries at
positions) are the functions here, which :class:`~claw_sessiond.storage.postgres.port.PostgresPort`
calls too. The window's reads bound its cost as the SQLite backend's do (``sqlite/read_port.py``).
Call ids are stored in their NUL-free form (``nul_text.db_text``).

Must never: decide (``loading.py`` and the rules do), or write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ...history import OpenCall
from ...model import EntrySelection, HistoryCursor, Message, SessionSettings
from ...policy import ToolPolicy, policy_from_json
from .. import history_reads
from ..nul_text import from_db_text
from ..port import SESSION_COLS, SETTINGS_COLS, SETTINGS_COUNT, SessionRow, session_row, settings_of
from . import entry_reads, reads
from .texts import payload_json

__all__ = ["PostgresReadPort", "entries_at", "open_calls", "session_and_settings"]

#: The open tool calls of a session.
_OPEN_CALLS_SQL: Final = (
    "SELECT call_id, assistant_position, call_index, run_id, pending, repair_mode FROM tool_calls "
    "WHERE session_id = $1 AND result_position IS NULL"
)
#: History events that are entries (not a clear, not an edit record), and not hidden by an edit.
_VISIBLE: Final = "type NOT IN ('clear', 'edit') AND hidden_by IS NULL"


def _open_call(r: Sequence[Any]) -> OpenCall:
    return OpenCall(from_db_text(r[0]), int(r[1]), int(r[2]), str(r[3]), bool(r[4]), str(r[5]))


async def session_and_settings(conn: Any, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
    """The session's row and settings (both None if it is not stored), in the caller's transaction."""
    values = await conn.fetchrow(
        f"SELECT {SESSION_COLS}, {SETTINGS_COLS} FROM sessions WHERE session_id = $1", session_id
    )
    return (None, None) if values is None else (session_row(values), settings_of(values[-SETTINGS_COUNT:]))


async def open_calls(conn: Any, session_id: str, *, owned: bool = False) -> list[OpenCall]:
    """The session's open calls (``owned``: only those a run appended, or pending), in the caller's transaction."""
    sql = _OPEN_CALLS_SQL + (" AND (run_id <> '' OR pending)" if owned else "")
    return [_open_call(r) for r in await conn.fetch(sql, session_id)]


async def entries_at(conn: Any, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
    """``(position, payload, has an item)`` of the session's events at ``positions``, in the caller's transaction."""
    rows = await conn.fetch(
        "SELECT position, payload, item IS NOT NULL FROM events WHERE session_id = $1 AND position = ANY($2::bigint[])",
        session_id,
        list(positions),
    )
    return [(int(r[0]), str(r[1]), bool(r[2])) for r in rows]


class PostgresReadPort:
    """The snapshot reads over a pooled asyncpg connection, in the caller's read-only transaction."""

    __slots__ = ("_conn",)

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        return await session_and_settings(self._conn, session_id)

    async def open_calls(self, session_id: str) -> list[OpenCall]:
        return await open_calls(self._conn, session_id)

    async def session_policy(self, session_id: str) -> ToolPolicy:
        return policy_from_json(
            await self._conn.fetchval("SELECT tool_policy FROM sessions WHERE session_id = $1", session_id)
        )

    async def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        return await entries_at(self._conn, session_id, positions)

    async def history_page(
        self, session_id: str, after: int, last_position: int, reply_only: bool
    ) -> tuple[list[Message] | None, int]:
        # No encoded reply form is stored here: ``reply_only`` reads the whole entries.
        rows, complete = await reads.main_rows(self._conn, session_id, after, last_position)
        if not complete:
            return None, len(rows)
        return [reads.decode_row(r) for r in rows], len(rows)

    async def nth_visible_back(self, session_id: str, clear_position: int, last_position: int, n: int) -> int | None:
        found = await self._conn.fetchval(
            f"SELECT position FROM events WHERE session_id = $1 AND position > $2 AND position <= $3 AND {_VISIBLE} "
            "ORDER BY position DESC LIMIT 1 OFFSET $4",
            session_id,
            clear_position,
            last_position,
            n - 1,
        )
        return None if found is None else int(found)

    async def first_position_after_time(
        self, session_id: str, after_time: str, clear_position: int, last_position: int
    ) -> int | None:
        found = await self._conn.fetchval(
            "SELECT min(position) FROM events "
            "WHERE session_id = $1 AND ts > $2 AND position IS NOT NULL AND position > $3 AND position <= $4",
            session_id,
            after_time,
            clear_position,
            last_position,
        )
        return None if found is None else int(found)

    async def last_visible_before(self, session_id: str, clear_position: int, position: int) -> int | None:
        found = await self._conn.fetchval(
            f"SELECT position FROM events WHERE session_id = $1 AND position > $2 AND position < $3 AND {_VISIBLE} "
            "ORDER BY position DESC LIMIT 1",
            session_id,
            clear_position,
            position,
        )
        return None if found is None else int(found)

    async def lead_positions(self, session_id: str, start: int, last_position: int) -> tuple[int, ...]:
        rows = await self._conn.fetch(
            "SELECT e.position FROM events AS e JOIN tool_calls AS t "
            f"ON t.session_id = e.session_id AND t.call_id = ({payload_json('e.payload')} ->> 'tool_call_id') "
            "WHERE e.session_id = $1 AND e.position >= $2 AND e.position <= $3 AND e.type IN ('tool_result', 'repair') "
            "AND e.hidden_by IS NULL AND t.assistant_position < $2 ORDER BY t.assistant_position, e.position",
            session_id,
            start,
            last_position,
        )
        return tuple(int(r[0]) for r in rows)

    async def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        return await entry_reads.select_positions(self._conn, session_id, selection, limit)

    async def check_cursor(self, cursor: HistoryCursor) -> None:
        await history_reads.guard(reads.PostgresPageReads(self._conn), cursor)
