"""A Load's snapshot reads in SQLite (``storage/port.py``'s :class:`~claw_sessiond.storage.port.ReadPort`).

:class:`SQLiteReadPort` is ``storage/sql/read_port.py``'s reads on one of the storage's aiosqlite
read connections, inside the caller's read transaction; the writer's
:class:`~claw_sessiond.storage.sqlite.port.SQLitePort` answers the verbs of the same name in the
repair transaction with the same statements. A Load's first page may read an entry's encoded reply
form (``reads.REPLY``).

Must never: decide (``loading.py`` and the rules do), or write.
"""

from __future__ import annotations

import sqlite3

import aiosqlite

from ..sql.read_port import SqlReadPort
from .conns import ReaderConn, WriterConn, reader
from .reads import SQLitePageReads

__all__ = ["SQLiteReadPort"]


class SQLiteReadPort(SqlReadPort):
    """The snapshot reads over a read connection, in the caller's read transaction: an aiosqlite one (from the
    loop), or its ``sqlite3`` connection (on its own thread)."""

    __slots__ = ()

    PAGES = SQLitePageReads

    def __init__(self, conn: aiosqlite.Connection | ReaderConn | sqlite3.Connection) -> None:
        if isinstance(conn, sqlite3.Connection):
            super().__init__(WriterConn(conn), on_loop=False)
        else:
            super().__init__(reader(conn))
