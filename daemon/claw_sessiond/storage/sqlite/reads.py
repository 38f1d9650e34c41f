"""Reads in SQLite: a Load's snapshot reads, the page reads of the streaming RPCs (Load, Export, Watch), and
short read transactions.

:class:`SQLiteReadPort` is ``storage/sql/read_port.py``'s reads of a Load's snapshot
(``storage/port.py``'s :class:`~claw_sessiond.storage.port.ReadPort`) on one of the storage's read
connections (its ``sqlite3`` connection, on its own thread), inside the caller's read transaction; the
writer's :class:`~claw_sessiond.storage.sqlite.port.SQLitePort` answers the verbs of the same name in the
repair transaction with the same statements. A Load's first page may read an entry's encoded reply
form (``SQLitePageReads.READINGS``).

:class:`SQLitePageReads` is ``storage/sql/read_port.py``'s page reads on an aiosqlite read connection,
reading an entry's stored encoded reply form where a reply is all that is asked (``READINGS``);
:class:`V6ReadPort` and :class:`V6PageReads` are the same reads of a store of schema 6 opened read-only
(:func:`read_port_of` chooses them, once per open);
:func:`transactions` are the short read transactions of those steps (``sql/listing.snapshots``) and
of the whole-store reads (``storage/sql/store_reads.py``, ListSessions' chunked scans in
``storage/sql/listing.py``); :func:`lent` lends a read connection for a read of one statement.

Must never: decide (``loading.py`` and the rules do), write, or yield while holding a read connection.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Final

import aiosqlite

from ...events import message_from_payload, reply_entry
from ..sql.listing import Tx
from ..sql.read_port import HISTORY_COLS, Reading, SqlPageReads, SqlReadPort
from .conns import SQLITE, ReaderConn, WriterConn

__all__ = ["SQLitePageReads", "SQLiteReadPort", "V6PageReads", "V6ReadPort", "lent", "read_port_of", "transactions"]

Reader = Callable[[], AbstractAsyncContextManager[aiosqlite.Connection]]

#: An entry's whole encoded reply form (``Message.encoded``): as stored before schema 7 (``item_at`` NULL), or
#: from schema 7 with the item's bytes put back in at ``item_at`` (``entry_wire.splice``; the row's ``item``
#: holds them, so the item is stored once). ``||`` gives text of the same bytes (the database is UTF-8, and
#: nothing checks them): the CAST makes it a blob again. NULL where no form is stored.
_ENCODED: Final = (
    "CASE WHEN item_at IS NULL THEN encoded "
    "WHEN item_at = length(encoded) THEN CAST(encoded || item AS BLOB) "
    "ELSE CAST(substr(encoded, 1, item_at) || item || substr(encoded, item_at + 1) AS BLOB) END"
)
#: The same in a store of schema 6 (no ``item_at``: every stored form is whole), opened read-only.
_ENCODED_V6: Final = "encoded"
#: An entry that ``events.reply_entry`` sends as stored: for a reply, its payload and item are left unread
#: (its encoded form holds them; SQLite then copies neither out of the page).
_AS_STORED: Final = "encoded IS NOT NULL AND type IN ('system_message', 'user_message', 'other_entry')"


def _readings(encoded: str) -> tuple[Reading, Reading]:
    """How an entry is read whole (the history columns and its stored encoded reply form, the SQL ``encoded``: the
    offline CLI, anything that reads the entries themselves), and for a Load's reply only
    (``Storage.load(reply_only=True)``)."""
    reply_cols = (
        f"position, type, trace_id, ts, CASE WHEN {_AS_STORED} THEN NULL ELSE payload END, format, "
        f"CASE WHEN {_AS_STORED} THEN NULL ELSE item END, {encoded}"
    )
    return Reading(f"{HISTORY_COLS}, {encoded}", message_from_payload), Reading(reply_cols, reply_entry)


class SQLitePageReads(SqlPageReads):
    """The reads of one step of a paged history read (``storage/history_reads.py``, ``storage/sql/read_port.py``),
    on an aiosqlite read connection in the caller's read transaction."""

    __slots__ = ()

    DIALECT = SQLITE
    READINGS = _readings(_ENCODED)


class V6PageReads(SQLitePageReads):
    """The same in a store of schema 6, opened read-only (:func:`read_port_of`): nothing migrates it there."""

    __slots__ = ()

    READINGS = _readings(_ENCODED_V6)


class SQLiteReadPort(SqlReadPort):
    """The snapshot reads over a read connection's ``sqlite3`` connection, on its own thread, in the caller's
    read transaction (``reading.Readers.in_snapshot``): every statement answers at once."""

    __slots__ = ()

    PAGES = SQLitePageReads

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(WriterConn(conn), on_loop=False)


class V6ReadPort(SQLiteReadPort):
    """The same in a store of schema 6, opened read-only (:func:`read_port_of`)."""

    __slots__ = ()

    PAGES = V6PageReads


async def read_port_of(reader: Reader) -> type[SQLiteReadPort]:
    """The reads of the store that ``reader`` reads, by its schema: :class:`V6ReadPort` (and its page reads) where
    ``events`` has no ``item_at`` (a store of schema 6 opened read-only: ``SQLiteStorage.open_read_only``, which
    migrates nothing), else :class:`SQLiteReadPort`. A daemon's store is migrated before it reads."""
    async with (
        reader() as conn,
        conn.execute("SELECT 1 FROM pragma_table_info('events') WHERE name = 'item_at'") as cur,
    ):
        return SQLiteReadPort if await cur.fetchone() else V6ReadPort


def lent(reader: Reader) -> Tx:
    """``reader``'s connections in the verbs' shape (no transaction: each statement reads the newest commit)."""

    @contextlib.asynccontextmanager
    async def conn() -> AsyncIterator[ReaderConn]:
        async with reader() as c:
            yield ReaderConn(c)

    return conn


def transactions(reader: Reader) -> Tx:
    """Short read transactions on ``reader``'s connections."""

    @contextlib.asynccontextmanager
    async def tx() -> AsyncIterator[ReaderConn]:
        async with reader() as conn:
            try:
                await conn.execute("BEGIN")  # inside try: queued even if the await is cancelled
                yield ReaderConn(conn)
            finally:
                await conn.execute("COMMIT")

    return tx
