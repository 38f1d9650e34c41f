"""The sync client's plain appends, carried by one long-lived ``AppendStream`` call.

:meth:`SessionClient.append <claw_sessiond_client.sync.SessionClient.append>`
sends each append as one message on a stream opened at the first append,
instead of a whole gRPC call per append (a stream message costs the daemon
less CPU than a call: docs/benchmarks.md). Nothing else changes for the
caller, as in the asyncio client (``_plain_stream``): results and errors are
those of the unary Append (the daemon reports each append's error in its own
reply, with the same code and reason, expected-position conflicts included);
an append whose stream broke (daemon restart, network), whose reply is later
than the client's timeout, or whose error is retryable is sent again through
the unary Append with the same request id and that method's retries, so
nothing is written twice. One thread's appends keep their order: each waits
for its reply before the next is sent.

Threads: grpc's own thread feeds the call from a queue; a caller waiting
for its reply reads the call itself, replies matched in order to the appends
waiting (no thread hop for a lone caller); one idle thread ends a stream
whose oldest reply is later than the client's timeout (those appends are
re-sent) and finishes the stream after :data:`IDLE_CLOSE_S` without appends
(an open call counts as use: it would keep a daemon with ``--idle-exit-s``
alive, and a stopping daemon waits for open calls). It ends with the client.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import grpc

from ._responses import append_result_of
from ._status import append_stream_error, auto_retried, closed_error
from ._types import AppendResult
from .api.v1 import sessiond_pb2 as pb
from .errors import DaemonUnavailableError, ShuttingDownError

if TYPE_CHECKING:
    from .sync import SessionClient

__all__ = ["CLOSE_WAIT_S", "IDLE_CLOSE_S", "SyncAppends"]

#: Seconds without an append after which the client finishes its stream (the next append opens another).
IDLE_CLOSE_S: Final = 0.5
#: Longest a client's close waits for its stream to finish.
CLOSE_WAIT_S: Final = 1.0
#: Most appends one AppendStream message carries (appends queued by several threads go together).
_BATCH: Final = 256


class _Broken(Exception):
    """The stream ended before this append's reply (internal: the append is re-sent)."""


class _Slot:
    """One append waiting for its reply."""

    __slots__ = ("broken", "done", "reply", "sent_at")

    def __init__(self) -> None:
        self.reply: pb.AppendReply | None = None
        self.done = False
        self.broken = False
        self.sent_at = time.monotonic()


class _Stream:
    """One AppendStream call: requests fed from a queue; replies read by a waiting caller, matched in order.

    No reader thread: a caller waiting for its reply reads the call itself
    (one thread at a time; the others wait on a condition), so a lone caller
    reads its own reply with no thread hop.
    """

    def __init__(self, stub: Any) -> None:
        self._outbox: queue.SimpleQueue[pb.AppendRequest | None] = queue.SimpleQueue()
        self._waiting: collections.deque[_Slot] = collections.deque()
        self._cond = threading.Condition()
        self._reading = False
        self.ended = False  # broken or finishing: no new appends
        self.call = stub.AppendStream(self._messages())

    def _messages(self) -> Iterator[pb.AppendStreamRequest]:
        """What grpc's thread sends: every append queued so far in one message, until the end mark."""
        while True:
            first = self._outbox.get()
            if first is None:
                return
            message = pb.AppendStreamRequest(appends=[first])
            while len(message.appends) < _BATCH:
                try:
                    more = self._outbox.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    yield message
                    return
                message.appends.append(more)
            yield message

    def put(self, request: pb.AppendRequest) -> _Slot | None:
        """Queue one append; its slot, or None if this stream takes no more."""
        slot = _Slot()
        with self._cond:  # the waiting order is the send order
            if self.ended:
                return None
            self._waiting.append(slot)
            self._outbox.put(request)
        return slot

    def oldest(self) -> float | None:
        """When the longest-waiting append was queued (None: none waits)."""
        with self._cond:
            return self._waiting[0].sent_at if self._waiting else None

    def wait(self, slot: _Slot) -> pb.AppendReply:
        """This append's reply (raises :class:`_Broken` if the stream ended first)."""
        with self._cond:
            while not slot.done and self._reading:
                self._cond.wait()
            read = not slot.done
            if read:
                self._reading = True
        if read:
            try:
                while not slot.done:
                    self._read_one()
            finally:
                with self._cond:
                    self._reading = False
                    self._cond.notify_all()
        if slot.broken or slot.reply is None:
            raise _Broken()
        return slot.reply

    def _read_one(self) -> None:
        try:
            message = next(self.call)
        except (StopIteration, grpc.RpcError, ValueError):  # ended, failed, or the channel closed under it
            self.fail()
            return
        with self._cond:
            for reply in message.replies:
                if not self._waiting:  # failed meanwhile (a late reply): its append is re-sent
                    break
                slot = self._waiting.popleft()
                slot.reply, slot.done = reply, True
            self._cond.notify_all()

    def fail(self) -> None:
        """End the call: every append without a reply is marked broken (its caller re-sends it)."""
        with self._cond:
            self.ended = True
            for slot in self._waiting:
                slot.broken = slot.done = True
            self._waiting.clear()
            self._cond.notify_all()
        self._outbox.put(None)
        self.call.cancel()

    def finish(self) -> None:
        """Send no more: the daemon answers what it has, then ends the call."""
        with self._cond:
            self.ended = True
        self._outbox.put(None)

    def end(self, deadline: float) -> None:
        """After :meth:`finish`: wait until ``deadline`` (monotonic) for the call to end with the daemon's status,
        then cancel it if it has not. The client's close leaves no call running: a call still running when the
        program exits is finalized by the exit's last garbage collection, whose ``__del__`` takes the call's lock,
        which a grpc thread frozen by the exit may hold (a client hung at exit so, after printing its results,
        about once in 150 runs)."""
        ended = threading.Event()
        self.call.add_done_callback(lambda _call: ended.set())
        if not ended.wait(max(0.0, deadline - time.monotonic())):
            self.call.cancel()


