"""SQLite's dialect of the shared SQL (``storage/sql/``) and its two connections in the shape the verbs ask.

- :data:`SQLITE`: ``?n`` placeholders, lists as ``IN`` lists, the index hints the planner needs,
  a stored event's bytes as ``length(CAST(payload AS BLOB))``; strings are kept as they are (SQLite's
  text holds NUL).
- :class:`WriterConn`: the writer's ``sqlite3`` connection, on the writer thread (or a reader's, on that
  reader's thread: a Load's snapshot). Its methods are coroutines that never wait, so a verb over it
  finishes at its first step (``steps.run_sync``).
- :class:`ReaderConn`: an aiosqlite read connection.

Must never: wait in a :class:`WriterConn` method (the writer thread has no event loop).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final

import aiosqlite

from ..nul_text import decoded_sql, payload_sql
from ..sql.dialect import Dialect

__all__ = ["EVENT_BYTES", "SQLITE", "ReaderConn", "WriterConn"]

#: What an event weighs in a page: its payload and its item (large items fill a page alone).
EVENT_BYTES: Final = "length(CAST(payload AS BLOB)) + coalesce(length(item), 0)"


def _same(text: str) -> str:
    return text


SQLITE: Final = Dialect(
    "sqlite",
    {
        "event_bytes": EVENT_BYTES,
        "strpos": "instr",
        "for_update": "",
        "for_share": "",
        "skip_locked": "",
        # Left to itself the planner walks the primary key, every call the session ever made.
        "open_calls_index": " INDEXED BY tool_calls_open",
        "ts_index": " INDEXED BY events_session_ts",
        "client_id_index": " INDEXED BY events_client_id",
        "fence": "",
        # The call id of the result ``e`` as stored in ``tool_calls`` (``json_extract`` alone returns an id only
        # up to a NUL: an id holding one would not find its call).
        "result_call_id": decoded_sql(f"json_extract({payload_sql('e.payload', 'char')}, '$.tool_call_id')", "char"),
        "drop_encoded": ", encoded = NULL, item_at = NULL",
        "like": "LIKE",
    },
    arrays=False,
    text=_same,
    from_text=_same,
)


class WriterConn:
    """The writer's connection, inside its transaction: every statement answers at once."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return self._c.execute(sql, args).fetchall()

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return self._c.execute(sql, args).fetchone()

    async def fetchval(self, sql: str, *args: Any) -> Any:
        # Every row read: a ``RETURNING`` statement is then done.
        rows = self._c.execute(sql, args).fetchall()
        return rows[0][0] if rows else None

    async def execute(self, sql: str, *args: Any) -> int:
        return self._c.execute(sql, args).rowcount

    async def executemany(self, sql: str, args: Any) -> None:
        self._c.executemany(sql, args)


class ReaderConn:
    """An aiosqlite read connection, inside the caller's read transaction."""

    __slots__ = ("_c",)

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._c = conn

    async def fetch(self, sql: str, *args: Any) -> Sequence[Any]:
        return list(await self._c.execute_fetchall(sql, args))

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        rows = await self.fetch(sql, *args)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, *args: Any) -> Any:
        rows = await self.fetch(sql, *args)
        return rows[0][0] if rows else None

    async def execute(self, sql: str, *args: Any) -> None:
        await self._c.execute(sql, args)

    async def executemany(self, sql: str, args: Any) -> None:
        await self._c.executemany(sql, args)
