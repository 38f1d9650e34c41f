"""The PostgreSQL backend's facade: :class:`PostgresStorage`, one database shared by any number of daemons.

Every write runs in a transaction on a pooled connection (asyncpg), whose
first statement locks the session row (``tx.py``): the database, not the
daemon, orders each session's writes. This daemon's own writes to one
session also keep their submission order: each joins the session's FIFO
queue (``group_commit.py``: queued writes share one transaction, each in a
savepoint, and one COMMIT), entered before the first ``await``, and runs
in a task of its own shielded from the caller's cancellation, so a
transaction, once submitted, commits or rolls back whole whatever the RPC
does. Reads run on pooled connections, in ``REPEATABLE READ READ ONLY``
transactions where two statements need one snapshot (``reads.py``).
Session creation, forks, updates, scope states and listings are the
:class:`~.sessions.PostgresSessions` mixin (``sessions.py``; their sequences are
``storage/sessions.py`` and ``storage/states.py`` over ``port.py``).
asyncpg errors are translated once (``errors.py``). Connections set
``synchronous_commit = on`` (a write is durable before its reply); at open
the server must have ``fsync`` on and accept writes.

Several daemons on one database (``cluster.py``): runs live in the
database under each daemon's lease, and every commit wakes the other
daemons' listeners (LISTEN/NOTIFY); docs/postgres.md "Several daemons".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Final, TypeVar

from ...config import DEFAULT_MAX_OPEN_TOOL_CALLS
from ...edits import history_item
from ...errors import StorageError
from ...events import EventRow, fingerprint
from ...export import ExportHeader, ImportedSession
from ...model import (
    AppendJob,
    AppendResult,
    ClearResult,
    DeleteResult,
    EditJob,
    EditResult,
    EventResult,
    HistoryCursor,
    HistoryMark,
    ImportMode,
    Message,
    ModelUsage,
    Usage,
    UsageDelta,
    UsageResult,
)
from ...policy import ToolPolicy
from ...queries import SearchFilter, SearchRow, UsageRow
from .. import history_reads, loading, writes
from ..base import ChangeListener, Storage, StorageCounters, StorageFigures, SweepTurns
from ..editing import edit_tail
from ..importing import import_session
from ..listeners import ChangeListeners
from ..loading import RunsLive
from ..port import SESSION_COLS, Port, ReadPort, as_read_port, session_row
from ..steps import Steps, run_async
from . import follow, queries, reads
from .batch_tx import is_plain
from .calls_tx import session_policy_in_tx
from .cluster import Cluster
from .connect import PostgresSettings, connect, describe_target, follower_connections, server_settings_of
from .errors import safe_dsn
from .group_commit import GroupCommit
from .pooled import pooled
from .port import PostgresPort, write_tx
from .read_port import PostgresReadPort
from .sessions import PostgresSessions
from .sweep import newest_update, prune_requests_in_tx, requests_due, retention_turn
from .vacuum import Vacuums

__all__ = ["CLOSE_BOUND_S", "PostgresStorage"]

_log = logging.getLogger("claw_sessiond.store")
T = TypeVar("T")

#: How often, and how long apart, an empty follow page is read again while a write in flight holds the horizon.
#: Longest a close waits for the connections to be given back before it cuts them.
CLOSE_BOUND_S: Final = 5.0
_HELD_POLLS: Final = 4
_HELD_POLL_S: Final = 0.005


class PostgresStorage(PostgresSessions):
    """Sessions in one PostgreSQL database. All methods are coroutines on the daemon's loop (unless noted)."""

    def __init__(
        self, pool: Any, dsn: str, counters: StorageCounters, max_open_tool_calls: int, settings: PostgresSettings
    ) -> None:
        self._pool = pool
        self._where = safe_dsn(dsn)
        self.counters = counters
        self.max_open_tool_calls = max_open_tool_calls
        self.applied_migrations: list[str] = []
        self._listeners = ChangeListeners()
        self._cluster = Cluster(pool, dsn, server_settings_of(settings), self._where, settings.lease_s, self._listeners)
        self._group = GroupCommit(pool, self._where, self._cluster.feed.origin, self._cluster.check_run)
        self.runs = self._cluster.runs
        self._vacuums = Vacuums(self._reader)
        self._follower_lane = asyncio.Semaphore(follower_connections(settings.pool_max))
        #: Short read-only snapshots for Watch and WatchAll batches, in the followers' lane.
        self.follower_snapshots = reads.snapshots(self._follower_reader)

    # -- life cycle

    @classmethod
    async def open(
        cls,
        dsn: str,
        settings: PostgresSettings | None = None,
        *,
        max_open_tool_calls: int = DEFAULT_MAX_OPEN_TOOL_CALLS,
    ) -> PostgresStorage:
        """Connect, check the server and migrate the schema.

        Raises:
            StorageUnavailableError: the server cannot be reached, refuses the login, is read-only or has
                fsync off (the message names the host, port, database and user; never the password).
            CorruptDatabaseError: the schema is not ours or newer than this code.
        """
        settings = settings or PostgresSettings()
        pool, applied = await connect(dsn, settings)
        store = cls(pool, dsn, StorageCounters(), max_open_tool_calls, settings)
        store.applied_migrations = applied
        try:
            await store._cluster.start()
        except BaseException:
            await pool.close()
            raise
        _log.info("event=storage_open backend=postgresql server=%s", describe_target(dsn))
        return store

    async def close(self) -> None:
        """Wait for a running vacuum, then close every connection; after :data:`CLOSE_BOUND_S` the pool's
        connections are cut instead (a stop must end: the servers stopped first, so nothing acknowledged
        waits on them; a write still committing was not acknowledged, and its retry is idempotent)."""
        try:
            await asyncio.wait_for(self._close(), CLOSE_BOUND_S)
        except TimeoutError:
            _log.warning("event=storage_close_cut after_s=%s", CLOSE_BOUND_S)
            self._pool.terminate()

    async def _close(self) -> None:
        await self._vacuums.wait()
        await self._cluster.close()
        await self._pool.close()

    def subscribe(self, listener: ChangeListener) -> None:
        """Tell ``listener`` about every later commit and erasure (of every daemon on the database)."""
        self._listeners.add(listener)

    # -- connections

    @contextlib.asynccontextmanager
    async def _reader(self) -> AsyncIterator[Any]:
        async with pooled(self._pool, self._where) as conn:
            yield conn

    @contextlib.asynccontextmanager
    async def _follower_reader(self) -> AsyncIterator[Any]:
        """A connection for a Watch or WatchAll batch, taken in the followers' lane (:func:`follower_connections`)."""
        async with self._follower_lane, pooled(self._pool, self._where) as conn:
            yield conn

    async def _write(
        self,
        session_id: str,
        fn: Callable[[Any], Awaitable[T]],
        *,
        changed: bool = False,
        history: bool = False,
        erased: bool = False,
        plain: AppendJob | None = None,
        run_id: str = "",
    ) -> T:
        """Run ``fn`` in one transaction (maybe shared: group_commit.py), in session order, shielded from cancellation.

        ``changed``: tell the listeners after the commit. A write that may insert history events
        (``changed`` or ``history``) first announces itself to follow-all readers (``follow.py``).
        ``changed`` / ``erased``: the transaction also tells the other daemons (NOTIFY, ``cluster.py``).
        ``plain``: ``fn`` writes this plain append (``batch_tx.py``: maybe in one call with others).
        ``run_id``: ``fn`` writes for this run: fenced at COMMIT (``group_commit.py``).
        """
        notify = changed or erased

        async def body(conn: Any) -> T:
            result = await fn(conn)
            if notify:  # in fn's savepoint: dropped with it if the write fails
                await self._cluster.notify(conn, session_id, erased=erased)
            return result

        async def lane() -> T:
            began, committed = time.perf_counter(), False
            try:
                announce = changed or history
                result = await self._group.run(session_id, body, announce=announce, plain=plain, run_id=run_id)
                committed = True
            except StorageError:
                self.counters.write_failures += 1
                raise
            finally:
                self._observe(time.perf_counter() - began, committed)
            if changed:
                self._listeners.changed({session_id})
            return result

        return await asyncio.shield(asyncio.ensure_future(lane()))

    def _observe(self, seconds: float, committed: bool) -> None:
        if committed:
            self.counters.commits += 1
        for observer in self.counters.commit_observers:
            try:
                observer(1, seconds, committed)
            except Exception:  # an observer never fails a write
                _log.exception("event=commit_observer_failed")

    # -- reads

    #: A repair is planned again under the session's row lock and written in one transaction: a write locks
    #: only its session (``loading.py``).
    repairs_ahead: Final = False

    #: ``Storage.load``: the get-or-create read with its repair, written once for both backends
    #: (``storage/loading.py``; this object is its host). ``reply_only`` changes nothing here (no encoded
    #: reply form is stored).
    load = loading.load

    async def load_snapshot(self, steps: Callable[[ReadPort, RunsLive], Steps[T]]) -> T:
        """Run a Load's snapshot ``steps`` in one read-only snapshot (runs' liveness decided in it, in SQL)."""
        async with self._reader() as conn, reads.snapshot(conn):
            return await run_async(steps(as_read_port(PostgresReadPort(conn)), self._cluster.runs_live(conn)))

    async def load_write(self, session_id: str, steps: Callable[[Port, RunsLive], Steps[T]]) -> T:
        """Run a Load's repair ``steps`` in one write transaction (``_write``: in session order, its watchers
        and the other daemons told after the commit)."""
        return await self._write(
            session_id,
            lambda c: run_async(steps(PostgresPort(c).as_port(), self._cluster.runs_live(c))),
            changed=True,
        )

    async def session_tool_policy(self, session_id: str) -> ToolPolicy:
        """The session's stored tool policy (empty when none is set or the session is not stored)."""
        async with self._reader() as conn:
            return await session_policy_in_tx(conn, session_id)

    def history_pages(self, cursor: HistoryCursor) -> AsyncGenerator[list[Message], None]:
        """The visible history of a Load's cursor, page by page (``storage/history_reads.py``)."""
        return history_reads.visible_pages(reads.snapshots(self._reader), cursor, self.counters)

    #: ``Storage.watch_batch``, written once for both backends (``history_reads.watch_batch``; this object is
    #: its host, reading through :attr:`follower_snapshots`).
    watch_batch = history_reads.watch_batch

    async def usage_by_model(self, session_id: str) -> tuple[Usage, list[ModelUsage]]:
        """Session totals and the per-model breakdown.

        Raises:
            SessionNotFoundError: the session is not stored.
        """
        async with self._reader() as conn, reads.snapshot(conn):
            return await queries.usage_by_model(conn, session_id)

    async def session_ids(self) -> list[str]:
        """Every stored session id, oldest first (the order of a full export)."""
        async with self._reader() as conn:
            rows = await conn.fetch("SELECT session_id FROM sessions ORDER BY created_at, session_id")
        return [r[0] for r in rows]

    async def export_start(self, session_id: str) -> tuple[ExportHeader, HistoryCursor, int] | None:
        """A session's export header, a cursor and the last event id to export (None if not stored)."""
        async with self._reader() as conn, reads.snapshot(conn):
            row = session_row(
                await conn.fetchrow(f"SELECT {SESSION_COLS} FROM sessions WHERE session_id = $1", session_id)
            )
            if row is None:
                return None
            found = await conn.fetchrow(
                "SELECT count(*), coalesce(max(event_id), 0) FROM events WHERE session_id = $1", session_id
            )
        header = ExportHeader(session_id, row.workdir, row.created_at, row.updated_at, int(found[0]))
        cursor = HistoryCursor(session_id, row.created_at, row.clear_position, row.last_position)
        return header, cursor, int(found[1])

    def export_pages(self, cursor: HistoryCursor, max_event_id: int) -> AsyncGenerator[list[EventRow], None]:
        """Raw event rows of an export, page by page (decode with ``events.decode_events``)."""
        return history_reads.export_pages(reads.snapshots(self._reader), cursor, max_event_id)

    async def search(self, match: str, filters: SearchFilter, limit: int) -> tuple[list[SearchRow], bool]:
        """Full-text search (PostgreSQL text search; see ``queries.py`` for how it differs from FTS5)."""
        async with self._reader() as conn:
            return await queries.search(conn, match, filters, limit)

    async def usage_report(self, since: str, until: str, *, by_session: bool) -> tuple[list[UsageRow], bool]:
        """Usage events grouped by day, model, pricing version and currency (and session)."""
        async with self._reader() as conn:
            return await queries.usage_report(conn, since, until, by_session=by_session)

    async def follow_start(self, last: int) -> int:
        """The event id a follow-all starts after."""
        async with self._reader() as conn:
            return await follow.follow_start(conn, last)

    async def follow_batch(
        self, after_event_id: int, limit: int
    ) -> tuple[list[tuple[int, str, int, Message | HistoryMark | None]], bool]:
        """History events of every session after an event id in commit order (``follow.py``: up to the horizon),
        and whether more may follow."""
        for _ in range(_HELD_POLLS):
            async with self._follower_reader() as conn:
                rows, more, held = await follow.follow_rows_after(conn, after_event_id, limit)
            if rows or not held:
                break
            await asyncio.sleep(_HELD_POLL_S)  # a write in flight holds the horizon: it ends within milliseconds
        more = more or held  # the caller reads again (a write that rolls back wakes no one)
        out = [(int(r[0]), str(r[1]), int(r[2]), history_item(int(r[2]), *r[3:9])) for r in rows]
        return out, more

    # -- writes

    async def append(self, job: AppendJob) -> AppendResult:
        """Append validated messages, all or none."""
        limit = self.max_open_tool_calls
        append = lambda c: self._cluster.append_tx(c, job, limit)  # noqa: E731
        plain = job if is_plain(job) else None
        result = await self._write(job.session_id, append, changed=True, plain=plain, run_id=job.run_id)
        if not result.replayed:
            self.counters.appends += 1
            self.counters.messages_written += len(job.messages)
        return result

    async def record_usage(
        self, session_id: str, delta: UsageDelta, *, request_id: str, workdir: str, trace_id: str
    ) -> UsageResult:
        """Add usage to the session's totals (creating the session if needed)."""
        fp = fingerprint("usage", session_id, repr(delta))
        return await self._write(
            session_id,
            write_tx(writes.record_usage, session_id, delta, request_id, fp, workdir, trace_id),
        )

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
        """Record a clear: the visible history starts after it; usage is kept. With ``erase`` the history
        before it leaves the log (logical erasure: the bytes go with the vacuum that follows)."""
        if not erase:
            fp = fingerprint("clear", session_id, expected_last_position)
            return await self._write(
                session_id,
                write_tx(writes.clear, session_id, request_id, fp, expected_last_position, workdir, trace_id),
                changed=True,
            )
        fp = fingerprint("clear", session_id, expected_last_position, "erase")
        result = await self._write(
            session_id,
            write_tx(writes.clear, session_id, request_id, fp, expected_last_position, workdir, trace_id, True),
            changed=True,
        )
        if result.events_erased and not result.replayed:
            self._start_vacuum()
        return result

    async def edit_tail(self, job: EditJob) -> EditResult:
        """Remove the tail of the visible history and append replacements, all or nothing (``storage/editing.py``)."""
        limit = self.max_open_tool_calls
        run_id = job.replacements.run_id if job.replacements is not None else ""
        result = await self._write(job.session_id, write_tx(edit_tail, job, limit), changed=True, run_id=run_id)
        if not result.replayed and job.replacements is not None:
            self.counters.appends += 1
            self.counters.messages_written += len(job.replacements.messages)
        return result

    async def record_event(
        self, session_id: str, event_type: str, payload: str, *, request_id: str, trace_id: str
    ) -> EventResult:
        """Store an audit event (permission denial, error)."""
        fp = fingerprint("event", session_id, event_type, payload)
        return await self._write(
            session_id,
            write_tx(writes.record_event, session_id, event_type, payload, request_id, fp, trace_id),
        )

    async def delete(self, session_id: str) -> DeleteResult:
        """Erase a session's rows, then vacuum the tables it touched (erasure is logical on PostgreSQL:
        docs/postgres.md). ``erasure_pending`` is always False: there is nothing more this daemon can do."""
        count = await self._write(session_id, write_tx(writes.delete, session_id), erased=True)
        if count:
            self.counters.sessions_deleted += 1
            self._start_vacuum()
        self._listeners.erased(session_id)
        return DeleteResult(count, False)

    async def import_session(self, session: ImportedSession, mode: ImportMode = "refuse") -> int:
        """Write an imported session, all or nothing, and rebuild its derived rows; returns events written."""
        sid = session.header.session_id
        written = await self._write(
            sid,
            write_tx(import_session, session, mode, self.max_open_tool_calls),
            changed=mode != "replace",
            history=True,
            erased=mode == "replace",
        )
        if mode == "replace":
            self._listeners.erased(sid)
            self._start_vacuum()
        return written

    async def prune_requests(self, cutoff_rfc3339: str, limit: int) -> int:
        """Delete at most ``limit`` idempotency records written before the cutoff, oldest first (``sweep.py``)."""
        async with self._reader() as conn:
            if not await requests_due(conn, cutoff_rfc3339):
                return 0
        async with self._reader() as conn, conn.transaction():
            removed = await prune_requests_in_tx(conn, cutoff_rfc3339, limit)
        self.counters.requests_pruned += removed
        return removed

    # -- retention

    async def sessions_not_updated_since(self, cutoff_rfc3339: str) -> list[str]:
        """Ids of sessions whose last change is older than the cutoff."""
        async with self._reader() as conn:
            rows = await conn.fetch(
                "SELECT session_id FROM sessions WHERE updated_at < $1 ORDER BY updated_at", cutoff_rfc3339
            )
        return [r[0] for r in rows]

    async def newest_update(self) -> str | None:
        """The newest ``updated_at`` of any session, or None (an empty store)."""
        return await newest_update(self._pool, self._where)

    async def delete_if_not_updated_since(self, session_id: str, cutoff_rfc3339: str) -> int:
        """Erase the session only if it is still older than the cutoff (the caller spares what it wrote)."""

        async def run(conn: Any) -> int:
            row, _now = await PostgresPort(conn).session_row(session_id)
            if row is None or row.updated_at >= cutoff_rfc3339:
                return 0
            await self._cluster.notify(conn, session_id, erased=True)  # delivered only if this commits
            return await write_tx(writes.delete, session_id)(conn)

        count = await self._write(session_id, run)
        if count:
            self.counters.sessions_deleted += 1
            self._listeners.erased(session_id)
            self._start_vacuum()
        return count

    def retention_turn(self, window_s: float) -> AbstractAsyncContextManager[str | None]:
        """One sweeper at a time across daemons, the cutoff from the database's clock (``sweep.py``)."""
        return retention_turn(self._pool, self._where, window_s)

    # -- operations

    async def figures(self) -> StorageFigures:
        """Sessions, events, idempotency records, schema version and the bytes of the schema's tables."""
        async with self._reader() as conn, reads.snapshot(conn):
            return await queries.figures(conn)

    def _start_vacuum(self) -> None:
        """Vacuum the session tables in the background (``vacuum.py``)."""
        self._vacuums.start()


_: type[Storage] = PostgresStorage  # mypy proves that PostgresStorage is a Storage
_sweep_turns: type[SweepTurns] = PostgresStorage
