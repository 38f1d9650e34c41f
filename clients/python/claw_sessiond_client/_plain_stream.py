"""The asyncio client's plain appends, carried by one long-lived ``AppendStream`` call.

:meth:`AsyncSessionClient.append <claw_sessiond_client.aio.AsyncSessionClient.append>`
sends each append as one message on a stream opened at the first append,
instead of a whole gRPC call per append (a call costs both processes more CPU
than a stream message: README "Benchmarks"). Nothing else changes for the
caller: results and errors are those of the unary Append (the daemon reports
each append's error in its own reply, with the same code and reason); an
append whose stream broke (daemon restart, network), whose reply is later than
the client's timeout, or whose error is retryable is sent again through the
unary Append with the same request id and that method's retries, so nothing is
written twice and appends keep their order.

The stream is finished after :data:`IDLE_CLOSE_S` without appends: an open
call counts as use (it would keep a daemon with ``--idle-exit-s`` alive) and a
stopping daemon waits for open calls. The idle timer only marks the stream
finished (:meth:`AppendStream.finish`): a timer that starts a task could fire in
a loop's last turn (``asyncio.run`` ending with the client open) and leave that
task pending when the loop closes.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Final

from ._append_stream import AppendStream
from ._types import AppendResult
from .api.v1 import sessiond_pb2 as pb

if TYPE_CHECKING:
    from .aio import AsyncSessionClient

__all__ = ["CLOSE_WAIT_S", "IDLE_CLOSE_S", "PlainAppends"]

#: Seconds without an append after which the client finishes its stream (the next append opens another).
IDLE_CLOSE_S: Final = 0.5
#: Longest a client's close waits for its stream to finish.
CLOSE_WAIT_S: Final = 1.0


class PlainAppends:
    """One client's appends over one :class:`~claw_sessiond_client._append_stream.AppendStream`, opened on demand."""

    def __init__(self, client: AsyncSessionClient) -> None:
        self._pipe = AppendStream(client, resend_late=True)
        self._busy = 0
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    async def send(self, request: pb.AppendRequest) -> AppendResult:
        """Send one built Append request; its result, or the error the unary Append would raise."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._busy += 1
        try:
            return await self._pipe.send(request)
        finally:
            self._busy -= 1
            if self._busy == 0 and not self._closed:  # an append that outlived close() sets no timer
                self._timer = asyncio.get_running_loop().call_later(IDLE_CLOSE_S, self._idle)

    def _idle(self) -> None:
        self._timer = None
        if self._busy == 0:
            self._pipe.finish()

    async def aclose(self) -> None:
        """Finish the stream: appends in flight get their replies for up to :data:`CLOSE_WAIT_S`.

        After that (a hung daemon) the client's channel closes under them, as under unary calls.
        """
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._pipe.aclose(), CLOSE_WAIT_S)
