"""The blocking client's connection: one ``grpc.Channel`` to the daemon, trusted before use, calls retried.

:class:`SyncChannel` is the layer of :class:`~claw_sessiond_client.sync.SessionClient`
that reaches the daemon: it holds the channel (and the ones it left when the
daemon moved), checks the peer before anything is sent, runs each unary call
with the core's retry decisions (:class:`~claw_sessiond_client._core.CallRetry`),
starts a daemon when none answers, and runs the following streams (Watch,
WatchAll) with their resumption. The client above it has one method per
operation and calls :meth:`SyncChannel._call` or :meth:`SyncChannel._follow`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc

from . import errors as E
from ._core import CHANNEL_OPTIONS, CallRetry, ClientCore, FollowRetry
from ._liveness import CONNECT_TIMEOUT_S, accepts_connections, health_ping
from ._peer import verify_peer
from ._status import error_from_rpc
from .api.v1 import sessiond_pb2_grpc as pb_grpc

__all__ = ["SyncChannel"]

T = TypeVar("T")


class SyncChannel(ClientCore):
    """The connection of a blocking client (the arguments are :class:`~claw_sessiond_client.sync.SessionClient`'s)."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None,
        address: str | None,
        autostart: bool,
        timeout_s: float,
        retry_window_s: float,
        token: str | None,
        tls_cert: str | os.PathLike[str] | None,
    ) -> None:
        super().__init__(workspace, address, autostart, timeout_s, retry_window_s, token, tls_cert)
        self._channel = self._transport.channel(self.target, CHANNEL_OPTIONS)
        self._stub = pb_grpc.SessionServiceStub(self._channel)
        self._retired: list[grpc.Channel] = []

    def _close_channels(self) -> None:
        """Close the channel and the ones left behind (calls still on them fail as the daemon did)."""
        self._channel.close()
        for channel in self._retired:
            channel.close()

    def _follow_endpoint(self) -> bool:
        """Move to where the workspace's daemon listens now, or to its new certificate (:meth:`_next_target`).

        The old channel is closed with the client (a call still on it fails as the daemon did).
        """
        moved = self._next_target()
        if moved is None:
            return False
        self._retired.append(self._channel)
        self.target = moved
        self._channel = self._transport.channel(self.target, CHANNEL_OPTIONS)
        self._stub = pb_grpc.SessionServiceStub(self._channel)
        return True

    def _trust(self) -> None:
        """Check the peer (once per connection episode) before anything is sent.

        A daemon that accepts the connection gets :data:`~claw_sessiond_client._liveness.CONNECT_TIMEOUT_S`
        to answer it; one that does not (stopped, hung) is reported at once, not retried.
        """
        self._check_open()
        if not self._verified:
            self._follow_endpoint()
            verify_peer(self.target, self._owner_workspace)
            self._transport.prove(self._channel, self.target, CONNECT_TIMEOUT_S)
            if accepts_connections(self.target) and not health_ping(self._channel, self.target, CONNECT_TIMEOUT_S):
                raise self._not_responding()
            self._verified = True

    def _final(self, err: E.SessiondError) -> E.SessiondError | None:
        """The error to raise at once instead of retrying ``err`` (no daemon at all, a hung one), if any."""
        check = self._final_check(err)
        return None if check is None else check()

    def _call(self, fn: Callable[[], T]) -> T:
        retry = CallRetry(self)
        while True:
            try:
                self._trust()  # no daemon here now (a restart, another thread saw it go): retried below
                result = fn()
                self._served = True
                return result
            except grpc.RpcError as exc:
                err = error_from_rpc(exc)
            except E.DaemonUnavailableError as exc:
                err = exc
            except ValueError as exc:
                raise self._closed_mid_call(exc) from None
            if retry.needs_daemon(err):
                self._ensure_daemon()
                continue
            final = self._final(err)
            if final is not None:
                raise final from None
            time.sleep(retry.pause(err))

    def _ensure_daemon(self) -> None:
        """Start a daemon (once per outage) and wait until it answers."""
        wait = self._autostart_wait()
        # One readiness future, cancelled on the way out: each future subscribes a
        # polling thread to the channel, and a thread still polling when the
        # channel closes dies with "Channel closed!".
        ready = grpc.channel_ready_future(self._channel)
        try:
            while not wait.expired():
                try:
                    ready.result(timeout=0.2)
                    return
                except grpc.FutureTimeoutError:
                    pass
                if self._follow_endpoint():  # another client's daemon won the lock, and listens elsewhere
                    ready.cancel()
                    ready = grpc.channel_ready_future(self._channel)
                    continue
                if wait.hopeless():
                    break
        finally:
            ready.cancel()
        raise self._autostart_failure()

    def _follow(self, start: Callable[[], Any], cursor: Any, name: str) -> Iterator[Any]:
        """Run a following stream (Watch, WatchAll) and resume it from ``cursor`` after lag, restarts and outages.

        ``cursor`` has ``request()``, ``accept(reply)`` (the event to yield, or None) and
        ``resume_delay(err, now)`` (raises ``err`` once the retry window is spent). A stream that
        was served resumes across a daemon restart; one that never was fails at once when no
        daemon runs (as a unary call does).
        """
        follow = FollowRetry(self, cursor, name)
        while True:
            self._trust()
            try:
                call = start()
            except ValueError as exc:
                raise self._closed_mid_call(exc) from None
            err: E.SessiondError
            try:
                for reply in call:
                    yield from follow.accept(reply)
                err = follow.ended()
            except grpc.RpcError as exc:
                err = error_from_rpc(exc)
            finally:
                call.cancel()
            if follow.needs_daemon(err):
                self._ensure_daemon()
                continue
            check = follow.final_check(err)
            final = None if check is None else check()
            if final is not None:
                raise final
            time.sleep(follow.pause(err))
