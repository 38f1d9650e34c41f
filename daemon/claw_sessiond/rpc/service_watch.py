"""Watch and WatchAll: streams that follow commits, and the end of those whose client stopped reading.

The hub (:mod:`claw_sessiond.watch`) wakes watchers and measures how long a
send stays blocked; the stall sweeper here ends a stream whose client read
nothing for ``--watch-stall-s`` with ABORTED / WATCH_LAGGED, since only the
RPC layer can end a stream with a status. The stream's slot is released the
moment it is declared lagged (the status then waits behind the events the
client has not read; a client that cancels meanwhile ends it quietly), as long
as no more than ``--max-watchers`` lagged streams are draining at once.

A request with ``batch`` set gets each pull's events packed into messages
(:func:`batched`: at most ``WATCH_BATCH_EVENTS`` events and about
``WATCH_MESSAGE_BYTES`` encoded bytes each, at least one event); without it,
one event per message as before. :class:`.service.SessionService` holds one
:class:`Watches` and wraps its streams in the error edge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import grpc

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from .. import queries
from ..config import Config
from ..errors import WatchLaggedError
from ..ids import check_session_id
from ..sharing import SharedReads
from ..storage import Storage
from ..validate import check_follow_start, check_pid, check_watch_after
from ..watch import ALL_SESSIONS, WATCH_BATCH, WATCH_BATCH_EVENTS, WATCH_MESSAGE_BYTES, Watcher, WatchHub
from .edge import Context, VerifiedPids, abort, share_peer
from .service_edits import history_fields

__all__ = ["WatchCall", "WatchPull", "Watches", "batched", "one_per_message"]

_log = logging.getLogger("claw_sessiond.service")
M = TypeVar("M", pb.WatchResponse, pb.WatchAllResponse)
#: What a watcher pulls: the incarnation, ``(last position, message, encoded bytes)`` per message, more to come.
WatchPull = tuple[str | None, list[tuple[int, pb.WatchResponse, int]], bool]
WatchAllPull = tuple[str | None, list[tuple[int, pb.WatchAllResponse, int]], bool]
#: An open stream: its context, and the task that runs its handler (and is blocked in its sends).
WatchCall = tuple[Context, "asyncio.Task[Any] | None"]
#: A repeated field's tag and length prefix around each event, at most.
_EVENT_OVERHEAD = 6


def one_per_message(events: list[tuple[int, M]]) -> list[tuple[int, M, int]]:
    """Each event its own message (a client that did not ask for batches)."""
    return [(position, event, event.ByteSize()) for position, event in events]


def batched(events: list[tuple[int, M]], wrap: Callable[[list[M]], M]) -> list[tuple[int, M, int]]:
    """Pack events, in order, into messages of at most ``WATCH_MESSAGE_BYTES`` encoded bytes (at least one event)."""
    out: list[tuple[int, M, int]] = []
    part: list[M] = []
    size = 0
    last = 0
    for position, event in events:
        n = event.ByteSize() + _EVENT_OVERHEAD
        if part and size + n > WATCH_MESSAGE_BYTES:
            out.append((last, wrap(part), size))
            part, size = [], 0
        part.append(event)
        size += n
        last = position
    if part:
        out.append((last, wrap(part), size))
    return out


class Watches:
    """Watch and WatchAll streams, with the stall sweeper that ends those whose client stopped reading."""

    def __init__(self, store: Storage, config: Config, watch_hub: WatchHub) -> None:
        self.store = store
        self.config = config
        self.watch_hub = watch_hub
        self.watch_pids = VerifiedPids(config.effective_socket_path)
        self._watch_contexts: dict[Watcher, WatchCall] = {}
        self._stall_sweeper: asyncio.Task[None] | None = None
        self._lag_aborts: set[asyncio.Task[None]] = set()
        #: Watchers at the same place share one read and one encoding (see ``sharing.py``).
        self._watch_reads: SharedReads[WatchPull] = SharedReads(
            self._read_watch_batch, lambda: self.watch_hub.generation
        )
        self._watch_batch_reads: SharedReads[WatchPull] = SharedReads(
            self._read_watch_batches, lambda: self.watch_hub.generation
        )

    async def watch(self, request: pb.WatchRequest, context: Context) -> AsyncIterator[pb.WatchResponse]:
        """Watch: one session's history events after a position, then each commit's."""
        session_id = request.session_id
        check_session_id(session_id)
        check_watch_after(request.after_position)
        check_pid(request.pid)
        reads = self._watch_batch_reads if request.batch else self._watch_reads
        peer = await share_peer(context, int(request.pid), self.watch_pids)

        async def pull(after: int, limit: int) -> WatchPull:
            return await reads.read(session_id, after, limit)

        watcher = self.watch_hub.open(
            session_id,
            request.after_position,
            request.incarnation or None,
            peer=peer,
            limit=WATCH_BATCH_EVENTS if request.batch else WATCH_BATCH,
        )
        self._watch_contexts[watcher] = (context, asyncio.current_task())
        self._ensure_stall_sweeper()
        try:
            async with contextlib.aclosing(watcher.follow(pull)) as events:
                async for _position, response in events:
                    yield response
        finally:
            self._watch_contexts.pop(watcher, None)
            self.watch_hub.close(watcher)

    async def _read_watch_events(
        self, session_id: str, after: int, limit: int
    ) -> tuple[str | None, list[tuple[int, pb.WatchResponse]], bool]:
        incarnation, batch, more = await self.store.watch_batch(session_id, after, limit)
        tag = incarnation or ""
        out = [
            (position, pb.WatchResponse(position=position, incarnation=tag, **history_fields(item)))
            for position, item in batch
        ]
        return incarnation, out, more

    async def _read_watch_batch(self, session_id: str, after: int, limit: int) -> WatchPull:
        """One event per message (the shared read of clients that take no batches)."""
        incarnation, events, more = await self._read_watch_events(session_id, after, limit)
        return incarnation, one_per_message(events), more

    async def _read_watch_batches(self, session_id: str, after: int, limit: int) -> WatchPull:
        """Events packed into messages (the shared read of clients that take batches)."""
        incarnation, events, more = await self._read_watch_events(session_id, after, limit)
        return incarnation, batched(events, lambda part: pb.WatchResponse(events=part)), more

    def _ensure_stall_sweeper(self) -> None:
        if self._stall_sweeper is None or self._stall_sweeper.done():
            self._stall_sweeper = asyncio.create_task(self._sweep_stalled_watchers())

    async def _sweep_stalled_watchers(self) -> None:
        """While watchers are open, end the ones whose client stopped reading (see ``watch.py``)."""
        limit_s = self.config.watch_stall_s
        interval_s = min(1.0, max(0.05, limit_s / 4))
        while self.watch_hub.count():
            await asyncio.sleep(interval_s)
            for watcher in self.watch_hub.stalled(limit_s):
                call = self._watch_contexts.pop(watcher, None)
                if call is not None:
                    task = asyncio.create_task(self._end_lagged_watch(watcher, call))
                    self._lag_aborts.add(task)
                    task.add_done_callback(self._lag_aborts.discard)

    async def _end_lagged_watch(self, watcher: Watcher, call: WatchCall) -> None:
        if watcher.blocked_since is None:  # it moved on meanwhile
            self._watch_contexts[watcher] = call
            return
        context, handler = call
        _log.info("event=watch_lagged position=%d stall_s=%s", watcher.position, self.config.watch_stall_s)
        exc = WatchLaggedError(
            f"watch of session {watcher.session_id!r} fell behind: its client read nothing for "
            f"{self.config.watch_stall_s:g}s; start a new Watch after the last position it received "
            f"(the daemon last sent {watcher.position})",
            position=watcher.position,
        )
        # Its slot is free from now on: the stream sends nothing more than the events already
        # handed to the transport and this status, whatever the client does with the connection.
        # What the transport holds for it stays until the client reads or leaves, so at most
        # --max-watchers lagged streams drain at once (this task is one of ``_lag_aborts``);
        # beyond that a lagged stream keeps its slot until then, as every stream did before.
        release = len(self._lag_aborts) <= self.watch_hub.max_watchers
        if release:
            watcher.ended = exc
            self.watch_hub.close(watcher)
        # The status travels behind the events already in the client's flow-control
        # window, so this returns once the client reads again or goes away.
        ending = asyncio.ensure_future(abort(context, exc, "Watch"))
        # Once the status is queued, the handler's blocked send is moot: it ends now (grpc logs a
        # cancelled handler at DEBUG). Left blocked, a client that cancels instead of reading makes
        # that send fail in grpc's own code, which logs it as an ERROR with a traceback.
        await asyncio.sleep(0)
        if release and not ending.done() and handler is not None and not handler.done():
            handler.cancel()
        try:
            await ending
        except grpc.aio.AbortError:
            pass
        except Exception as gone:  # the client went away before reading the status
            _log.debug("event=watch_lagged_unsent error=%s", type(gone).__name__)

    def close_watches(self) -> None:
        """Shutdown: end every Watch stream with UNAVAILABLE (clients resume against the successor)."""
        self.watch_hub.end_all()

    async def watch_all(self, request: pb.WatchAllRequest, context: Context) -> AsyncIterator[pb.WatchAllResponse]:
        """WatchAll: every session's history events in commit order."""
        check_follow_start(request.after_event_id, request.last, max_last=queries.MAX_FOLLOW_LAST)
        check_pid(request.pid)
        peer = await share_peer(context, int(request.pid), self.watch_pids)
        resume = request.resume or request.after_event_id > 0
        after = request.after_event_id if resume else await self.store.follow_start(request.last)
        if not resume:
            # Where this stream starts, before any event: a client that must reconnect
            # resumes from here instead of from "now", so nothing committed meanwhile is lost.
            yield pb.WatchAllResponse(event_id=after, started=True)

        async def pull(after_id: int, limit: int) -> WatchAllPull:
            batch, more = await self.store.follow_batch(after_id, limit)
            events = [
                (
                    event_id,
                    pb.WatchAllResponse(event_id=event_id, session_id=sid, position=position, **history_fields(item)),
                )
                for event_id, sid, position, item in batch
            ]
            if request.batch:
                return ALL_SESSIONS, batched(events, lambda part: pb.WatchAllResponse(events=part)), more
            return ALL_SESSIONS, one_per_message(events), more

        # Registered like a Watch (under a key no session id can have): every commit wakes it,
        # and the stall sweeper ends it with WATCH_LAGGED if its client stops reading.
        watcher = self.watch_hub.open(
            ALL_SESSIONS, after, ALL_SESSIONS, peer=peer, limit=WATCH_BATCH_EVENTS if request.batch else WATCH_BATCH
        )
        self._watch_contexts[watcher] = (context, asyncio.current_task())
        self._ensure_stall_sweeper()
        try:
            async with contextlib.aclosing(watcher.follow(pull)) as events:
                async for _event_id, response in events:
                    yield response
        finally:
            self._watch_contexts.pop(watcher, None)
            self.watch_hub.close(watcher)
