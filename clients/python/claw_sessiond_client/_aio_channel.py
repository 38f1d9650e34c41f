"""The asyncio client's connection: one ``grpc.aio.Channel`` to the daemon, trusted before use, calls retried.

:class:`AsyncChannel` is the layer of :class:`~claw_sessiond_client.aio.AsyncSessionClient`
that reaches the daemon, as :class:`~claw_sessiond_client._sync_channel.SyncChannel`
is for the blocking client: the channel, the peer check (shared by concurrent
callers, run in a thread), each unary call with the core's retry decisions,
auto-start, and the following streams (Watch, WatchAll) with their resumption.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from . import errors as E
from ._core import CHANNEL_OPTIONS, CallRetry, ClientCore, FollowRetry
from ._liveness import CONNECT_TIMEOUT_S, HEALTH_CHECK_METHOD, accepts_connections, ping_verdict
from ._peer import verify_peer
from ._status import error_from_rpc
from .api.v1 import sessiond_pb2_grpc as pb_grpc

__all__ = ["AsyncChannel"]

T = TypeVar("T")


class AsyncChannel(ClientCore):
    """The connection of an asyncio client (the arguments: :class:`~claw_sessiond_client.aio.AsyncSessionClient`)."""

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
        self._channel = self._transport.aio_channel(self.target, CHANNEL_OPTIONS)
        self._stub = pb_grpc.SessionServiceStub(self._channel)
        self._trusting: asyncio.Future[None] | None = None
        self._retired: list[grpc.aio.Channel] = []

    async def _close_channels(self) -> None:
        """Close the channel and the ones left behind."""
        await self._channel.close(None)
        for channel in self._retired:
            await channel.close(None)

    def _follow_endpoint(self) -> bool:
        """Follow the endpoint file or a new TCP certificate (as the blocking client's)."""
        moved = self._next_target()
        if moved is None:
            return False
        self._retired.append(self._channel)
        self.target = moved
        self._channel = self._transport.aio_channel(self.target, CHANNEL_OPTIONS)
        self._stub = pb_grpc.SessionServiceStub(self._channel)
        return True

    async def _trust(self) -> None:
        """Check the peer (once per connection episode) before anything is sent.

        Concurrent callers share one check and resume in the order they
        called (an AppendStream's appends must keep their call order).
        """
        self._check_open()
        if self._verified:
            return
        if self._trusting is None or self._trusting.done():
            self._follow_endpoint()
            self._trusting = asyncio.ensure_future(self._check_peer())
        await asyncio.shield(self._trusting)  # one caller cancelled must not cancel the others' check
        self._verified = True

    async def _check_peer(self) -> None:
        """The peer check, then (a daemon accepts connections) :data:`~claw_sessiond_client._liveness.CONNECT_TIMEOUT_S`
        for it to answer; one that does not (stopped, hung) is reported at once, not retried."""
        await asyncio.to_thread(verify_peer, self.target, self._owner_workspace)
        await self._transport.aio_prove(self._channel, self.target, CONNECT_TIMEOUT_S)
        accepts = await asyncio.to_thread(accepts_connections, self.target)
        if accepts and not await self._answers(CONNECT_TIMEOUT_S):
            raise self._not_responding()

    async def _answers(self, timeout_s: float) -> bool:
        """:func:`~claw_sessiond_client._liveness.health_ping` on this client's channel."""
        ping = self._channel.unary_unary(HEALTH_CHECK_METHOD, None, None)
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await ping(b"", timeout=left)
                return True
            except grpc.RpcError as exc:
                verdict = ping_verdict(exc.code())
            if verdict is not None:
                return verdict
            if not await asyncio.to_thread(accepts_connections, self.target):
                return True
            await asyncio.sleep(min(0.1, max(0.0, deadline - time.monotonic())))

    async def _final(self, err: E.SessiondError) -> E.SessiondError | None:
        """The error to raise at once instead of retrying ``err`` (no daemon at all, a hung one), if any."""
        check = self._final_check(err)
        return None if check is None else await asyncio.to_thread(check)

    async def _call(self, fn: Callable[[], Awaitable[T]]) -> T:
        retry = CallRetry(self)
        while True:
            await self._trust()
            try:
                result = await fn()
                self._served = True
                return result
            except grpc.RpcError as exc:
                err = error_from_rpc(exc)
            except (ValueError, grpc.aio.UsageError) as exc:
                raise self._closed_mid_call(exc) from None
            if retry.needs_daemon(err):
                await self._ensure_daemon()
                continue
            final = await self._final(err)
            if final is not None:
                raise final from None
            await asyncio.sleep(retry.pause(err))

    async def _ensure_daemon(self) -> None:
        """Start a daemon (once per outage) and wait until it answers."""
        wait = self._autostart_wait()
        while not wait.expired():
            try:
                await asyncio.wait_for(self._channel.channel_ready(), 0.2)
                return
            except TimeoutError:
                pass
            if self._follow_endpoint():  # another client's daemon won the lock, and listens elsewhere
                continue
            if wait.hopeless():
                break
        raise self._autostart_failure()

    async def _follow(self, start: Callable[[], Any], cursor: Any, name: str) -> AsyncGenerator[Any, None]:
        """Run a following stream (Watch, WatchAll); as the blocking client's (``_sync_channel``)."""
        follow = FollowRetry(self, cursor, name)
        while True:
            await self._trust()
            try:
                call = start()
            except (ValueError, grpc.aio.UsageError) as exc:
                raise self._closed_mid_call(exc) from None
            err: E.SessiondError
            try:
                async for reply in call:
                    for event in follow.accept(reply):
                        yield event
                err = follow.ended()
            except grpc.RpcError as exc:
                err = error_from_rpc(exc)
            finally:
                call.cancel()
            if follow.needs_daemon(err):
                await self._ensure_daemon()
                continue
            check = follow.final_check(err)
            final = None if check is None else await asyncio.to_thread(check)
            if final is not None:
                raise final
            await asyncio.sleep(follow.pause(err))
