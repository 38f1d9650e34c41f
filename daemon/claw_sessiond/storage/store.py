"""The storage facade, once for every backend: :class:`Store`, the daemon's ``Storage`` over a backend engine.

Each write's entry point builds the write's sequence (``writes.py``, ``sessions.py``,
``editing.py``, ``importing.py``, ``states.py``; a Load's is ``loading.py``), with its
fingerprint, hands it to the engine (``engine.py``: SQLite's writer thread or PostgreSQL's
session queues), counts what the reply says was done in :class:`~.figures.StorageCounters` and
tells the listeners of erasures. The whole-store reads (``base.StoreReads``) are the engine's
own SQL, handed through as they are.

The docstrings of ``Storage`` (``base.py``) say what each member promises; this module says how
the promise is kept once. What only one backend has is added by its module to a store of its
own (SQLite's ``store.py``, PostgreSQL's ``store.py``), never by a stub here.
"""

# A port write that returns nothing is still yielded (its driver runs it in order; see ``steps.py``); the
# None it sends back is not used (mypy's func-returns-value would refuse the ``yield`` of such a call).
# mypy: disable-error-code="func-returns-value"

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Sequence

from ..events import EventRow, fingerprint
from ..export import ImportedSession
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
from ..policy import ToolPolicy
from ..state import CreateJob, ForkJob, ForkResult, ScopeState, SessionResult, UpdateJob
from . import history_reads, loading, sessions, writes
from .base import ChangeListener, HistoryItem, RunRegistry, Storage, StorageCounters
from .deleting import delete_entries
from .editing import edit_tail
from .engine import Engine
from .importing import import_session
from .port import Port, ReadPort
from .steps import Steps

__all__ = ["Store"]


def _policy(port: ReadPort, session_id: str) -> Steps[ToolPolicy]:
    return (yield port.session_policy(session_id))  # type: ignore[no-any-return]


def _put_scope_states(port: Port, states: Sequence[ScopeState]) -> Steps[None]:
    yield port.put_scope_states(states)


def _delete_if_older(port: Port, session_id: str, cutoff_rfc3339: str) -> Steps[int]:
    """Erase the session only if its stored time is still older than the cutoff (in the deleting transaction)."""
    row, _now = yield port.session_row(session_id)
    if row is None or row.updated_at >= cutoff_rfc3339:
        return 0
    return (yield from writes.delete(port, session_id))


