"""Response conversion: the daemon's reply messages become the public types (pure).

A reply that breaks the protocol (a Load stream without its last chunk, an
Append reply without the positions of what it wrote) is an
:class:`~claw_sessiond_client.errors.InternalError`, never a result.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable
from typing import Any, Final, Protocol, TypeVar

from . import errors as E
from ._requests import ROLES
from ._types import (
    AppendResult,
    BackupFigures,
    ClearResult,
    DeleteResult,
    EntryUsage,
    ImportResult,
    InFlightCall,
    LoadResult,
    Message,
    ModelUsage,
    Repair,
    Session,
    SessionPage,
    SessionSummary,
    Stats,
    ToolCall,
    ToolPolicy,
    Usage,
    UsageReport,
)
from .api.v1 import sessiond_pb2 as pb

__all__ = [
    "Assembly",
    "BackupCopy",
    "ItemsAssembly",
    "LoadAssembly",
    "append_result_of",
    "assembled",
    "backup_figures_of",
    "clear_result_of",
    "delete_result_of",
    "event_id_of",
    "import_result_of",
    "load_result_of",
    "message_of",
    "page_of",
    "recorded_usage_of",
    "session_of",
    "state_of",
    "stats_of",
    "summaries_of",
    "tool_policy_of",
    "usage_of",
    "usage_report_of",
]

_ROLE_NAMES: Final = {v: k for k, v in ROLES.items()}


def delete_result_of(r: pb.DeleteResponse) -> DeleteResult:
    """Proto → client type."""
    return DeleteResult(int(r.events_deleted), bool(r.erasure_pending))


def _time(ts: Any, present: bool) -> dt.datetime | None:
    return ts.ToDatetime(tzinfo=dt.UTC) if present else None


def usage_of(u: pb.Usage) -> Usage:
    """Proto usage → client type."""
    return Usage(u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_micros, u.currency)


#: The fields of :class:`Message`, in declaration order: :func:`message_of` sets its slots in this order.
_MESSAGE_FIELDS: Final = (
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "synthetic_reason",
    "position",
    "created_at",
    "trace_id",
    "format",
    "item",
    "client_id",
    "metadata",
    "usage",
    "cancelled",
    "orphan",
    "supersedes",
)
if tuple(f.name for f in dataclasses.fields(Message)) != _MESSAGE_FIELDS:  # pragma: no cover - a guard on edits
    raise ImportError("claw_sessiond_client: _responses._MESSAGE_FIELDS no longer matches Message")
#: Each slot's setter (the frozen dataclass's ``__init__`` costs ~5× more per message).
_MESSAGE_SETTERS: Final = tuple(getattr(Message, name).__set__ for name in _MESSAGE_FIELDS)
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_new = object.__new__
_timedelta = dt.timedelta


def message_of(m: pb.Message) -> Message:
    """Proto message → client type.

    Hot path (every entry of a Load): the message is built slot by slot rather than through
    the frozen dataclass's ``__init__``, and its time without ``Timestamp.ToDatetime``; the
    result is equal to ``Message(...)`` with the same fields (``orphan`` and ``supersedes``
    included, which only the daemon sets).
    """
    created = m.created_at
    values = (
        _ROLE_NAMES.get(m.role, "unknown"),
        m.content,
        tuple(ToolCall._stored(c.id, c.name, c.arguments, c.pending, c.arguments_not_json) for c in m.tool_calls)
        if m.tool_calls
        else (),
        m.tool_call_id,
        m.name,
        "interrupted" if m.synthetic.reason == pb.SYNTHETIC_REASON_INTERRUPTED else "",
        m.position,
        _EPOCH + _timedelta(0, created.seconds, created.nanos // 1000)  # (days, seconds, µs): half the keywords' cost
        if m.HasField("created_at")
        else None,
        m.trace_id,
        m.format,
        m.item,
        m.client_id,
        m.metadata,
        _entry_usage_of(m.usage) if m.HasField("usage") else None,
        m.cancelled,
        m.orphan,
        int(m.supersedes),
    )
    message: Message = _new(Message)
    for set_field, value in zip(_MESSAGE_SETTERS, values, strict=True):
        set_field(message, value)
    return message


def _entry_usage_of(u: pb.EntryUsage) -> EntryUsage:
    return EntryUsage(
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.cost_micros,
        u.currency,
        u.model,
        u.pricing_version,
    )


def session_of(s: pb.Session) -> Session:
    """Proto session → client type."""
    return Session(
        s.id,
        s.workdir,
        _time(s.created_at, s.HasField("created_at")),
        _time(s.updated_at, s.HasField("updated_at")),
        usage_of(s.usage),
        s.last_position,
        s.stored,
        s.message_count,
        state_of(s.state),
        dict(s.labels),
        tool_policy_of(s.tool_policy),
        s.forked_from,
        s.forked_at_position,
        s.incarnation,
    )


_REPAIR_NAMES: Final = {
    pb.REPAIR_MODE_SYNTHESIZE: "synthesize",
    pb.REPAIR_MODE_DROP: "drop",
    pb.REPAIR_MODE_OFF: "off",
}


def tool_policy_of(p: pb.ToolPolicy) -> ToolPolicy:
    """Proto tool policy → client type (``repair`` None when unset)."""
    return ToolPolicy(_REPAIR_NAMES.get(p.repair), p.allow_orphan_results, p.allow_unparsed_calls)


def state_of(text: str) -> dict[str, Any]:
    """A JSON state as the daemon sends it ("" or "{}" for none) → a dict."""
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {}


class LoadAssembly:
    """Load's streamed chunks, converted as they arrive (while the daemon sends the next ones)."""

    def __init__(self) -> None:
        self._first: pb.LoadResponse | None = None
        self._done = False
        self.messages: list[Message] = []

    def add(self, chunk: pb.LoadResponse) -> None:
        """Take one chunk (its messages are converted now; the chunk is not kept, but the first)."""
        if self._first is None:
            self._first = chunk
        self.messages.extend(map(message_of, chunk.messages))
        self._done = chunk.done

    def result(self) -> LoadResult:
        """The assembled result.

        Raises:
            InternalError: the stream ended without its last chunk.
        """
        first = self._first
        if first is None or not self._done:
            raise E.InternalError("Load stream ended early (no final chunk)")
        return LoadResult(
            session_of(first.session),
            self.messages,
            [Repair(r.tool_call_id, r.assistant_position, r.position) for r in first.repairs],
            [
                InFlightCall(c.tool_call_id, c.assistant_position, c.run_id, c.owner_pid, c.owner_host, c.owner_label)
                for c in first.in_flight
            ],
            first.trace_id,
            first.complete,
            first.start_position,
            {st.scope: state_of(st.state) for st in first.scope_states},
        )


