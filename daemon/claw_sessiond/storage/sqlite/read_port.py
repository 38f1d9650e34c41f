"""A Load's snapshot reads in SQLite (``storage/port.py``'s :class:`~claw_sessiond.storage.port.ReadPort`).

:class:`SQLiteReadPort` answers the reads of ``storage/loading.py``'s snapshot on one of the
storage's aiosqlite read connections, inside the caller's read transaction; the writer's
:class:`~claw_sessiond.storage.sqlite.port.SQLitePort` answers the verbs of the same name in the
repair transaction with the SQL kept here (one statement for both).

A bounded Load's reads (``loading.read_window``) cost what the window holds, not the history:
the start through ``events_position`` read backwards from the end (``last``: N index entries),
directly, or through ``events_session_ts`` (``after_time``: the index entries after the time);
one step back from the start; the window's results of calls made before it through the
``tool_calls`` primary key; then the window's first page (``reads.py``).

Must never: decide (``loading.py`` and the rules do), or write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any, Final

import aiosqlite

from ... import repair as repairing
from ...history import OpenCall
from ...model import EntrySelection, HistoryCursor, Message, SessionSettings
from ...policy import ToolPolicy, policy_from_json
from .. import history_reads
from ..nul_text import decoded_sql, payload_sql
from ..port import SESSION_COLS, SETTINGS_COLS, SETTINGS_COUNT, SessionRow, session_row, settings_of
from . import entry_reads, reads

__all__ = [
    "ENTRIES_AT_SQL",
    "IDS_PER_QUERY",
    "OPEN_CALLS_SQL",
    "OWNED_OPEN_CALLS_SQL",
    "SESSION_AND_SETTINGS_SQL",
    "STILL_OPEN_SQL",
    "SQLiteReadPort",
    "entry",
    "open_call",
    "slices",
]

#: Ids looked up per statement (well under SQLite's 32766 parameters).
IDS_PER_QUERY: Final = 500
SESSION_AND_SETTINGS_SQL: Final = f"SELECT {SESSION_COLS}, {SETTINGS_COLS} FROM sessions WHERE session_id = ?"
ENTRIES_AT_SQL: Final = (
    "SELECT position, payload, item IS NOT NULL FROM events WHERE session_id = ? AND position IN ({ids})"
)
STILL_OPEN_SQL: Final = (
    "SELECT call_id FROM tool_calls WHERE session_id = ? AND result_position IS NULL AND call_id IN ({ids})"
)
#: The open tool calls of a session (columns in the order of ``history.OpenCall``): shared by the snapshot
#: (aiosqlite) and the writer's repair (sqlite3). Through the partial index of open calls: left to itself the
#: planner walks the primary key, every call the session ever made (a Load's cost then grew with the history).
OPEN_CALLS_SQL: Final = (
    "SELECT call_id, assistant_position, call_index, run_id, pending, repair_mode FROM tool_calls "
    "INDEXED BY tool_calls_open WHERE session_id = ? AND result_position IS NULL"
)
#: Only calls appended by a run, or pending, can be in flight.
OWNED_OPEN_CALLS_SQL: Final = OPEN_CALLS_SQL + " AND (run_id != '' OR pending != 0)"
_POLICY_SQL: Final = "SELECT tool_policy FROM sessions WHERE session_id = ?"

#: SQL: the call id of the result ``e`` as stored in ``tool_calls`` (``json_extract`` alone returns an id only up to
#: a NUL: an id holding one would not find its call).
_RESULT_CALL_ID: Final = decoded_sql(f"json_extract({payload_sql('e.payload', 'char')}, '$.tool_call_id')", "char")
#: History events that are entries (not a clear, not an edit record), and not hidden by an edit.
_VISIBLE: Final = "type NOT IN ('clear', 'edit') AND hidden_by IS NULL"


def slices(ids: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """``ids`` in slices of :data:`IDS_PER_QUERY`."""
    for i in range(0, len(ids), IDS_PER_QUERY):
        yield ids[i : i + IDS_PER_QUERY]


def open_call(row: Sequence[Any]) -> OpenCall:
    """An :data:`OPEN_CALLS_SQL` row as an :class:`~claw_sessiond.history.OpenCall`."""
    return OpenCall(str(row[0]), int(row[1]), int(row[2]), str(row[3]), bool(row[4]), str(row[5]))


def entry(r: Sequence[Any]) -> tuple[int, str, bool]:
    """An :data:`ENTRIES_AT_SQL` row."""
    return int(r[0]), str(r[1]), bool(r[2])


class SQLiteReadPort:
    """The snapshot reads over an aiosqlite read connection, in the caller's read transaction."""

    __slots__ = ("_conn",)

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def _one(self, sql: str, params: Sequence[Any]) -> Any:
        rows = list(await self._conn.execute_fetchall(sql, params))
        return rows[0][0] if rows else None

    async def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        rows = list(await self._conn.execute_fetchall(SESSION_AND_SETTINGS_SQL, (session_id,)))
        return (None, None) if not rows else (session_row(rows[0]), settings_of(rows[0][-SETTINGS_COUNT:]))

    async def open_calls(self, session_id: str) -> list[OpenCall]:
        rows = list(await self._conn.execute_fetchall(OPEN_CALLS_SQL, (session_id,)))
        # Up to --max-open-tool-calls rows: built in slices, yielding the loop between them.
        calls: list[OpenCall] = []
        for i in range(0, len(rows), repairing.PLAN_SLICE):
            if i:
                await asyncio.sleep(0)
            calls.extend(open_call(r) for r in rows[i : i + repairing.PLAN_SLICE])
        return calls

    async def session_policy(self, session_id: str) -> ToolPolicy:
        return policy_from_json(await self._one(_POLICY_SQL, (session_id,)))

    async def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        out: list[tuple[int, str, bool]] = []
        for part in slices(positions):
            sql = ENTRIES_AT_SQL.format(ids=",".join("?" * len(part)))
            out.extend(entry(r) for r in await self._conn.execute_fetchall(sql, (session_id, *part)))
        return out

    async def history_page(
        self, session_id: str, after: int, last_position: int, reply_only: bool
    ) -> tuple[list[Message] | None, int]:
        reading = reads.REPLY if reply_only else reads.WHOLE
        rows, complete = await reads.main_rows(self._conn, session_id, after, last_position, reading.cols)
        decode = reading.decode
        return ([decode(*r) for r in rows] if complete else None), len(rows)

    async def nth_visible_back(self, session_id: str, clear_position: int, last_position: int, n: int) -> int | None:
        found = await self._one(
            f"SELECT position FROM events WHERE session_id = ? AND position > ? AND position <= ? AND {_VISIBLE} "
            "ORDER BY position DESC LIMIT 1 OFFSET ?",
            (session_id, clear_position, last_position, n - 1),
        )
        return None if found is None else int(found)

    async def first_position_after_time(
        self, session_id: str, after_time: str, clear_position: int, last_position: int
    ) -> int | None:
        # Through the index of history times: the entries stored after the time, not the history.
        found = await self._one(
            "SELECT min(position) FROM events INDEXED BY events_session_ts "
            "WHERE session_id = ? AND ts > ? AND position IS NOT NULL AND position > ? AND position <= ?",
            (session_id, after_time, clear_position, last_position),
        )
        return None if found is None else int(found)

    async def last_visible_before(self, session_id: str, clear_position: int, position: int) -> int | None:
        found = await self._one(
            f"SELECT position FROM events WHERE session_id = ? AND position > ? AND position < ? AND {_VISIBLE} "
            "ORDER BY position DESC LIMIT 1",
            (session_id, clear_position, position),
        )
        return None if found is None else int(found)

    async def lead_positions(self, session_id: str, start: int, last_position: int) -> tuple[int, ...]:
        rows = await self._conn.execute_fetchall(
            "SELECT e.position FROM events AS e JOIN tool_calls AS t "
            f"ON t.session_id = e.session_id AND t.call_id = {_RESULT_CALL_ID} "
            "WHERE e.session_id = ? AND e.position >= ? AND e.position <= ? AND e.type IN ('tool_result', 'repair') "
            "AND e.hidden_by IS NULL AND t.assistant_position < ? ORDER BY t.assistant_position, e.position",
            (session_id, start, last_position, start),
        )
        return tuple(int(r[0]) for r in rows)

    async def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        return await entry_reads.select_on_reader(self._conn, session_id, selection, limit)

    async def check_cursor(self, cursor: HistoryCursor) -> None:
        await history_reads.guard(reads.SQLitePageReads(self._conn), cursor)
