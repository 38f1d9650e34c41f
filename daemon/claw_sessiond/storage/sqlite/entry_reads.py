"""Choosing visible entries by client id, prefix or range in SQLite (``select_positions`` of both ports).

The statements are built once here and run by the writer's port (sqlite3, a DeleteEntries) and
by a Load's snapshot (aiosqlite). Ids and a prefix go through ``events_client_id`` (named with
``INDEXED BY``: the planner would otherwise walk ``events_position`` over the whole history), a
prefix as the range ``[prefix, selection.prefix_end(prefix))`` of it: the cost is the entries
whose client id matches, not the history. A range alone walks ``events_position`` from its start.

Must never: decide (``loading.py``, ``editing.py`` and the rules do), or write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, Final

from ...model import EntrySelection
from ...selection import prefix_end
from ..sql.dialect import Conn

__all__ = ["select_on_reader", "select_on_writer"]

_SELECT: Final = (
    "SELECT position, type FROM events {index}WHERE session_id = ? AND position > ? AND position <= ? "
    "AND hidden_by IS NULL AND type NOT IN ('clear', 'edit')"
)
_BY_ID: Final = "INDEXED BY events_client_id "
#: Client ids per statement (at most ``--max-batch-messages`` in all; well under SQLite's 32766 parameters).
_IDS_PER_STATEMENT: Final = 500

Statement = tuple[str, tuple[Any, ...]]


def _statements(session_id: str, chosen: EntrySelection, limit: int) -> Iterator[Statement]:
    head = (session_id, chosen.after, chosen.upto)
    tail = (" ORDER BY position LIMIT ?", (limit,)) if limit else (" ORDER BY position", ())
    if chosen.client_ids:
        ids = chosen.client_ids
        for part in (ids[i : i + _IDS_PER_STATEMENT] for i in range(0, len(ids), _IDS_PER_STATEMENT)):
            sql = _SELECT.format(index=_BY_ID) + f" AND client_id IN ({','.join('?' * len(part))})"
            yield sql + tail[0], (*head, *part, *tail[1])
    elif chosen.client_id_prefix:
        end = prefix_end(chosen.client_id_prefix)
        sql = _SELECT.format(index=_BY_ID) + " AND client_id >= ?" + (" AND client_id < ?" if end else "")
        yield sql + tail[0], (*head, chosen.client_id_prefix, *((end,) if end else ()), *tail[1])
    else:
        yield _SELECT.format(index="") + tail[0], (*head, *tail[1])


def _found(rows: Sequence[Sequence[Any]], limit: int) -> list[tuple[int, str]]:
    out = sorted((int(r[0]), str(r[1])) for r in rows)
    return out[:limit] if limit else out


def select_on_writer(
    conn: sqlite3.Connection, session_id: str, chosen: EntrySelection, limit: int
) -> list[tuple[int, str]]:
    """``Port.select_positions`` in the writer's transaction."""
    rows: list[Any] = []
    for sql, params in _statements(session_id, chosen, limit):
        rows.extend(conn.execute(sql, params).fetchall())
    return _found(rows, limit)


async def select_on_reader(conn: Conn, session_id: str, chosen: EntrySelection, limit: int) -> list[tuple[int, str]]:
    """``ReadPort.select_positions`` in the snapshot's read transaction."""
    rows: list[Any] = []
    for sql, params in _statements(session_id, chosen, limit):
        rows.extend(await conn.fetch(sql, *params))
    return _found(rows, limit)
