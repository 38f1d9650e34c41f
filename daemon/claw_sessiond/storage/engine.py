"""A backend's engine: what only the backend knows, under the one storage facade (``store.py``).

:class:`~.store.Storage`, the daemon-facing storage, is written once for every
backend: each write's entry point builds its sequence (``writes.py``, ``sessions.py``,
``editing.py``, ``importing.py``, ``loading.py``), counts it, tells the listeners and keeps the
erasure bookkeeping. What it hands down is an :class:`Engine`:

- **run a write sequence** (``Callable[[Port], Steps[T]]``) for a session, in one transaction, in
  the order this daemon submitted the session's writes, durable before it returns (SQLite: the
  writer thread and ``steps.run_sync``; PostgreSQL: the session's queue in ``group_commit.py`` and
  ``steps.run_async``), with the after-commit work an erasure needs (:class:`Erasure`);
- **run a Load's snapshot and its repair** (``loading.LoadHost``), each backend deciding which runs
  are live its own way;
- **open page snapshots** (``history_reads.Snapshots`` of ``port.PageReads``) for Load pages, Export
  pages and Watch batches;
- **the whole-store reads** (``base.StoreReads``: listings, search, usage report, the follow feed,
  retention queries, figures), which are plain SQL per backend.

So a backend is its ports (``port.py``) and its engine; the decisions, the counting and the
docstrings of the write entry points stay in ``store.py``. What only one backend has (SQLite's
``Checkpointing``/``BackingUp``, PostgreSQL's ``SweepTurns``) is a capability of the object its
module builds (``base.py``), not of the engine Protocol.

Must never: decide anything a sequence or a pure rule decides, count a write, or tell a listener
of an erasure (the store does).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from ..model import AppendJob
from .base import StorageCounters, StoreReads
from .history_reads import Snapshots
from .listeners import ChangeListeners
from .loading import RunsLive
from .port import Port, ReadPort
from .runs import RunRegistry
from .steps import Steps

__all__ = ["Engine", "Erasure", "WriteSteps", "settle"]

T = TypeVar("T")

#: A write's sequence bound to its arguments: run over the backend's port in one transaction.
WriteSteps = Callable[[Port], Steps[T]]


def settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    """Hand a write's outcome (its result, or with ``ok`` False its error) to its caller's future, on the caller's
    loop; a caller that went away (cancelled) receives nothing: the write stands, and its retry replays it."""
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class Erasure(Protocol):
    """One erasing write's work after its commit: made by :meth:`Engine.erasure`, handed to
    :meth:`Engine.write` (which runs what the backend must run right after the commit, e.g. SQLite's
    no-wait checkpoint), then finished by the store."""

    def tells(self, result: Any) -> bool:
        """Whether the write, given its result, erased the session (the other daemons sharing the store
        hear of it in the write's transaction)."""
        ...

    async def finish(self, erased: int) -> bool:
        """After the write returned, with how much it erased (0: nothing): finish what can be finished now
        (SQLite: the checkpoint, retried within a grace; PostgreSQL: a vacuum in the background). True if the
        erased bytes may still linger in the storage's files (a result's ``erasure_pending``)."""
        ...


class Engine(StoreReads, Protocol):
    """What a backend alone knows, for :class:`~.store.Storage`. Every coroutine runs on the daemon's loop."""

    @property
    def counters(self) -> StorageCounters:
        """This daemon's running figures; the engine counts commits and failures, the store counts the rest."""
        ...

    @property
    def runs(self) -> RunRegistry:
        """The live runs (``runs.RunRegistry``; SQLite: in memory; PostgreSQL: shared in the database)."""
        ...

    @property
    def applied_migrations(self) -> Sequence[str]:
        """Names of the schema migrations applied when the storage was opened."""
        ...

    @property
    def listeners(self) -> ChangeListeners:
        """The store's listeners: the engine tells them of its commits (``changed``) and of what other
        daemons sharing the store changed; the store tells them of erasures."""
        ...

    @property
    def repairs_ahead(self) -> bool:
        """A Load's repair is planned from its snapshot and written in paced chunks (``loading.LoadHost``)."""
        ...

    @property
    def page_snapshots(self) -> Snapshots:
        """Short read snapshots for the pages of a Load's cursor and of an Export (bulk reads)."""
        ...

    @property
    def follower_snapshots(self) -> Snapshots:
        """Short read snapshots for Watch batches, in the followers' lane (``history_reads.WatchHost``)."""
        ...

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
        """Run ``steps`` in one transaction after the writes this daemon submitted before for ``session_id``,
        whatever becomes of the caller once submitted (it commits or rolls back whole); its result, or its
        error (``claw_sessiond.errors`` only).

        ``changed``: the write may add history: the listeners hear of ``session_id`` after the commit (and
        the other daemons sharing the store). ``erasure``: the write may erase (:class:`Erasure`).
        ``append``: ``steps`` writes this Append (a backend may apply a plain one its own way).
        ``run_id``: the write is on behalf of this run (a backend sharing runs across daemons fences it).
        """
        ...

    def erasure(self, tells: Callable[[Any], bool]) -> Erasure:
        """A new :class:`Erasure` for one erasing write; ``tells(result)``: the write erased the session."""
        ...

    def erasure_pending(self, session_id: str) -> bool:
        """Whether an earlier erasure of ``session_id`` may still linger (a replayed erasing write's answer)."""
        ...

    def load_snapshot(self, steps: Callable[[ReadPort, RunsLive], Steps[T]]) -> Awaitable[T]:
        """Run a Load's snapshot ``steps`` in one read-only snapshot of the database."""
        ...

    def load_write(self, session_id: str, steps: Callable[[Port, RunsLive], Steps[T]]) -> Awaitable[T]:
        """Run a Load's repair ``steps`` as one write of ``session_id`` (as :meth:`write` with ``changed``)."""
        ...

    async def requests_due(self, cutoff_rfc3339: str) -> bool:
        """Whether any idempotency record was written before the cutoff (a cheap look before a pruning write)."""
        ...

    async def close(self) -> None:
        """Finish queued writes and release everything."""
        ...
