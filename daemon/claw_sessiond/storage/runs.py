"""Live-run ownership in this daemon's memory: :class:`RunRegistry` (SQLite's and the reference backend's runs,
and the base of PostgreSQL's, which adds the database: ``postgres/runs.py``).

A run is registered while its ``Attach`` stream is open. Tool calls appended
with its run id are *in flight* while it is registered: Load does not repair
them. When the run ends (its stream closes because the process exits, is
killed or closes its channel; EndRun; the checks of the RPC edge) it is
unregistered and its open calls become repairable at the next Load.

Policy: one live run per session. A second Attach on a session that already
has a live run is refused with FAILED_PRECONDITION (reason RUN_ALREADY_OWNED)
naming the current run id and pid. Registration happens on the event loop, so
of several processes racing for a session exactly one wins.

Details of the choice:

- Ending a run writes nothing. Its unanswered calls are *repairable*, and the
  next Load (by anyone) repairs them in its own transaction, as for any
  interrupted call (a *pending* call never is). A result the old owner sends
  later supersedes the synthetic one (the tool did run); its run id is
  refused (UNKNOWN_RUN).
- Liveness (decided by the RPC edge, ``rpc/service_runs.py``, which calls
  :meth:`RunRegistry.end` with a :class:`~claw_sessiond.storage.base.RunEnd`):
  the Attach stream's connection staying open, plus, when the daemon
  verified the declared pid with the kernel, that process still existing;
  pings only for runs that asked for them. A blocked client keeps its run.
- Why a run ended is remembered for the last :data:`ENDED_REMEMBERED` runs,
  so a late call naming one gets UNKNOWN_RUN with metadata ``cause``.
- Runs live in memory: a daemon restart ends them all.
- Ownership protects tool calls only. Appends without a run id (or from other
  processes) keep working under the usual optimistic-concurrency rules, and
  a run id is accepted only for its own session while the run is live.
"""

from __future__ import annotations

import collections
import logging
import time
import uuid
from typing import Final

from ..errors import PreconditionError, Reason
from .base import Run, RunEnd

__all__ = ["ENDED_REMEMBERED", "RunRegistry", "run_ended_error", "run_owned_error"]

#: How many ended runs keep their cause for a late call naming them.
ENDED_REMEMBERED: Final = 4096

_log = logging.getLogger("claw_sessiond.owners")


def run_ended_error(run_id: str, cause: str, session_id: str = "", why: str = "") -> PreconditionError:
    """The one report of a run that is not live (of ``session_id``, if named): FAILED_PRECONDITION / UNKNOWN_RUN
    with ``cause`` (``why``: what the caller knows of it, said before the advice)."""
    of = f" of session {session_id!r}" if session_id else ""
    return PreconditionError(
        f"run {run_id!r} is not a live run{of} (cause: {cause}){why}; Attach again to start a new run",
        reason=Reason.UNKNOWN_RUN,
        run_id=run_id,
        cause=cause,
    )


def run_owned_error(session_id: str, run_id: str, pid: int, host: str = "") -> PreconditionError:
    """The one report of a session another live run owns: FAILED_PRECONDITION / RUN_ALREADY_OWNED naming the run,
    its pid and (where daemons share the runs) its host."""
    on = {"host": host} if host else {}
    return PreconditionError(
        f"session {session_id!r} is already being run by run {run_id} (pid {pid}{f' on host {host}' if host else ''}); "
        "wait for it to end or run a different session",
        reason=Reason.RUN_ALREADY_OWNED,
        run_id=run_id,
        pid=pid,
        **on,
    )


