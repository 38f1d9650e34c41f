"""Reads in PostgreSQL: a Load's snapshot reads, the page reads of the streaming RPCs (Load, Export, Watch),
and read snapshots.

:class:`PostgresReadPort` is ``storage/sql/read_port.py``'s reads of a Load's snapshot
(``storage/port.py``'s :class:`~claw_sessiond.storage.port.ReadPort`) on a pooled connection inside a
``REPEATABLE READ READ ONLY`` transaction (:func:`snapshot`). No encoded reply form is stored here: a
reply-only read reads the whole entries.

:class:`PostgresPageReads` is ``storage/sql/read_port.py``'s page reads on a pooled connection, each
step in its own short ``REPEATABLE READ READ ONLY`` transaction (:func:`snapshot`); :func:`transactions`
are those of the page reads (``sql/listing.snapshots``) and of the whole-store reads (``storage/sql/store_reads.py``,
ListSessions' chunked scans in ``storage/sql/listing.py``).

Must never: decide (``loading.py`` and the rules do), or write.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..sql.listing import Tx
from ..sql.read_port import SqlPageReads, SqlReadPort
from .dialect import POSTGRES

__all__ = ["PostgresPageReads", "PostgresReadPort", "snapshot", "transactions"]

Reader = Callable[[], AbstractAsyncContextManager[Any]]


def snapshot(conn: Any) -> Any:
    """A read-only transaction that sees one snapshot for all its statements."""
    return conn.transaction(isolation="repeatable_read", readonly=True)


class PostgresPageReads(SqlPageReads):
    """The reads of one step of a paged history read (``storage/history_reads.py``, ``storage/sql/read_port.py``),
    on a pooled connection in the caller's snapshot (:func:`snapshot`)."""

    __slots__ = ()

    DIALECT = POSTGRES


class PostgresReadPort(SqlReadPort):
    """The snapshot reads over a pooled asyncpg connection, in the caller's read-only transaction."""

    __slots__ = ()

    PAGES = PostgresPageReads


def transactions(reader: Reader) -> Tx:
    """Short read-only snapshots on ``reader``'s connections."""

    @contextlib.asynccontextmanager
    async def tx() -> AsyncIterator[Any]:
        async with reader() as conn, snapshot(conn):
            yield conn

    return tx