_R = TypeVar("_R", covariant=True)
_T = TypeVar("_T")


class Assembly(Protocol[_R]):
    """What Load's chunks are read into: a whole result (:class:`LoadAssembly`), or only the items of one
    format (:class:`ItemsAssembly`)."""

    def add(self, chunk: pb.LoadResponse) -> None: ...

    def result(self) -> _R: ...


class ItemsAssembly:
    """Load's streamed chunks kept as the stored items of one format only (no :class:`Message` per entry).

    The request asks for the items alone (``LoadRequest.items_format``): the daemon sends each
    stored item's bytes in ``LoadResponse.items``, in the order written (by position), which is
    the order a framework's own store gives its items back; no entry is built on either side. A
    daemon older than that field sends whole entries in pairing order instead: their items are
    taken and put in position order.
    """

    def __init__(self, item_format: str) -> None:
        self._format = item_format
        self._items: list[bytes] = []
        self._found: list[tuple[int, bytes]] = []
        self._started = self._done = False

    def add(self, chunk: pb.LoadResponse) -> None:
        """Take one chunk: its items (or, from an older daemon, the items of the format of its entries)."""
        self._started = True
        self._items.extend(chunk.items)
        if chunk.messages:
            fmt = self._format
            self._found.extend((m.position, m.item) for m in chunk.messages if m.format == fmt and m.item)
        self._done = chunk.done

    def result(self) -> list[bytes]:
        """The items, in the order written.

        Raises:
            InternalError: the stream ended without its last chunk.
        """
        if not (self._started and self._done):
            raise E.InternalError("Load stream ended early (no final chunk)")
        if self._found:
            self._found.sort(key=_position_of)
            self._items.extend(item for _, item in self._found)
        return self._items


def _position_of(found: tuple[int, bytes]) -> int:
    return found[0]


def load_result_of(chunks: Iterable[pb.LoadResponse]) -> LoadResult:
    """Assemble Load's streamed chunks (an iterator is consumed as it goes: each chunk is converted
    as it arrives).

    Raises:
        InternalError: the stream ended without its last chunk.
    """
    return assembled(chunks, LoadAssembly())


def assembled(chunks: Iterable[pb.LoadResponse], assembly: Assembly[_T]) -> _T:
    """``assembly`` fed Load's ``chunks`` as they arrive, and its result."""
    for chunk in chunks:
        assembly.add(chunk)
    return assembly.result()


