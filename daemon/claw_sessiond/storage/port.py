"""The transaction port: the named reads and writes a write's sequence asks of a backend, no decisions.

A write's sequence (``steps.py``; Append, RecordUsage, Clear, RecordEvent and Delete in
``writes.py``) is written once over this port, and so are the two SQL backends' verbs
(``sql/port.py``: one statement text per verb, rendered per dialect):

- ``sqlite/port.py`` (:class:`~claw_sessiond.storage.sqlite.port.SQLitePort`): on the writer
  thread, inside the writer's ``BEGIN IMMEDIATE`` (which already serializes every write, so
  :meth:`Port.session_row` is a plain read there); its verbs' coroutines never wait, and
  ``steps.run_sync`` finishes each at once;
- ``postgres/port.py`` (:class:`~claw_sessiond.storage.postgres.port.PostgresPort`):
  asynchronous (asyncpg), in the caller's transaction; :meth:`Port.session_row` takes the row
  lock (``SELECT … FOR UPDATE``, the first statement of every write: SPEC §8).

How the type checker sees them: this Protocol types each verb by its *answer* (what a
sequence gets back at its ``yield``). The reference backend's port (``memory/port.py``) conforms
to it as it is. The SQL ports' verbs are ``async def`` with the same parameters answering the
same type; a port is adapted to :class:`Port` once, where its driver starts a sequence
(``as_port``: a cast), and ``tests/unit/test_port.py`` proves every port has this Protocol's
verbs with its parameters, the SQL ones coroutines. So a sequence is typed once, against the
answers.

Verbs are named by what they read or write. Every verb runs inside the caller's transaction and
writes only what it names; whether to call it is the sequence's decision, never the port's.
The Protocol is laid out in sections, one per group of writes, so that the verbs a group adds
land in its own section.

Must never: decide (no rule is asked here), open or end a transaction, or hold state between calls.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

from ..entry_wire import append_stamp, encode_appended, encode_stored
from ..events import message_from_payload
from ..history import IndexedCall, OpenCall
from ..model import (
    EntrySelection,
    HistoryCursor,
    Message,
    PreparedMessage,
    Repair,
    SessionMeta,
    SessionSettings,
    SessionSummary,
    Usage,
    UsageDelta,
)
from ..policy import ToolPolicy
from ..rules import StoredRequest
from ..state import ScopeState, parse_labels

if TYPE_CHECKING:
    from ..export import ImportedEvent

__all__ = [
    "SESSION_COLS",
    "SETTINGS_COLS",
    "SETTINGS_COUNT",
    "NewEntry",
    "PageReads",
    "Port",
    "ReadPort",
    "SessionRow",
    "as_read_port",
    "entry_columns",
    "like_pattern",
    "new_incarnation",
    "session_meta",
    "session_row",
    "session_summary",
    "settings_of",
    "usage_values",
]

#: The columns of ``sessions`` a :class:`SessionRow` holds, in its order (the same on both backends).
SESSION_COLS: Final = (
    "session_id, workdir, created_at, updated_at, last_position, clear_position, message_count, "
    "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_micros, currency"
)


@dataclass(slots=True)
class SessionRow:
    """A row of ``sessions`` (:data:`SESSION_COLS`), its usage columns as one :class:`~claw_sessiond.model.Usage`."""

    session_id: str
    workdir: str
    created_at: str
    updated_at: str
    last_position: int
    clear_position: int
    message_count: int
    usage: Usage


#: One history entry an Append writes: its position, the prepared message and the payload to store
#: (the message's, or as admitted: an orphan result's, a superseding result's).
NewEntry = tuple[int, PreparedMessage, str]


def entry_columns(entry: NewEntry, trace_id: str, ts: str) -> tuple[str | None, bytes | None, bytes | None, int | None]:
    """A new entry's ``format``, ``item``, ``encoded`` and ``item_at`` columns, for a backend that keeps the
    encoded reply form.

    The encoded form is what a Load would encode from the row (``entry_wire.py``), less the item's bytes
    where there is an item: the ``item`` column holds them, and ``item_at`` is the offset they go back in at
    (``entry_wire.splice``; None: the form is whole). An entry stored as validated (its payload the
    validated message's) is encoded from that message, with the append's position, time and trace id
    (``encode_appended``: the payload need not be decoded again); one whose payload the write changed (a
    result marked orphan or superseding a repair) from the row as a Load reads it back
    (``message_from_payload`` of these very columns).
    """
    position, prepared, payload = entry
    msg = prepared.message
    fmt = msg.format or None
    item = msg.item if msg.format else None
    if payload is prepared.payload:
        stamp = append_stamp(ts, trace_id)
        if stamp is not None:
            try:
                data, at = encode_appended(msg, position, stamp)
            except UnicodeEncodeError:  # text protobuf would refuse too: the Load encodes it, and says so
                return fmt, item, None, None
            return fmt, item, data, at
    form = encode_stored(message_from_payload(position, prepared.event_type, trace_id, ts, payload, fmt, item))
    return (fmt, item, None, None) if form is None else (fmt, item, *form)


def session_row(values: Sequence[Any] | None) -> SessionRow | None:
    """The :class:`SessionRow` of a ``SELECT {SESSION_COLS}`` result (None for no row).

    Both drivers answer the integer columns as ``int`` (sqlite3's INTEGER, asyncpg's ``bigint``).
    """
    if values is None:
        return None
    return SessionRow(values[0], values[1], values[2], values[3], values[4], values[5], values[6], Usage(*values[7:13]))


def usage_values(u: Usage) -> tuple[int, int, int, int, int, str]:
    """A :class:`~claw_sessiond.model.Usage` as the usage columns of ``sessions`` and ``usage_by_model`` hold it."""
    return (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_micros, u.currency)


def session_meta(
    row: SessionRow | None, session_id: str, workdir: str | None, settings: SessionSettings | None = None
) -> SessionMeta:
    """What Load reports of a session: its row and settings, or an unstored session (``workdir``: the caller's)."""
    if row is None:
        return SessionMeta(session_id, workdir or "", None, None, Usage(), 0, False, 0)
    return SessionMeta(
        session_id,
        workdir if workdir else row.workdir,
        row.created_at,
        row.updated_at,
        row.usage,
        row.last_position,
        True,
        row.message_count,
        settings or SessionSettings(),
    )


def session_summary(values: Sequence[Any]) -> SessionSummary:
    """A listing row of a ``SELECT {SESSION_COLS}, labels`` result (the labels column last)."""
    r = session_row(values)
    assert r is not None
    return SessionSummary(
        r.session_id,
        r.workdir,
        r.updated_at,
        r.message_count,
        r.last_position,
        r.usage,
        parse_labels(str(values[-1])),
        r.created_at,
    )


#: The settings columns of ``sessions``, in the order :func:`settings_of` reads them (the same on both backends).
SETTINGS_COLS: Final = "state, labels, tool_policy, forked_from, forked_at_position, incarnation"
#: How many columns :data:`SETTINGS_COLS` names (the last ones of a ``SELECT {SESSION_COLS}, {SETTINGS_COLS}``).
SETTINGS_COUNT: Final = len(SETTINGS_COLS.split(","))


def settings_of(values: Sequence[Any]) -> SessionSettings:
    """The :class:`SessionSettings` of a ``SELECT {SETTINGS_COLS}`` result."""
    return SessionSettings(
        str(values[0]), parse_labels(str(values[1])), str(values[2]), str(values[3]), int(values[4]), str(values[5])
    )


def like_pattern(id_contains: str) -> str:
    """A LIKE (ILIKE) pattern, ``ESCAPE '\\'``, matching ``id_contains`` literally (``%``, ``_`` and ``\\``
    match themselves)."""
    return "%" + id_contains.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def new_incarnation() -> str:
    """A random id for a newly created session row (Watch follows one incarnation only)."""
    return uuid.uuid4().hex[:16]


class Port(Protocol):
    """The reads and writes of one transaction, typed by their answers (see the module docstring)."""

    # -- core: the session row, request ids, events

    def session_row(self, session_id: str) -> tuple[SessionRow | None, str]:
        """The session's row (None if not stored), held for the rest of the transaction, and the write's time.

        The time is RFC 3339 UTC text: the database's transaction time on PostgreSQL, the clock
        on SQLite. Every write a sequence makes is stamped with it.
        """
        ...

    def ensure_session(self, session_id: str, workdir: str) -> tuple[SessionRow, str]:
        """As :meth:`session_row`, the row first created (with ``workdir``, at the write's time) if it is not stored.

        Another writer may have created it meanwhile (PostgreSQL: the insert waits for its
        commit): the row returned is then that one, and may carry its requests.
        """
        ...

    def stored_request(self, session_id: str, request_id: str) -> StoredRequest | None:
        """The record of an earlier request with this (non-empty) id on this session, or None."""
        ...

    def remember(self, session_id: str, request_id: str, kind: str, fingerprint: str, record: str, now: str) -> None:
        """Store a request's record (``rules.result_record``) under its (non-empty) id."""
        ...

    def insert_event(
        self, session_id: str, position: int | None, event_type: str, trace_id: str, ts: str, payload: str
    ) -> int:
        """Insert one event (``position`` None: an audit event outside the history); returns its event id."""
        ...

    def insert_entries(self, session_id: str, entries: Sequence[NewEntry], trace_id: str, ts: str) -> None:
        """Insert history entries, in the order given: each at its position with its payload (the message's,
        or as admitted), its item, format and client id where set (and, where the backend keeps one, its
        encoded reply form). A backend writes them in as few statements as it can: SQLite's search index
        writes its pending terms out at every statement that fires its trigger (about 17 us a row)."""
        ...

    def advance_session(self, session_id: str, last_position: int, added: int, now: str, workdir: str) -> None:
        """Move the session's last position to ``last_position``, count ``added`` more visible entries, stamp
        ``now``, and take ``workdir`` unless it is empty."""
        ...

    def touch_session(self, session_id: str, now: str, workdir: str) -> None:
        """Stamp the session's row with ``now``, and take ``workdir`` unless it is empty."""
        ...

    def open_call_count(self, session_id: str) -> int:
        """How many of the session's indexed tool calls have no result."""
        ...

    # -- append, usage, clear, event, delete

    def client_id_position(self, session_id: str, client_id: str, after: int) -> int | None:
        """The position of a visible entry after ``after`` (the last clear) with this client id, or None."""
        ...

    def session_policy(self, session_id: str) -> ToolPolicy:
        """The session's stored tool policy (empty for a session without one)."""
        ...

    def call_result(self, session_id: str, call_id: str) -> tuple[bool, int | None]:
        """Whether the session indexes a call with this id, and the position of its result (None: none yet)."""
        ...

    def entry_type(self, session_id: str, position: int) -> str | None:
        """The event type stored at ``position`` (None if there is none)."""
        ...

    def answer_call(self, session_id: str, call_id: str, position: int) -> None:
        """Record ``position`` as the result of the indexed call ``call_id``."""
        ...

    def hide_entry(self, session_id: str, position: int, hidden_by: int) -> None:
        """Mark the entry at ``position`` hidden by the entry at ``hidden_by``."""
        ...

    def insert_call(
        self,
        session_id: str,
        call_id: str,
        position: int,
        index: int,
        run_id: str,
        pending: bool,
        repair_mode: str,
    ) -> bool:
        """Index a call made by the entry at ``position``; False (nothing written) if its id is already indexed."""
        ...

    def set_usage(self, session_id: str, usage: Usage) -> None:
        """Write the session's usage totals."""
        ...

    def add_model_usage(self, session_id: str, delta: UsageDelta, currency: str) -> None:
        """Add ``delta`` to the totals of its model and pricing version (``currency``: the one it is charged in,
        kept only where the totals have none yet)."""
        ...

    def clear_session(self, session_id: str, position: int, now: str, workdir: str) -> None:
        """Set the session's last and clear positions to ``position``, no visible entries, stamp ``now``, take
        ``workdir`` unless it is empty, and forget its indexed tool calls."""
        ...

    def erase_history(self, session_id: str, fingerprint: str, kinds: Sequence[str]) -> int:
        """Delete the session's history events (those with a position; its words from a search index too) and
        set the fingerprint of its stored requests of ``kinds`` to ``fingerprint``; returns how many events went."""
        ...

    def delete_session(self, session_id: str) -> int:
        """Delete every row of the session (and its words from a search index); returns how many events it had."""
        ...

    def prune_requests(self, cutoff_rfc3339: str, limit: int) -> int:
        """Delete at most ``limit`` idempotency records (of any session) written before the cutoff, oldest first,
        none another transaction holds; returns how many went."""
        ...

    # -- edit tail, create, fork, update, import, state

    def settings(self, session_id: str) -> SessionSettings | None:
        """The session's state, labels, tool policy and lineage (None if it is not stored)."""
        ...

    def claim_session(
        self, session_id: str, workdir: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> str | None:
        """Insert a new session's row (a new incarnation, created and updated now), held; the time it was
        created, or None (nothing written) if the id is stored (PostgreSQL: once a concurrent creation of
        it has committed)."""
        ...

    def source_session(self, session_id: str) -> tuple[SessionRow, SessionSettings] | None:
        """A fork's source: its row and settings, held against writes to it until the transaction ends (None:
        not stored)."""
        ...

    def set_session_state(self, session_id: str, state: str) -> None:
        """Write the session's own state."""
        ...

    def set_tool_policy(self, session_id: str, tool_policy: str) -> None:
        """Write the session's default tool policy."""
        ...

    def set_settings(
        self, session_id: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> None:
        """Write the session's state, tool policy and lineage (an import's, folded from its events)."""
        ...

    def write_labels(self, session_id: str, labels: Mapping[str, str]) -> None:
        """Replace the session's labels: the JSON column and its exact-match index rows."""
        ...

    def hold_scope_states(self, scopes: Sequence[str], now: str) -> Mapping[str, str]:
        """The states of these shared scopes (sorted, distinct), held for the rest of the transaction.

        PostgreSQL makes each row exist (an empty state, at ``now``) and locks them in the given order;
        a scope never written may be absent from the answer.
        """
        ...

    def put_scope_states(self, states: Sequence[ScopeState]) -> None:
        """Store each scope's state and time, replacing a stored one of the same scope."""
        ...

    def tail_rows(
        self, session_id: str, floor: int, cursor: int, limit: int
    ) -> list[tuple[int, str, bool, str | None, int]]:
        """The history events in ``(floor, cursor]``, from the end, at most ``limit``: (position, type,
        hidden, the payload of an edit event (None for any other), stored bytes)."""
        ...

    def messages_at(self, session_id: str, positions: Sequence[int]) -> list[Message]:
        """The entries at these positions, in position order."""
        ...

    def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        """``(position, event type)`` of the visible entries ``selection`` chooses, in position order, at most
        ``limit`` (0: no bound); through the index of client ids when it names ids or a prefix."""
        ...

    def pending_calls(self, session_id: str, call_ids: Sequence[str]) -> list[str]:
        """Those of these calls that are pending and still have no result."""
        ...

    def hide_entries(self, session_id: str, hidden: Sequence[tuple[int, int]]) -> None:
        """Mark each entry ``(position, by)`` hidden by the event at position ``by``."""
        ...

    def reopen_calls(self, session_id: str, answers: Sequence[tuple[str, int]]) -> None:
        """For each ``(call id, result position)``: the call has no result any more, if that was its result."""
        ...

    def unindex_calls(self, session_id: str, calls: Sequence[tuple[str, int]]) -> None:
        """For each ``(call id, assistant position)``: the call leaves the index, if it was made there."""
        ...

    def copy_entries(self, source_id: str, session_id: str, after: int, upto: int) -> list[int]:
        """Copy the visible entries of ``source_id`` in ``(after, upto]``, each event as stored, to positions
        1..n of ``session_id``; their positions in the source, in order."""
        ...

    def payloads_containing(self, session_id: str, event_type: str, text: str) -> list[tuple[int, str]]:
        """``(position, payload)`` of the session's history events of this type whose payload holds ``text``."""
        ...

    def set_payloads(self, session_id: str, payloads: Sequence[tuple[int, str]]) -> None:
        """Replace the payload of each entry ``(position, payload)``."""
        ...

    def indexed_calls(self, session_id: str, call_ids: Sequence[str]) -> list[IndexedCall]:
        """The session's index rows of these calls (those it has)."""
        ...

    def index_calls(self, session_id: str, calls: Sequence[IndexedCall]) -> None:
        """Insert these index rows (no run owns them)."""
        ...

    def incarnation(self, session_id: str) -> str | None:
        """The incarnation of the session's row (None if it is not stored)."""
        ...

    def events_of(self, session_id: str) -> list[tuple[int | None, str, str, str, str]]:
        """Every event of the session in event order: (position, type, time, trace id, payload)."""
        ...

    def insert_events(self, session_id: str, events: Sequence[ImportedEvent]) -> None:
        """Insert these events as they are (positions, payloads, items, client ids)."""
        ...

    def drop_derived_rows(self, session_id: str) -> None:
        """Delete the session's row, its tool-call index and its usage by model (its events stay)."""
        ...

    def insert_session_row(self, row: SessionRow, incarnation: str) -> None:
        """Insert the session's row as given (settings at their defaults)."""
        ...

    def insert_model_usage(self, session_id: str, by_model: Mapping[tuple[str, str], Usage]) -> None:
        """Insert the session's usage totals per (model, pricing version)."""
        ...

    # -- load and repair

    def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        """The session's row and settings as they are now (both None if it is not stored); nothing is locked."""
        ...

    def open_calls(self, session_id: str) -> list[OpenCall]:
        """The session's indexed tool calls that have no result (in no particular order)."""
        ...

    def owned_open_calls(self, session_id: str) -> list[OpenCall]:
        """The open calls a run appended, or that are pending: the only ones that can be in flight."""
        ...

    def still_open(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        """Which of ``call_ids`` are indexed calls of the session that still have no result."""
        ...

    def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        """``(position, payload, has an item)`` of the session's events at ``positions`` (those stored, in no order)."""
        ...

    def write_repairs(
        self, session_id: str, repairs: Sequence[Repair], payloads: Sequence[str], trace_id: str, now: str
    ) -> None:
        """Insert each synthetic result (a ``repair`` event with its payload at its position, stamped ``now``)
        and record its position as its call's result."""
        ...


class ReadPort(Protocol):
    """The reads of a Load's snapshot (``loading.py``), in one read-only transaction, typed by their answers.

    Both backends read through asynchronous drivers (aiosqlite, asyncpg): each implements these
    as ``async def`` verbs and is adapted once (:func:`as_read_port`, a cast), like ``PostgresPort``;
    ``tests/unit/test_loading.py`` proves the verbs and signatures match. The verbs of the same
    name as :class:`Port`'s answer the same.
    """

    def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        """The session's row and settings (both None if it is not stored)."""
        ...

    def open_calls(self, session_id: str) -> list[OpenCall]:
        """The session's indexed tool calls that have no result (in no particular order)."""
        ...

    def session_policy(self, session_id: str) -> ToolPolicy:
        """The session's stored tool policy (empty for a session without one)."""
        ...

    def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        """``(position, payload, has an item)`` of the session's events at ``positions`` (those stored, in no order)."""
        ...

    def history_page(
        self, session_id: str, after: int, last_position: int, reply_only: bool
    ) -> tuple[list[Message] | None, int]:
        """The visible entries after ``after`` up to ``last_position`` in position order if they all fit one page
        (``paging.PAGE_ROWS`` entries, about ``paging.PAGE_BYTES``), else None; and how many entries were read.

        ``reply_only``: an entry whose encoded reply form is stored may come back as that form with only what
        ordering needs (``events.reply_entry``), where the backend stores one.
        """
        ...

    def item_page(self, session_id: str, after: int, last_position: int, item_format: str) -> tuple[list[bytes], int]:
        """:meth:`PageReads.item_page`, in the snapshot."""
        ...

    def nth_visible_back(self, session_id: str, clear_position: int, last_position: int, n: int) -> int | None:
        """The position of the ``n``-th visible entry counted back from ``last_position`` (after the clear),
        or None if there are fewer."""
        ...

    def first_position_after_time(
        self, session_id: str, after_time: str, clear_position: int, last_position: int
    ) -> int | None:
        """The first history position after the clear, up to ``last_position``, stored after ``after_time``."""
        ...

    def last_visible_before(self, session_id: str, clear_position: int, position: int) -> int | None:
        """The position of the last visible entry after the clear and before ``position``, or None."""
        ...

    def lead_positions(self, session_id: str, start: int, last_position: int) -> tuple[int, ...]:
        """Positions of the visible tool results from ``start`` up to ``last_position`` whose call was made
        before ``start``: by their call's assistant position, then their own."""
        ...

    def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        """``(position, event type)`` of the visible entries ``selection`` chooses, in position order, at most
        ``limit`` (0: no bound); through the index of client ids when it names ids or a prefix."""
        ...

    def check_cursor(self, cursor: HistoryCursor) -> None:
        """Nothing if the session still holds the cursor's history.

        Raises:
            SequenceConflictError: the session was erased, cleared or edited before the cursor's bound since.
        """
        ...


def as_read_port(port: object) -> ReadPort:
    """An asynchronous read port as a sequence sees it: each verb's answer, once ``run_async`` has awaited it
    (a cast: ``tests/unit/test_loading.py`` holds each backend's read port to :class:`ReadPort`)."""
    return cast(ReadPort, port)


class PageReads(Protocol):
    """The reads of one step of a paged history read (``history_reads.py``), in one short read transaction.

    Plain coroutines on both backends (each reads through an asynchronous driver), so mypy holds
    each backend's class to this Protocol as it is. Rows are read at most one page at a time:
    the caller bounds what it asks (``paging.PAGE_ROWS``, ``PAGE_BYTES``).
    """

    async def session_bounds(self, session_id: str) -> tuple[str, int, int] | None:
        """The session's ``(created_at, clear_position, last_position)``, or None if it is not stored."""
        ...

    async def marks_after(self, session_id: str, position: int) -> list[tuple[str, str]]:
        """``(type, payload)`` of the session's edits and clears stored after ``position``."""
        ...

    async def visible_page(self, session_id: str, after: int, last_position: int, reply_only: bool) -> list[Message]:
        """The next page of visible entries after ``after`` (up to ``last_position``), in position order
        (``reply_only`` as in :meth:`ReadPort.history_page`)."""
        ...

    async def entries_by_position(self, session_id: str, positions: Sequence[int], reply_only: bool) -> list[Message]:
        """The session's entries at ``positions`` (at most a page of them), in no particular order."""
        ...

    async def entry_sizes(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, int]]:
        """``(position, bytes)`` of the session's entries at ``positions``: what each weighs in a page."""
        ...

    async def item_page(
        self, session_id: str, after: int, last_position: int, item_format: str
    ) -> tuple[list[bytes], int]:
        """The next page of the items of ``item_format`` (at most ``ITEM_PAGE_ROWS``, about ``PAGE_BYTES`` of item
        bytes, never fewer than one) of the visible entries after ``after`` (up to ``last_position``), in position
        order; and the position the page ends at: ``last_position`` if no such item follows it, 0 if there was none."""
        ...

    async def items_at(self, session_id: str, positions: Sequence[int], item_format: str) -> list[tuple[int, bytes]]:
        """``(position, item)`` of the session's entries at ``positions`` (at most a page of them) whose format is
        ``item_format``, in no particular order."""
        ...

    async def known_calls(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        """Which of ``call_ids`` the session indexes a call for."""
        ...

    async def far_results(self, session_id: str, call_ids: Sequence[str], after: int, last_position: int) -> list[Any]:
        """``(position, bytes)`` of the results of ``call_ids`` stored after ``after`` (up to ``last_position``),
        in position order."""
        ...

    async def incarnation(self, session_id: str) -> str | None:
        """The session row's incarnation (None if it is not stored)."""
        ...

    async def event_sizes_after(self, session_id: str, position: int, limit: int) -> list[Any]:
        """``(position, bytes)`` of up to ``limit`` history events (any type) after ``position``, in order."""
        ...

    async def history_events(self, session_id: str, after: int, upto: int) -> list[Any]:
        """Rows ``(position, type, trace_id, ts, payload, format, item)`` of the history events after ``after``
        up to ``upto`` (any type), in position order."""
        ...

    async def export_sizes(self, session_id: str, after_id: int, max_id: int, limit: int) -> list[Any]:
        """``(event_id, bytes)`` of up to ``limit`` of the session's events with ids after ``after_id`` up to
        ``max_id``, in id order."""
        ...

    async def export_rows(self, session_id: str, after_id: int, upto_id: int) -> list[Any]:
        """Rows ``(event_id, session_id, position, type, trace_id, ts, schema_version, payload, format, item)`` of
        the session's events with ids after ``after_id`` up to ``upto_id``, in id order."""
        ...
