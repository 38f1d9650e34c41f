"""The reference backend's engine (``storage/engine.py``): its writes, snapshots and reads over one store's tables.

A write runs its whole sequence at once, on the event loop, when it is submitted
(``steps.run_sync`` over a :class:`~.port.MemoryPort`): writes of a session (of every session)
commit in submission order, and a sequence that raises is rolled back through its
:class:`~.tables.Tx` before its error reaches the caller, all or nothing. A snapshot reads the
tables as they are: no write runs between the verbs of a read, none of which awaits.

Nothing is durable beyond the process: :func:`memory_tables` keeps each store's tables by name
for as long as the process lives, so that closing and opening the same name sees the same rows.
Runs live in this process's memory (``runs.RunRegistry``); nothing is shared with another
daemon, and an erasure leaves nothing behind (no file holds the rows).

Must never: decide (the sequences and rules do), await inside a write, or tell a listener of an
erasure (the store does).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Final, TypeVar

from ...errors import SessiondError, StorageError, StorageUnavailableError
from ...model import AppendJob
from ..base import FollowItem, StorageCounters
from ..engine import Engine, Erasure, WriteSteps
from ..history_reads import Snapshots
from ..listeners import ChangeListeners
from ..loading import RunsLive
from ..port import PageReads, Port, ReadPort, as_read_port
from ..runs import RunRegistry
from ..steps import Steps, run_async, run_sync
from .port import MemoryPort
from .queries import MemoryReads
from .read_port import MemoryPageReads, MemoryReadPort
from .tables import Tables, Tx

__all__ = ["MIGRATIONS", "MemoryEngine", "memory_tables"]

T = TypeVar("T")

_log = logging.getLogger("claw_sessiond.store")

#: What opening a reference store applies (its tables have no migrations).
MIGRATIONS: Final[tuple[str, ...]] = ()

#: Every reference store of this process, by name (see :func:`memory_tables`).
_STORES: dict[str, Tables] = {}


def memory_tables(name: str) -> Tables:
    """The tables of the reference store called ``name``, made empty the first time: one per name, for as
    long as the process lives (closing a store keeps them; two names never share a row)."""
    return _STORES.setdefault(name, Tables())


class _NoLinger:
    """An erasure's after-commit work in memory: none, and nothing lingers (no file held the rows)."""

    __slots__ = ("_tells",)

    def __init__(self, tells: Callable[[Any], bool]) -> None:
        self._tells = tells

    def tells(self, result: Any) -> bool:
        return self._tells(result)

    async def finish(self, erased: int) -> bool:
        return False


class MemoryEngine(MemoryReads):
    """The engine of one reference store (its whole-store reads: :class:`~.queries.MemoryReads`)."""

    #: A repair is planned again under the write and written in one transaction: a write holds nothing
    #: another session's write waits for (``loading.LoadHost``).
    repairs_ahead: Final = False

    def __init__(self, tables: Tables, counters: StorageCounters | None = None) -> None:
        super().__init__(tables)
        self._tables = tables
        self._counters = counters or StorageCounters()
        self._runs = RunRegistry()
        self._listeners = ChangeListeners()
        self._closed = False
        self._follower_lane = asyncio.Semaphore(1)
        self.page_snapshots: Snapshots = self._snapshot
        self.follower_snapshots: Snapshots = self._follower_snapshot

    @property
    def counters(self) -> StorageCounters:
        return self._counters

    @property
    def runs(self) -> RunRegistry:
        return self._runs

    @property
    def applied_migrations(self) -> Sequence[str]:
        return MIGRATIONS

    @property
    def listeners(self) -> ChangeListeners:
        return self._listeners

    def write(
        self,
        session_id: str,
        steps: WriteSteps[T],
        *,
        changed: bool = False,
        erasure: Erasure | None = None,
        append: AppendJob | None = None,
        run_id: str = "",
    ) -> Awaitable[T]:
        """Run ``steps`` now, in one transaction; a future of its result (already done)."""
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        try:
            done.set_result(self._commit(steps))
        except Exception as exc:
            done.set_exception(exc)
            return done
        if changed:
            self._listeners.changed({session_id})
        return done

    def _commit(self, steps: WriteSteps[T]) -> T:
        """Run a write's sequence over a new transaction: committed whole, or rolled back whole and re-raised
        (an error that is not the daemon's own, a defect, as a storage failure: never a bare traceback)."""
        if self._closed:
            raise StorageUnavailableError("the storage is closed")
        tx = Tx(self._tables)
        began = time.perf_counter()
        try:
            result = run_sync(steps(MemoryPort(tx)))
        except BaseException as exc:
            tx.rollback()
            self._counters.observe(1, began, False)
            if isinstance(exc, SessiondError) and not isinstance(exc, StorageError):
                raise
            self._counters.write_failures += 1
            if isinstance(exc, StorageError) or not isinstance(exc, Exception):
                raise
            _log.exception("event=write_failed")
            raise StorageUnavailableError(f"write failed unexpectedly: {type(exc).__name__}") from exc
        self._counters.observe(1, began, True)
        return result

    def erasure(self, tells: Callable[[Any], bool]) -> Erasure:
        return _NoLinger(tells)

    def erasure_pending(self, session_id: str) -> bool:
        return False

    async def load_snapshot(self, steps: Callable[[ReadPort, RunsLive], Steps[T]]) -> T:
        return await run_async(steps(as_read_port(MemoryReadPort(self._tables)), self._runs_live))

    def load_write(self, session_id: str, steps: Callable[[Port, RunsLive], Steps[T]]) -> Awaitable[T]:
        return self.write(session_id, lambda port: steps(port, self._runs_live), changed=True)

    def _runs_live(self, run_ids: set[str]) -> set[str]:
        """Which of ``run_ids`` are live: this process's run registry."""
        return {r for r in run_ids if self._runs.is_live(r)}

    @contextlib.asynccontextmanager
    async def _snapshot(self) -> AsyncIterator[PageReads]:
        """One step of a paged read: the tables as they are."""
        yield MemoryPageReads(self._tables)

    @contextlib.asynccontextmanager
    async def _follower_snapshot(self) -> AsyncIterator[PageReads]:
        """One step of a Watch batch, in the followers' lane (:meth:`_follower_turn`)."""
        async with self._follower_turn():
            yield MemoryPageReads(self._tables)

    @contextlib.asynccontextmanager
    async def _follower_turn(self) -> AsyncIterator[None]:
        """A follower read's turn: one at a time, each first giving the loop back, so that a request issued while
        hundreds of followers are due (every commit makes them due) runs before most of them, not after all."""
        async with self._follower_lane:
            await asyncio.sleep(0)
            yield

    async def follow_batch(self, after_event_id: int, limit: int) -> tuple[list[FollowItem], bool]:
        """As :meth:`~.queries.MemoryReads.follow_batch`, in the followers' lane."""
        async with self._follower_turn():
            return await super().follow_batch(after_event_id, limit)

    async def close(self) -> None:
        """Stop taking writes (the tables stay, for the next open of the same name: :func:`memory_tables`)."""
        self._closed = True
        self._runs.end_all()


_: type[Engine] = MemoryEngine