def append_result_of(r: pb.AppendResponse, request: pb.AppendRequest) -> AppendResult:
    """Proto → client type, for the reply to ``request``.

    Raises:
        InternalError: the reply does not say where the messages are (no positions, or a span that is not
            the number of messages sent): an empty or malformed reply is never taken as success.
    """
    sent = len(request.messages)
    span = r.last_position - r.first_position + 1
    if r.first_position < 1 or span < 1 or (span != sent and not r.replayed):
        raise E.InternalError(
            f"the reply to an append of {sent} message(s) to {request.session_id!r} is malformed (positions "
            f"{r.first_position}..{r.last_position}): the append is not known to be stored; Load the session "
            "to see what it holds",
            metadata={"first_position": str(r.first_position), "last_position": str(r.last_position)},
        )
    return AppendResult(
        r.first_position, r.last_position, r.replayed, r.trace_id, _time(r.created_at, r.HasField("created_at"))
    )


def summaries_of(r: pb.ListSessionsResponse) -> list[SessionSummary]:
    """Proto → client type."""
    return [
        SessionSummary(
            s.id,
            s.message_count,
            usage_of(s.usage),
            _time(s.updated_at, s.HasField("updated_at")),
            s.workdir,
            s.last_position,
            dict(s.labels),
            _time(s.created_at, s.HasField("created_at")),
        )
        for s in r.sessions
    ]


def page_of(r: pb.ListSessionsResponse) -> SessionPage:
    """Proto → client type."""
    return SessionPage(summaries_of(r), r.next_page_token, r.total)


def usage_report_of(r: pb.GetUsageResponse) -> UsageReport:
    """Proto → client type."""
    return UsageReport(
        usage_of(r.total), [ModelUsage(m.model, m.pricing_version, usage_of(m.usage)) for m in r.by_model]
    )


def _plain(message: Any) -> dict[str, Any]:
    """A message as a dict of plain values (nested and repeated messages too)."""
    out: dict[str, Any] = {}
    for f in message.DESCRIPTOR.fields:
        value = getattr(message, f.name)
        if f.message_type is not None:
            value = [_plain(v) for v in value] if f.is_repeated else _plain(value)
        elif f.is_repeated:
            value = list(value)
        out[f.name] = value
    return out


def backup_figures_of(r: pb.BackupFigures) -> BackupFigures:
    """Proto → client type."""
    return BackupFigures(r.sessions, r.events, r.bytes, r.schema_version)


def stats_of(r: pb.GetStatsResponse) -> Stats:
    """Proto → client type: a mapping of field name to plain values (``requests`` is a list of dicts)."""
    return Stats(_plain(r))


def recorded_usage_of(r: pb.RecordUsageResponse) -> Usage:
    """RecordUsage's reply → the session's new totals.

    Raises:
        InternalError: the reply has no totals (an empty reply is never taken as success).
    """
    if not r.HasField("usage"):
        raise E.InternalError("the reply to RecordUsage holds no totals: the usage is not known to be recorded")
    return usage_of(r.usage)


def clear_result_of(r: pb.ClearResponse) -> ClearResult:
    """Proto → client type."""
    return ClearResult(r.position, r.replayed, r.trace_id, r.events_erased, r.erasure_pending)


def event_id_of(r: pb.RecordEventResponse) -> int:
    """RecordEvent's reply → the event id."""
    return int(r.event_id)


def import_result_of(r: pb.ImportResponse) -> ImportResult:
    """Proto → client type."""
    return ImportResult(r.session_id, r.events_imported)


class BackupCopy:
    """A Backup stream checked as it arrives: the copy's figures first, then data adding up to their size."""

    def __init__(self) -> None:
        self.figures: BackupFigures | None = None
        self.written = 0

    def data(self, reply: pb.BackupResponse) -> bytes:
        """The bytes of ``reply`` to write.

        Raises:
            SessiondError: the stream did not start with the figures.
        """
        if self.figures is None:
            if not reply.HasField("figures"):
                raise E.SessiondError("the Backup stream did not start with the copy's figures")
            self.figures = backup_figures_of(reply.figures)
        self.written += len(reply.data)
        return reply.data

    def result(self) -> BackupFigures:
        """The figures of a complete copy.

        Raises:
            SessiondError: the stream ended early, or its size is not the announced one.
        """
        if self.figures is None or self.written != self.figures.bytes:
            expected = self.figures.bytes if self.figures is not None else "unknown"
            raise E.SessiondError(f"the backup stream ended after {self.written} bytes of {expected}")
        return self.figures
