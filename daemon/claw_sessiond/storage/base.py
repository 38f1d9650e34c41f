"""What the daemon needs from a storage backend, and nothing about how.

Every write is all-or-nothing and durable before its coroutine returns. The
writes of one session commit in one total order, and the writes this daemon
submits for one session commit in submission order. A request id makes a
write idempotent per session (``rules.replay_record``). Backends raise only
``claw_sessiond.errors``; their own errors are mapped once, inside the
backend. Each backend's transaction code calls the pure rules
(``rules.py``, ``repair.py``, ``events.py``, ``history.py``) and never
re-decides them.

Three things that used to be in-process callbacks are part of the interface:

- **runs** (:class:`RunRegistry`): which live run owns which session. A Load
  asks the storage's own registry which open calls are in flight; no
  callable from the service layer reaches a transaction.
- **the change feed** (:class:`ChangeListener`, :meth:`Storage.subscribe`):
  after a commit, the sessions it changed; after an erasure, the session
  whose positions restart. It wakes watchers, who then read what they
  missed: order and completeness come from the storage, not the signal.
- **figures** (:class:`StorageFigures`, :class:`StorageCounters`): what
  stats and metrics report, in backend-neutral words.

What only one backend has is not in :class:`Storage` but in a small
capability interface of its own, which the caller checks with ``isinstance``
(each is ``runtime_checkable``) and otherwise does without: a storage that
lacks one has no stub for it.

- :class:`Checkpointing` (SQLite): erased bytes may linger in the files
  until a checkpoint; the daemon retries it in the background (``erasure.py``).
- :class:`BackingUp` (SQLite): a consistent copy in a private file (the Backup RPC).
- :class:`SweepTurns` (PostgreSQL): daemons sharing the store take turns to
  sweep it, with the cutoff on the store's clock (``retention.py``).
- :class:`SharedRuns` (PostgreSQL's runs): runs claimed, settled and located
  across the daemons that share the store.

What the application remembers about its own requests (which sessions it
wrote since start, for retention) is the application's, not the storage's.

Must never: import grpc, or take a callable from the service layer.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol, runtime_checkable

from ..erasure import PendingErasures
from ..events import EventRow
from ..export import ExportHeader, ImportedSession
from ..model import (
    AppendJob,
    AppendResult,
    ClearResult,
    DeleteEntriesJob,
    DeleteEntriesResult,
    DeleteResult,
    EditJob,
    EditResult,
    EventResult,
    HistoryCursor,
    HistoryMark,
    ImportMode,
    LoadResult,
    LoadWindow,
    Message,
    ModelUsage,
    SessionSummary,
    Usage,
    UsageDelta,
    UsageResult,
)
from ..policy import ToolPolicy
from ..queries import SearchFilter, SearchRow, UsageRow
from ..state import CreateJob, ForkJob, ForkResult, ScopeState, SessionResult, UpdateJob
from .figures import CheckStatus, CopyFigures, StorageCheck, StorageCounters, StorageFigures

__all__ = [
    "BACKUP_CHUNK_BYTES",
    "BackingUp",
    "ChangeListener",
    "CheckStatus",
    "Checkpointing",
    "CopyFigures",
    "HistoryItem",
    "Run",
    "RunEnd",
    "RunRegistry",
    "SharedRuns",
    "Storage",
    "StorageCheck",
    "StorageCounters",
    "StorageFigures",
    "StoreReads",
    "SweepTurns",
    "pending_erasures",
    "run_host",
]

#: Largest piece of a backup per Backup reply (and per read of the copy).
BACKUP_CHUNK_BYTES: Final = 1024 * 1024

#: A history event as Watch sends it: (position, the message, a mark for an edit or an erasing clear,
#: or None for a clear that kept the log).
HistoryItem = tuple[int, Message | HistoryMark | None]


# ---------------------------------------------------------------- runs


class RunEnd(enum.StrEnum):
    """Why a run ended: the ``cause`` in the UNKNOWN_RUN ErrorInfo metadata (docs/PROTOCOL.md)."""

    ENDED = "ended"
    """EndRun ended it."""
    STREAM_CLOSED = "stream_closed"
    """Its Attach stream ended: cancelled, channel closed, process exited, connection lost."""
    PROCESS_GONE = "process_gone"
    """The process whose pid the daemon verified is gone."""
    PING_TIMEOUT = "ping_timeout"
    """It asked for pings and none came within its bound."""
    DAEMON_STOPPING = "daemon_stopping"
    """The daemon stopped."""
    UNKNOWN = "unknown"
    """This daemon does not know the run id (never issued, issued before a restart, or long ended)."""
    OTHER_SESSION = "other_session"
    """The run is live but runs another session."""
    LEASE_LOST = "lease_lost"
    """Its daemon lost its lease on a shared database (it hung or lost the database for longer than the
    lease): other daemons already treat the run as ended, so it writes nothing more."""


@dataclass
class Run:
    """One live run: an open Attach stream that owns a session's tool calls."""

    run_id: str
    session_id: str
    pid: int
    label: str
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the run ends (or the daemon stops): the Attach stream then closes."""
    process_start: int = 0
    """The start time the kernel gave for ``pid`` when the daemon verified it (0: not verified)."""
    ping_timeout_s: float = 0.0
    """The run's ping bound in seconds (0: none)."""
    last_ping: float = field(default_factory=time.monotonic)
    """When the run was last renewed (monotonic clock): Attach, PingRun, an Append naming it."""
    cause: str = ""
    """Why the run ended (a :class:`RunEnd`; "" while live)."""


