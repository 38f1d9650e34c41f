"""Paged reads in SQLite: the page reads of the streaming RPCs (Load, Export, Watch), and short read transactions.

:class:`SQLitePageReads` is ``storage/sql/read_port.py``'s page reads on an aiosqlite read connection,
reading an entry's stored encoded reply form where a reply is all that is asked (:data:`REPLY`);
:func:`transactions` are the short read transactions of those steps and of ListSessions' chunked
scans (``storage/sql/listing.py``).

Must never: yield while holding a read connection.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Final

import aiosqlite

from ...events import message_from_payload, reply_entry
from ..history_reads import Snapshots
from ..sql import listing
from ..sql.listing import Tx
from ..sql.read_port import HISTORY_COLS, Reading, SqlPageReads
from .conns import SQLITE, ReaderConn

__all__ = ["REPLY", "WHOLE", "SQLitePageReads", "snapshots", "transactions"]

Reader = Callable[[], AbstractAsyncContextManager[aiosqlite.Connection]]

#: What a Load reads of an entry: the history columns and its stored encoded reply form (``Message.encoded``).
_LOAD_COLS: Final = f"{HISTORY_COLS}, encoded"
#: The same for a reply only: an entry that ``events.reply_entry`` sends as stored leaves its payload
#: and item unread (its encoded form holds them; SQLite then copies neither out of the page).
_AS_STORED: Final = "encoded IS NOT NULL AND type IN ('system_message', 'user_message', 'other_entry')"
_REPLY_COLS: Final = (
    f"position, type, trace_id, ts, CASE WHEN {_AS_STORED} THEN NULL ELSE payload END, format, "
    f"CASE WHEN {_AS_STORED} THEN NULL ELSE item END, encoded"
)
#: Whole messages (the offline CLI, anything that reads the entries themselves).
WHOLE: Final = Reading(_LOAD_COLS, message_from_payload)
#: Messages for a Load's reply only (``Storage.load(reply_only=True)``).
REPLY: Final = Reading(_REPLY_COLS, reply_entry)


class SQLitePageReads(SqlPageReads):
    """The reads of one step of a paged history read (``storage/history_reads.py``, ``storage/sql/read_port.py``),
    on an aiosqlite read connection in the caller's read transaction."""

    __slots__ = ()

    DIALECT = SQLITE
    READINGS = (WHOLE, REPLY)


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


def snapshots(reader: Reader) -> Snapshots:
    """Short read transactions on ``reader``'s connections, each handing a :class:`SQLitePageReads`."""
    return listing.snapshots(transactions(reader), SQLitePageReads)
