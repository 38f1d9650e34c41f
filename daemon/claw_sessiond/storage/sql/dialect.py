"""A SQL dialect: one statement text, rendered once for SQLite or PostgreSQL, and the connection shape.

Every statement of ``storage/sql/`` is written once in a neutral form, PostgreSQL's but for a few
named spots:

- placeholders ``$1``, ``$2``, ... (SQLite's rendering: ``?1``, ``?2``, ...: the same numbers, so an
  argument may be named twice);
- ``{name}`` for a spot the dialects spell differently (:attr:`Dialect.spots`: the transaction's
  time, a lock clause, an index hint, the bytes of a stored event, ...);
- ``col = ANY($n::type[])`` for membership in a list passed as the statement's *last* argument:
  one array parameter on PostgreSQL, ``col IN (?k, ?k+1, ...)`` over slices of the list on SQLite
  (:meth:`Dialect.each`), numbered after the other placeholders (one of them, a ``LIMIT``, may follow
  the list in the text).

A statement is rendered the first time it runs and kept (:attr:`Dialect.sql`, a dict keyed by the
neutral text): a verb's only per-call cost is one dict lookup. What is kept is bounded: every
statement is a fixed text but for the few built from bounded variants (``listing.py``: a page
cursor or none, a chunk boundary or none, up to ``state.MAX_LABELS`` labels). The verbs run on a :class:`Conn`:
asyncpg's connection as it is, and SQLite's two connections (the writer's ``sqlite3`` connection
and aiosqlite's readers) behind small adapters of the same shape (``sqlite/conns.py``).

Must never: hold state beyond the rendered statements, or know a table's meaning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

__all__ = ["IDS_PER_QUERY", "Conn", "Dialect", "changed"]

#: Ids put in one ``IN (...)`` list where a list is not one parameter (well under SQLite's 32766 parameters).
IDS_PER_QUERY: Final = 500

_SPOT: Final = re.compile(r"\{(\w+)\}")
_ANY: Final = re.compile(r"(\S+) = ANY\(\$\d+::\w+\[\]\)")
_NUMBERED: Final = re.compile(r"\$(\d+)")


class Conn(Protocol):
    """What a verb asks of a connection (asyncpg's names; ``args`` are the placeholders' values in order)."""

    async def fetch(self, sql: str, *args: Any) -> Sequence[Any]: ...

    async def fetchrow(self, sql: str, *args: Any) -> Any: ...

    async def fetchval(self, sql: str, *args: Any) -> Any: ...

    async def execute(self, sql: str, *args: Any) -> Any: ...

    async def executemany(self, sql: str, args: Any) -> Any: ...


def changed(status: Any) -> int:
    """How many rows a statement changed, from what :meth:`Conn.execute` answered (asyncpg's ``"DELETE 3"``, or
    the count itself)."""
    return int(str(status).split()[-1])


class _Rendered(dict[str, str]):
    """Neutral statement text -> the dialect's, rendered on first use."""

    __slots__ = ("_render",)

    def __init__(self, render: Callable[[str], str]) -> None:
        super().__init__()
        self._render = render

    def __missing__(self, neutral: str) -> str:
        text = self[neutral] = self._render(neutral)
        return text


@dataclass(eq=False)
class Dialect:
    """How one backend spells the neutral statements, and the few values it stores differently."""

    #: ``"sqlite"`` or ``"postgres"``.
    name: str
    #: The text of each ``{name}`` spot.
    spots: Mapping[str, str]
    #: True: ``$n`` placeholders and a list as one array parameter (PostgreSQL); False: ``?n`` and ``IN`` lists.
    arrays: bool
    #: A string a column keeps that may hold NUL, as stored (PostgreSQL: ``nul_text.db_text``), and read back.
    text: Callable[[str], str]
    from_text: Callable[[str], str]
    #: Rendered statements by their neutral text (see the module docstring).
    sql: _Rendered = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.sql = _Rendered(self.render)

    def render(self, neutral: str) -> str:
        """``neutral`` in this dialect.

        Raises:
            KeyError: a ``{spot}`` this dialect does not name (a defect of the statement).
        """
        text = _SPOT.sub(lambda m: self.spots[m.group(1)], neutral)
        if self.arrays:
            return text
        return _NUMBERED.sub(r"?\1", _ANY.sub(r"\1 IN ({ids})", text))

    async def each(self, conn: Conn, neutral: str, ids: Sequence[Any], *head: Any) -> list[Any]:
        """The rows of ``neutral`` (one ``= ANY`` list, its last argument) run with ``head`` and ``ids``."""
        sql = self.sql[neutral]
        if self.arrays:
            return list(await conn.fetch(sql, *head, list(ids)))
        out: list[Any] = []
        for i in range(0, len(ids), IDS_PER_QUERY):
            part = ids[i : i + IDS_PER_QUERY]
            first = len(head) + 1  # numbered: a placeholder after the list (a LIMIT) keeps its number
            listed = ",".join(f"?{n}" for n in range(first, first + len(part)))
            out.extend(await conn.fetch(sql.format(ids=listed), *head, *part))
        return out
