""":class:`~tests.helpers.inspect.Stored` of a workspace's PostgreSQL database (``tests/helpers/backend.py``).

Reads with one short connection per call (asyncpg, run on a thread of its own so that an async
test's loop is never blocked or re-entered), in one ``REPEATABLE READ READ ONLY`` snapshot, and
changes nothing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg

T = TypeVar("T")

_TABLES = ("sessions", "events", "tool_calls", "requests", "usage_by_model", "session_labels", "scope_states")


class PostgresStored:
    """What a daemon stored in its PostgreSQL database (the schema ``claw_sessiond``)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _read(self, fn: Callable[[Any], Awaitable[T]]) -> T:
        async def run() -> T:
            conn = await asyncpg.connect(self.url, server_settings={"search_path": "claw_sessiond"})
            try:
                async with conn.transaction(isolation="repeatable_read", readonly=True):
                    return await fn(conn)
            finally:
                await conn.close()

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, run()).result(60)

    def sessions(self) -> list[Any]:
        from tests.helpers.inspect import StoredSession

        cols = ", ".join(StoredSession.__dataclass_fields__)

        async def fn(conn: Any) -> list[Any]:
            return list(await conn.fetch(f"SELECT {cols} FROM sessions ORDER BY session_id"))

        return [StoredSession(*row) for row in self._read(fn)]

    def events(self, session_id: str | None = None) -> list[Any]:
        from tests.helpers.inspect import StoredEvent

        sql = (
            "SELECT event_id, session_id, position, type, payload, coalesce(format, ''), coalesce(item, ''::bytea), "
            "hidden_by FROM events"
        )

        async def fn(conn: Any) -> list[Any]:
            if session_id is None:
                return list(await conn.fetch(f"{sql} ORDER BY event_id"))
            return list(await conn.fetch(f"{sql} WHERE session_id = $1 ORDER BY event_id", session_id))

        return [
            StoredEvent(e, s, p, t, json.loads(payload), f, bytes(i), h)
            for e, s, p, t, payload, f, i, h in self._read(fn)
        ]

    def request_records(self) -> int:
        async def fn(conn: Any) -> int:
            return int(await conn.fetchval("SELECT count(*) FROM requests"))

        return self._read(fn)

    def snapshot(self) -> object:
        async def fn(conn: Any) -> object:
            out = []
            for table in _TABLES:
                # every column but the generated search vector, every row, in one order
                rows = await conn.fetch(f"SELECT * FROM {table}")
                out.append((table, sorted(repr(tuple(v for k, v in r.items() if k != "search")) for r in rows)))
            return tuple(out)

        return self._read(fn)

    def write_ahead_log_empty(self) -> bool:
        return True  # no log beside the store that the daemon owns

    def integrity_problems(self) -> list[str]:
        return []