class Store:
    """Sessions, stored durably by a backend ``engine`` (``base.Storage``'s docstrings say what each member
    promises). ``max_open_tool_calls``: most open tool calls per session (0: no limit)."""

    def __init__(self, engine: Engine, max_open_tool_calls: int = 0) -> None:
        self.engine = engine
        self.max_open_tool_calls = max_open_tool_calls
        self._listeners = engine.listeners
        # The whole-store reads are the engine's own (``base.StoreReads``).
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

    @property
    def runs(self) -> RunRegistry:
        return self.engine.runs

    @property
    def counters(self) -> StorageCounters:
        return self.engine.counters

    @property
    def applied_migrations(self) -> Sequence[str]:
        return self.engine.applied_migrations

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
        """``Storage.load``, written once (``storage/loading.py``, with the engine as its host)."""
        return await loading.load(
            self.engine, session_id, workdir, trace_id, repair=repair, window=window, reply_only=reply_only
        )

    async def session_tool_policy(self, session_id: str) -> ToolPolicy:
        return await self.engine.load_snapshot(lambda port, _live: _policy(port, session_id))

    def history_pages(self, cursor: HistoryCursor) -> AsyncGenerator[list[Message], None]:
        return history_reads.visible_pages(self.engine.page_snapshots, cursor, self.counters)

    async def watch_batch(
        self, session_id: str, after_position: int, limit: int
    ) -> tuple[str | None, list[HistoryItem], bool]:
        return await history_reads.watch_batch(self.engine, session_id, after_position, limit)

    def export_pages(self, cursor: HistoryCursor, max_event_id: int) -> AsyncGenerator[list[EventRow], None]:
        return history_reads.export_pages(self.engine.page_snapshots, cursor, max_event_id)

    # -- writes

    def _counted(self, replayed: bool, messages: int) -> None:
        """A new (not replayed) Append or EditTail wrote ``messages`` messages."""
        if not replayed:
            self.counters.appends += 1
            self.counters.messages_written += messages

    async def append(self, job: AppendJob) -> AppendResult:
        limit = self.max_open_tool_calls
        result = await self.engine.write(
            job.session_id, lambda port: writes.append(port, job, limit), changed=True, append=job, run_id=job.run_id
        )
        self._counted(result.replayed, len(job.messages))
        return result

    async def record_usage(
        self, session_id: str, delta: UsageDelta, *, request_id: str, workdir: str, trace_id: str
    ) -> UsageResult:
        fp = fingerprint("usage", session_id, repr(delta))
        return await self.engine.write(
            session_id, lambda port: writes.record_usage(port, session_id, delta, request_id, fp, workdir, trace_id)
        )

    async def create_session(self, job: CreateJob) -> SessionResult:
        return await self.engine.write(job.session_id, lambda port: sessions.create_session(port, job))

    async def fork_session(self, job: ForkJob) -> ForkResult:
        limit = self.max_open_tool_calls
        return await self.engine.write(job.session_id, lambda p: sessions.fork_session(p, job, limit), changed=True)

    async def update_session(self, job: UpdateJob) -> SessionResult:
        return await self.engine.write(job.session_id, lambda port: sessions.update_session(port, job))

    async def put_scope_states(self, states: Sequence[ScopeState]) -> None:
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
        fp = fingerprint("clear", session_id, expected_last_position, *(("erase",) if erase else ()))
        erasure = self.engine.erasure(lambda _result: False) if erase else None

        def steps(port: Port) -> Steps[ClearResult]:
            return writes.clear(port, session_id, request_id, fp, expected_last_position, workdir, trace_id, erase)

        result = await self.engine.write(session_id, steps, changed=True, erasure=erasure)
        if erasure is None:
            return result
        if result.replayed:
            return dataclasses.replace(result, erasure_pending=self.engine.erasure_pending(session_id))
        return dataclasses.replace(result, erasure_pending=await erasure.finish(result.events_erased))

    async def edit_tail(self, job: EditJob) -> EditResult:
        limit = self.max_open_tool_calls
        run_id = job.replacements.run_id if job.replacements is not None else ""
        result = await self.engine.write(
            job.session_id, lambda port: edit_tail(port, job, limit), changed=True, run_id=run_id
        )
        if job.replacements is not None:
            self._counted(result.replayed, len(job.replacements.messages))
        return result

    async def delete_entries(self, job: DeleteEntriesJob) -> DeleteEntriesResult:
        return await self.engine.write(job.session_id, lambda port: delete_entries(port, job), changed=True)

    async def record_event(
        self, session_id: str, event_type: str, payload: str, *, request_id: str, trace_id: str
    ) -> EventResult:
        fp = fingerprint("event", session_id, event_type, payload)
        return await self.engine.write(
            session_id,
            lambda port: writes.record_event(port, session_id, event_type, payload, request_id, fp, trace_id),
        )

    async def delete(self, session_id: str) -> DeleteResult:
        erasure = self.engine.erasure(lambda _n: True)
        count = await self.engine.write(session_id, lambda port: writes.delete(port, session_id), erasure=erasure)
        self._erased(session_id, count)  # watchers end now, not after the erasure's grace
        return DeleteResult(count, await erasure.finish(count))

    async def delete_if_not_updated_since(self, session_id: str, cutoff_rfc3339: str) -> int:
        erasure = self.engine.erasure(bool)
        count = await self.engine.write(
            session_id, lambda port: _delete_if_older(port, session_id, cutoff_rfc3339), erasure=erasure
        )
        if count:
            self._erased(session_id, count)
            await erasure.finish(count)
        return count

    def _erased(self, session_id: str, count: int) -> None:
        """The session was erased (``count`` rows of it): its watchers end."""
        if count:
            self.counters.sessions_deleted += 1
        self._listeners.erased(session_id)

    async def import_session(self, session: ImportedSession, mode: ImportMode = "refuse") -> int:
        sid, replace = session.header.session_id, mode == "replace"
        erasure = self.engine.erasure(lambda _n: True) if replace else None
        limit = self.max_open_tool_calls
        written = await self.engine.write(
            sid, lambda port: import_session(port, session, mode, limit), changed=True, erasure=erasure
        )
        if erasure is not None:
            self._listeners.erased(sid)
            await erasure.finish(1)
        return written

    async def prune_requests(self, cutoff_rfc3339: str, limit: int) -> int:
        removed = await self.engine.prune_requests(cutoff_rfc3339, limit)
        self.counters.requests_pruned += removed
        return removed

    # -- operations

    def subscribe(self, listener: ChangeListener) -> None:
        self._listeners.add(listener)

    async def close(self) -> None:
        await self.engine.close()


_: type[Storage] = Store  # mypy proves that Store is a Storage
