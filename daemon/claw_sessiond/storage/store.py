"""The storage facade, once for every backend: :class:`Storage`, what the daemon uses, over a backend engine.

Each write's entry point builds the write's sequence (``writes.py``, ``sessions.py``,
``editing.py``, ``importing.py``, ``states.py``; a Load's is ``loading.py``), with its
fingerprint, hands it to the engine (``engine.py``: SQLite's writer thread or PostgreSQL's
session queues), counts what the reply says was done in :class:`~.figures.StorageCounters` and
tells the listeners of erasures. The whole-store reads (``base.StoreReads``) are the engine's
own SQL, handed through as they are.

Every write is all-or-nothing and durable before its coroutine returns. The writes of one session
commit in one total order, and the writes this daemon submits for one session commit in submission
order. A request id makes a write idempotent per session (``rules.replay_record``). Backends raise
only ``claw_sessiond.errors``; their own errors are mapped once, inside the backend.

:class:`Storage` is the one daemon-facing storage type: each member says what it promises and keeps
the promise once. What only one backend has is added by its module to a subclass of its own
(SQLite's ``store.py``, PostgreSQL's ``store.py``) and named by a capability interface of
``base.py`` that the caller checks; never by a stub here.

Must never: import grpc, or take a callable from the service layer.
"""

# A port write that returns nothing is still yielded (its driver runs it in order; see ``steps.py``); the
# None it sends back is not used (mypy's func-returns-value would refuse the ``yield`` of such a call).
# mypy: disable-error-code="func-returns-value"

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncGenerator, Awaitable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..events import EventRow, fingerprint
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
    ImportMode,
    LoadResult,
    LoadWindow,
    Message,
    UsageDelta,
    UsageResult,
)
from ..state import CreateJob, ForkJob, ForkResult, ScopeState, SessionResult, UpdateJob
from . import history_reads, loading, sessions, writes
from .base import ChangeListener, HistoryItem, StorageCounters
from .deleting import delete_entries
from .editing import edit_tail
from .engine import Engine
from .importing import import_session
from .item_cache import ItemCache
from .port import Port
from .runs import RunRegistry
from .steps import Steps

if TYPE_CHECKING:
    from ..export import ImportedSession

__all__ = ["Storage"]

T = TypeVar("T")


def _put_scope_states(port: Port, states: Sequence[ScopeState]) -> Steps[None]:
    yield port.put_scope_states(states)


def _prune_requests(port: Port, cutoff_rfc3339: str, limit: int) -> Steps[int]:
    removed: int = yield port.prune_requests(cutoff_rfc3339, limit)
    return removed


def _delete_if_older(port: Port, session_id: str, cutoff_rfc3339: str) -> Steps[int]:
    """Erase the session only if its stored time is still older than the cutoff (in the deleting transaction)."""
    row, _now = yield port.session_row(session_id)
    if row is None or row.updated_at >= cutoff_rfc3339:
        return 0
    return (yield from writes.delete(port, session_id))