class RunRegistry:
    """Which live run owns which session (SPEC §4: one live run per session).

    Tool calls appended with a live run's id are *in flight*: a Load does not repair them. When the
    run ends, they become repairable at the next Load. Lives on the event loop (``is_live`` is also
    read by the writer thread). It remembers why recently ended runs ended, so a late call naming one
    says so (reason UNKNOWN_RUN, metadata ``cause``). What every daemon sharing a store knows of the
    runs is the capability ``base.SharedRuns`` of a subclass (PostgreSQL's).
    """

    def __init__(self) -> None:
        self._runs: dict[str, Run] = {}
        self._by_session: dict[str, str] = {}
        self._ended: collections.OrderedDict[str, tuple[str, str]] = collections.OrderedDict()

    def register(
        self, session_id: str, pid: int, label: str, *, process_start: int = 0, ping_timeout_s: float = 0.0
    ) -> Run:
        """Start a run on ``session_id``.

        Raises:
            PreconditionError: reason RUN_ALREADY_OWNED, the session already has a live run.
        """
        current = self._by_session.get(session_id)
        if current is not None:
            owner = self._runs[current]
            raise run_owned_error(session_id, owner.run_id, owner.pid)
        run = Run(uuid.uuid4().hex, session_id, pid, label, process_start=process_start, ping_timeout_s=ping_timeout_s)
        self._runs[run.run_id] = run
        self._by_session[session_id] = run.run_id
        _log.info(
            "event=run_started run=%s pid=%d pid_verified=%s ping_timeout_s=%g",
            run.run_id,
            pid,
            process_start > 0,
            ping_timeout_s,
        )
        return run

    def unregister(self, run_id: str) -> None:
        """End a run because its stream closed (idempotent)."""
        self.end(run_id, RunEnd.STREAM_CLOSED)

    def end(self, run_id: str, cause: RunEnd) -> Run | None:
        """End a live run for ``cause``; the run if it was live, else None (idempotent)."""
        run = self._runs.pop(run_id, None)
        if run is None:
            return None
        if self._by_session.get(run.session_id) == run_id:
            del self._by_session[run.session_id]
        run.cause = str(cause)
        self._ended[run_id] = (run.session_id, run.cause)
        while len(self._ended) > ENDED_REMEMBERED:
            self._ended.popitem(last=False)
        run.ended.set()
        _log.info("event=run_ended run=%s cause=%s", run_id, cause)
        return run

    def end_all(self) -> None:
        """End every run (shutdown): their streams close."""
        for run in list(self._runs.values()):
            self.end(run.run_id, RunEnd.DAEMON_STOPPING)

    def is_live(self, run_id: str) -> bool:
        """True while the run's Attach stream is open."""
        return run_id in self._runs

    def get(self, run_id: str) -> Run | None:
        """The live run ``run_id``, or None."""
        return self._runs.get(run_id)

    def owner_of(self, session_id: str) -> Run | None:
        """The live run of ``session_id``, or None."""
        run_id = self._by_session.get(session_id)
        return None if run_id is None else self._runs.get(run_id)

    def ended_run(self, run_id: str) -> tuple[str, str] | None:
        """(session id, cause) of a run ended recently, or None."""
        return self._ended.get(run_id)

    def pid_of(self, run_id: str) -> int:
        """The pid a live run declared (0 if unknown)."""
        run = self._runs.get(run_id)
        return run.pid if run else 0

    def label_of(self, run_id: str) -> str:
        """The label a live run declared in Attach ("" if none or unknown)."""
        run = self._runs.get(run_id)
        return run.label if run else ""

    def check_run(self, run_id: str, session_id: str) -> None:
        """An Append's run id must name a live run of that session.

        Raises:
            PreconditionError: reason UNKNOWN_RUN, metadata ``run_id`` and ``cause``.
        """
        run = self._runs.get(run_id)
        if run is not None and run.session_id == session_id:
            return
        if run is not None:
            cause = str(RunEnd.OTHER_SESSION)
        else:
            ended = self._ended.get(run_id)
            cause = ended[1] if ended is not None else str(RunEnd.UNKNOWN)
        raise run_ended_error(run_id, cause, session_id)

    def count(self) -> int:
        """Number of live runs."""
        return len(self._runs)

    async def confirm_run(self, run_id: str, session_id: str, *, ping: bool = False) -> None:
        """:meth:`check_run` where every daemon sharing the storage can answer (here every run is this daemon's:
        the caller renews it; on a shared database a live run of another daemon passes, and a run whose daemon
        lost its lease does not, cause ``lease_lost``). With ``ping``, a live run of another daemon is also
        renewed there (a call naming a run is its ping).

        Raises:
            PreconditionError: reason UNKNOWN_RUN, metadata ``run_id`` and ``cause``.
            StorageError: the shared storage cannot answer now.
        """
        self.check_run(run_id, session_id)

    async def ping(self, run_id: str) -> float:
        """Renew the live run ``run_id``; its ping bound in seconds (0: none).

        Raises:
            PreconditionError: reason UNKNOWN_RUN (the run is not live), metadata ``run_id`` and ``cause``.
        """
        run = self._runs.get(run_id)
        if run is None:
            ended = self._ended.get(run_id)
            raise run_ended_error(run_id, ended[1] if ended else str(RunEnd.UNKNOWN))
        run.last_ping = time.monotonic()
        return run.ping_timeout_s
