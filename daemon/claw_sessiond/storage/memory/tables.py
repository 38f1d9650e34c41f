"""The reference backend's tables: rows as the SQL backends store them, and the undo log of a transaction.

Each table is a dictionary keyed as the SQL table's primary key; rows are immutable (a write puts
a new row), so that every change is one ``put`` or ``drop`` of a key, and a transaction that fails
puts back what it changed (:class:`Tx`, newest first): all or nothing, as the contract asks.

Order: ``events`` is keyed by event id; a row put back by a rollback may land after newer keys in
the dictionary, so whoever needs event order sorts the ids (:meth:`Tables.session_event_ids`).

Must never: decide (the sequences of ``storage/`` do), or keep a reference to a row that a caller
could change in place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final

from ...errors import StorageUnavailableError
from ...model import Usage
from ...state import EMPTY
from ..port import SessionRow, usage_values

__all__ = ["CallRow", "EventRow", "RequestRow", "SessionRecord", "Tables", "Tx", "event_bytes"]


@dataclass(frozen=True, slots=True)
class EventRow:
    """A row of ``events`` (the columns of SQLite's, ``encoded`` and ``item_at`` included)."""

    event_id: int
    session_id: str
    position: int | None
    type: str
    trace_id: str
    ts: str
    schema_version: int
    payload: str
    format: str | None = None
    item: bytes | None = None
    client_id: str | None = None
    hidden_by: int | None = None
    encoded: bytes | None = None
    item_at: int | None = None

    def history(self) -> tuple[Any, ...]:
        """``(position, type, trace_id, ts, payload, format, item)``: a history row as the page reads give it."""
        return (self.position, self.type, self.trace_id, self.ts, self.payload, self.format, self.item)


def event_bytes(row: EventRow) -> int:
    """What an event weighs in a page: its payload's UTF-8 bytes and its item's."""
    return len(row.payload.encode("utf-8", "surrogatepass")) + len(row.item or b"")


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A row of ``sessions``: the :class:`~claw_sessiond.storage.port.SessionRow` columns, then the settings."""

    session_id: str
    workdir: str
    created_at: str
    updated_at: str
    last_position: int = 0
    clear_position: int = 0
    message_count: int = 0
    usage: Usage = field(default_factory=Usage)
    incarnation: str = ""
    state: str = EMPTY
    labels: str = EMPTY
    tool_policy: str = EMPTY
    forked_from: str = ""
    forked_at_position: int = 0

    def row(self) -> SessionRow:
        """Its :class:`~claw_sessiond.storage.port.SessionRow`."""
        return SessionRow(
            self.session_id,
            self.workdir,
            self.created_at,
            self.updated_at,
            self.last_position,
            self.clear_position,
            self.message_count,
            self.usage,
        )

    def values(self) -> tuple[Any, ...]:
        """``SESSION_COLS`` then ``SETTINGS_COLS``, as a ``SELECT`` of both answers."""
        return (
            self.session_id,
            self.workdir,
            self.created_at,
            self.updated_at,
            self.last_position,
            self.clear_position,
            self.message_count,
            *usage_values(self.usage),
            self.state,
            self.labels,
            self.tool_policy,
            self.forked_from,
            self.forked_at_position,
            self.incarnation,
        )


@dataclass(frozen=True, slots=True)
class CallRow:
    """A row of ``tool_calls``."""

    call_id: str
    assistant_position: int
    call_index: int
    result_position: int | None = None
    run_id: str = ""
    pending: bool = False
    repair_mode: str = ""
    synthetic_position: int | None = None


@dataclass(frozen=True, slots=True)
class RequestRow:
    """A row of ``requests``: an idempotency record."""

    kind: str
    fingerprint: str
    result: str
    created_at: str


_MISSING: Final = object()


@dataclass
class Tables:
    """Every table of one store; per-session tables are dictionaries of the session's rows."""

    sessions: dict[str, SessionRecord] = field(default_factory=dict)
    events: dict[int, EventRow] = field(default_factory=dict)
    #: session id -> {event id: None}: the session's events (unordered: see the module docstring).
    by_session: dict[str, dict[int, None]] = field(default_factory=dict)
    #: session id -> {position: event id}: ``events_position``.
    positions: dict[str, dict[int, int]] = field(default_factory=dict)
    calls: dict[str, dict[str, CallRow]] = field(default_factory=dict)
    requests: dict[str, dict[str, RequestRow]] = field(default_factory=dict)
    usage: dict[str, dict[tuple[str, str], Usage]] = field(default_factory=dict)
    #: scope -> (state, updated_at).
    scopes: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: ``last_event_id``: the newest event id given (ids are never reused, as AUTOINCREMENT's).
    counters: dict[str, int] = field(default_factory=lambda: {"last_event_id": 0})

    def session_event_ids(self, session_id: str) -> list[int]:
        """The session's event ids in event order."""
        return sorted(self.by_session.get(session_id, ()))

    def at(self, session_id: str, position: int) -> EventRow | None:
        """The session's event at ``position``, or None."""
        event_id = self.positions.get(session_id, {}).get(position)
        return None if event_id is None else self.events[event_id]

    def history(self, session_id: str, after: int, upto: int) -> list[EventRow]:
        """The session's history events in ``(after, upto]``, in position order."""
        found = self.positions.get(session_id, {})
        return [self.events[found[p]] for p in sorted(p for p in found if after < p <= upto)]


class Tx:
    """One transaction's changes to :class:`Tables`, each undone by :meth:`rollback` (newest first)."""

    __slots__ = ("_undo", "tables")

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self._undo: list[tuple[MutableMapping[Any, Any], Any, Any]] = []

    def put(self, table: MutableMapping[Any, Any], key: Any, value: Any) -> None:
        """``table[key] = value``, undoable."""
        self._undo.append((table, key, table.get(key, _MISSING)))
        table[key] = value

    def drop(self, table: MutableMapping[Any, Any], key: Any) -> None:
        """``del table[key]`` if it is there, undoable."""
        if key in table:
            self._undo.append((table, key, table[key]))
            del table[key]

    def part(self, table: MutableMapping[str, Any], session_id: str) -> Any:
        """The session's own dictionary in a per-session table, made (undoably) if it has none."""
        found = table.get(session_id)
        if found is None:
            found = {}
            self.put(table, session_id, found)
        return found

    def rollback(self) -> None:
        """Put back everything this transaction changed."""
        for table, key, old in reversed(self._undo):
            if old is _MISSING:
                table.pop(key, None)
            else:
                table[key] = old
        self._undo.clear()

    # -- rows

    def update_session(self, session_id: str, **changes: Any) -> None:
        """Change columns of the session's row (nothing if it is not stored)."""
        record = self.tables.sessions.get(session_id)
        if record is not None:
            self.put(self.tables.sessions, session_id, dataclasses.replace(record, **changes))

    def add_event(self, session_id: str, position: int | None, **columns: Any) -> int:
        """Insert an event with the next event id; its id.

        Raises:
            StorageUnavailableError: the session has an event at ``position`` already (``events_position`` is
                unique on the SQL backends too: a sequence never asks it, so this is a defect, refused whole).
        """
        if position is not None and position in self.tables.positions.get(session_id, {}):
            raise StorageUnavailableError(f"session {session_id!r} already has an event at position {position}")
        event_id = self.tables.counters["last_event_id"] + 1
        self.put(self.tables.counters, "last_event_id", event_id)
        self.put(self.tables.events, event_id, EventRow(event_id, session_id, position, **columns))
        self.put(self.part(self.tables.by_session, session_id), event_id, None)
        if position is not None:
            self.put(self.part(self.tables.positions, session_id), position, event_id)
        return event_id

    def update_event(self, row: EventRow, **changes: Any) -> None:
        """Change columns of an event."""
        self.put(self.tables.events, row.event_id, dataclasses.replace(row, **changes))

    def drop_event(self, row: EventRow) -> None:
        """Delete an event."""
        self.drop(self.tables.events, row.event_id)
        self.drop(self.tables.by_session.get(row.session_id, {}), row.event_id)
        if row.position is not None:
            self.drop(self.tables.positions.get(row.session_id, {}), row.position)

    def update_call(self, session_id: str, call_id: str, **changes: Any) -> None:
        """Change columns of an indexed call (nothing if it is not indexed)."""
        calls = self.tables.calls.get(session_id, {})
        if call_id in calls:
            self.put(calls, call_id, dataclasses.replace(calls[call_id], **changes))

    def drop_rows(self, table: dict[str, Any], session_id: str) -> None:
        """Delete every row of the session in a per-session table."""
        self.drop(table, session_id)
