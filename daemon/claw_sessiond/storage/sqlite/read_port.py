"""A Load's snapshot reads in SQLite (``storage/port.py``'s :class:`~claw_sessiond.storage.port.ReadPort`).

:class:`SQLiteReadPort` is ``storage/sql/read_port.py``'s reads on one of the storage's read
connections (its ``sqlite3`` connection, on its own thread), inside the caller's read transaction; the writer's
:class:`~claw_sessiond.storage.sqlite.port.SQLitePort` answers the verbs of the same name in the
repair transaction with the same statements. A Load's first page may read an entry's encoded reply
form (``reads.REPLY``).

Must never: decide (``loading.py`` and the rules do), or write.
"""

from __future__ import annotations

import sqlite3

from ..sql.read_port import SqlReadPort
from .conns import WriterConn
from .reads import SQLitePageReads

__all__ = ["SQLiteReadPort"]


class SQLiteReadPort(SqlReadPort):
    """The snapshot reads over a read connection's ``sqlite3`` connection, on its own thread, in the caller's
    read transaction (``reading.Readers.in_snapshot``): every statement answers at once."""

    __slots__ = ()

    PAGES = SQLitePageReads

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(WriterConn(conn), on_loop=False)
