"""Runs across daemons: a run attached on one daemon protects its open calls from a Load on any other.

Each daemon that opens the database registers itself (a ``daemons`` row:
host, pid, its lease in ms) and, on a dedicated *ownership connection*,
takes a session-level advisory lock keyed by its ``daemon_no``
(:data:`DAEMON_LOCK_NS`) and holds it for life. Every ``lease/3`` it
renews ``heartbeat_at`` on the database's clock, but only while the lease
has not expired: a lease, once expired, is never renewed. A daemon is
*live* when its heartbeat is younger than its lease **and** its lock is
granted; a run is live when its ``runs`` row names a live daemon (and, on
the daemon that owns it, the local registry still has it).

So when a daemon is killed its connection drops, PostgreSQL releases the
lock, and the other daemons treat its runs as ended at once; when it hangs
(SIGSTOP, a stall, a partition) they do so once the lease has run out on
the database's clock. The liveness test is SQL (:data:`_LIVE`) evaluated
inside the transactions that decide: the repair transaction (after the
session row lock) and, for a write naming a run, the write transaction
(:meth:`DatabaseRuns.check_in_tx`), so a daemon that wakes after losing
its lease writes nothing on behalf of the lost runs (*fencing*; reason
UNKNOWN_RUN, cause ``lease_lost``). The write asks again as the last
statement before its COMMIT, for a lease with a margin left that is longer
than the connection's idle-in-transaction timeout (``timeouts.py``), and a
takeover (:meth:`DatabaseRuns.claim`) takes the session's row lock first:
a daemon stopped anywhere in such a write commits it while its lease holds,
before any takeover, or not at all (the server ends its session). A daemon that finds its lease lost ends
its local runs (their Attach streams close with cause ``lease_lost``) and
registers again under a new ``daemon_no``.

The local bookkeeping (Attach streams, pid and ping checks, causes of
ended runs) is the in-memory registry's; this class adds the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from typing import Any, Final

import asyncpg

from ...errors import StorageError, StorageUnavailableError
from ..base import Run, RunEnd, SharedRuns
from ..nul_text import db_text
from ..runs import RunRegistry, run_ended_error, run_owned_error
from .connect import open_connection
from .errors import map_pg_errors
from .feed import notify_ping
from .timeouts import fence_margin_ms

__all__ = ["DAEMON_LOCK_NS", "DatabaseRuns"]

#: First key of every daemon's advisory lock ("CLAD"); the second is its ``daemon_no``.
DAEMON_LOCK_NS: Final = 0x434C4144
#: Longest pause between two attempts to register again after a lost lease.
_BACKOFF_MAX_S: Final = 2.0

_log = logging.getLogger("claw_sessiond.owners")


def _live(margin_ms: str = "0") -> str:
    """SQL: is daemon ``d`` live now (its heartbeat within its lease on the database's clock, with at least
    ``margin_ms``, an SQL expression, of the lease left; its lock held)?"""
    return (
        f"(d.heartbeat_at > clock_timestamp() - (d.lease_ms - {margin_ms}) * interval '1 millisecond' AND EXISTS ("
        "SELECT 1 FROM pg_locks AS l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        f"AND l.classid::bigint = {DAEMON_LOCK_NS} AND l.objid::bigint = d.daemon_no))"
    )


#: SQL: is daemon ``d`` live now? (Loads, repairs and takeovers decide with it.)
_LIVE: Final = _live()
#: SQL: may a write for a run of daemon ``d`` commit? Live with ``$3`` ms of the lease left (``timeouts.py``).
_FENCE: Final = _live("$3")
#: What a run of another daemon is known as when no Load has seen it: (pid, host, label).
_UNKNOWN: Final = (0, "", "")


class DatabaseRuns(RunRegistry):
    """This daemon's runs, published in the shared database (see the module docstring)."""

    def __init__(
        self, pool: Any, dsn: str, server_settings: dict[str, str], where: str, lease_s: float, origin: str = ""
    ) -> None:
        super().__init__()
        self._origin = origin  # this daemon's mark in the notifications it sends (feed.py)
        self._pool = pool
        self._dsn = dsn
        self._settings = {
            **server_settings,
            "application_name": f"claw-sessiond lease {os.getpid()}",  # what an operator sees in pg_stat_activity
        }
        self._where = where
        self.lease_s = lease_s
        self._margin_ms = fence_margin_ms(lease_s)
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.daemon_no = 0
        """This daemon's registration (0: none now: the lease was lost and registering again is under way)."""
        self._conn: Any = None
        self._renewed = 0.0
        self._keeper: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()
        self._others: dict[str, tuple[int, str, str]] = {}

    # -- life cycle

    async def start(self) -> None:
        """Register this daemon and start renewing its lease.

        Raises:
            StorageUnavailableError: the server cannot be reached.
        """
        await self._register()
        self._keeper = asyncio.ensure_future(self._keep())

    async def close(self) -> None:
        """Stop renewing, withdraw this daemon and its runs, and close the ownership connection."""
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._keeper
        with contextlib.suppress(Exception):
            await self.settled()
        if self.daemon_no:
            with contextlib.suppress(Exception):
                async with self._pool.acquire() as conn:
                    await conn.execute("DELETE FROM daemons WHERE daemon_no = $1", self.daemon_no)
        await self._drop_connection()

    async def _register(self) -> None:
        lease_ms = max(1, round(self.lease_s * 1000))
        began = time.monotonic()
        async with map_pg_errors(self._where):
            conn = await open_connection(self._dsn, self._settings, max(self.lease_s, 1.0))
            try:
                no = int(
                    await conn.fetchval(
                        "INSERT INTO daemons(host, pid, lease_ms, started_at, heartbeat_at) "
                        "VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp()) RETURNING daemon_no",
                        self.host,
                        self.pid,
                        lease_ms,
                    )
                )
                await conn.execute("SELECT pg_advisory_lock($1, $2)", DAEMON_LOCK_NS, no)
                # Daemons long dead (lease expired, lock free) and their runs go.
                await conn.execute(f"DELETE FROM daemons AS d WHERE d.daemon_no <> $1 AND NOT {_LIVE}", no)
            except BaseException:
                await conn.close(timeout=1)
                raise
        self._conn = conn
        self.daemon_no = no
        self._renewed = began
        _log.info("event=daemon_registered daemon_no=%d host=%s pid=%d lease_ms=%d", no, self.host, self.pid, lease_ms)

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close(timeout=1)
            if not conn.is_closed():
                conn.terminate()

    async def _keep(self) -> None:
        """Renew the lease every lease/3; on a lost lease, fence this daemon and register again."""
        every = self.lease_s / 3
        backoff = 0.05
        while True:
            await asyncio.sleep(every if self.daemon_no else backoff)
            if not self.daemon_no:
                try:
                    await self._register()
                    backoff = 0.05
                except (StorageError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                    _log.warning("event=daemon_register_failed error=%s", exc)
                    backoff = min(_BACKOFF_MAX_S, backoff * 2)
                continue
            if time.monotonic() - self._renewed > self.lease_s:
                await self._lost("not renewed within the lease (the daemon was stopped or stalled)")
                continue
            sent = time.monotonic()  # the database renews later than this: this daemon's view never outlives it
            try:
                renewed = await asyncio.wait_for(
                    self._conn.fetchval(
                        "UPDATE daemons SET heartbeat_at = clock_timestamp() WHERE daemon_no = $1 "
                        "AND heartbeat_at > clock_timestamp() - lease_ms * interval '1 millisecond' RETURNING 1",
                        self.daemon_no,
                    ),
                    timeout=max(0.1, self.lease_s - (time.monotonic() - self._renewed)),  # slower: lost anyway
                )
            except (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                await self._lost(f"the ownership connection failed: {type(exc).__name__}")
                continue
            if renewed is None:
                await self._lost("the lease had expired on the database's clock")
                continue
            self._renewed = sent
            # Rows of runs this daemon no longer has (a withdrawal that failed) go now.
            with contextlib.suppress(TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                await asyncio.wait_for(
                    self._conn.execute(
                        "DELETE FROM runs WHERE daemon_no = $1 AND run_id <> ALL($2::text[])",
                        self.daemon_no,
                        list(self._runs),
                    ),
                    timeout=every,
                )

    async def _lost(self, why: str) -> None:
        """The lease is lost: every local run ends (cause lease_lost) and this daemon registers again."""
        _log.warning("event=lease_lost daemon_no=%d runs=%d why=%s", self.daemon_no, self.count(), why)
        self.daemon_no = 0
        for run in list(self._runs.values()):
            super().end(run.run_id, RunEnd.LEASE_LOST)  # its row goes with the old registration
        await self._drop_connection()

    # -- the registry

    async def claim(self, run: Run) -> None:
        """Insert the run's row; a dead daemon's run on the session is taken over, a live one's refused.

        Raises:
            PreconditionError: reason RUN_ALREADY_OWNED (names the run id, pid and host).
            StorageUnavailableError: this daemon is registering again after a lost lease.
        """
        async with map_pg_errors(self._where), self._pool.acquire() as conn, conn.transaction():
            # The session's row lock first: a write of the run being taken over that is still open (its daemon
            # stopped before its COMMIT) commits before the takeover, or is ended by the server's idle timeout.
            await conn.execute("SELECT 1 FROM sessions WHERE session_id = $1 FOR UPDATE", run.session_id)
            for _ in range(3):
                mine = self.daemon_no
                if not mine or not await conn.fetchval(
                    f"SELECT {_LIVE} FROM daemons AS d WHERE d.daemon_no = $1", mine
                ):
                    raise StorageUnavailableError(
                        "this daemon lost its lease on the database and is registering again; retry in a moment"
                    )
                done = await conn.fetchval(
                    "INSERT INTO runs(run_id, session_id, daemon_no, pid, label, started_at) "
                    "VALUES ($1, $2, $3, $4, $5, clock_timestamp()) ON CONFLICT (session_id) DO NOTHING RETURNING 1",
                    run.run_id,
                    run.session_id,
                    mine,
                    run.pid,
                    db_text(run.label),
                )
                if done:
                    return
                other = await conn.fetchrow(
                    f"SELECT r.run_id, r.pid, d.host, r.daemon_no, {_LIVE} FROM runs AS r "
                    "JOIN daemons AS d ON d.daemon_no = r.daemon_no WHERE r.session_id = $1 FOR UPDATE OF r",
                    run.session_id,
                )
                if other is None:
                    continue
                stale_mine = other[3] == mine and not super().is_live(other[0])
                if other[4] and not stale_mine:
                    raise run_owned_error(run.session_id, other[0], other[1], other[2])
                await conn.execute("DELETE FROM runs WHERE run_id = $1", other[0])
        raise StorageUnavailableError(f"session {run.session_id!r}: could not claim the run (contended); retry")

    def end(self, run_id: str, cause: RunEnd) -> Run | None:
        """End a live run here, and withdraw its row in the background (:meth:`settled` waits for that)."""
        run = super().end(run_id, cause)
        if run is not None and self.daemon_no:
            task = asyncio.ensure_future(self._withdraw(run_id))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        return run

    async def _withdraw(self, run_id: str) -> None:
        try:
            async with self._pool.acquire() as conn:
                await conn.execute("DELETE FROM runs WHERE run_id = $1", run_id)
        except Exception as exc:  # the row stays until its daemon's registration goes; repair is still safe
            _log.warning("event=run_withdraw_failed run=%s error=%s", run_id, exc)

    async def settled(self) -> None:
        """Wait until every ended run's row is withdrawn."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    def pid_of(self, run_id: str) -> int:
        """The pid a live run declared, on this daemon or (as last seen by a Load) another one."""
        pid = super().pid_of(run_id)
        return pid or self._others.get(run_id, _UNKNOWN)[0]

    def label_of(self, run_id: str) -> str:
        """The label a live run declared, on this daemon or (as last seen by a Load) another one."""
        if super().is_live(run_id):
            return super().label_of(run_id)
        return self._others.get(run_id, _UNKNOWN)[2]

    def host_of(self, run_id: str) -> str:
        """The host of the daemon a live run is attached to ("" if unknown)."""
        if super().is_live(run_id):
            return self.host
        return self._others.get(run_id, _UNKNOWN)[1]

    # -- calls naming a run, decided in the database (PingRun, EditTail)

    async def _decide(self, run_id: str, session_id: str, *, ping: bool) -> bool:
        """Is ``run_id`` live, as every daemon sees it? True: it is this daemon's (the local checks decide the
        rest); False: another daemon's live run (a ping is passed on to its owner, :func:`feed.notify_ping`).

        Raises:
            PreconditionError: UNKNOWN_RUN with the cause: ``lease_lost`` when the run's daemon (this one or
                another) no longer holds its lease, ``other_session``, else what this daemon knows (``unknown``).
        """
        async with map_pg_errors(self._where), self._pool.acquire() as conn:
            row = await conn.fetchrow(
                f"SELECT r.session_id, r.daemon_no, {_LIVE} FROM runs AS r "
                "JOIN daemons AS d ON d.daemon_no = r.daemon_no WHERE r.run_id = $1",
                run_id,
            )
            if row is not None and row[2] and row[1] != self.daemon_no and (not session_id or row[0] == session_id):
                if ping:
                    await notify_ping(conn, self._origin, run_id)
                return False
        here, ended = super().is_live(run_id), super().ended_run(run_id)
        if row is not None and row[2]:
            if row[1] == self.daemon_no:
                return True
            cause = str(RunEnd.OTHER_SESSION)
        elif ended is not None and not here:
            cause = ended[1]  # ended here (EndRun, its stream, a lost lease), its row perhaps not yet withdrawn
        elif here or row is not None:
            cause = str(RunEnd.LEASE_LOST)  # the database no longer counts its daemon as live
        else:
            cause = str(RunEnd.UNKNOWN)
        raise run_ended_error(run_id, cause, session_id)

    async def confirm_run(self, run_id: str, session_id: str, *, ping: bool = False) -> None:
        """:meth:`check_run` decided in the database: another daemon's live run of the session passes, a run whose
        daemon lost its lease does not (cause ``lease_lost``), also this daemon's before its renewal loop noticed.

        Raises:
            PreconditionError: reason UNKNOWN_RUN, metadata ``run_id`` and ``cause``.
            StorageUnavailableError: the database cannot answer now.
        """
        if await self._decide(run_id, session_id, ping=ping):
            self.check_run(run_id, session_id)

    async def ping(self, run_id: str) -> float:
        """Renew a live run: this daemon's here; another daemon's is passed on to it (the answer's bound is then 0:
        only the owner knows it).

        Raises:
            PreconditionError: reason UNKNOWN_RUN, metadata ``run_id`` and ``cause``.
            StorageUnavailableError: the database cannot answer now.
        """
        here = super().get(run_id)
        if here is not None:  # the ping came: it counts even if the database cannot answer now (UNAVAILABLE)
            here.last_ping = time.monotonic()
        if await self._decide(run_id, "", ping=True):
            return await super().ping(run_id)
        return 0.0

    def pinged(self, run_id: str) -> None:
        """Another daemon passed on a PingRun naming ``run_id``: renew it if it is live here."""
        run = super().get(run_id)
        if run is not None:
            run.last_ping = time.monotonic()

    # -- inside transactions

    async def live_in_tx(self, conn: Any, run_ids: set[str]) -> set[str]:
        """Which of ``run_ids`` are live now, decided in SQL in the caller's transaction (see the module docstring)."""
        if not run_ids:
            return set()
        rows = await conn.fetch(
            f"SELECT r.run_id, r.daemon_no, r.pid, d.host, r.label, {_LIVE} FROM runs AS r "
            "JOIN daemons AS d ON d.daemon_no = r.daemon_no WHERE r.run_id = ANY($1::text[])",
            list(run_ids),
        )
        live: set[str] = set()
        for run_id, daemon_no, pid, host, label, ok in rows:
            if not ok:
                continue
            if daemon_no == self.daemon_no:
                if super().is_live(run_id):
                    live.add(run_id)
            else:
                live.add(run_id)
                self._others[run_id] = (int(pid), str(host), str(label or ""))
        if len(self._others) > 4096:
            self._others.clear()
        return live

    async def check_in_tx(self, conn: Any, run_id: str, session_id: str) -> None:
        """A write naming ``run_id`` goes ahead only while the lease of the run's daemon (this one, or another
        sharing the database) holds the run (fencing), with :func:`~.timeouts.fence_margin_ms` of it left. The
        write's transaction asks after its session row lock and again as its last statement before COMMIT: a
        daemon paused after that COMMITs within its lease or not at all (the idle-in-transaction timeout, shorter
        than the margin, ends its session first).

        Raises:
            PreconditionError: reason UNKNOWN_RUN, cause ``lease_lost``.
        """
        ok = await conn.fetchval(
            f"SELECT {_FENCE} FROM runs AS r JOIN daemons AS d ON d.daemon_no = r.daemon_no "
            "WHERE r.run_id = $1 AND r.session_id = $2",
            run_id,
            session_id,
            self._margin_ms,
        )
        if not ok:
            why = ": its daemon lost its lease on the database, so every daemon treats the run as ended"
            raise run_ended_error(run_id, str(RunEnd.LEASE_LOST), session_id, why)


_shared: type[SharedRuns] = DatabaseRuns  # mypy proves the capability only this registry has
