"""ListSessions' scans and the page reads' snapshots, once for both SQL backends.

A scan that may touch every session runs in chunks of ``paging.SCAN_ROWS`` sessions, each in a
short read transaction of its own (a backend's :data:`Tx`: SQLite's ``BEGIN`` on a read connection,
PostgreSQL's ``REPEATABLE READ READ ONLY`` snapshot), so that a filter that matches nothing gives the
connection back between chunks, and cancellation stops it at the next one. The id is matched
literally (``port.like_pattern``), ASCII case-insensitive on both (SQLite's ``LIKE``, PostgreSQL's
``ILIKE``: the ``{like}`` spot). Labels go through the ``session_labels_match`` index.

The statements here are built from a few variants (a page cursor or none, a chunk boundary or none,
the number of labels, at most ``state.MAX_LABELS``): each variant is rendered once and kept.

Must never: hold a read connection across chunks.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from ...model import SessionSummary
from ..history_reads import Snapshots
from ..paging import SCAN_ROWS
from ..port import SESSION_COLS, PageReads, like_pattern, session_summary
from .dialect import Conn, Dialect

__all__ = ["Tx", "count_sessions", "label_match", "labelled_sessions", "scan_sessions", "snapshots"]

#: A connection of a backend's readers lent for one block, in a short read transaction of its own (or, where a
#: read is one statement, none: ``store_reads.py``).
Tx = Callable[[], AbstractAsyncContextManager[Conn]]

_COLS = f"{SESSION_COLS}, labels"
_ORDER = " ORDER BY updated_at DESC, session_id"


def snapshots(tx: Tx, pages: Callable[[Conn], PageReads]) -> Snapshots:
    """Short read transactions (``tx``), each handing the backend's page reads (``pages``) over its connection."""

    @contextlib.asynccontextmanager
    async def step() -> AsyncIterator[PageReads]:
        async with tx() as conn:
            yield pages(conn)

    return step


def _after(cursor: tuple[str, str] | None, first: int) -> tuple[str, tuple[str, ...]]:
    """The clause (and its parameters, numbered from ``$first``) keeping the sessions after a page cursor
    (updated_at, session_id) in the listing's order."""
    if cursor is None:
        return "", ()
    return f" AND updated_at <= ${first} AND (updated_at < ${first} OR session_id > ${first + 1})", cursor


async def scan_sessions(
    tx: Tx, d: Dialect, pattern: str, limit: int, start_after: tuple[str, str] | None = None
) -> list[SessionSummary]:
    """Sessions whose id matches the LIKE ``pattern``, most recently updated first (then by id), at most
    ``limit``, after the page cursor ``start_after`` (updated_at, session_id); in chunks (the module docstring).
    """
    out: list[SessionSummary] = []
    after = start_after  # (updated_at, session_id) of the last session scanned
    while len(out) < limit:
        where, params = _after(after, 1)
        n = len(params)
        async with tx() as conn:
            end = await conn.fetchrow(
                d.sql[f"SELECT updated_at, session_id FROM sessions WHERE true{where}{_ORDER} LIMIT 1 OFFSET ${n + 1}"],
                *params,
                SCAN_ROWS - 1,
            )
            upto = ""
            upto_params: tuple[Any, ...] = ()
            if end is not None:
                upto = f" AND updated_at >= ${n + 2} AND (updated_at > ${n + 2} OR session_id <= ${n + 3})"
                upto_params = (end[0], end[1])
            rows = await conn.fetch(
                d.sql[
                    f"SELECT {_COLS} FROM sessions WHERE session_id {{like}} ${n + 1} ESCAPE '\\'{where}{upto}"
                    f"{_ORDER} LIMIT ${n + 2 + len(upto_params)}"
                ],
                *params,
                pattern,
                *upto_params,
                limit - len(out),
            )
        out.extend(session_summary(values) for values in rows)
        if end is None:
            break
        after = (str(end[0]), str(end[1]))
    return out


def label_match(labels: Mapping[str, str], first: int) -> tuple[str, tuple[str, ...]]:
    """A ``WHERE`` clause (to append, neutral text) keeping the sessions that carry every one of ``labels``, its
    parameters numbered from ``$first``.

    Each label is one lookup in the ``session_labels_match`` index (key, value, session id); the sets
    are intersected, so the cost follows the sessions carrying the labels, not all sessions.
    """
    if not labels:
        return "", ()
    parts = [
        f"SELECT session_id FROM session_labels WHERE key = ${first + 2 * i} AND value = ${first + 2 * i + 1}"
        for i in range(len(labels))
    ]
    return f" AND session_id IN ({' INTERSECT '.join(parts)})", tuple(v for kv in sorted(labels.items()) for v in kv)


async def labelled_sessions(
    tx: Tx, d: Dialect, pattern: str, labels: Mapping[str, str], limit: int, start_after: tuple[str, str] | None
) -> list[SessionSummary]:
    """Like :func:`scan_sessions` for sessions that carry every one of ``labels`` (at least one), in one
    statement: the label index gives the matching sessions, then ordered and cut at ``limit``."""
    match, params = label_match(labels, 2)
    where, cursor = _after(start_after, 2 + len(params))
    sql = f"SELECT {_COLS} FROM sessions WHERE session_id {{like}} $1 ESCAPE '\\'{match}{where}{_ORDER} LIMIT "
    async with tx() as conn:
        rows = await conn.fetch(d.sql[sql + f"${2 + len(params) + len(cursor)}"], pattern, *params, *cursor, limit)
    return [session_summary(values) for values in rows]


async def count_sessions(conn: Conn, d: Dialect, id_contains: str, labels: Mapping[str, str]) -> int:
    """How many sessions match, in one statement. With no filter there is no ``WHERE`` at all: SQLite then
    counts the table's smallest index page by page instead of testing a LIKE on every row (measured: 0.8
    against 10 ms at 100,000 sessions)."""
    match, params = label_match(labels, 2 if id_contains else 1)
    if id_contains:
        where, args = f" WHERE session_id {{like}} $1 ESCAPE '\\'{match}", (like_pattern(id_contains), *params)
    else:
        where, args = (f" WHERE true{match}", params) if match else ("", ())
    return int(await conn.fetchval(d.sql[f"SELECT count(*) FROM sessions{where}"], *args))
