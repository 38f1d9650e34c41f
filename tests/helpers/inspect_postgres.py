""":class:`~tests.helpers.inspect.Stored` of a workspace's PostgreSQL database (``tests/helpers/backend.py``).

Each call reads in one ``REPEATABLE READ READ ONLY`` snapshot and changes nothing. The reads run on
one thread of their own with its own event loop (so an async test's loop is never blocked or
re-entered), which keeps one connection, to the database read last, between calls: a test that
snapshots the store around each of hundreds of requests does not open a server process for each.
Outside a transaction that connection holds no lock, so a daemon never waits for it; it is closed
when another database is read and at the end of the session (:func:`close_reader`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg

from tests.helpers.loop_thread import LoopThread

T = TypeVar("T")

_TABLES = ("sessions", "events", "tool_calls", "requests", "usage_by_model", "session_labels", "scope_states")


class _Reader:
    """At most one open connection (to the last database read), on a loop thread of its own."""

    def __init__(self) -> None:
        self._thread = LoopThread("inspect-postgres")
        self._url = ""
        self._conn: Any = None

    def read(self, url: str, fn: Callable[[Any], Awaitable[T]]) -> T:
        return self._thread.run(lambda: self._read(url, fn), 60)

    async def _read(self, url: str, fn: Callable[[Any], Awaitable[T]]) -> T:
        for attempt in (1, 2):
            if self._conn is not None and (self._url != url or self._conn.is_closed()):
                await self._drop()
            if self._conn is None:
                self._conn = await asyncpg.connect(url, server_settings={"search_path": "claw_sessiond"})
                self._url = url
            try:
                async with self._conn.transaction(isolation="repeatable_read", readonly=True):
                    return await fn(self._conn)
            except (asyncpg.exceptions.ConnectionDoesNotExistError, asyncpg.exceptions.AdminShutdownError):
                await self._drop()  # the server cut the kept connection (a restart): once more, anew
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close(timeout=5)

    def close(self) -> None:
        """Close the kept connection and stop the thread (before the throwaway server stops)."""
        self._thread.stop(self._drop, 10)


_READER = _Reader()


def close_reader() -> None:
    """Close the connection the reads keep (``tests/conftest.py`` calls it at the session's end)."""
    _READER.close()


class PostgresStored:
    """What a daemon stored in its PostgreSQL database (the schema ``claw_sessiond``)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _read(self, fn: Callable[[Any], Awaitable[T]]) -> T:
        return _READER.read(self.url, fn)

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
