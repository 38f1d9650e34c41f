"""Live-run ownership in this daemon's memory: the SQLite backend's :class:`~claw_sessiond.storage.base.RunRegistry`.

A run is registered while its ``Attach`` stream is open. Tool calls appended
with its run id are *in flight* while it is registered: Load does not repair
them. When the stream ends (the process exits, is killed, closes its channel,
or keepalive declares the peer dead) the run is unregistered and its open
calls become repairable at the next Load.

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
- Dead-peer bound: a process that exits or is killed closes its socket, and
  the run ends at once. One that stops answering without closing (SIGSTOP,
  a hung host) is dropped by the server's keepalive within
  ``max(lease_s, 2)`` seconds (``server.server_options``).
- Runs live in memory: a daemon restart ends them all.
- Ownership protects tool calls only. Appends without a run id (or from other
  processes) keep working under the usual optimistic-concurrency rules, and
  a run id is accepted only for its own session while the run is live.
"""

from __future__ import annotations

import logging
import uuid

from ...errors import PreconditionError, Reason
from ..base import Run, RunRegistry

__all__ = ["InMemoryRuns"]

_log = logging.getLogger("claw_sessiond.owners")


class InMemoryRuns:
    """Registry of live runs (lives on the event loop; ``is_live`` is also read by the writer thread)."""

    def __init__(self) -> None:
        self._runs: dict[str, Run] = {}
        self._by_session: dict[str, str] = {}

    def register(self, session_id: str, pid: int, label: str) -> Run:
        """Start a run on ``session_id``.

        Raises:
            PreconditionError: the session already has a live run.
        """
        current = self._by_session.get(session_id)
        if current is not None:
            owner = self._runs[current]
            raise PreconditionError(
                f"session {session_id!r} is already being run by run {owner.run_id} (pid {owner.pid}); "
                "wait for it to end or run a different session",
                reason=Reason.RUN_ALREADY_OWNED,
                run_id=owner.run_id,
                pid=owner.pid,
            )
        run = Run(uuid.uuid4().hex, session_id, pid, label)
        self._runs[run.run_id] = run
        self._by_session[session_id] = run.run_id
        _log.info("event=run_started run=%s pid=%d", run.run_id, pid)
        return run

    def unregister(self, run_id: str) -> None:
        """End a run (idempotent)."""
        run = self._runs.pop(run_id, None)
        if run is None:
            return
        if self._by_session.get(run.session_id) == run_id:
            del self._by_session[run.session_id]
        run.ended.set()
        _log.info("event=run_ended run=%s", run_id)

    def end_all(self) -> None:
        """Release every run's stream (shutdown)."""
        for run in list(self._runs.values()):
            run.ended.set()

    def is_live(self, run_id: str) -> bool:
        """True while the run's Attach stream is open."""
        return run_id in self._runs

    def pid_of(self, run_id: str) -> int:
        """The pid a live run declared (0 if unknown)."""
        run = self._runs.get(run_id)
        return run.pid if run else 0

    def check_run(self, run_id: str, session_id: str) -> None:
        """An Append's run id must name a live run of that session.

        Raises:
            PreconditionError: reason UNKNOWN_RUN.
        """
        run = self._runs.get(run_id)
        if run is None or run.session_id != session_id:
            raise PreconditionError(
                f"run {run_id!r} is not a live run of session {session_id!r} (its Attach stream ended?)",
                reason=Reason.UNKNOWN_RUN,
                run_id=run_id,
            )

    def count(self) -> int:
        """Number of live runs."""
        return len(self._runs)


_: type[RunRegistry] = InMemoryRuns  # mypy proves that InMemoryRuns is a RunRegistry
