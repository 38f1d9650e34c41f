"""The public types of the client: what its methods take and return (frozen dataclasses, no I/O).

Both :class:`~claw_sessiond_client.sync.SessionClient` and
:class:`~claw_sessiond_client.aio.AsyncSessionClient` return these. Import
them from the package (``from claw_sessiond_client import Message``), which
exports them all; the module itself is private, like every module that is not
one of the package's public ones (aio, api, errors, paths, sync).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._checks import arguments_text, check_type

__all__ = [
    "AppendResult",
    "BackupFigures",
    "ClearResult",
    "DeleteEntriesResult",
    "DeleteResult",
    "EditTailResult",
    "EntryUsage",
    "ForkResult",
    "ImportResult",
    "InFlightCall",
    "LoadResult",
    "Message",
    "ModelUsage",
    "Repair",
    "Run",
    "Session",
    "SessionPage",
    "SessionSummary",
    "StateDelta",
    "Stats",
    "ToolCall",
    "ToolPolicy",
    "Usage",
    "UsageReport",
    "WatchEvent",
]


@dataclass(frozen=True, slots=True, init=False)
class ToolCall:
    """A tool call of an assistant message; ``arguments`` is JSON text.

    ``arguments`` may also be given as a JSON-serialisable value (a dict, as
    Anthropic's SDK hands out a ``tool_use`` block's ``input``; a list; ...):
    it is stored encoded as compact JSON (``separators=(",", ":")``,
    ``ensure_ascii=False``), so :attr:`arguments` is always text. Text is sent
    and comes back exactly as given.

    ``pending=True`` marks a call that awaits something outside the run (a
    person's approval, a long-running tool): no Load repairs or drops it, whether
    or not its process lives, until a tool message answers it (a result, or
    ``Message.tool(..., cancelled=True)``). :attr:`arguments_not_json` is set by
    the daemon when the arguments were stored as given although they are not
    JSON (a tool policy with ``allow_unparsed_calls``).

    Raises:
        TypeError: ``id`` or ``name`` is not a str, ``pending`` not a bool, or ``arguments``
            is neither a str nor JSON-serialisable.
    """

    id: str
    name: str
    arguments: str
    pending: bool
    arguments_not_json: bool = field(init=False)  # set by the daemon; not an argument (``dataclasses.replace`` works)

    def __init__(
        self,
        id: str,
        name: str,
        arguments: str | Mapping[str, Any] | Sequence[Any] = "{}",
        *,
        pending: bool = False,
    ) -> None:
        check_type("ToolCall.id", id, str)
        check_type("ToolCall.name", name, str)
        check_type("ToolCall.pending", pending, bool)
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "arguments", arguments_text(arguments, f"ToolCall({id!r}).arguments"))
        object.__setattr__(self, "pending", pending)
        object.__setattr__(self, "arguments_not_json", False)

    @classmethod
    def _stored(cls, id: str, name: str, arguments: str, pending: bool, arguments_not_json: bool) -> ToolCall:
        """A call as the daemon returned it (with the flags only the daemon sets)."""
        call = cls(id, name, arguments, pending=pending)
        object.__setattr__(call, "arguments_not_json", arguments_not_json)
        return call

    @property
    def args(self) -> Any:
        """The arguments parsed from JSON (``ValueError`` when :attr:`arguments_not_json`)."""
        return json.loads(self.arguments)


@dataclass(frozen=True, slots=True)
class EntryUsage:
    """Token usage and cost of one entry; an append adds it to the session's totals (as :meth:`record_usage`).

    ``cost_micros`` is millionths of ``currency`` (an ISO 4217 code, required when there is a cost).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_micros: int = 0
    currency: str = ""
    model: str = ""
    pricing_version: str = ""


@dataclass(frozen=True, slots=True)
class Message:
    """One history entry. ``position``, ``created_at``, ``synthetic_reason`` and ``trace_id`` are set by the daemon.

    Besides its role, text and tool calls an entry may carry (keyword fields):

    - ``format`` and ``item``: the framework's own item (any bytes, for example its JSON) and a
      tag saying what it is (``"openai.responses"``, ``"langchain"``, ... : 1-64 characters of
      a-z, 0-9, ``.``, ``_``, ``-``); stored and returned byte for byte. Both or neither.
    - ``client_id``: the caller's id of the entry, unique in the session's visible history
      (a duplicate raises :class:`~claw_sessiond_client.errors.AlreadyExistsError`).
    - ``metadata``: a JSON object as text, returned exactly as given.
    - ``usage``: an :class:`EntryUsage`, added to the session's totals when appended.

    Role ``"other"`` (:meth:`other`) is an entry with no conversation role (a reasoning item,
    a hosted tool call, a compaction item, ...): it needs an item, and is never paired,
    repaired or searched.
    """

    role: str
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""
    synthetic_reason: str = ""
    position: int = 0
    created_at: dt.datetime | None = None
    trace_id: str = ""
    format: str = ""
    item: bytes = b""
    client_id: str = ""
    metadata: str = ""
    usage: EntryUsage | None = None
    cancelled: bool = False
    """Tool message only: the call was cancelled (it did not run); answers a pending call like a result."""
    orphan: bool = field(default=False, init=False)
    """Set by the daemon: a tool result whose call was unknown, stored under a tool policy that allows it."""
    supersedes: int = field(default=0, init=False)
    """Set by the daemon: the position of the synthetic "interrupted" result this real result superseded."""

    @classmethod
    def system(cls, content: str, **fields: Any) -> Message:
        """A system message (``fields``: keyword fields such as ``client_id`` or ``item``)."""
        return cls("system", content, **fields)

    @classmethod
    def user(cls, content: str, **fields: Any) -> Message:
        """A user message (``fields``: keyword fields such as ``client_id`` or ``item``)."""
        return cls("user", content, **fields)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: Sequence[ToolCall] = (), **fields: Any) -> Message:
        """An assistant message, optionally with tool calls (``fields``: keyword fields such as ``usage``)."""
        return cls("assistant", content, tuple(tool_calls), **fields)

    @classmethod
    def tool(
        cls, tool_call_id: str, content: str, name: str = "", *, cancelled: bool = False, **fields: Any
    ) -> Message:
        """A tool result answering ``tool_call_id`` (``cancelled``: the call did not run; ``fields``:
        keyword fields such as ``item``)."""
        return cls("tool", content, (), tool_call_id, name, cancelled=cancelled, **fields)

    @classmethod
    def other(cls, format: str, item: bytes, **fields: Any) -> Message:
        """An entry with no conversation role: the framework's ``item`` (bytes) of ``format``.

        ``fields``: any other keyword field (``content``, ``client_id``, ``metadata``, ``usage``).
        """
        return cls("other", format=format, item=item, **fields)

    @property
    def synthetic(self) -> bool:
        """True if the daemon wrote this message itself (a repair)."""
        return bool(self.synthetic_reason)


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """Tool-call rules for a session or one append (README "Tool calls"); unset fields: the session's.

    ``repair``: what a Load does with an open call no live run owns and that is
    not pending: ``"synthesize"`` (a synthetic "interrupted" result, today's
    default), ``"drop"`` (hidden from Load's reply; the log keeps it; nothing
    written) or ``"off"`` (left open and visible); None: the session's.
    ``allow_orphan_results``: store a tool result whose call is unknown
    (``Message.orphan``, never paired). ``allow_unparsed_calls``: store calls
    whose arguments are not JSON (``ToolCall.arguments_not_json``) and calls
    without an id (never paired, never repaired).
    """

    repair: str | None = None
    allow_orphan_results: bool = False
    allow_unparsed_calls: bool = False


