"""Choosing visible entries by client id, prefix or range in PostgreSQL (``select_positions`` of both ports).

One statement, run in the caller's transaction by the write port (a DeleteEntries) and by a
Load's snapshot. Ids and a prefix go through ``events_client_id`` (a ``COLLATE "C"`` column: a
prefix is the range ``[prefix, selection.prefix_end(prefix))`` of it, in the stored NUL-free form
``nul_text.db_text``, which keeps prefixes and order); the inner query is fenced (``OFFSET 0``)
so that the planner picks that index and then sorts the few rows it finds, rather than walking
``events`` by position over the whole history. A range alone reads by position from its start.

Must never: decide (``loading.py``, ``editing.py`` and the rules do), or write.
"""

from __future__ import annotations

from typing import Any, Final

from ...model import EntrySelection
from ...selection import prefix_end
from ..nul_text import db_text

__all__ = ["select_positions"]

_WHERE: Final = (
    "session_id = $1 AND position > $2 AND position <= $3 AND hidden_by IS NULL AND type NOT IN ('clear', 'edit')"
)


async def select_positions(conn: Any, session_id: str, chosen: EntrySelection, limit: int) -> list[tuple[int, str]]:
    """``(position, event type)`` of the visible entries ``chosen`` picks, in position order, at most ``limit``."""
    params: list[Any] = [session_id, chosen.after, chosen.upto]
    where = _WHERE
    if chosen.client_ids:
        params.append([db_text(i) for i in chosen.client_ids])
        where += " AND client_id = ANY($4::text[])"
    elif chosen.client_id_prefix:
        low = db_text(chosen.client_id_prefix)
        high = prefix_end(low)
        params.append(low)
        where += " AND client_id >= $4"
        if high is not None:
            params.append(high)
            where += " AND client_id < $5"
    sql = f"SELECT position, type FROM (SELECT position, type FROM events WHERE {where} OFFSET 0) AS chosen"
    sql += " ORDER BY position"
    if limit:
        params.append(limit)
        sql += f" LIMIT ${len(params)}"
    return [(int(r[0]), str(r[1])) for r in await conn.fetch(sql, *params)]
