"""Attach, EndRun and PingRun: live runs whose liveness does not depend on the client's event loop.

A run is live while its Attach stream is open (docs/PROTOCOL.md "Runs"). The
stream ends when the client cancels it or closes its channel, or when its
process exits (the kernel closes the socket: no ping is needed to learn it).
A blocked client (a busy event loop, a long synchronous tool, SIGSTOP) keeps
its run: the Unix socket's server sends no keepalive pings
(``server.server_options``). On top of the connection:

- **the declared pid, checked with the kernel.** On the Unix socket, Attach
  verifies that the pid it declares holds a connection to this daemon
  (:func:`claw_sessiond.peers.verified_start`); such a run also ends when
  that process is gone (its socket may live on in a child that inherited
  it). Checked before any Load plans a repair (:meth:`Runs.confirm_owner`),
  before a second Attach of the session is refused, and every
  :data:`CHECK_EVERY_S` while the run lives;
- **pings, only when asked for.** A run that set ``ping_timeout_seconds``
  ends when no PingRun or Append naming it came for that long;
- **EndRun** ends a run at once, on the event loop: when it returns, Load no
  longer counts the run's calls as in flight and the session can be attached.

However it ends, a run is reported one way: FAILED_PRECONDITION, reason
UNKNOWN_RUN, metadata ``run_id`` and ``cause`` (a
:class:`~claw_sessiond.storage.base.RunEnd`): on its Attach stream when the
daemon ended it, and on every later call naming it. :class:`.service.SessionService`
holds one :class:`Runs` and wraps its calls in the error edge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Final

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..config import Config
from ..errors import InvalidRequestError, Reason
from ..ids import check_session_id
from ..peers import still_running, verified_start
from ..storage import Run, RunEnd, RunRegistry, SharedRuns
from ..storage.runs import run_ended_error
from ..validate import check_attach, check_ping_timeout, check_run_id
from .edge import Context, on_unix_socket

__all__ = ["CHECK_EVERY_S", "Runs"]

_log = logging.getLogger("claw_sessiond.service")

#: How often a live run's own checks (its process, its pings) run between other occasions.
CHECK_EVERY_S: Final = 1.0


def _why_gone(run: Run, now: float) -> RunEnd | None:
    """Why a live run is to end now, or None."""
    if run.process_start and not still_running(run.pid, run.process_start):
        return RunEnd.PROCESS_GONE
    if run.ping_timeout_s and now - run.last_ping > run.ping_timeout_s:
        return RunEnd.PING_TIMEOUT
    return None


class Runs:
    """Attach, EndRun, PingRun, and the checks other calls make of a session's live run."""

    def __init__(self, config: Config, owners: RunRegistry) -> None:
        self.config = config
        self.owners = owners

    def confirm_owner(self, session_id: str) -> None:
        """End the session's run now if its checks say it is gone (before a repair or a second Attach)."""
        run = self.owners.owner_of(session_id)
        if run is None:
            return
        cause = _why_gone(run, time.monotonic())
        if cause is not None:
            _log.info("event=run_gone run=%s pid=%d cause=%s", run.run_id, run.pid, cause)
            self.owners.end(run.run_id, cause)

    def renew_run(self, run_id: str) -> None:
        """A call naming a live run counts as its ping."""
        run = self.owners.get(run_id)
        if run is not None:
            run.last_ping = time.monotonic()

    async def attach(self, request: pb.AttachRequest, context: Context) -> AsyncIterator[pb.AttachResponse]:
        """Attach: the run's stream, open while the run lives."""
        check_session_id(request.session_id)
        check_attach(request.pid, request.label)
        ping_timeout_s = check_ping_timeout(request.ping_timeout_seconds)
        pid = int(request.pid)
        local = on_unix_socket(context)
        start = 0
        if local and pid > 0:
            start = await asyncio.to_thread(verified_start, pid, self.config.effective_socket_path)
        self.confirm_owner(request.session_id)
        run = self.owners.register(
            request.session_id, pid, request.label, process_start=start, ping_timeout_s=float(ping_timeout_s)
        )
        try:
            if isinstance(self.owners, SharedRuns):  # refused if another daemon's live run owns the session
                await self.owners.claim(run)
            yield pb.AttachResponse(
                run_id=run.run_id,
                lease_seconds=0 if local else self.config.lease_s,
                pid_verified=start > 0,
                ping_timeout_seconds=ping_timeout_s,
            )
            checked = bool(run.process_start or run.ping_timeout_s)
            every = min(CHECK_EVERY_S, run.ping_timeout_s / 4) if run.ping_timeout_s else CHECK_EVERY_S
            while not run.ended.is_set():
                if not checked:
                    await run.ended.wait()  # until the client goes away (cancellation), EndRun or shutdown
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(run.ended.wait(), every)
                if not run.ended.is_set() and (cause := _why_gone(run, time.monotonic())) is not None:
                    self.owners.end(run.run_id, cause)
            raise run_ended_error(run.run_id, run.cause)
        finally:
            self.owners.unregister(run.run_id)  # the stream closed: a no-op if the run ended already

    async def end_run(self, request: pb.EndRunRequest) -> pb.EndRunResponse:
        run_id = check_run_id(request.run_id)
        if not run_id:
            raise InvalidRequestError("run_id is required (the run id Attach returned)", reason=Reason.INVALID_MESSAGE)
        ended = self.owners.end(run_id, RunEnd.ENDED)
        if isinstance(self.owners, SharedRuns):
            await self.owners.settled()  # ended for every daemon sharing the runs before the reply
        if ended is not None:
            return pb.EndRunResponse(was_live=True, session_id=ended.session_id, cause=ended.cause)
        session_id, cause = self.owners.ended_run(run_id) or ("", str(RunEnd.UNKNOWN))
        return pb.EndRunResponse(was_live=False, session_id=session_id, cause=cause)

    async def ping_run(self, request: pb.PingRunRequest) -> pb.PingRunResponse:
        run_id = check_run_id(request.run_id)
        bound = await self.owners.ping(run_id)  # on a shared database: decided there (another daemon's run too)
        return pb.PingRunResponse(ping_timeout_seconds=int(bound))
