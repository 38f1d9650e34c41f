"""The transaction port in SQLite (``storage/port.py``): synchronous, on the writer thread, in its transaction.

The verbs are ``storage/sql/port.py``'s, over the writer's connection (``conns.WriterConn``, whose
statements answer at once, so ``steps.run_sync`` finishes each verb where the sequence yields it).
Only the writer opens transactions (``BEGIN IMMEDIATE``, which already serializes every write), so
the session row is a plain read here, and the write's time is the writer's clock, one for all its
statements. What differs from PostgreSQL is here: that row and time, the stored reply form of an
entry, and the search index an erasure cleans.

Must never: decide (ask a rule), open, commit or roll back a transaction, or be used off the
writer thread.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ...events import EVENT_SCHEMA_VERSION
from ...model import Repair, Usage, now_rfc3339
from ..port import SESSION_COLS, NewEntry, SessionRow, entry_columns, new_incarnation, session_row
from ..sql.port import SqlPort
from .conns import SQLITE, WriterConn
from .schema import INDEXED_TEXT, INDEXED_TYPES

if TYPE_CHECKING:
    from ...export import ImportedEvent

__all__ = ["SQLitePort", "erase_search_index_in_tx", "index_messages_after"]

_ROW_SQL: Final = f"SELECT {SESSION_COLS} FROM sessions WHERE session_id = ?"
#: Index the messages among rows of ``events`` (schema v6: the writer keeps the search index, no trigger does).
_INDEX_SQL: Final = (
    f"INSERT INTO message_fts(rowid, content) SELECT event_id, {INDEXED_TEXT} FROM events "
    f"WHERE {{rows}} AND type IN {INDEXED_TYPES}"
)
#: An append's new entries: its session's positions from first to last (``events_position``).
_INDEX_POSITIONS: Final = _INDEX_SQL.format(rows="session_id = ? AND position BETWEEN ? AND ?")
#: Every row inserted after a given event id (ids only grow: ``AUTOINCREMENT``).
_INDEX_AFTER: Final = _INDEX_SQL.format(rows="event_id > ?")
_LAST_EVENT_ID: Final = "SELECT coalesce(max(event_id), 0) FROM events"
#: History entries inserted per statement (at most 12 parameters a row: well under SQLite's 32766). One
#: statement for many rows: fewer statements to prepare and step, and (before schema v6, when a trigger
#: indexed each insert) fewer times the search index wrote its pending terms out.
_ENTRIES_PER_INSERT: Final = 500
#: The columns of every inserted entry, then those of its item (left out when no entry of the append has
#: one), then its client id (likewise): a column left out is NULL without a parameter bound for it.
_ENTRY_COLUMNS: Final = "session_id, position, type, trace_id, ts, schema_version, payload, encoded"
_ITEM_COLUMNS: Final = ", format, item, item_at"
_CLIENT_ID_COLUMN: Final = ", client_id"


@functools.lru_cache(maxsize=16)
def _insert_entries_sql(rows: int, with_items: bool, with_client_ids: bool) -> str:
    """The INSERT of ``rows`` history entries, with or without the item's and the client id's columns (the same
    text for the same shape: sqlite3 caches it)."""
    columns = _ENTRY_COLUMNS + (_ITEM_COLUMNS if with_items else "") + (_CLIENT_ID_COLUMN if with_client_ids else "")
    row = "(" + ", ".join("?" * (columns.count(",") + 1)) + ")"
    return f"INSERT INTO events({columns}) VALUES {', '.join([row] * rows)}"


class SQLitePort(SqlPort):
    """The port over the writer's connection, for one transaction."""

    __slots__ = ("_db", "_now")

    DIALECT = SQLITE

    def __init__(self, conn: sqlite3.Connection, now: str = "") -> None:
        super().__init__(WriterConn(conn))
        self._db = conn
        self._now = now or now_rfc3339()  # the write's time: one for all its statements

    async def session_row(self, session_id: str) -> tuple[SessionRow | None, str]:
        return session_row(self._db.execute(_ROW_SQL, (session_id,)).fetchone()), self._now

    async def ensure_session(self, session_id: str, workdir: str) -> tuple[SessionRow, str]:
        row = session_row(self._db.execute(_ROW_SQL, (session_id,)).fetchone())
        if row is not None:
            return row, self._now
        self._db.execute(
            "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation) VALUES (?, ?, ?, ?, ?)",
            (session_id, workdir, self._now, self._now, new_incarnation()),
        )
        return SessionRow(session_id, workdir, self._now, self._now, 0, 0, 0, Usage()), self._now

    async def insert_entries(self, session_id: str, entries: Sequence[NewEntry], trace_id: str, ts: str) -> None:
        """Beside each payload: the item (byte for byte) and client id where set, and the encoded reply form
        less the item's bytes, with the offset they go back in at (``entry_columns``); up to
        :data:`_ENTRIES_PER_INSERT` rows a statement.

        The item's columns and the client id are left out of the statement when no entry of the append
        has one (a column left out is NULL, and no parameter is bound for it): sqlite3 binds an int, a
        float or a str as it is, but passes a ``None`` (or ``bytes``) through its adapter registry first
        (``files.py`` registers the identity adapters; still a tuple built, a dict lookup and a call per
        value): a plain entry bound five such values and now binds one (its encoded form), an item entry
        three and now two.
        """
        with_items = any(entry[1].message.format for entry in entries)
        with_client_ids = any(entry[1].message.client_id for entry in entries)
        values: list[Any] = []
        for entry in entries:
            position, prepared, payload = entry
            fmt, item, encoded, item_at = entry_columns(entry, trace_id, ts)
            values += (
                session_id,
                position,
                prepared.event_type,
                trace_id,
                ts,
                EVENT_SCHEMA_VERSION,
                payload,
                encoded,
            )
            if with_items:
                values += (fmt, item, item_at)
            if with_client_ids:
                values.append(prepared.message.client_id or None)
        per_row = len(values) // len(entries) if entries else 0
        step = _ENTRIES_PER_INSERT * per_row
        for start in range(0, len(values), step):  # nearly every Append: one statement, its text cached
            chunk = values[start : start + step]
            self._db.execute(_insert_entries_sql(len(chunk) // per_row, with_items, with_client_ids), chunk)
        if entries:  # the positions of one append only grow: nothing else of the session lies between
            self._db.execute(_INDEX_POSITIONS, (session_id, entries[0][0], entries[-1][0]))

    # The other verbs that insert history entries index what they inserted (:func:`index_messages_after`);
    # ``insert_event`` inserts none (usage, clear, edit, state, settings and audit events: never a message).

    async def copy_entries(self, source_id: str, session_id: str, after: int, upto: int) -> list[int]:
        last = self._last_event_id()
        copied = await super().copy_entries(source_id, session_id, after, upto)
        index_messages_after(self._db, last)
        return copied

    async def insert_events(self, session_id: str, events: Sequence[ImportedEvent]) -> None:
        last = self._last_event_id()
        await super().insert_events(session_id, events)
        index_messages_after(self._db, last)

    async def write_repairs(
        self, session_id: str, repairs: Sequence[Repair], payloads: Sequence[str], trace_id: str, now: str
    ) -> None:
        last = self._last_event_id()
        await super().write_repairs(session_id, repairs, payloads, trace_id, now)
        index_messages_after(self._db, last)

    def _last_event_id(self) -> int:
        return int(self._db.execute(_LAST_EVENT_ID).fetchone()[0])

    async def erase_history(self, session_id: str, fingerprint: str, kinds: Sequence[str]) -> int:
        """Also takes the erased messages' words out of the search index (:func:`erase_search_index_in_tx`)."""
        erased = await super().erase_history(session_id, fingerprint, kinds)
        if erased:
            erase_search_index_in_tx(self._db)
        return erased

    async def delete_session(self, session_id: str) -> int:
        """Also takes the deleted messages' words out of the search index (:func:`erase_search_index_in_tx`)."""
        count = await super().delete_session(session_id)
        if count:
            erase_search_index_in_tx(self._db)
        return count

    async def claim_session(
        self, session_id: str, workdir: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> str | None:
        now = self._now
        cur = self._db.execute(
            "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation, state, tool_policy, "
            "forked_from, forked_at_position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO NOTHING",
            (session_id, workdir, now, now, new_incarnation(), state, tool_policy, forked_from, forked_at_position),
        )
        return now if cur.rowcount == 1 else None


def index_messages_after(conn: sqlite3.Connection, event_id: int) -> None:
    """Put the messages among the events inserted after ``event_id`` into the search index (schema v6)."""
    conn.execute(_INDEX_AFTER, (event_id,))


def erase_search_index_in_tx(conn: sqlite3.Connection) -> None:
    """Take deleted messages' words out of the search index's pages, not just mark them deleted.

    The delete trigger (schema v3) only adds FTS5 tombstones: the words stay in
    the older index segments until a merge reaches them. 'optimize' merges every
    segment into one now, so with ``secure_delete`` the freed pages are zeroed
    and the checkpoint that follows every erasure clears the WAL. It rewrites the
    whole index (measured: 0.2 s for 50 000 messages), in the erasing transaction.
    """
    conn.execute("INSERT INTO message_fts(message_fts) VALUES ('optimize')")
