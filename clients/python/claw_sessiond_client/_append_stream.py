"""The append stream: appends pipelined over one ``AppendStream`` call (asyncio only).

:meth:`AsyncSessionClient.append_stream <claw_sessiond_client.aio.AsyncSessionClient.append_stream>`
returns an :class:`AppendStream`. An append whose stream broke is sent again
through the client's unary Append, with the same request id.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import grpc

from . import errors as E
from ._requests import append_request
from ._responses import append_result_of
from ._status import append_stream_error, auto_retried, closed_error
from ._types import AppendResult, Message, StateDelta, ToolPolicy
from .api.v1 import sessiond_pb2 as pb

if TYPE_CHECKING:
    from .aio import AsyncSessionClient

__all__ = ["AppendStream"]


#: Most appends one AppendStream message carries.
_STREAM_BATCH = 256


class _StreamBrokenError(Exception):
    """The AppendStream call ended before this append's reply (internal: the append is re-sent)."""


def _expire(fut: asyncio.Future[Any], timeout_s: float) -> None:
    if not fut.done():
        fut.set_exception(E.DeadlineError(f"no AppendStream reply within {timeout_s:g}s"))


class _Stream:
    """One AppendStream call: an outbox drained by a sender task, replies matched in order by a reader task."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.outbox: collections.deque[tuple[pb.AppendRequest, asyncio.Future[Any]]] = collections.deque()
        self.waiting: collections.deque[asyncio.Future[Any]] = collections.deque()
        self.wake = asyncio.Event()
        self.closing = False
        self.broken = False
        self.sender = asyncio.ensure_future(self._send())
        self.reader = asyncio.ensure_future(self._read())

    def done(self) -> bool:
        """Both tasks finished: nothing of this call is left to wait for."""
        return self.sender.done() and self.reader.done()

    def put(self, request: pb.AppendRequest, fut: asyncio.Future[Any]) -> None:
        self.outbox.append((request, fut))
        self.wake.set()

    async def _send(self) -> None:
        try:
            while True:
                if not self.outbox:
                    if self.closing:
                        await self.call.done_writing()
                        return
                    self.wake.clear()
                    await self.wake.wait()
                    continue
                # Whatever queued up while the last write was in flight goes in one message.
                message = pb.AppendStreamRequest()
                while self.outbox and len(message.appends) < _STREAM_BATCH:
                    request, fut = self.outbox.popleft()
                    message.appends.append(request)
                    self.waiting.append(fut)
                await self.call.write(message)
        except (grpc.RpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
            self.fail()

    async def _read(self) -> None:
        try:
            async for message in self.call:
                for reply in message.replies:
                    fut = self.waiting.popleft()
                    if not fut.done():
                        fut.set_result(reply)
        except grpc.RpcError:
            pass
        finally:
            self.fail()

    def fail(self) -> None:
        """End this call: every append without a reply is re-sent by its caller (same request id)."""
        self.broken = True
        self.call.cancel()
        self.wake.set()
        for fut in [*self.waiting, *(f for _, f in self.outbox)]:
            if not fut.done():
                fut.set_exception(_StreamBrokenError())
        self.waiting.clear()
        self.outbox.clear()


class AppendStream:
    """Appends pipelined over one ``AppendStream`` call; see :meth:`AsyncSessionClient.append_stream`.

    Any number of :meth:`append` coroutines may run at once. Appends queued
    while a write is in flight go out together in the next message, and the
    daemon answers with whatever replies are ready, in order. If the stream
    breaks (daemon restart, network), every append still waiting is sent
    again through the unary Append with the same request id, with that
    method's retries, so nothing is written twice. Re-sent appends go one at a
    time in send order; if one of them gives up, those queued behind it fail
    with the same error untried, so retrying failures in order keeps the order. Results and exceptions are
    those of :meth:`AsyncSessionClient.append`.
    """

    def __init__(self, client: AsyncSessionClient, *, resend_late: bool = False) -> None:
        self._client = client
        #: A reply later than the client's timeout ends the stream and the append is re-sent
        #: through the unary Append (its retries), instead of raising DeadlineError.
        self._resend_late = resend_late
        self._stream: _Stream | None = None
        #: Calls being finished (:meth:`finish`) whose tasks may still run; :meth:`aclose` waits for them.
        self._finishing: set[_Stream] = set()
        # Appends re-sent after a broken stream go one at a time, in the order they were
        # sent (asyncio.Lock is FIFO; the broken stream fails its futures in send order),
        # and new appends queue behind them, so a reconnect never reorders a session.
        self._order = asyncio.Lock()
        self._resends = 0
        self._resend_error: E.SessiondError | None = None

    async def __aenter__(self) -> AppendStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def append(
        self,
        session_id: str,
        messages: Iterable[Message] | Message,
        *,
        expected_last_position: int = 0,
        request_id: str | None = None,
        workdir: str | None = None,
        run_id: str = "",
        tool_policy: ToolPolicy | None = None,
        state_deltas: Sequence[StateDelta] = (),
    ) -> AppendResult:
        """Append messages atomically, in order (the arguments of :meth:`AsyncSessionClient.append`)."""
        client = self._client
        if client._closed:
            raise closed_error()
        request = append_request(
            session_id,
            messages,
            expected_last_position=expected_last_position,
            request_id=request_id,
            workdir=client._workdir(session_id, workdir),
            run_id=run_id,
            tool_policy=tool_policy,
            state_deltas=state_deltas,
        )
        return await self.send(request)

    async def send(self, request: pb.AppendRequest) -> AppendResult:
        """Send one built Append request over the stream (its result or error as :meth:`append`'s)."""
        client = self._client
        if client._closed:
            raise closed_error()
        if self._order.locked():  # earlier appends are being re-sent: stay behind them
            return await self._unary(request)
        stream = self._stream
        if stream is None or stream.broken or stream.closing:
            await client._trust()
            stream = self._stream  # another append may have opened it while this one waited
            if stream is None or stream.broken or stream.closing:
                try:
                    call = client._stub.AppendStream()
                except (ValueError, grpc.aio.UsageError) as exc:
                    raise client._closed_mid_call(exc) from None
                stream = self._stream = _Stream(call)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[pb.AppendReply] = loop.create_future()
        stream.put(request, fut)
        timer = loop.call_later(client.timeout_s, _expire, fut, client.timeout_s)
        try:
            reply = await fut
        except _StreamBrokenError:
            return await self._unary(request)
        except E.DeadlineError:
            if not self._resend_late:
                raise
            stream.fail()  # the appends behind it are re-sent too, after this one (the order lock is FIFO)
            return await self._unary(request)
        finally:
            timer.cancel()
        if reply.HasField("error"):
            err = append_stream_error(reply.error)
            if auto_retried(err):  # shutting down, storage busy: the unary path retries
                return await self._unary(request)
            raise err
        return append_result_of(reply.result, request)

    def finish(self) -> None:
        """Begin finishing the stream without waiting: its call ends once the appends in flight got replies.

        Starts no task (the call's own sender and reader finish it), so a loop callback may call it
        even in the loop's last turn; :meth:`aclose` waits for what it began.
        """
        self._finishing = {s for s in self._finishing if not s.done()}
        stream, self._stream = self._stream, None
        if stream is None:
            return
        stream.closing = True
        stream.wake.set()
        self._finishing.add(stream)

    async def aclose(self) -> None:
        """Finish the stream; appends still in flight get their replies first."""
        self.finish()
        ending, self._finishing = self._finishing, set()
        await asyncio.gather(*(t for s in ending for t in (s.sender, s.reader)), return_exceptions=True)

    async def _unary(self, request: pb.AppendRequest) -> AppendResult:
        client = self._client
        self._resends += 1
        try:
            async with self._order:
                if self._resend_error is not None:
                    # An earlier re-sent append gave up: fail this one too, untried, so that the
                    # caller's retries keep the order (else this one could land before it).
                    err = self._resend_error
                    raise type(err)(err.message, reason=err.reason, metadata=err.metadata)
                try:
                    return await client._send_append(request)
                except E.SessiondError as exc:
                    if auto_retried(exc):
                        self._resend_error = exc
                    raise
        finally:
            self._resends -= 1
            if self._resends == 0:
                self._resend_error = None