@dataclass(frozen=True, slots=True)
class Usage:
    """Token and cost totals; ``cost_micros`` is millionths of ``currency``."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_micros: int = 0
    currency: str = ""


@dataclass(frozen=True, slots=True)
class StateDelta:
    """A change to a JSON state: each key of ``delta`` is set to its value, a None value removes the key.

    ``scope`` "" is the session's own state; a name (``"app:weather"``, 1-256 bytes) is a state
    shared by every session that names it.
    """

    delta: Mapping[str, Any]
    scope: str = ""


@dataclass(frozen=True, slots=True)
class Session:
    """Session metadata as returned by Load (and by ``create_session``, ``fork_session``, ``update_session``).

    ``state`` is the session's own JSON state; ``labels`` its labels; ``tool_policy`` its default
    tool-call rules; ``forked_from`` and ``forked_at_position`` where a forked session came from;
    ``incarnation`` changes when the session is deleted and created again.
    """

    id: str
    workdir: str
    created_at: dt.datetime | None
    updated_at: dt.datetime | None
    usage: Usage
    last_position: int
    stored: bool
    message_count: int
    state: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    tool_policy: ToolPolicy = field(default_factory=ToolPolicy)
    forked_from: str = ""
    forked_at_position: int = 0
    incarnation: str = ""


@dataclass(frozen=True, slots=True)
class Repair:
    """An interrupted tool call that a Load answered with a synthetic result."""

    tool_call_id: str
    assistant_position: int
    position: int


@dataclass(frozen=True, slots=True)
class InFlightCall:
    """An unanswered call that a live run owns."""

    tool_call_id: str
    assistant_position: int
    run_id: str
    owner_pid: int
    owner_host: str = ""
    """Host of the daemon the owner attached to (several daemons on one PostgreSQL database; "" on SQLite)."""
    owner_label: str = ""
    """The label the owner gave in Attach ("" if none, or from a daemon that does not send it)."""


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What :meth:`load` returns."""

    session: Session
    messages: list[Message]
    repairs: list[Repair] = field(default_factory=list)
    in_flight: list[InFlightCall] = field(default_factory=list)
    trace_id: str = ""
    #: False when a bounded load (``last``, ``after_position``, ``after_time``) left visible entries out.
    complete: bool = True
    #: Position of the first entry returned (0 if none).
    start_position: int = 0
    scope_states: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The states of the shared scopes asked for (``load(..., scopes=[...])``)."""


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What :meth:`append` returns."""

    first_position: int
    last_position: int
    replayed: bool
    trace_id: str
    created_at: dt.datetime | None


