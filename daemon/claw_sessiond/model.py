"""Plain data of the domain: messages, tool calls, usage, events, results. No I/O.

Timestamps are RFC 3339 UTC strings with microseconds (``2026-12-02T15:38:46.123456Z``),
the form stored in the database and exported.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "EVENT_SCHEMA_VERSION",
    "HISTORY_EVENT_TYPES",
    "AppendResult",
    "ClearResult",
    "DeleteResult",
    "Event",
    "EventResult",
    "EventType",
    "HistoryCursor",
    "InFlightCall",
    "LoadResult",
    "Message",
    "ModelUsage",
    "Repair",
    "Role",
    "SessionMeta",
    "SessionSummary",
    "ToolCall",
    "Usage",
    "UsageDelta",
    "UsageResult",
    "now_rfc3339",
]

Role = Literal["system", "user", "assistant", "tool"]
EventType = Literal[
    "system_message",
    "user_message",
    "assistant_message",
    "tool_result",
    "repair",
    "clear",
    "usage",
    "permission_denial",
    "error",
]
#: Event types that take a position in the session's history (Watch sends them).
HISTORY_EVENT_TYPES: Final = frozenset(
    {"system_message", "user_message", "assistant_message", "tool_result", "repair", "clear"}
)
#: Version of the event payload format; bumped when a payload changes shape.
EVENT_SCHEMA_VERSION: Final = 1

#: Text of the synthetic tool result a repair writes. Deliberately unlike a live
#: "cancelled": the tool may or may not have run, and it was not re-run.
INTERRUPTED_CONTENT: Final = (
    "[claw-sessiond] This tool call did not complete: the previous run was interrupted before its result "
    "was recorded. The tool was NOT re-run; it may or may not have taken effect. Check the state before "
    "deciding whether to call it again."
)


def now_rfc3339() -> str:
    """The current UTC time as RFC 3339 with microseconds."""
    # Same text as strftime("%Y-%m-%dT%H:%M:%S.%fZ") at half the cost (once per write).
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")[:-6] + "Z"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool invocation; ``arguments`` is normalised JSON text."""

    id: str
    name: str
    arguments: str


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


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of a session listing."""

    id: str
    workdir: str
    updated_at: str
    message_count: int
    last_position: int
    usage: Usage


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
    #: the caller streams it with ``Store.history_pages(cursor)``.
    cursor: HistoryCursor | None = None


@dataclass(frozen=True, slots=True)
class HistoryCursor:
    """Where a paged read of a session's history stands: the bounds seen at its start.

    Positions up to ``last_position`` never change while ``created_at`` and
    ``clear_position`` stay the same (see ``reads.py``).
    """

    session_id: str
    created_at: str
    clear_position: int
    last_position: int
    in_flight_ids: tuple[str, ...] = ()


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
    """What Clear returns."""

    position: int
    trace_id: str
    replayed: bool = False


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
