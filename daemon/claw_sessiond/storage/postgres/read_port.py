"""A Load's snapshot reads in PostgreSQL (``storage/port.py``'s :class:`~claw_sessiond.storage.port.ReadPort`).

:class:`PostgresReadPort` is ``storage/sql/read_port.py``'s reads on a pooled connection inside a
``REPEATABLE READ READ ONLY`` transaction (``reads.snapshot``). No encoded reply form is stored
here: a reply-only read reads the whole entries.

Must never: decide (``loading.py`` and the rules do), or write.
"""

from __future__ import annotations

from ..sql.read_port import SqlReadPort
from .reads import PostgresPageReads

__all__ = ["PostgresReadPort"]


class PostgresReadPort(SqlReadPort):
    """The snapshot reads over a pooled asyncpg connection, in the caller's read-only transaction."""

    __slots__ = ()

    PAGES = PostgresPageReads