@dataclass(frozen=True, slots=True)
class ClearResult:
    """What :meth:`clear` returns.

    With ``erase=True``: ``events_erased`` is how many events left the log, and
    ``erasure_pending`` is True while their bytes may still be in the database
    files (as :class:`DeleteResult`'s).
    """

    position: int
    replayed: bool
    trace_id: str
    events_erased: int = 0
    erasure_pending: bool = False


@dataclass(frozen=True, slots=True)
class DeleteEntriesResult:
    """What :meth:`delete_entries` returns.

    ``removed_positions`` are the positions of the entries it took out of the visible history,
    ascending; ``edit_position`` the position of the edit event that records it (0: nothing
    matched and nothing was written); ``replayed`` marks the stored result of a retry.
    """

    removed_positions: list[int]
    edit_position: int
    replayed: bool
    trace_id: str


@dataclass(frozen=True, slots=True)
class EditTailResult:
    """What :meth:`edit_tail` returns.

    ``removed`` are the entries the edit took out of the visible history, in
    position order (empty on a replay: they went with the first request);
    ``edit_position`` is the position of the edit itself; ``first_position``
    and ``last_position`` those of the first and last replacement (0 if none).
    """

    removed: list[Message]
    edit_position: int
    first_position: int
    last_position: int
    replayed: bool
    trace_id: str


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of :meth:`list_sessions`."""

    id: str
    message_count: int
    usage: Usage
    updated_at: dt.datetime | None
    workdir: str
    last_position: int
    labels: dict[str, str] = field(default_factory=dict)
    created_at: dt.datetime | None = None


@dataclass(frozen=True, slots=True)
class ForkResult:
    """What :meth:`fork_session` returns: the new session, how many entries it copied, and whether it was a replay."""

    session: Session
    entries_copied: int
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class SessionPage:
    """One page of :meth:`list_sessions_page`."""

    sessions: list[SessionSummary]
    #: Pass to the next call for the following page; empty on the last page.
    next_page_token: str
    #: How many sessions match the filter over all pages.
    total: int


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Usage of one model and pricing version."""

    model: str
    pricing_version: str
    usage: Usage


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Session totals and the per-model breakdown."""

    total: Usage
    by_model: list[ModelUsage]


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What one session's import wrote (:meth:`import_lines` returns one per session)."""

    session_id: str
    events_imported: int


