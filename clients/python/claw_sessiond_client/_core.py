"""The core both clients share: their settings and state, and every decision about a failed call.

:class:`~claw_sessiond_client.sync.SessionClient` and
:class:`~claw_sessiond_client.aio.AsyncSessionClient` derive from
:class:`ClientCore` and only do the I/O, each in its own style (blocking, or
``await`` with blocking checks in a thread). What to do after an attempt
failed is decided here once: start a daemon and try again (:class:`CallRetry`,
:class:`FollowRetry`), raise at once because no daemon runs or the one there
is hung (:meth:`ClientCore._final_check` names the blocking check that tells),
or wait and retry within the retry window.
"""

from __future__ import annotations

import functools
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from . import errors as E
from ._liveness import CONNECT_TIMEOUT_S, hung_error, no_daemon_error, not_responding_error
from ._peer import resolve_target
from ._status import auto_retried, closed_error
from ._tls import Transport
from .endpoint import discover_socket

if TYPE_CHECKING:
    from ._autostart import AutostartWait

__all__ = [
    "CHANNEL_OPTIONS",
    "DEFAULT_RETRY_WINDOW_S",
    "DEFAULT_TIMEOUT_S",
    "MAX_RECEIVE_BYTES",
    "CallRetry",
    "ClientCore",
    "FollowRetry",
]

#: Default per-call timeout in seconds.
DEFAULT_TIMEOUT_S: Final = 30.0
#: How long retries of a failed call may go on, in seconds.
DEFAULT_RETRY_WINDOW_S: Final = 15.0
#: Channel options: a local daemon that was down (auto-start, restart, idle exit) is retried every
#: 250 ms at most, not after gRPC's default backoff of up to 120 s, so a client reaches a new daemon
#: well before an idle one could stop again unused.
#:
#: The receive limit (gRPC's default is 4 MiB) takes the largest reply the daemon sends with its
#: default limits: a Load or Watch reply holding one entry of --max-entry-bytes (16 MiB), or an
#: Export line of one (its item in base64, a third larger, beside a payload of up to 4 MiB).
MAX_RECEIVE_BYTES: Final = 64 * 1024 * 1024
CHANNEL_OPTIONS: Final = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 250),
    ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
)
#: First pause before a unary call is retried; doubles up to :data:`_MAX_DELAY_S`.
_FIRST_DELAY_S: Final = 0.05
_MAX_DELAY_S: Final = 1.0
#: How many daemons one call may start: a daemon that was idle-exiting as the first start was
#: awaited needs a second.
_MAX_STARTS: Final = 2

#: A blocking check (run inline, or in a thread by the asyncio client) that returns the error to
#: raise at once instead of retrying, or None.
FinalCheck = Callable[[], E.SessiondError | None]


class ClientCore:
    """Settings and state of one client, and the decisions that do not depend on its I/O style.

    Args: those of :class:`~claw_sessiond_client.sync.SessionClient` (the channel is the face's, built
    by :attr:`_transport`).
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None,
        address: str | None,
        autostart: bool,
        timeout_s: float,
        retry_window_s: float,
        token: str | None = None,
        tls_cert: str | os.PathLike[str] | None = None,
    ) -> None:
        self.target, self.workspace = resolve_target(workspace, address)
        #: Builds the channels: plaintext to a Unix socket, pinned TLS plus the token to a TCP address.
        self._transport = Transport(self.target, workspace, token, tls_cert)
        self._owner_workspace = self.workspace
        if self._owner_workspace is None and workspace is not None:
            self._owner_workspace = Path(os.path.abspath(workspace))
        self.autostart = autostart and self.workspace is not None
        self.timeout_s = timeout_s
        self.retry_window_s = retry_window_s
        self._workdirs: dict[str, str] = {}
        self._spawned: subprocess.Popen[bytes] | None = None
        self._verified = False
        #: A daemon answered this client once: when it is gone later, it is likely restarting, so calls
        #: retry within ``retry_window_s`` instead of failing at once as when no daemon ever answered.
        self._served = False
        self._closed = False

    def _check_open(self) -> None:
        """Raise :class:`~claw_sessiond_client.errors.ClientClosedError` after :meth:`close`."""
        if self._closed:
            raise closed_error()

    def _closed_mid_call(self, exc: Exception) -> E.ClientClosedError:
        """grpc's error for a channel closed during a call, as the documented error (else re-raised)."""
        if not self._closed:
            raise exc
        return closed_error()

    def _not_responding(self) -> E.DaemonNotRespondingError:
        """The error for a daemon that accepted the connection but did not answer within
        :data:`~claw_sessiond_client._liveness.CONNECT_TIMEOUT_S`."""
        return not_responding_error(self.target, self._owner_workspace, CONNECT_TIMEOUT_S)

    def _final_check(self, err: E.SessiondError) -> FinalCheck | None:
        """The blocking check that tells whether ``err`` is to be raised at once (no daemon at all, a hung
        one) as another error, or None when there is nothing to check."""
        if type(err) is E.DaemonUnavailableError and not self.autostart and not self._served:
            return functools.partial(no_daemon_error, self.target, self._owner_workspace, self.workspace is not None)
        if type(err) is E.DeadlineError:
            return functools.partial(_hung, self.target, self._owner_workspace, err, self.timeout_s)
        return None

    def _autostart_wait(self) -> AutostartWait:
        """Start a daemon (unless the one this client started still runs) and time the wait for one to answer."""
        from ._autostart import AutostartWait, spawn_daemon  # here: only a client that auto-starts needs it

        assert self.workspace is not None
        if self._spawned is None or self._spawned.poll() is not None:
            self._spawned = spawn_daemon(self.workspace)
        return AutostartWait(self.workspace, self._spawned)

    def _autostart_failure(self) -> E.DaemonUnavailableError:
        """The error when auto-start did not produce a daemon that answers."""
        from ._autostart import autostart_failure

        assert self.workspace is not None
        return autostart_failure(self.workspace, self._spawned)

    def _moved_target(self) -> str | None:
        """Where the workspace's daemon listens now (its endpoint file, else the path rule), if not at
        this client's target; None when unchanged or connected by address."""
        if self.workspace is None:
            return None
        target = f"unix:{discover_socket(self.workspace, os.environ.get('XDG_RUNTIME_DIR'))}"
        return None if target == self.target else target

    def _next_target(self) -> str | None:
        """The target to rebuild the channel for: the daemon moved (:meth:`_moved_target`), or the TCP
        daemon's certificate changed (it restarted); None to keep the channel."""
        moved = self._moved_target()
        if moved is None and not self._transport.renewed():
            return None
        return moved or self.target

    def _workdir(self, session_id: str, workdir: str | None) -> str:
        return workdir if workdir is not None else self._workdirs.get(session_id, "")

    @property
    def socket_path(self) -> Path | None:
        """The Unix socket path, if connected by workspace or Unix address."""
        return Path(self.target[5:]) if self.target.startswith("unix:") else None


