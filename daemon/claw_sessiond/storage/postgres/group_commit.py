"""Group commit per session: this daemon's queued writes to one session share one transaction.

Every write to a session locks the session's row, so writes to one session run one after the
other whatever the number of connections, and each pays a COMMIT (the server's WAL flush). Under
load that flush is most of a write's time: 8 clients x 16 in flight on one session made about
100 appends a second where the SQLite backend, which commits a queue of writes together, made
over 1,000. So this daemon does the same here:

- writes to a session join that session's FIFO queue in submission order (the order the lane
  kept before: the queue is entered before the first ``await``);
- one drainer per session takes up to :data:`MAX_GROUP` queued writes and runs them in ONE
  transaction on one connection, each inside its own savepoint: a write that fails (a domain
  error such as a sequence conflict, or a statement error) rolls back to its savepoint and gets
  its own error, the others are unaffected, exactly as if each had had its own transaction;
- the results are handed out only after the COMMIT succeeded: if the COMMIT (or the connection)
  fails, every write of the group gets that error (UNAVAILABLE; a client's retry with the same
  request id then replays or applies it, never twice);
- a group of one runs as before (:func:`~.pooled.run_transaction`, no savepoint), with its
  bounded retry of a transaction the server rolled back; a whole group is retried the same way;
- *plain* appends (``batch_tx.is_plain``: the common case) are grouped apart from other writes:
  a run of them in the queue goes to the server as ONE call of the function ``append_batch``
  (``batch_sql.py``) in its own implicit transaction, one round trip where the savepoint way takes
  8 or more per append; one that fails a rule (replay, REQUEST_ID_REUSED, SEQUENCE_CONFLICT) is
  written by none and fails alone. Savepoints only after a failure: if the server refuses the
  call (it rolled all of it back), the same group runs again the way above.

Durability is unchanged: nothing is acknowledged before the COMMIT that holds it returned, and
``synchronous_commit`` stays on.

A write made for a run (``run_id``) is fenced at commit: the last statement before the COMMIT of
its transaction asks whether the run's daemon still holds its lease (``check_run``, SQL in
``runs.py``). If it does not, that transaction rolls back; the writes naming the lost run get the
refusal (UNKNOWN_RUN, cause ``lease_lost``) and the others of the group run again without them.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from ...errors import PreconditionError, SessiondError, StorageUnavailableError
from ...model import AppendJob
from ..engine import settle
from .batch_tx import append_batch
from .errors import map_pg_errors, rolled_back
from .follow import ANNOUNCE_SQL
from .pooled import TX_ATTEMPTS, pooled, run_transaction

__all__ = ["MAX_GROUP", "GroupCommit"]

T = TypeVar("T")

#: The fence of a write naming a run: ``(conn, run_id, session_id)``, raises PreconditionError if the lease is gone.
CheckRun = Callable[[Any, str, str], Awaitable[None]]

#: Most writes of one session in one transaction.
MAX_GROUP: Final = 64


@dataclass(slots=True)
class _Job(Generic[T]):
    fn: Callable[[Any], Awaitable[T]]
    announce: bool
    plain: AppendJob | None
    run_id: str
    future: asyncio.Future[T] = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    def settle(self, ok: bool, value: Any) -> None:
        """Hand out the outcome (a waiter cancelled at shutdown has nothing to receive it)."""
        settle(self.future, ok, value)


class GroupCommit:
    """Per-session queues of writes and their drainers."""

    def __init__(self, pool: Any, where: str, origin: str, check_run: CheckRun) -> None:
        self._pool = pool
        self._check_run = check_run  # the fence: (conn, run_id, session_id), raises if the run's lease is gone
        self._where = where
        self._origin = origin  # this daemon's mark in its notifications (feed.py)
        self._queues: dict[str, list[_Job[Any]]] = {}
        self._drainers: dict[str, asyncio.Task[None]] = {}

    async def run(
        self,
        session_id: str,
        fn: Callable[[Any], Awaitable[T]],
        *,
        announce: bool = False,
        plain: AppendJob | None = None,
        run_id: str = "",
    ) -> T:
        """``fn(conn)`` committed, alone or with other queued writes of the session; its result or error.

        ``announce``: the write may insert history events; its transaction first runs
        :data:`~.follow.ANNOUNCE_SQL` (once, before any savepoint: a lock taken in a savepoint that rolls
        back would be released with it).
        ``plain``: ``fn`` is this plain append (``batch_tx.is_plain``), which ``append_batch`` may write
        instead, with ``fn``'s notification; ``fn`` runs only if the server refuses that call.
        ``run_id``: ``fn`` writes for this run: it commits only if the run's lease holds at COMMIT.
        """
        job: _Job[T] = _Job(fn, announce, plain, run_id)
        queue = self._queues.get(session_id)
        if queue is None:
            self._queues[session_id] = [job]
            self._drainers[session_id] = asyncio.ensure_future(self._drain(session_id))
        else:
            queue.append(job)
        return await job.future

    async def _drain(self, session_id: str) -> None:
        queue = self._queues[session_id]
        try:
            while queue:
                plain = queue[0].plain is not None
                size = 1
                while size < min(len(queue), MAX_GROUP) and (queue[size].plain is not None) == plain:
                    size += 1
                group = queue[:size]
                del queue[:size]
                if plain:
                    await self._commit_plain(session_id, group)
                else:
                    await self._commit(session_id, group)
        finally:
            del self._queues[session_id]
            self._drainers.pop(session_id, None)
            for job in queue:  # only after an unexpected failure of the drainer itself
                job.settle(False, StorageUnavailableError("the write queue of this session failed"))

    async def _commit_plain(self, session_id: str, group: list[_Job[Any]]) -> None:
        """A run of plain appends in one call of ``append_batch``; the general way if the server refuses it."""
        jobs = [job.plain for job in group if job.plain is not None]
        try:
            async with pooled(self._pool, self._where) as conn:
                outcomes = await append_batch(conn, session_id, jobs, self._origin)
        except BaseException as exc:  # the connection was lost (outcome unknown), or shutdown
            _fail(group, exc)
            return
        if outcomes is None:
            await self._commit(session_id, group)
            return
        for job, (ok, value) in zip(group, outcomes, strict=True):
            job.settle(ok, value)

    async def _commit(self, session_id: str, group: list[_Job[Any]]) -> None:
        if len(group) == 1:
            job = group[0]
            try:
                job.settle(True, await run_transaction(self._pool, self._where, self._fenced(session_id, job)))
            except BaseException as exc:  # the caller gets it; CancelledError included (shutdown)
                _fail(group, exc)
            return
        attempt = 1
        while group:  # each pass either ends the loop, counts an attempt or settles at least one write
            try:
                outcomes = await self._together(session_id, group)
            except _Fenced as fenced:  # rolled back: the lost run's writes fail, the others run again
                for job in group:
                    if job.run_id == fenced.run_id:
                        job.settle(False, fenced.refusal)
                group = [job for job in group if job.run_id != fenced.run_id]
                continue
            except StorageUnavailableError as exc:
                if attempt < TX_ATTEMPTS and rolled_back(exc):
                    await asyncio.sleep(random.uniform(0, 0.05 * attempt))
                    attempt += 1
                    continue
                _fail(group, exc)
                return
            except BaseException as exc:
                _fail(group, exc)
                return
            for job, (ok, value) in zip(group, outcomes, strict=True):
                job.settle(ok, value)
            return

    def _fenced(self, session_id: str, job: _Job[T]) -> Callable[[Any], Awaitable[T]]:
        """``job.fn`` after the follow-all announcement when the job asks for one, and, for a write naming a run,
        followed by the fence: the last statement before COMMIT."""
        fn = _announced(job)
        if not job.run_id:
            return fn

        async def run(conn: Any) -> T:
            result = await fn(conn)
            await self._check_run(conn, job.run_id, session_id)
            return result

        return run

    async def _together(self, session_id: str, group: list[_Job[Any]]) -> list[tuple[bool, Any]]:
        """Every write of ``group`` in one transaction, each in a savepoint, the runs of those that succeeded fenced
        last; raises only if the whole fails (:class:`_Fenced`: a run's lease is gone, nothing was written)."""
        outcomes: list[tuple[bool, Any]] = []
        async with pooled(self._pool, self._where) as conn, conn.transaction():
            if any(job.announce for job in group):
                await conn.execute(ANNOUNCE_SQL)
            for job in group:
                try:
                    async with map_pg_errors(self._where), conn.transaction():
                        outcomes.append((True, await job.fn(conn)))
                except SessiondError as exc:
                    if conn.is_closed():
                        raise  # the connection is gone: the whole group fails
                    outcomes.append((False, exc))
            done = [job.run_id for job, (ok, _) in zip(group, outcomes, strict=True) if ok and job.run_id]
            for run_id in dict.fromkeys(done):
                try:
                    async with map_pg_errors(self._where):
                        await self._check_run(conn, run_id, session_id)
                except PreconditionError as exc:
                    raise _Fenced(run_id, exc) from exc
        return outcomes


class _Fenced(Exception):
    """A group's fence refused a run (its transaction rolls back with this)."""

    def __init__(self, run_id: str, refusal: PreconditionError) -> None:
        super().__init__(str(refusal))
        self.run_id = run_id
        self.refusal = refusal


def _fail(group: list[_Job[Any]], exc: BaseException) -> None:
    """Every write of ``group`` fails with ``exc``, which is raised again if it is no Exception (shutdown)."""
    for job in group:
        job.settle(False, exc)
    if not isinstance(exc, Exception):
        raise exc


def _announced(job: _Job[T]) -> Callable[[Any], Awaitable[T]]:
    """``job.fn``, after the follow-all announcement when the job asks for one."""
    if not job.announce:
        return job.fn

    async def run(conn: Any) -> T:
        await conn.execute(ANNOUNCE_SQL)
        return await job.fn(conn)

    return run
