"""The vocabulary the daemon and the storage share, and nothing about how a backend keeps it.

The daemon-facing storage is one class, ``store.Storage`` (its members say what each promises),
over a backend's engine (``engine.py``). This module holds what it speaks of. Three things that
used to be in-process callbacks are part of the interface:

- **runs** (``runs.RunRegistry``, :class:`Run`, :class:`RunEnd`): which live run owns which session. A Load
  asks the storage's own registry which open calls are in flight; no
  callable from the service layer reaches a transaction.
- **the change feed** (:class:`ChangeListener`, ``Storage.subscribe``):
  after a commit, the sessions it changed; after an erasure, the session
  whose positions restart. It wakes watchers, who then read what they
  missed: order and completeness come from the storage, not the signal.
- **figures** (:class:`StorageFigures`, :class:`StorageCounters`): what
  stats and metrics report, in backend-neutral words.

What only one backend has is not in ``Storage`` but in a small
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
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from ..erasure import PendingErasures
from ..model import (
    HistoryCursor,
    HistoryMark,
    Message,
    ModelUsage,
    SessionSummary,
    Usage,
)
from ..queries import SearchFilter, SearchRow, UsageRow
from ..state import ScopeState
from .figures import CheckStatus, CopyFigures, StorageCheck, StorageCounters, StorageFigures

if TYPE_CHECKING:
    from ..export import ExportHeader

__all__ = [
    "BACKUP_CHUNK_BYTES",
    "BackingUp",
    "ChangeListener",
    "CheckStatus",
    "Checkpointing",
    "CopyFigures",
    "FollowItem",
    "HistoryItem",
    "Run",
    "RunEnd",
    "SharedRuns",
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
#: A history event as WatchAll sends it: (event id, session id, position, and the rest as in :data:`HistoryItem`).
FollowItem = tuple[int, str, int, Message | HistoryMark | None]


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


@runtime_checkable
class SharedRuns(Protocol):
    """A ``runs.RunRegistry`` whose runs every daemon sharing the storage knows (PostgreSQL: in the database,
    under each daemon's lease). Without it, runs live in this daemon's memory: registering a run claims it,
    a run ended here is ended for everyone, and every live run is this daemon's (its host is "")."""

    def host_of(self, run_id: str) -> str:
        """The host of the daemon a live run is attached to."""
        ...

    async def claim(self, run: Run) -> None:
        """Make a run ``RunRegistry.register`` just started known to every daemon that shares the storage.

        Raises:
            PreconditionError: reason RUN_ALREADY_OWNED, another daemon's live run owns the session.
            StorageError: the shared storage cannot take the claim now (the caller ends the run).
        """
        ...

    async def settled(self) -> None:
        """Wait until the runs ended so far are ended for every daemon too."""
        ...


def run_host(runs: object, run_id: str) -> str:
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
    """The whole-store reads every backend answers in its own SQL (the part of ``store.Storage`` a backend
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

    async def follow_batch(self, after_event_id: int, limit: int) -> tuple[list[FollowItem], bool]:
        """History events of every session after an event id (:data:`FollowItem`), and whether more may follow."""
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


def pending_erasures(store: object) -> int:
    """How many erased sessions' bytes may still be in the store's files (0 for a store without checkpoints)."""
    return store.erasures.count() if isinstance(store, Checkpointing) else 0
