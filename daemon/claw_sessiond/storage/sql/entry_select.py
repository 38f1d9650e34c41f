"""Choosing visible entries by client id, prefix or range (``select_positions`` of both ports), once for both SQL
backends.

One statement, run in the caller's transaction by the write port (a DeleteEntries) and by a Load's
snapshot. Ids and a prefix go through ``events_client_id`` (SQLite: named with ``INDEXED BY``, the
``{client_id_index}`` spot, or its planner walks ``events_position`` over the whole history), a prefix
as the range ``[prefix, selection.prefix_end(prefix))`` of it in its stored form
(:attr:`~.dialect.Dialect.text`: PostgreSQL's NUL-free form keeps prefixes and order). The inner query
is fenced (the ``{fence}`` spot: PostgreSQL's ``OFFSET 0``; SQLite flattens it, its hint is enough)
so that the planner picks that index and then sorts the few rows it finds, the position bounds
applying outside the fence. A list of ids says ``client_id IS NOT NULL`` too: it lets
PostgreSQL's generic plan use the partial index (``= ANY`` of a parameter does not prove it). A
range alone reads by position from its start.

Must never: decide (``loading.py``, ``editing.py`` and the rules do), or write.
"""

from __future__ import annotations

from typing import Final

from ...model import EntrySelection
from ...selection import prefix_end
from .dialect import Conn, Dialect

__all__ = ["select_positions"]

_INNER: Final = (
    "SELECT position, type FROM (SELECT position, type FROM events{index} WHERE session_id = $1 "
    "AND hidden_by IS NULL AND type NOT IN ('clear', 'edit')"
)
_RANGE: Final = "position > $2 AND position <= $3"
_BY_ID: Final = _INNER.format(index="{client_id_index}")


async def select_positions(
    d: Dialect, conn: Conn, session_id: str, chosen: EntrySelection, limit: int
) -> list[tuple[int, str]]:
    """``(position, event type)`` of the visible entries ``chosen`` picks, in position order, at most ``limit``.

    With ids the list may be run in slices (SQLite's ``IN`` lists): the slices' rows are merged in order.
    """
    head: tuple[object, ...] = (session_id, chosen.after, chosen.upto, *((limit,) if limit else ()))
    tail = " ORDER BY position" + (" LIMIT $4" if limit else "")
    n = len(head)
    if chosen.client_ids:
        listed = f" AND client_id IS NOT NULL AND client_id = ANY(${n + 1}::text[])"
        sql = f"{_BY_ID}{listed}{{fence}}) AS chosen WHERE {_RANGE}{tail}"
        rows = await d.each(conn, sql, [d.text(i) for i in chosen.client_ids], *head)
    else:
        if chosen.client_id_prefix:
            low = d.text(chosen.client_id_prefix)
            high = prefix_end(low)
            bounds = f" AND client_id >= ${n + 1}" + (f" AND client_id < ${n + 2}" if high is not None else "")
            sql = f"{_BY_ID}{bounds}{{fence}}) AS chosen WHERE {_RANGE}{tail}"
            head += (low, *((high,) if high is not None else ()))
        else:
            sql = f"{_INNER.format(index='')} AND {_RANGE}{{fence}}) AS chosen{tail}"
        rows = list(await conn.fetch(d.sql[sql], *head))
    found = sorted((int(r[0]), str(r[1])) for r in rows)
    return found[:limit] if limit else found
