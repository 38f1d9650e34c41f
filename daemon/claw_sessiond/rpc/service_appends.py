"""Append and AppendStream: messages written to a session's log, one append or many in flight.

AppendStream runs each append as its own task as soon as it is read, so that the
appends in flight share the store's group commits; at most
:data:`APPEND_STREAM_WINDOW` of one stream are in flight (reading stops until
replies go out). Each append's error is reported in its own reply, as Append
would have reported it (:func:`.edge.append_error`). At shutdown each open
stream answers what it read, then ends (:meth:`Appends.end_streams`).
:class:`.service.SessionService` holds one :class:`Appends` and wraps its calls
in the error edge.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import AsyncIterator
from typing import Any, Final

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..config import Config
from ..retention import WrittenSessions
from ..storage import RunRegistry, Storage
from ..validate import check_run_id, prepare_append
from .convert import message_from_pb, timestamp, tool_policy_of, trace_id_of
from .edge import Context, EdgeState, StreamState, append_error
from .service_runs import Runs

__all__ = ["APPEND_STREAM_WINDOW", "Appends"]

#: Most appends of one AppendStream in flight at once (reading stops until replies go out).
APPEND_STREAM_WINDOW: Final = 256
#: AppendStream tasks still running (kept referenced until they finish).
_RUNNING: Final[set[asyncio.Task[Any]]] = set()


class Appends:
    """Append and AppendStream over ``store``; ``gate`` is the service's draining switch and call observers."""

    def __init__(
        self, store: Storage, config: Config, owners: RunRegistry, runs: Runs, gate: EdgeState, written: WrittenSessions
    ) -> None:
        self.store = store
        self.config = config
        self.owners = owners
        self.runs = runs
        self.gate = gate
        self.written = written
        #: The wake-up of each open AppendStream (``end_streams``).
        self._append_streams: set[asyncio.Event] = set()

    async def append_stream(
        self, requests: Any, context: Context, state: StreamState
    ) -> AsyncIterator[pb.AppendStreamResponse]:
        """AppendStream: each append's reply, in request order, several to a message when ready.

        ``state.answered`` is kept true while every append read has its reply: a cancel then is the
        client's own end of the stream.
        """
        # Each append runs as its own task as soon as it is read, so that the
        # appends in flight share group commits; tasks reach the writer's queue
        # in creation order, so replies (sent in task order) follow request
        # order. Every reply that is ready goes out in one message.
        window = asyncio.Semaphore(APPEND_STREAM_WINDOW)
        queued: collections.deque[asyncio.Task[pb.AppendReply]] = collections.deque()
        wake = asyncio.Event()
        reading = True

        async def read_requests() -> None:
            nonlocal reading
            try:
                async for message in requests:
                    for request in message.appends:
                        await window.acquire()
                        task = asyncio.ensure_future(self._append_reply(request, context))
                        _RUNNING.add(task)
                        task.add_done_callback(_RUNNING.discard)
                        queued.append(task)
                        wake.set()
            finally:
                reading = False
                wake.set()

        reader = asyncio.ensure_future(read_requests())
        self._append_streams.add(wake)
        ended = False
        try:
            while True:
                if self.gate.draining and not ended:  # stopping: answer what was read, then end (end_append_streams)
                    reader.cancel()
                    ended, reading = True, False
                if not queued:
                    if not reading:
                        break
                    wake.clear()
                    state.answered = True
                    await wake.wait()
                    state.answered = False
                    continue
                out = pb.AppendStreamResponse()
                out.replies.append(await queued[0])
                queued.popleft()
                window.release()
                while queued and queued[0].done():
                    out.replies.append(queued.popleft().result())
                    window.release()
                state.answered = not queued
                yield out
                state.answered = False
            if not ended:
                await reader  # a broken request stream surfaces here
        finally:
            self._append_streams.discard(wake)
            reader.cancel()

    def end_streams(self) -> None:
        """Shutdown (``draining`` set): each open AppendStream answers the appends it has read, then ends; its
        client sends what got no reply again to the successor (a stream kept open would hold the stop for
        the whole grace period, and its appends would only be refused)."""
        for wake in self._append_streams:
            wake.set()

    async def _append_reply(self, request: pb.AppendRequest, context: Context) -> pb.AppendReply:
        """One append of AppendStream: its result, or its error as Append would have reported it."""
        started = time.perf_counter()
        code = "OK"
        try:
            self.gate.check_serving()
            return pb.AppendReply(result=await self.append(request, context))
        except Exception as exc:
            code, error = append_error(exc)
            return pb.AppendReply(error=error)
        finally:
            self.gate.observe_rpc("Append", code, time.perf_counter() - started)

    async def append(self, request: pb.AppendRequest, context: Context) -> pb.AppendResponse:
        """Append: the run named (if any) confirmed and renewed, the request checked, the messages stored."""
        trace_id = trace_id_of(request.trace_id, context)
        if request.run_id:
            check_run_id(request.run_id)
            if self.owners.get(request.run_id) is not None:
                self.owners.check_run(request.run_id, request.session_id)
            else:  # not live here: on a shared database perhaps another daemon's run (asked in SQL, pinged there)
                await self.owners.confirm_run(request.run_id, request.session_id, ping=True)
            self.runs.renew_run(request.run_id)
        job = prepare_append(
            request.session_id,
            [message_from_pb(m) for m in request.messages],
            expected_last_position=request.expected_last_position,
            request_id=request.request_id,
            workdir=request.workdir,
            run_id=request.run_id,
            trace_id=trace_id,
            max_message_bytes=self.config.max_message_bytes,
            max_batch_messages=self.config.max_batch_messages,
            max_entry_bytes=self.config.max_entry_bytes,
            tool_policy=tool_policy_of(request.tool_policy) if request.HasField("tool_policy") else None,
            state_deltas=[(d.scope, d.delta) for d in request.state_deltas],
        )
        self.written.note(job.session_id)
        result = await self.store.append(job)
        return pb.AppendResponse(
            first_position=result.first_position,
            last_position=result.last_position,
            replayed=result.replayed,
            trace_id=result.trace_id,
            created_at=timestamp(result.created_at),
        )