class RunRegistry(Protocol):
    """Which live run owns which session (SPEC §4: one live run per session).

    Tool calls appended with a live run's id are *in flight*: a Load does not
    repair them. When the run ends, they become repairable at the next Load.
    Lives on the event loop. It remembers why recently ended runs ended, so a
    late call naming one says so (reason UNKNOWN_RUN, metadata ``cause``).
    """

    def register(
        self, session_id: str, pid: int, label: str, *, process_start: int = 0, ping_timeout_s: float = 0.0
    ) -> Run:
        """Start a run on ``session_id``.

        Raises:
            PreconditionError: reason RUN_ALREADY_OWNED, the session already has a live run.
        """
        ...

    def unregister(self, run_id: str) -> None:
        """End a run because its stream closed (idempotent)."""
        ...

    def end(self, run_id: str, cause: RunEnd) -> Run | None:
        """End a live run for ``cause``; the run if it was live, else None (idempotent)."""
        ...

    def end_all(self) -> None:
        """Release every run's stream (shutdown)."""
        ...

    def is_live(self, run_id: str) -> bool:
        """True while the run's Attach stream is open."""
        ...

    def get(self, run_id: str) -> Run | None:
        """The live run ``run_id``, or None."""
        ...

    def owner_of(self, session_id: str) -> Run | None:
        """The live run of ``session_id``, or None."""
        ...

    def ended_run(self, run_id: str) -> tuple[str, str] | None:
        """(session id, cause) of a run this registry ended recently, or None."""
        ...

    def pid_of(self, run_id: str) -> int:
        """The pid a live run declared (0 if unknown)."""
        ...

    def label_of(self, run_id: str) -> str:
        """The label a live run declared in Attach ("" if none or unknown)."""
        ...

    def check_run(self, run_id: str, session_id: str) -> None:
        """An Append's run id must name a live run of that session.

        Raises:
            PreconditionError: reason UNKNOWN_RUN, metadata ``run_id`` and ``cause``.
        """
        ...

    def count(self) -> int:
        """Number of live runs of this daemon."""
        ...

    async def confirm_run(self, run_id: str, session_id: str, *, ping: bool = False) -> None:
        """:meth:`check_run` where every daemon sharing the storage can answer: on a shared database, a live
        run of another daemon passes, and a run whose daemon lost its lease does not (cause ``lease_lost``).
        With ``ping``, a live run of another daemon is also renewed there (a call naming a run is its ping).

        Raises:
            PreconditionError: reason UNKNOWN_RUN, metadata ``run_id`` and ``cause``.
            StorageError: the shared storage cannot answer now.
        """
        ...

    async def ping(self, run_id: str) -> float:
        """PingRun: renew a live run (on a shared database, also another daemon's: its owner is told); its ping
        bound in seconds (0: none, or not known here because another daemon owns the run).

        Raises:
            PreconditionError: reason UNKNOWN_RUN, metadata ``run_id`` and ``cause``.
            StorageError: the shared storage cannot answer now.
        """
        ...


@runtime_checkable
class SharedRuns(Protocol):
    """A :class:`RunRegistry` whose runs every daemon sharing the storage knows (PostgreSQL: in the database,
    under each daemon's lease). Without it, runs live in this daemon's memory: registering a run claims it,
    a run ended here is ended for everyone, and every live run is this daemon's (its host is "")."""

    def host_of(self, run_id: str) -> str:
        """The host of the daemon a live run is attached to."""
        ...

    async def claim(self, run: Run) -> None:
        """Make a run :meth:`RunRegistry.register` just started known to every daemon that shares the storage.

        Raises:
            PreconditionError: reason RUN_ALREADY_OWNED, another daemon's live run owns the session.
            StorageError: the shared storage cannot take the claim now (the caller ends the run).
        """
        ...

    async def settled(self) -> None:
        """Wait until the runs ended so far are ended for every daemon too."""
        ...


