"""Plain data of the domain: messages, tool calls, usage, events, validated requests, results. No I/O.

Timestamps are RFC 3339 UTC strings with microseconds (``2026-12-02T15:38:46.123456Z``),
the form stored in the database and exported.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .policy import ToolPolicy

__all__ = [
    "AppendJob",
    "AppendResult",
    "ClearResult",
    "DeleteEntriesJob",
    "DeleteEntriesResult",
    "DeleteResult",
    "EditJob",
    "EditResult",
    "EntrySelection",
    "Event",
    "EventResult",
    "HistoryCursor",
    "HistoryMark",
    "ImportMode",
    "InFlightCall",
    "LoadResult",
    "LoadWindow",
    "Message",
    "ModelUsage",
    "PreparedMessage",
    "Repair",
    "Role",
    "SessionMeta",
    "SessionSettings",
    "SessionSummary",
    "StateDelta",
    "ToolCall",
    "Usage",
    "UsageDelta",
    "UsageResult",
    "now_rfc3339",
]

Role = Literal["system", "user", "assistant", "tool", "other"]
#: What an import does with a session that is already stored: refuse, replace (erase it first) or merge.
ImportMode = Literal["refuse", "replace", "merge"]


#: The last whole second formatted by :func:`now_rfc3339`: (epoch second, its text). One tuple,
#: replaced whole, so the writer thread and the loop never see a second paired with another's text.
_SECOND: tuple[int, str] = (-1, "")


def now_rfc3339() -> str:
    """The current UTC time as RFC 3339 with microseconds (``strftime("%Y-%m-%dT%H:%M:%S.%fZ")``'s text).

    The date and time of day are formatted once per second and reused: a write calls this twice,
    and ``datetime.now(UTC).isoformat()`` cost about 20 times as much.
    """
    global _SECOND
    sec, micros = divmod(time.time_ns() // 1000, 1_000_000)
    cached = _SECOND
    if cached[0] != sec:
        cached = _SECOND = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
    return f"{cached[1]}.{micros:06d}Z"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool invocation; ``arguments`` is JSON text (or free text when ``arguments_not_json``).

    ``pending``: the call awaits something outside the run (approval, a long
    tool) and is never repaired or dropped until answered.
    """

    id: str
    name: str
    arguments: str
    pending: bool = False
    arguments_not_json: bool = False
    repair_mode: str = ""
    """The repair mode its append set ("" : the session's policy at Load time; see ``policy.py``)."""


@dataclass(frozen=True, slots=True)
class Message:
    """One history entry, as stored or as projected."""

    role: str
    """One of :data:`Role`; checked by validation."""
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""
    synthetic_reason: str = ""
    position: int = 0
    created_at: str = ""
    trace_id: str = ""
    format: str = ""
    """Format tag of ``item`` (empty: no item)."""
    item: bytes = b""
    """The framework's own item, stored and returned byte for byte (a column, not in the payload)."""
    client_id: str = ""
    metadata: str = ""
    """Per-entry metadata: JSON object text, kept exactly as given."""
    usage: UsageDelta | None = None
    cancelled: bool = False
    orphan: bool = False
    supersedes: int = 0
    encoded: bytes | None = field(default=None, compare=False, repr=False)
    """The entry's encoded reply form as stored (``entry_wire.encode_entry`` of it, read back from schema 5's
    ``events.encoded``); None when not stored (older rows, PostgreSQL, anything not read for a Load). Not part of
    the entry: never compared, and dropped by anything that changes a field (``history.drop_calls``)."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Cumulative usage. ``cost_micros`` is millionths of ``currency``."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_micros: int = 0
    currency: str = ""


@dataclass(frozen=True, slots=True)
class UsageDelta:
    """What one RecordUsage adds."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_micros: int = 0
    currency: str = ""
    model: str = ""
    pricing_version: str = ""


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Usage of one (model, pricing version)."""

    model: str
    pricing_version: str
    usage: Usage


@dataclass(frozen=True, slots=True)
class SessionSettings:
    """A session's state, labels, default tool policy, lineage and incarnation (``state.py`` has the rules).

    ``state`` and ``tool_policy`` are JSON object texts as stored: the state with sorted keys,
    the policy as ``{"repair"?, "allow_orphan_results"?, "allow_unparsed_calls"?}`` (unset keys omitted).
    """

    state: str = "{}"
    labels: Mapping[str, str] = field(default_factory=dict)
    tool_policy: str = "{}"
    forked_from: str = ""
    forked_at_position: int = 0
    incarnation: str = ""


@dataclass(frozen=True, slots=True)
class SessionMeta:
    """Session metadata; ``stored`` is False for a session with no row yet."""

    id: str
    workdir: str
    created_at: str | None
    updated_at: str | None
    usage: Usage
    last_position: int
    stored: bool
    message_count: int
    settings: SessionSettings = field(default_factory=SessionSettings)


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of a session listing."""

    id: str
    workdir: str
    updated_at: str
    message_count: int
    last_position: int
    usage: Usage
    labels: Mapping[str, str] = field(default_factory=dict)
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class StateDelta:
    """One validated change to a JSON state (the session's own, or a shared scope's when ``scope`` is set).

    ``delta`` is a JSON object text with sorted keys: each key is set to its value, a null removes it.
    """

    scope: str
    delta: str


@dataclass(frozen=True, slots=True)
class Repair:
    """A synthetic tool result written by a Load."""

    tool_call_id: str
    assistant_position: int
    position: int


@dataclass(frozen=True, slots=True)
class InFlightCall:
    """An unanswered call owned by a live run (not repaired)."""

    tool_call_id: str
    assistant_position: int
    run_id: str


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What Load returns."""

    session: SessionMeta
    messages: list[Message]
    repairs: list[Repair] = field(default_factory=list)
    in_flight: list[InFlightCall] = field(default_factory=list)
    #: Set when ``messages`` is not filled because the history is larger than one page:
    #: the caller streams it with ``Storage.history_pages(cursor)``.
    cursor: HistoryCursor | None = None
    #: False when a bounded read (:class:`LoadWindow`) left visible entries out.
    complete: bool = True
    #: A Load of items alone (``Storage.load(items_format=...)``): their first page (its cursor, if any, reads on).
    items: list[bytes] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LoadWindow:
    """A bounded or filtered Load: at most one of the first three is set (validated by
    ``entries.check_load_window``, which also says what the filters below combine with).

    ``last``: the last N visible entries (by position); ``after_position``: the visible entries
    after this position; ``after_time``: the visible entries from the first one stored after
    this RFC 3339 time on. The window's entries come in the full Load's order restricted to them.
    """

    last: int = 0
    after_position: int = 0
    after_time: str = ""
    before_position: int = 0
    """Only entries before this position (0: no bound); with ``last`` or ``after_position`` or alone."""
    client_ids: tuple[str, ...] = ()
    """Only the visible entries with these client ids, in position order (with no other bound)."""
    client_id_prefix: str = ""
    """Only the visible entries whose client id starts with this, in position order, at most ``max_entries``."""
    max_entries: int = 0
    """The most entries a ``client_id_prefix`` read returns (the daemon's batch bound)."""

    @property
    def by_client_id(self) -> bool:
        """True if the window is chosen through the index of client ids."""
        return bool(self.client_ids or self.client_id_prefix)


@dataclass(frozen=True, slots=True)
class HistoryCursor:
    """Where a paged read of a session's history stands: the bounds seen at its start.

    Positions up to ``last_position`` never change while ``created_at`` and
    ``clear_position`` stay the same (see ``storage/history_reads.py``).
    """

    session_id: str
    created_at: str
    clear_position: int
    last_position: int
    in_flight_ids: tuple[str, ...] = ()
    #: A bounded read: the pages start after this position (-1: after ``clear_position``) ...
    start_after: int = -1
    #: ... and first come these results (positions) of calls made before the window, in the order
    #: the full history shows them (right after their assistant message, which is before the window).
    lead: tuple[int, ...] = ()
    #: Open calls a Load hides under repair mode ``drop`` (``history.drop_calls``).
    dropped_ids: tuple[str, ...] = ()
    #: The pages are for a Load's reply only: an entry with a stored encoded form may come back with
    #: only what ordering needs (``events.reply_entry``); see ``Storage.load``'s ``reply_only``.
    reply_only: bool = False


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What Append returns; ``replayed`` marks the stored result of a retry."""

    first_position: int
    last_position: int
    created_at: str
    trace_id: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class UsageResult:
    """What RecordUsage returns."""

    usage: Usage
    trace_id: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class ClearResult:
    """What Clear returns; with ``erase``, how many events left the log and whether their bytes may linger."""

    position: int
    trace_id: str
    replayed: bool = False
    events_erased: int = 0
    erasure_pending: bool = False


@dataclass(frozen=True, slots=True)
class DeleteResult:
    """Outcome of erasing a session.

    ``erasure_pending`` is True when the rows are gone but their bytes may
    still be in the database files (the checkpoint waits for a reader).
    """

    events_deleted: int
    erasure_pending: bool = False


@dataclass(frozen=True, slots=True)
class EventResult:
    """What RecordEvent returns."""

    event_id: int
    trace_id: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class Event:
    """One row of the event log, as exported. ``payload`` is a JSON object."""

    event_id: int
    session_id: str
    position: int | None
    type: str
    trace_id: str
    ts: str
    schema_version: int
    payload: dict[str, object]
    format: str = ""
    """A history event's item format tag (empty: no item)."""
    item: bytes = b""
    """A history event's item, byte for byte."""


@dataclass(frozen=True, slots=True)
class PreparedMessage:
    """A validated message ready to store: its event type and JSON payload (``events.encode_message``)."""

    message: Message
    event_type: str
    payload: str


@dataclass(frozen=True, slots=True)
class AppendJob:
    """A validated Append (built by ``validate.prepare_append``)."""

    session_id: str
    messages: Sequence[PreparedMessage]
    expected_last_position: int = 0
    request_id: str = ""
    fingerprint: str = ""
    workdir: str = ""
    run_id: str = ""
    trace_id: str = ""
    tool_policy: ToolPolicy | None = None
    """The append's own tool policy (None: the session's alone; see ``policy.merge_policies``)."""
    state_deltas: Sequence[StateDelta] = ()
    """Applied in the append's transaction, in order (``state.py``)."""
    earlier_fingerprint: Callable[[], str] | None = None
    """The same content's fingerprint as versions before the marked form spelled it, computed when asked
    (``validate.prepare_append``): a retry must still replay a record one of them stored."""


@dataclass(frozen=True, slots=True)
class EditJob:
    """A validated EditTail (built by ``validate.prepare_edit``).

    At most one of ``remove_last`` and ``after_position`` is set (neither: the
    edit only appends). ``replacements`` is the Append of the new entries,
    without request id or expected position (the edit has its own), or None.
    """

    session_id: str
    remove_last: int = 0
    after_position: int = 0
    replacements: AppendJob | None = None
    expected_last_position: int = 0
    request_id: str = ""
    fingerprint: str = ""
    workdir: str = ""
    trace_id: str = ""
    discard_pending: bool = False


@dataclass(frozen=True, slots=True)
class EditResult:
    """What EditTail returns; a replay (``replayed``) has no ``removed`` entries."""

    removed: list[Message]
    edit_position: int
    first_position: int
    last_position: int
    trace_id: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class EntrySelection:
    """Which visible entries a filtered Load reads or a DeleteEntries removes.

    Those with one of ``client_ids``; else those whose client id starts with ``client_id_prefix``;
    else every visible entry; in each case only at positions in ``(after, upto]``.
    """

    client_ids: tuple[str, ...] = ()
    client_id_prefix: str = ""
    after: int = 0
    upto: int = 0


@dataclass(frozen=True, slots=True)
class DeleteEntriesJob:
    """A validated DeleteEntries (built by ``validate.prepare_delete_entries``).

    Exactly one selector: ``client_ids``, ``client_id_prefix``, or the range ``from_position`` ..
    ``to_position`` (0: the last position). At most ``max_entries`` entries may match.
    """

    session_id: str
    client_ids: tuple[str, ...] = ()
    client_id_prefix: str = ""
    from_position: int = 0
    to_position: int = 0
    expected_last_position: int = 0
    request_id: str = ""
    fingerprint: str = ""
    trace_id: str = ""
    discard_pending: bool = False
    max_entries: int = 0


@dataclass(frozen=True, slots=True)
class DeleteEntriesResult:
    """What DeleteEntries returns (``edit_position`` 0: nothing matched, nothing was written)."""

    removed_positions: tuple[int, ...]
    edit_position: int
    trace_id: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class HistoryMark:
    """A history event that is not a message, as Watch sends it: an edit, or a clear that erased the log.

    (A clear that kept the log is sent as no message at all, as before edits existed.)
    """

    removed: tuple[int, ...] = ()
    """An edit: the positions it removed (ascending; may be empty)."""
    erased: bool = False
    """A clear that erased the log before it (``ClearRequest.erase``)."""