class DeleteResult(int):
    """What Delete returns: the number of events removed (an ``int``, as before), plus
    ``erasure_pending``.

    ``erasure_pending`` is True when the session is gone from the database but
    its bytes may still be in ``sessions.db`` or ``sessions.db-wal``: a reader
    holds an older snapshot, so the checkpoint that removes them could not
    complete. The daemon finishes it in the background as soon as readers
    allow (``stats()["erasure_pending_sessions"]`` counts what still waits).
    """

    erasure_pending: bool

    def __new__(cls, events_deleted: int, erasure_pending: bool = False) -> DeleteResult:
        self = super().__new__(cls, events_deleted)
        self.erasure_pending = erasure_pending
        return self

    @property
    def events_deleted(self) -> int:
        """Number of events removed (0 if the session was not stored)."""
        return int(self)

    def __repr__(self) -> str:
        return f"DeleteResult(events_deleted={int(self)}, erasure_pending={self.erasure_pending})"

    def __str__(self) -> str:  # an int in f-strings and print(), as before
        return str(int(self))

    def __format__(self, spec: str) -> str:
        return format(int(self), spec)


@dataclass(frozen=True, slots=True)
class Stats:
    """Daemon figures (GetStats)."""

    values: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


@dataclass(frozen=True, slots=True)
class BackupFigures:
    """What a backup holds (figures the daemon read from the copy it sent)."""

    sessions: int
    events: int
    bytes: int
    schema_version: int


class Run:
    """A live run of a session, held by :meth:`attach` for the length of a ``with`` block.

    Pass :attr:`run_id` as ``append(..., run_id=run.run_id)``: tool calls
    appended that way are *in flight* while the run is alive, so another
    process's Load does not repair them. The run lives while its Attach
    stream is open: a process that is only blocked (a long synchronous tool,
    a stopped process) keeps it; one that exits loses it at once.
    :attr:`alive` turns False when the Attach stream ends (the block exits,
    the channel closes, the daemon stops or ended the run); the daemon then
    refuses the run id (``PreconditionError``, reason ``UNKNOWN_RUN``, metadata
    ``cause``) and may repair its open calls.
    """

    __slots__ = ("_alive", "lease_seconds", "pid_verified", "ping_timeout_s", "run_id", "session_id")

    def __init__(
        self,
        run_id: str,
        session_id: str,
        lease_seconds: int,
        pid_verified: bool = False,
        ping_timeout_s: int = 0,
    ) -> None:
        self.run_id = run_id
        self.session_id = session_id
        #: Over TCP, the daemon closes the connection (ending the run) when it answers no keepalive ping for
        #: about this many seconds; 0 on the Unix socket, where no pings are sent.
        self.lease_seconds = lease_seconds
        #: The daemon checked this process's pid with the kernel: the run also ends when the process is gone.
        self.pid_verified = pid_verified
        #: The ping bound asked for at attach (0: none); the client then pings by itself.
        self.ping_timeout_s = ping_timeout_s
        self._alive = True

    @property
    def alive(self) -> bool:
        """True until the Attach stream ended."""
        return self._alive

    def end(self) -> None:
        """Mark the run ended (called when its stream finishes)."""
        self._alive = False

    def __repr__(self) -> str:
        return f"Run(run_id={self.run_id!r}, session_id={self.session_id!r}, alive={self._alive})"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One history event from :meth:`watch`: a message (incl. synthetic repairs), a clear or an edit.

    A clear has ``cleared`` (and ``erased`` if it erased the log); an edit
    (:meth:`edit_tail`) has ``edited`` and the positions it removed from the
    visible history, and its replacements follow as messages.
    """

    position: int
    message: Message | None
    cleared: bool = False
    edited: bool = False
    removed_positions: tuple[int, ...] = ()
    erased: bool = False