def _hung(target: str, workspace: Path | None, err: E.SessiondError, waited_s: float) -> E.SessiondError | None:
    hung = hung_error(target, workspace, err, waited_s)
    return hung if hung is not err else None


def _daemon_gone(client: ClientCore, err: E.SessiondError) -> bool:
    """Note that an attempt failed with ``err``; True if no daemon answered (the next one is checked again).

    Raises:
        ClientClosedError: the client was closed (by another thread or task) during the attempt.
    """
    if client._closed:
        raise closed_error() from None
    gone = isinstance(err, E.DaemonUnavailableError)
    if gone:
        client._verified = False  # whoever answers next is checked again
    return gone


class CallRetry:
    """What to do after each failed attempt of one unary call; both clients drive it.

    After an attempt failed with ``err``: if :meth:`needs_daemon`, start one and
    try again at once; else run the client's :meth:`ClientCore._final_check`,
    and if it yields nothing, wait :meth:`pause` seconds and try again.
    """

    def __init__(self, client: ClientCore) -> None:
        self._client = client
        self._deadline = time.monotonic() + client.retry_window_s
        self._delay_s = _FIRST_DELAY_S
        self._starts = 0

    def needs_daemon(self, err: E.SessiondError) -> bool:
        """True to start a daemon and try again at once (auto-start on, nothing answered, few starts yet).

        Raises:
            ClientClosedError: the client was closed during the attempt.
        """
        if _daemon_gone(self._client, err) and self._client.autostart and self._starts < _MAX_STARTS:
            self._starts += 1
            return True
        return False

    def pause(self, err: E.SessiondError) -> float:
        """Seconds to wait before the next attempt (doubling up to 1 s).

        Raises:
            SessiondError: ``err`` itself, if it is not retryable or the retry window would be over.
        """
        delay = self._delay_s
        if not auto_retried(err) or time.monotonic() + delay > self._deadline:
            raise err
        self._delay_s = min(delay * 2, _MAX_DELAY_S)
        return delay


class FollowRetry:
    """What to do after a following stream (Watch, WatchAll) ended or failed; both clients drive it.

    ``cursor`` has ``request()`` (which asks for batches), ``accept(reply)``
    (the event to deliver, or None) and ``resume_delay(err, now)`` (raises
    ``err`` once the retry window is spent). A stream that was served resumes across a daemon restart; one
    that never was fails at once when no daemon runs (as a unary call does).
    """

    def __init__(self, client: ClientCore, cursor: Any, name: str) -> None:
        self._client = client
        self._cursor = cursor
        self._name = name
        #: The stream delivered a reply once: no check then whether a daemon runs at all.
        self.answered = False
        self._autostarted = False

    def accept(self, reply: Any) -> list[Any]:
        """The events of ``reply`` to deliver, in order: those of its batch (``events``), or its own."""
        self.answered = True
        accepted = (self._cursor.accept(part) for part in (reply.events or (reply,)))
        return [event for event in accepted if event is not None]

    def ended(self) -> E.DaemonUnavailableError:
        """The error of a stream the daemon ended (a following stream never ends by itself)."""
        return E.DaemonUnavailableError(f"the daemon ended the {self._name} stream")

    def needs_daemon(self, err: E.SessiondError) -> bool:
        """True to start a daemon and resume at once (auto-start on, nothing answered, none started yet).

        Raises:
            ClientClosedError: the client was closed while the stream ran.
        """
        if _daemon_gone(self._client, err) and self._client.autostart and not self._autostarted:
            self._autostarted = True
            return True
        return False

    def final_check(self, err: E.SessiondError) -> FinalCheck | None:
        """The client's :meth:`ClientCore._final_check`, for a stream that never delivered a reply."""
        return None if self.answered else self._client._final_check(err)

    def pause(self, err: E.SessiondError) -> float:
        """Seconds to wait before resuming (the cursor's backoff).

        Raises:
            SessiondError: ``err`` itself, if it is not resumable or the retry window is over.
        """
        return float(self._cursor.resume_delay(err, time.monotonic()))