class SyncAppends:
    """One sync client's appends over one :class:`_Stream`, opened on demand and finished when idle."""

    def __init__(self, client: SessionClient) -> None:
        self._client = client
        self._lock = threading.Lock()
        self._stream: _Stream | None = None
        self._busy = 0
        self._last_used = 0.0
        self._closed = threading.Event()
        self._idle: threading.Thread | None = None
        #: Appends sent again through the unary Append after their stream broke (for tests and diagnosis).
        self.resent = 0

    def send(self, request: pb.AppendRequest) -> AppendResult:
        """Send one built Append request; its result, or the error the unary Append would raise."""
        client = self._client
        with self._lock:
            self._busy += 1
        try:
            try:
                stream = self._open()
            except DaemonUnavailableError:  # no daemon now (a restart): the unary path waits for one and retries
                return client._send_append(request)
            slot = stream.put(request)
            if slot is None:  # finished or broken between opening and putting
                return client._send_append(request)
            try:
                reply = stream.wait(slot)
            except _Broken:  # also a reply later than the timeout (the idle thread ends the stream)
                self.resent += 1
                return client._send_append(request)
            client._served = True  # a daemon answered: a later outage is a restart to wait for, not "no daemon"
            if reply.HasField("error"):
                err = append_stream_error(reply.error)
                if auto_retried(err):  # shutting down, storage busy: the unary path retries
                    if isinstance(err, ShuttingDownError):
                        self._retire(stream)  # a stopping daemon would wait for this call until its grace ends
                    return client._send_append(request)
                raise err
            return append_result_of(reply.result, request)
        finally:
            with self._lock:
                self._busy -= 1
                self._last_used = time.monotonic()

    def _retire(self, stream: _Stream) -> None:
        """Send no more on ``stream`` (the next append opens another)."""
        with self._lock:
            if self._stream is stream:
                self._stream = None
        stream.finish()

    def _open(self) -> _Stream:
        client = self._client
        with self._lock:
            stream = self._stream
            if stream is not None and not stream.ended:
                return stream
            if client._closed or self._closed.is_set():
                raise closed_error()
            client._trust()  # the peer check, once per connection episode, before anything is sent
            try:
                stream = self._stream = _Stream(client._stub)
            except ValueError as exc:  # the channel closed meanwhile
                raise client._closed_mid_call(exc) from None
            if self._idle is None:
                self._idle = threading.Thread(target=self._watch_idle, name="claw-append-idle", daemon=True)
                self._idle.start()
            return stream

    def _watch_idle(self) -> None:
        """Every quarter of IDLE_CLOSE_S: end a stream whose oldest reply is overdue, finish an idle one."""
        while not self._closed.wait(IDLE_CLOSE_S / 2):
            with self._lock:
                stream = self._stream
                if stream is None:
                    continue
                now = time.monotonic()
                oldest = stream.oldest()
                if oldest is not None and now - oldest > self._client.timeout_s:
                    self._stream = None
                    late = True
                elif self._busy or now - self._last_used < IDLE_CLOSE_S:
                    continue
                else:
                    self._stream = None
                    late = False
            if late:
                stream.fail()  # a reply this late: the appends waiting are re-sent through the unary Append
            else:
                stream.finish()

    def close(self) -> None:
        """Finish the stream: appends in flight get their replies, and the call its end, for up to
        :data:`CLOSE_WAIT_S` in all."""
        self._closed.set()
        with self._lock:
            stream, self._stream = self._stream, None
        if stream is not None:
            stream.finish()
            deadline = time.monotonic() + CLOSE_WAIT_S
            while stream.oldest() is not None and time.monotonic() < deadline:
                time.sleep(0.005)  # appends in flight are read by their callers
            stream.end(deadline)
        if self._idle is not None and self._idle is not threading.current_thread():
            self._idle.join(CLOSE_WAIT_S)
