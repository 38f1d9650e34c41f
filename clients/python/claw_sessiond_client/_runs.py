"""Live runs (Attach) and Watch: the requests, the first reply, and where a watch stands (pure).

:func:`attach_request` and :func:`run_of` open a :class:`~claw_sessiond_client.Run`;
:class:`WatchCursor` remembers the last position a watch delivered and how
long to wait before resuming it after an error. Both clients drive the
streams themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from typing import Any, Final

import grpc

from . import errors as E
from ._checks import check_ints, check_type
from ._responses import message_of
from ._status import auto_retried
from ._types import Run, WatchEvent
from .api.v1 import sessiond_pb2 as pb

__all__ = [
    "END_RUN_TIMEOUT_S",
    "ThreadPinger",
    "WatchCursor",
    "attach_request",
    "end_run_request",
    "ping_interval",
    "ping_task",
    "run_of",
    "watch_event",
]


def attach_request(session_id: str, label: str, ping_timeout_s: int = 0) -> pb.AttachRequest:
    """The Attach request of this process.

    Raises:
        TypeError: ``session_id`` or ``label`` is not a str, ``ping_timeout_s`` not an int.
        InvalidRequestError: ``ping_timeout_s`` is negative.
    """
    check_type("session_id", session_id, str)
    check_type("label", label, str)
    check_ints(ping_timeout_s=ping_timeout_s)
    if ping_timeout_s < 0:
        raise E.InvalidRequestError("ping_timeout_s must be 0 (no pings) or a number of seconds")
    return pb.AttachRequest(session_id=session_id, pid=os.getpid(), label=label, ping_timeout_seconds=ping_timeout_s)


def end_run_request(run_id: str) -> pb.EndRunRequest:
    """The EndRun request.

    Raises:
        TypeError: ``run_id`` is not a str.
    """
    check_type("run_id", run_id, str)
    return pb.EndRunRequest(run_id=run_id)


def ping_interval(run: Run) -> float:
    """How often the client pings a run that asked for a ping bound (a third of it; 0: never)."""
    return run.ping_timeout_s / 3 if run.ping_timeout_s else 0.0


def run_of(session_id: str, first: Any) -> Run:
    """The :class:`Run` from Attach's first reply.

    Raises:
        InternalError: the stream ended before its first reply.
    """
    if not isinstance(first, pb.AttachResponse) or not first.run_id:
        raise E.InternalError("Attach stream ended before the daemon sent a run id")
    return Run(
        first.run_id,
        session_id,
        int(first.lease_seconds),
        bool(first.pid_verified),
        int(first.ping_timeout_seconds),
    )


#: First pause before resuming a failed watch; doubles up to :data:`_WATCH_MAX_DELAY_S`.
_WATCH_FIRST_DELAY_S: Final = 0.05
_WATCH_MAX_DELAY_S: Final = 1.0


def watch_event(r: pb.WatchResponse) -> WatchEvent:
    """A WatchResponse (or the same fields of a WatchAllResponse) → the event to deliver."""
    edited = r.HasField("edit")
    message = message_of(r.message) if r.HasField("message") else None
    return WatchEvent(
        r.position,
        message,
        r.cleared,
        edited,
        tuple(r.edit.removed_positions) if edited else (),
        r.erased,
    )


class WatchCursor:
    """Where a watch stands, and when to resume it after an error (pure; used by both clients).

    The cursor remembers the last position delivered; every (re)started
    Watch asks for events after it, and an event at or before it is dropped,
    so a resumed watch delivers each event exactly once.
    """

    def __init__(self, session_id: str, after_position: int, retry_window_s: float) -> None:
        check_type("session_id", session_id, str)
        check_ints(after_position=after_position)
        if after_position < 0:
            raise E.InvalidRequestError("after_position must be 0 (from the start) or a position")
        self.session_id = session_id
        self.position = after_position
        #: The incarnation followed (from the first event); a resumed Watch asks for it, so
        #: a session deleted and created again meanwhile ends the watch instead of mixing in.
        self.incarnation = ""
        self._retry_window_s = retry_window_s
        self._delay_s = _WATCH_FIRST_DELAY_S
        self._give_up_at: float | None = None

    def request(self) -> pb.WatchRequest:
        """The Watch request that resumes after the last delivered position (events in batches).

        It names this process (``pid``): on the Unix socket the daemon confirms it with the
        kernel and counts the stream against this process's share of its Watch streams.
        """
        return pb.WatchRequest(
            session_id=self.session_id,
            after_position=self.position,
            incarnation=self.incarnation,
            batch=True,
            pid=os.getpid(),
        )

    def accept(self, r: pb.WatchResponse) -> WatchEvent | None:
        """The event to deliver, or None for one already delivered."""
        if r.incarnation and not self.incarnation:
            self.incarnation = r.incarnation
        if r.position <= self.position:
            return None
        self.position = r.position
        self._delay_s = _WATCH_FIRST_DELAY_S
        self._give_up_at = None
        return watch_event(r)

    def resume_delay(self, err: E.SessiondError, now: float) -> float:
        """Seconds to wait before resuming after ``err``.

        A lagged watch resumes at once. Outages (daemon restarting or
        unreachable) are retried with backoff until ``retry_window_s`` passes
        without a delivered event.

        Raises:
            SessiondError: ``err`` itself, if it is not resumable or the window is over.
        """
        if isinstance(err, E.WatchLaggedError):
            return 0.0
        if not auto_retried(err):
            raise err
        if self._give_up_at is None:
            self._give_up_at = now + self._retry_window_s
        delay = self._delay_s
        if now + delay > self._give_up_at:
            raise err
        self._delay_s = min(delay * 2, _WATCH_MAX_DELAY_S)
        return delay


class ThreadPinger:
    """Pings a run that asked for a ping bound from a daemon thread (the blocking client)."""

    def __init__(self, stub: Any, run: Run) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        interval = ping_interval(run)
        if interval:
            self._thread = threading.Thread(
                target=self._loop, args=(stub, run, interval), name=f"claw-ping-{run.run_id[:8]}", daemon=True
            )
            self._thread.start()

    def _loop(self, stub: Any, run: Run, interval: float) -> None:
        request = pb.PingRunRequest(run_id=run.run_id)
        while not self._stop.wait(interval) and run.alive:
            with contextlib.suppress(grpc.RpcError, ValueError):  # the Attach stream's end tells the caller
                stub.PingRun(request, timeout=max(interval, 1.0))

    def stop(self) -> None:
        """Stop pinging (and wait for the thread)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


async def ping_task(stub: Any, run: Run) -> None:
    """Ping a run that asked for a ping bound until cancelled (the asyncio client)."""
    interval = ping_interval(run)
    if not interval:
        return
    request = pb.PingRunRequest(run_id=run.run_id)
    while run.alive:
        await asyncio.sleep(interval)
        with contextlib.suppress(grpc.RpcError, ValueError):
            await stub.PingRun(request, timeout=max(interval, 1.0))


#: How long the end of an ``attach`` block waits for EndRun (the run ends with its stream anyway).
END_RUN_TIMEOUT_S: Final = 5.0
