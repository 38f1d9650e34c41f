"""The writer: one thread owning the one write connection, group-committing queued jobs.

Whatever is queued while a transaction commits is taken together into the
next ``BEGIN IMMEDIATE`` transaction (group commit, at most ``max_batch``
jobs); each job runs inside its own SAVEPOINT, so a request that fails
against the stored state is rolled back alone and its neighbours still
commit. A reply is delivered only after COMMIT returned; if the commit
itself fails, each job of the batch is retried alone, so one request's
failure is only its own. Replies go back to their loops through
``call_soon_threadsafe``, one wake-up per loop per batch; a cancelled
awaiter's result is dropped (the write stands; its retry replays it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from ...errors import SessiondError, ShuttingDownError, StorageError, StorageUnavailableError
from ..base import StorageCounters
from ..engine import settle
from .errors import map_sqlite_errors

__all__ = ["NoWriter", "Writer"]

_log = logging.getLogger("claw_sessiond.store")
T = TypeVar("T")


@dataclass
class _Job:
    fn: Callable[[sqlite3.Connection], Any]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    sessions: tuple[str, ...] = ()
    after_commit: Callable[[sqlite3.Connection], None] | None = None


_STOP: Final = object()


class Writer:
    """One thread owning the write connection; group-commits queued jobs."""

    def __init__(self, conn: sqlite3.Connection, path: Path, max_batch: int, counters: StorageCounters) -> None:
        self._conn = conn
        self._path = path
        self._max_batch = max_batch
        self._counters = counters
        self._queue: queue.SimpleQueue[_Job | object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="claw-sessiond-writer", daemon=True)
        self.on_commit: Callable[[set[str]], None] | None = None
        self._stopped = False
        self._thread.start()

    async def submit(self, fn: Callable[[sqlite3.Connection], T], *sessions: str, after_commit: Any = None) -> T:
        if self._stopped:
            raise ShuttingDownError("claw-sessiond is shutting down; retry in a moment")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[T] = loop.create_future()
        self._queue.put(_Job(fn, fut, loop, sessions, after_commit))
        return await fut

    def stop(self) -> None:
        self._stopped = True
        self._queue.put(_STOP)
        self._thread.join()
        # A job that raced in behind the stop marker is refused, never left waiting.
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(job, _Job):
                job.loop.call_soon_threadsafe(
                    settle, job.future, False, ShuttingDownError("claw-sessiond is shutting down; retry in a moment")
                )

    # -- thread side

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                break
            assert isinstance(first, _Job)
            batch = [first]
            stop_after = False
            while len(batch) < self._max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop_after = True
                    break
                assert isinstance(nxt, _Job)
                batch.append(nxt)
            try:
                self._run_batch(batch)
            except BaseException as exc:  # never let the writer thread die with callers waiting
                _log.exception("event=writer_batch_crashed")
                self._counters.write_failures += 1
                with contextlib.suppress(sqlite3.Error):
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                failure = StorageUnavailableError(f"write failed unexpectedly: {type(exc).__name__}")
                for job in batch:
                    job.loop.call_soon_threadsafe(settle, job.future, False, failure)
            if stop_after:
                break
        self._close()

    def _close(self) -> None:
        try:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            _log.warning("event=checkpoint_failed error=%s", exc)
        self._conn.close()

    def _run_batch(self, batch: list[_Job]) -> None:
        started = time.perf_counter()
        results: list[tuple[bool, Any]] = []
        conn = self._conn
        alone = len(batch) == 1
        try:
            with map_sqlite_errors(self._path):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for job in batch:
                        results.append(self._run_in_savepoint(job, alone))
                    if conn.in_transaction:  # a lone job that failed rolled the transaction back
                        conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except StorageError as exc:
            if len(batch) > 1:
                # A storage failure inside the batch: retry each request alone so
                # that one request's failure is only its own.
                for job in batch:
                    self._run_batch([job])
                return
            self._counters.write_failures += 1
            _log.error("event=write_failed error=%s", exc.message)
            self._counters.observe(len(batch), started, False)
            self._deliver(batch, [(False, exc)] * len(batch))
            return
        # Committed: from here on nothing may turn the batch into a failure.
        self._counters.observe(len(batch), started, True)
        for job in batch:
            if job.after_commit is not None:
                try:
                    job.after_commit(conn)
                except Exception as exc:
                    _log.warning("event=after_commit_failed error=%s", exc)
        self._deliver(batch, results)

    def _run_in_savepoint(self, job: _Job, alone: bool = False) -> tuple[bool, Any]:
        """Run one job inside its own SAVEPOINT; a job ``alone`` in its transaction needs none.

        A failed job leaves nothing behind: its savepoint is rolled back, or, alone,
        the whole transaction (then nothing is committed, and no fsync is paid for it).
        """
        conn = self._conn
        if not alone:
            conn.execute("SAVEPOINT job")
        try:
            value = job.fn(conn)
        except sqlite3.Error:
            raise
        except Exception as exc:
            if not isinstance(exc, SessiondError):  # a bug: fail this request alone, keep the batch
                _log.exception("event=job_crashed")
            if alone:
                conn.execute("ROLLBACK")
            else:
                conn.execute("ROLLBACK TO job")
                conn.execute("RELEASE job")
            return (False, exc)
        if not alone:
            conn.execute("RELEASE job")
        return (True, value)

    def _deliver(self, batch: list[_Job], results: list[tuple[bool, Any]]) -> None:
        # One wake-up of each loop per batch, not one per job: every
        # call_soon_threadsafe writes to the loop's self-pipe and costs the loop a
        # turn; under load a batch holds dozens of jobs (README, Benchmarks).
        changed: set[str] = set()
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
        for job, (ok, value) in zip(batch, results, strict=True):
            if ok:
                changed.update(job.sessions)
            by_loop.setdefault(job.loop, []).append((job.future, ok, value))
        on_commit = self.on_commit if changed else None
        for loop, settled in by_loop.items():
            # The watch hub's notice rides the same wake-up as the replies of the first job's loop.
            hub = on_commit if loop is batch[0].loop else None
            loop.call_soon_threadsafe(_settle_all, settled, hub, changed)


class NoWriter(Writer):
    """The writer of a read-only :class:`SQLiteStorage` (the daemon is down): it refuses every write."""

    def __init__(self) -> None:  # no connection, no thread
        self.on_commit = None
        self._stopped = True

    async def submit(self, fn: Callable[[sqlite3.Connection], T], *sessions: str, after_commit: Any = None) -> T:
        raise StorageUnavailableError("read-only view of the database (no daemon running): nothing can be written")

    def stop(self) -> None:
        return None


def _settle_all(
    settled: list[tuple[asyncio.Future[Any], bool, Any]],
    on_commit: Callable[[set[str]], None] | None = None,
    changed: set[str] | None = None,
) -> None:
    for fut, ok, value in settled:
        settle(fut, ok, value)
    if on_commit is not None and changed:
        try:
            on_commit(changed)
        except Exception:  # the watchers' notice must not fail the replies already settled
            _log.exception("event=on_commit_failed")