class Storage:
    """Sessions, stored durably by a backend ``engine``. All methods are coroutines on the daemon's event loop
    (unless noted). ``max_open_tool_calls``: most open tool calls per session (0: no limit)."""

    def __init__(self, engine: Engine, max_open_tool_calls: int = 0) -> None:
        self.engine = engine
        self.max_open_tool_calls = max_open_tool_calls
        self._listeners = engine.listeners
        #: The live runs (``runs.RunRegistry``); :meth:`load` consults them to leave in-flight calls open.
        self.runs: RunRegistry = engine.runs
        #: This daemon's running figures.
        self.counters: StorageCounters = engine.counters
        #: The items of recent whole Loads of items (``item_cache.py``): checked in each Load's snapshot, dropped
        #: after each write of this daemon that removes entries or may erase them.
        self.item_cache = ItemCache()
        #: Names of the schema migrations applied when this storage was opened.
        self.applied_migrations: Sequence[str] = engine.applied_migrations
        # The whole-store reads are the engine's own (``base.StoreReads`` says what each promises).
        self.list_sessions = engine.list_sessions
        self.count_sessions = engine.count_sessions
        self.scope_states = engine.scope_states
        self.list_scope_states = engine.list_scope_states
        self.usage_by_model = engine.usage_by_model
        self.session_ids = engine.session_ids
        self.export_start = engine.export_start
        self.search = engine.search
        self.usage_report = engine.usage_report
        self.follow_start = engine.follow_start
        self.follow_batch = engine.follow_batch
        self.sessions_not_updated_since = engine.sessions_not_updated_since
        self.newest_update = engine.newest_update
        self.figures = engine.figures

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
        items_format: str = "",
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
        form (PostgreSQL) returns whole messages either way. Written once, in ``loading.py``, with the
        engine as its host.

        ``items_format``: the reply is the items of that format alone, in position order: the first
        page of them in ``items`` (read in the snapshot, or in the window's snapshot after a repair),
        the rest by the ``cursor``'s :meth:`item_pages`; no ``messages``. Without a window, the items an
        earlier Load read (:attr:`item_cache`) are the reply's first ones if the snapshot shows them
        unchanged, and only the items after them are read.
        """
        return await loading.load(
            self.engine,
            session_id,
            workdir,
            trace_id,
            repair=repair,
            window=window,
            reply_only=reply_only,
            items_format=items_format,
            cache=self.item_cache,
        )

    def history_pages(self, cursor: HistoryCursor) -> AsyncGenerator[list[Message], None]:
        """The visible history of a Load's cursor in conversation order, page by page.

        Raises:
            SequenceConflictError: the session was cleared or erased meanwhile.
        """
        return history_reads.visible_pages(self.engine.page_snapshots, cursor, self.counters)

    def item_pages(self, cursor: HistoryCursor, item_format: str) -> AsyncGenerator[tuple[list[bytes], bool], None]:
        """The stored items of ``item_format`` of a Load's cursor's entries, in position order, page by page (each
        with True if it is the last).

        Raises:
            SequenceConflictError: the session was cleared, edited or erased meanwhile.
        """
        return history_reads.item_pages(self.engine.page_snapshots, cursor, item_format, self.counters)

    async def watch_batch(
        self, session_id: str, after_position: int, limit: int
    ) -> tuple[str | None, list[HistoryItem], bool]:
        """The session's incarnation (None if not stored), its history events after a position, and whether
        more may follow; read in one snapshot."""
        return await history_reads.watch_batch(self.engine, session_id, after_position, limit)

    def export_pages(self, cursor: HistoryCursor, max_event_id: int) -> AsyncGenerator[list[EventRow], None]:
        """The session's events up to ``max_event_id`` in event order, page by page, payloads still text
        (decode with ``events.decode_events``)."""
        return history_reads.export_pages(self.engine.page_snapshots, cursor, max_event_id)

    # -- writes

    def _counted(self, replayed: bool, messages: int) -> None:
        """A new (not replayed) Append or EditTail wrote ``messages`` messages."""
        if not replayed:
            self.counters.appends += 1
            self.counters.messages_written += messages

    async def append(self, job: AppendJob) -> AppendResult:
        """Append validated messages, all or none, and apply its state deltas in the same transaction."""
        limit = self.max_open_tool_calls
        result = await self.engine.write(
            job.session_id, lambda port: writes.append(port, job, limit), changed=True, append=job, run_id=job.run_id
        )
        self._counted(result.replayed, len(job.messages))
        return result

    async def record_usage(
        self, session_id: str, delta: UsageDelta, *, request_id: str, workdir: str, trace_id: str
    ) -> UsageResult:
        """Add usage to the session's totals (creating the session if needed)."""
        fp = fingerprint("usage", session_id, repr(delta))
        return await self.engine.write(
            session_id, lambda port: writes.record_usage(port, session_id, delta, request_id, fp, workdir, trace_id)
        )

    async def create_session(self, job: CreateJob) -> SessionResult:
        """Create an empty session with its initial state, labels and tool policy; a retry with the same
        request id replays (the session as it is now).

        Raises:
            AlreadyExistsError: reason SESSION_EXISTS, the id is stored.
        """
        write = self.engine.write(job.session_id, lambda port: sessions.create_session(port, job))
        return await self._dropping(job.session_id, write)

    async def fork_session(self, job: ForkJob) -> ForkResult:
        """Create a session whose history is a copy of another's visible entries up to a position (positions
        1..n, items and synthetic repairs as stored; open calls without run ownership), with its state, tool
        policy and labels (unless given) and its lineage; O(entries copied).

        Raises:
            SessionNotFoundError: the source is not stored.
            AlreadyExistsError: reason SESSION_EXISTS, the new id is stored.
            InvalidRequestError: the position is beyond the source's last one.
        """
        limit = self.max_open_tool_calls
        write = self.engine.write(job.session_id, lambda p: sessions.fork_session(p, job, limit), changed=True)
        return await self._dropping(job.session_id, write)

    async def update_session(self, job: UpdateJob) -> SessionResult:
        """Apply state deltas (each a ``state`` event), label changes and a new default tool policy (a
        ``session_settings`` event), all or none, if the last position is still the expected one.

        Raises:
            SessionNotFoundError: the session is not stored.
            SequenceConflictError: the last position moved.
            InvalidRequestError: a state over its bound, more than 32 labels.
        """
        return await self.engine.write(job.session_id, lambda port: sessions.update_session(port, job))

    async def put_scope_states(self, states: Sequence[ScopeState]) -> None:
        """Store each state verbatim (its state and time), replacing a stored one of the same scope; all or none.

        For ``claw-sessiond copy``: no delta rules and no merge, the source's rows as they were.
        """
        if states:  # no session's: a scope's row locks order it against UpdateSession
            await self.engine.write("", lambda port: _put_scope_states(port, states))

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
        fp = fingerprint("clear", session_id, expected_last_position, *(("erase",) if erase else ()))
        erasure = self.engine.erasure(lambda _result: False) if erase else None

        def steps(port: Port) -> Steps[ClearResult]:
            return writes.clear(port, session_id, request_id, fp, expected_last_position, workdir, trace_id, erase)

        result = await self._dropping(session_id, self.engine.write(session_id, steps, changed=True, erasure=erasure))
        if erasure is None:
            return result
        if result.replayed:
            return dataclasses.replace(result, erasure_pending=self.engine.erasure_pending(session_id))
        return dataclasses.replace(result, erasure_pending=await erasure.finish(result.events_erased))

    async def edit_tail(self, job: EditJob) -> EditResult:
        """Remove the tail of the visible history and append replacements, all or nothing (``edits.py``).

        Costs O(entries removed and appended), never O(history).

        Raises:
            SequenceConflictError: the expected last position does not match.
            InvalidRequestError: more entries to remove than are visible, or too many bytes to return.
            PreconditionError: reason EDIT_SPLITS_CALL, a removed entry holds an unanswered pending call.
            ToolCallStateError, StorageError: as Append.
        """
        limit = self.max_open_tool_calls
        run_id = job.replacements.run_id if job.replacements is not None else ""
        write = self.engine.write(job.session_id, lambda port: edit_tail(port, job, limit), changed=True, run_id=run_id)
        result = await self._dropping(job.session_id, write)
        if job.replacements is not None:
            self._counted(result.replayed, len(job.replacements.messages))
        return result

    async def delete_entries(self, job: DeleteEntriesJob) -> DeleteEntriesResult:
        """Remove the visible entries ``job`` selects anywhere in the history, recorded as an edit event
        (``storage/deleting.py``). Costs O(entries chosen), never O(history).

        Raises:
            SessionNotFoundError: the session is not stored.
            SequenceConflictError: the expected last position does not match.
            InvalidRequestError: reason FIELD_TOO_LARGE, the selector matches more than ``job.max_entries``.
            PreconditionError: reason EDIT_SPLITS_CALL, one half of a call and its result (see ``edits.py``).
        """
        write = self.engine.write(job.session_id, lambda port: delete_entries(port, job), changed=True)
        return await self._dropping(job.session_id, write)

    async def record_event(
        self, session_id: str, event_type: str, payload: str, *, request_id: str, trace_id: str
    ) -> EventResult:
        """Store an audit event (permission denial, error)."""
        fp = fingerprint("event", session_id, event_type, payload)
        return await self.engine.write(
            session_id,
            lambda port: writes.record_event(port, session_id, event_type, payload, request_id, fp, trace_id),
        )

    async def delete(self, session_id: str) -> DeleteResult:
        """Erase a session (its content leaves the storage; see :class:`Checkpointing` for what may linger)."""
        erasure = self.engine.erasure(lambda _n: True)
        write = self.engine.write(session_id, lambda port: writes.delete(port, session_id), erasure=erasure)
        count = await self._dropping(session_id, write)
        self._erased(session_id, count)  # watchers end now, not after the erasure's grace
        return DeleteResult(count, await erasure.finish(count))

    async def delete_if_not_updated_since(self, session_id: str, cutoff_rfc3339: str) -> int:
        """Erase the session only if its stored time is still older than the cutoff when the delete runs.

        The caller spares the sessions it wrote since start before it calls (``retention.py``); the delete
        is submitted in the session's order at the call, so a write submitted after it commits after it.
        """
        erasure = self.engine.erasure(bool)
        write = self.engine.write(
            session_id, lambda port: _delete_if_older(port, session_id, cutoff_rfc3339), erasure=erasure
        )
        count = await self._dropping(session_id, write)
        if count:
            self._erased(session_id, count)
            await erasure.finish(count)
        return count

    async def _dropping(self, session_id: str, write: Awaitable[T]) -> T:
        """Await a write that may remove entries, erase them or make the session anew; the session's cached items
        (:attr:`item_cache`) go once it has ended, committed or not: a Load would not serve them anyway (its
        snapshot checks them), but erased content must not stay in memory after the write that erased it.

        The drop waits for the write itself, not for its caller: a write submitted stands when its caller is
        cancelled (``engine.settle``), so a drop at the caller's cancellation would come before the commit, and
        a Load between the two would keep what the write then erases."""
        ended = asyncio.ensure_future(write)
        ended.add_done_callback(lambda done: self._write_ended(session_id, done))
        return await asyncio.shield(ended)

    def _write_ended(self, session_id: str, done: asyncio.Future[Any]) -> None:
        """A write of :meth:`_dropping` ended: its session's cached items go (its outcome stays its caller's, who
        may have gone: retrieved here, so that an error nobody awaits is not reported as lost)."""
        self.item_cache.drop(session_id)
        if not done.cancelled():
            done.exception()

    def _erased(self, session_id: str, count: int) -> None:
        """The session was erased (``count`` rows of it): its watchers end."""
        if count:
            self.counters.sessions_deleted += 1
        self._listeners.erased(session_id)

    async def import_session(self, session: ImportedSession, mode: ImportMode = "refuse") -> int:
        """Write an imported session, all or nothing, and rebuild its derived state; returns events written."""
        sid, replace = session.header.session_id, mode == "replace"
        erasure = self.engine.erasure(lambda _n: True) if replace else None
        limit = self.max_open_tool_calls
        write = self.engine.write(
            sid, lambda port: import_session(port, session, mode, limit), changed=True, erasure=erasure
        )
        written = await self._dropping(sid, write)
        if erasure is not None:
            self._listeners.erased(sid)
            await erasure.finish(1)
        return written

    async def prune_requests(self, cutoff_rfc3339: str, limit: int) -> int:
        """Delete at most ``limit`` idempotency records written before the cutoff, oldest first."""
        if not await self.engine.requests_due(cutoff_rfc3339):
            return 0  # no write: no empty commit
        removed = await self.engine.write("", lambda port: _prune_requests(port, cutoff_rfc3339, limit))
        self.counters.requests_pruned += removed
        return removed

    # -- operations

    def subscribe(self, listener: ChangeListener) -> None:
        """Tell ``listener`` about every later commit and erasure. Not a coroutine."""
        self._listeners.add(listener)

    async def close(self) -> None:
        """Finish queued writes and release everything."""
        await self.engine.close()