def run_host(runs: RunRegistry, run_id: str) -> str:
    """The host of the daemon a live run is attached to, where daemons share the runs ("" otherwise)."""
    return runs.host_of(run_id) if isinstance(runs, SharedRuns) else ""


# ---------------------------------------------------------------- the change feed


class ChangeListener(Protocol):
    """Told about changes, on the event loop, after they are durable."""

    def changed(self, session_ids: set[str]) -> None:
        """A commit changed the history of these sessions (appends, repairs, clears, imports; not usage or
        audit events, which no watcher follows); only after the commit, never for a write that failed."""
        ...

    def erased(self, session_id: str) -> None:
        """The session was erased (delete, retention, import replace): its positions restart at 1."""
        ...

    def resync(self) -> None:
        """Changes may have been missed (a feed across daemons reconnected): every follower reads again."""
        ...


# ---------------------------------------------------------------- the storage


class StoreReads(Protocol):
    """The whole-store reads every backend answers in its own SQL (the part of :class:`Storage` a backend
    engine implements as it is: ``engine.py``). All coroutines on the daemon's event loop."""

    async def list_sessions(
        self,
        id_contains: str,
        limit: int,
        after: tuple[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[SessionSummary]:
        """Sessions whose id contains ``id_contains`` and that carry every one of ``labels`` (exact values),
        most recently updated first, after the (updated_at, session_id) keyset cursor ``after``."""
        ...

    async def count_sessions(self, id_contains: str, labels: Mapping[str, str] | None = None) -> int:
        """How many sessions :meth:`list_sessions` would list over all its pages."""
        ...

    async def scope_states(self, scopes: Sequence[str]) -> list[ScopeState]:
        """The states of shared scopes in the order asked ("{}" and no time for a scope never written)."""
        ...

    async def list_scope_states(self, after: str, limit: int) -> list[ScopeState]:
        """Stored shared scope states whose scope sorts after ``after`` (byte order), at most ``limit``, in order."""
        ...

    async def usage_by_model(self, session_id: str) -> tuple[Usage, list[ModelUsage]]:
        """Session totals and the per-model breakdown.

        Raises:
            SessionNotFoundError: the session is not stored.
        """
        ...

    async def session_ids(self) -> list[str]:
        """Every stored session id, oldest first (the order of a full export)."""
        ...

    async def export_start(self, session_id: str) -> tuple[ExportHeader, HistoryCursor, int] | None:
        """A session's export header, a cursor and the last event id to export (None if not stored)."""
        ...

    async def search(self, match: str, filters: SearchFilter, limit: int) -> tuple[list[SearchRow], bool]:
        """Full-text search (``queries.fts_query`` builds ``match``), bounded in time; True if more matched."""
        ...

    async def usage_report(self, since: str, until: str, *, by_session: bool) -> tuple[list[UsageRow], bool]:
        """Usage events grouped by day, model, pricing version and currency (and session)."""
        ...

    async def follow_start(self, last: int) -> int:
        """The event id a follow-all starts after (the newest, or before the last ``last`` history events)."""
        ...

    async def follow_batch(
        self, after_event_id: int, limit: int
    ) -> tuple[list[tuple[int, str, int, Message | HistoryMark | None]], bool]:
        """History events of every session after an event id: ``(event_id, session_id, position, message,
        mark or None)`` as in :data:`HistoryItem`, and whether more may follow."""
        ...

    async def sessions_not_updated_since(self, cutoff_rfc3339: str) -> list[str]:
        """Ids of sessions whose last change is older than the cutoff."""
        ...

    async def newest_update(self) -> str | None:
        """The newest stored change (``updated_at``, stored-timestamp text) of any session; None if none is stored."""
        ...

    async def figures(self) -> StorageFigures:
        """What the storage holds now."""
        ...


class Storage(StoreReads, Protocol):
    """Sessions, stored durably. All methods are coroutines on the daemon's event loop (unless noted)."""

    @property
    def runs(self) -> RunRegistry:
        """The live runs; :meth:`load` consults them to leave in-flight calls open."""
        ...

    @property
    def counters(self) -> StorageCounters:
        """This daemon's running figures."""
        ...

    @property
    def applied_migrations(self) -> Sequence[str]:
        """Names of the schema migrations applied when this storage was opened."""
        ...

    # -- reads

    async def load(
        self,
        session_id: str,
        workdir: str,
        trace_id: str,
        *,
        repair: bool = True,
        window: LoadWindow | None = None,
        reply_only: bool = False,
    ) -> LoadResult:
        """Get-or-create read: repairs interrupted calls (not those of live runs) unless ``repair`` is False.

        Each open call meets its repair mode (``repair.split_calls`` with the session's tool policy):
        pending calls and live runs' calls are in flight; ``drop`` hides a call from the reply;
        ``off`` leaves it open. With ``repair`` False, and for a paired history, nothing at all is
        written. A history that fits one page comes back in ``messages``; a larger one as a
        ``cursor`` for :meth:`history_pages`. With a ``window`` (a bounded read) only the window's
        entries come back, in the full history's order restricted to them, and ``complete`` says
        whether any visible entry was left out; its cost does not grow with the history (it reads
        the window, one entry before it, and the open calls; repair still covers the whole
        session's open calls).

        ``reply_only``: the messages (and the cursor's pages) are only sent on (``rpc/wire.py``): an entry
        whose encoded reply form is stored (``Message.encoded``) may come back as that form with only
        what ordering reads (role, position; ``events.reply_entry``). A backend that stores no encoded
        form (PostgreSQL) returns whole messages either way.
        """
        ...

    async def session_tool_policy(self, session_id: str) -> ToolPolicy:
        """The session's stored tool policy (``policy.py``; empty when none is set or it is not stored)."""
        ...

    def history_pages(self, cursor: HistoryCursor) -> AsyncGenerator[list[Message], None]:
        """The visible history of a Load's cursor in conversation order, page by page.

        Raises:
            SequenceConflictError: the session was cleared or erased meanwhile.
        """
        ...

    async def watch_batch(
        self, session_id: str, after_position: int, limit: int
    ) -> tuple[str | None, list[HistoryItem], bool]:
        """The session's incarnation (None if not stored), its history events after a position, and whether
        more may follow; read in one snapshot."""
        ...

    async def put_scope_states(self, states: Sequence[ScopeState]) -> None:
        """Store each state verbatim (its state and time), replacing a stored one of the same scope; all or none.

        For ``claw-sessiond copy``: no delta rules and no merge, the source's rows as they were.
        """
        ...

    def export_pages(self, cursor: HistoryCursor, max_event_id: int) -> AsyncGenerator[list[EventRow], None]:
        """The session's events up to ``max_event_id`` in event order, page by page, payloads still text
        (decode with ``events.decode_events``)."""
        ...

    # -- writes

    async def append(self, job: AppendJob) -> AppendResult:
        """Append validated messages, all or none, and apply its state deltas in the same transaction."""
        ...

    async def record_usage(
        self, session_id: str, delta: UsageDelta, *, request_id: str, workdir: str, trace_id: str
    ) -> UsageResult:
        """Add usage to the session's totals (creating the session if needed)."""
        ...

    async def create_session(self, job: CreateJob) -> SessionResult:
        """Create an empty session with its initial state, labels and tool policy; a retry with the same
        request id replays (the session as it is now).

        Raises:
            AlreadyExistsError: reason SESSION_EXISTS, the id is stored.
        """
        ...

    async def fork_session(self, job: ForkJob) -> ForkResult:
        """Create a session whose history is a copy of another's visible entries up to a position (positions
        1..n, items and synthetic repairs as stored; open calls without run ownership), with its state, tool
        policy and labels (unless given) and its lineage; O(entries copied).

        Raises:
            SessionNotFoundError: the source is not stored.
            AlreadyExistsError: reason SESSION_EXISTS, the new id is stored.
            InvalidRequestError: the position is beyond the source's last one.
        """
        ...

    async def update_session(self, job: UpdateJob) -> SessionResult:
        """Apply state deltas (each a ``state`` event), label changes and a new default tool policy (a
        ``session_settings`` event), all or none, if the last position is still the expected one.

        Raises:
            SessionNotFoundError: the session is not stored.
            SequenceConflictError: the last position moved.
            InvalidRequestError: a state over its bound, more than 32 labels.
        """
        ...

    async def clear(
        self,
        session_id: str,
        *,
        request_id: str,
        expected_last_position: int,
        workdir: str,
        trace_id: str,
        erase: bool = False,
    ) -> ClearResult:
        """Record a clear: the visible history starts after it; usage is kept.

        With ``erase`` the history before it leaves the log too (its messages, repairs, clears and
        edits, their tool-call index and search index; usage, state and audit events stay), as a
        Delete erases (see :class:`Checkpointing`); positions are never reused, and the clear's payload says
        how many events went. The content hashes of the session's stored request ids go with it (a
        retry still replays its first result).
        """
        ...

    async def edit_tail(self, job: EditJob) -> EditResult:
        """Remove the tail of the visible history and append replacements, all or nothing (``edits.py``).

        Costs O(entries removed and appended), never O(history).

        Raises:
            SequenceConflictError: the expected last position does not match.
            InvalidRequestError: more entries to remove than are visible, or too many bytes to return.
            PreconditionError: reason EDIT_SPLITS_CALL, a removed entry holds an unanswered pending call.
            ToolCallStateError, StorageError: as Append.
        """
        ...

    async def delete_entries(self, job: DeleteEntriesJob) -> DeleteEntriesResult:
        """Remove the visible entries ``job`` selects anywhere in the history, recorded as an edit event
        (``storage/deleting.py``). Costs O(entries chosen), never O(history).

        Raises:
            SessionNotFoundError: the session is not stored.
            SequenceConflictError: the expected last position does not match.
            InvalidRequestError: reason FIELD_TOO_LARGE, the selector matches more than ``job.max_entries``.
            PreconditionError: reason EDIT_SPLITS_CALL, one half of a call and its result (see ``edits.py``).
        """
        ...

    async def record_event(
        self, session_id: str, event_type: str, payload: str, *, request_id: str, trace_id: str
    ) -> EventResult:
        """Store an audit event (permission denial, error)."""
        ...

    async def delete(self, session_id: str) -> DeleteResult:
        """Erase a session (its content leaves the storage; see :class:`Checkpointing` for what may linger)."""
        ...

    async def import_session(self, session: ImportedSession, mode: ImportMode = "refuse") -> int:
        """Write an imported session, all or nothing, and rebuild its derived state; returns events written."""
        ...

    async def prune_requests(self, cutoff_rfc3339: str, limit: int) -> int:
        """Delete at most ``limit`` idempotency records written before the cutoff, oldest first."""
        ...

    # -- retention

    async def delete_if_not_updated_since(self, session_id: str, cutoff_rfc3339: str) -> int:
        """Erase the session only if its stored time is still older than the cutoff when the delete runs.

        The caller spares the sessions it wrote since start before it calls (``retention.py``); the delete
        is submitted in the session's order at the call, so a write submitted after it commits after it.
        """
        ...

    # -- operations

    def subscribe(self, listener: ChangeListener) -> None:
        """Tell ``listener`` about every later commit and erasure. Not a coroutine."""
        ...

    async def close(self) -> None:
        """Finish queued writes and release everything."""
        ...


# ---------------------------------------------------------------- capabilities of one backend


@runtime_checkable
class Checkpointing(Protocol):
    """A storage whose erased bytes may stay in its files after the erasing commit, until a checkpoint
    (SQLite: the WAL and the main file's free pages); the daemon retries it while erasures are pending."""

    @property
    def erasures(self) -> PendingErasures:
        """Erased sessions whose bytes may still be in the storage's files (:meth:`checkpoint` finishes them)."""
        ...

    async def checkpoint(self) -> bool:
        """Try to finish pending erasures now (SQLite: a no-wait WAL checkpoint); True if nothing lingers."""
        ...


@runtime_checkable
class BackingUp(Protocol):
    """A storage the daemon can copy itself (SQLite's file; a database server's backups are its own job)."""

    async def backup(self) -> tuple[Path, CopyFigures]:
        """A consistent copy in a new private file; returns its path (the caller streams and removes it)."""
        ...


@runtime_checkable
class SweepTurns(Protocol):
    """A store shared by daemons: one sweeps it at a time, with the cutoff on the clock its stored times come
    from. Without it (one daemon per store) the daemon always has the turn and the cutoff is its own."""

    def retention_turn(self, window_s: float) -> AbstractAsyncContextManager[str | None]:
        """This daemon's turn to sweep sessions idle for ``window_s`` seconds, held while the context is open.

        Yields the cutoff (sessions whose stored time is older expire), or None when another daemon sweeps
        the same store now (skip this round). Not a coroutine.
        """
        ...


def pending_erasures(store: Storage) -> int:
    """How many erased sessions' bytes may still be in the store's files (0 for a store without checkpoints)."""
    return store.erasures.count() if isinstance(store, Checkpointing) else 0
