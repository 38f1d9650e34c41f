"""Watch and WatchAll: streams that follow commits, and the end of those whose client stopped reading.

The hub (:mod:`claw_sessiond.watch`) wakes watchers and measures how long a
send stays blocked; the stall sweeper here ends a stream whose client read
nothing for ``--watch-stall-s`` with ABORTED / WATCH_LAGGED, since only the
RPC layer can end a stream with a status. Part of :class:`.service.SessionService`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import grpc

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from .. import queries
from ..config import Config
from ..errors import WatchLaggedError
from ..ids import check_session_id
from ..sharing import SharedReads
from ..storage import Storage
from ..validate import check_follow_start, check_watch_after
from ..watch import ALL_SESSIONS, Watcher, WatchHub
from .edge import Context, EdgeState, abort, stream_edge
from .service_edits import history_fields

__all__ = ["WatchRpcs"]

_log = logging.getLogger("claw_sessiond.service")


class WatchRpcs(EdgeState):
    """Watch and WatchAll, with the stall sweeper (state set up by :class:`.service.SessionService`)."""

    store: Storage
    config: Config
    watch_hub: WatchHub
    _watch_contexts: dict[Watcher, Context]
    _stall_sweeper: asyncio.Task[None] | None
    _lag_aborts: set[asyncio.Task[None]]
    _watch_reads: SharedReads[tuple[str | None, list[tuple[int, pb.WatchResponse]], bool]]

    @stream_edge
    async def Watch(self, request: pb.WatchRequest, context: Context) -> Any:
        session_id = request.session_id
        check_session_id(session_id)
        check_watch_after(request.after_position)

        async def pull(after: int, limit: int) -> tuple[str | None, list[tuple[int, pb.WatchResponse]], bool]:
            return await self._watch_reads.read(session_id, after, limit)

        watcher = self.watch_hub.open(session_id, request.after_position, request.incarnation or None)
        self._watch_contexts[watcher] = context
        self._ensure_stall_sweeper()
        try:
            async with contextlib.aclosing(watcher.follow(pull)) as events:
                async for _position, response in events:
                    yield response
        finally:
            self._watch_contexts.pop(watcher, None)
            self.watch_hub.close(watcher)

    async def _read_watch_batch(
        self, session_id: str, after: int, limit: int
    ) -> tuple[str | None, list[tuple[int, pb.WatchResponse]], bool]:
        incarnation, batch, more = await self.store.watch_batch(session_id, after, limit)
        tag = incarnation or ""
        out = [
            (position, pb.WatchResponse(position=position, incarnation=tag, **history_fields(item)))
            for position, item in batch
        ]
        return incarnation, out, more

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
                context = self._watch_contexts.pop(watcher, None)
                if context is not None:
                    task = asyncio.create_task(self._end_lagged_watch(watcher, context))
                    self._lag_aborts.add(task)
                    task.add_done_callback(self._lag_aborts.discard)

    async def _end_lagged_watch(self, watcher: Watcher, context: Context) -> None:
        if watcher.blocked_since is None:  # it moved on meanwhile
            self._watch_contexts[watcher] = context
            return
        _log.info("event=watch_lagged position=%d stall_s=%s", watcher.position, self.config.watch_stall_s)
        exc = WatchLaggedError(
            f"watch of session {watcher.session_id!r} fell behind: its client read nothing for "
            f"{self.config.watch_stall_s:g}s; start a new Watch after the last position it received "
            f"(the daemon last sent {watcher.position})",
            position=watcher.position,
        )
        # The status travels behind the events already in the client's flow-control
        # window, so this returns once the client reads again or goes away.
        try:
            await abort(context, exc, "Watch")
        except grpc.aio.AbortError:
            pass
        except Exception as gone:  # the client went away before reading the status
            _log.debug("event=watch_lagged_unsent error=%s", type(gone).__name__)

    def close_watches(self) -> None:
        """Shutdown: end every Watch stream with UNAVAILABLE (clients resume against the successor)."""
        self.watch_hub.end_all()

    @stream_edge
    async def WatchAll(self, request: pb.WatchAllRequest, context: Context) -> Any:
        check_follow_start(request.after_event_id, request.last, max_last=queries.MAX_FOLLOW_LAST)
        resume = request.resume or request.after_event_id > 0
        after = request.after_event_id if resume else await self.store.follow_start(request.last)
        if not resume:
            # Where this stream starts, before any event: a client that must reconnect
            # resumes from here instead of from "now", so nothing committed meanwhile is lost.
            yield pb.WatchAllResponse(event_id=after, started=True)

        async def pull(after_id: int, limit: int) -> tuple[str | None, list[tuple[int, pb.WatchAllResponse]], bool]:
            batch, more = await self.store.follow_batch(after_id, limit)
            out = [
                (
                    event_id,
                    pb.WatchAllResponse(event_id=event_id, session_id=sid, position=position, **history_fields(item)),
                )
                for event_id, sid, position, item in batch
            ]
            return ALL_SESSIONS, out, more

        # Registered like a Watch (under a key no session id can have): every commit wakes it,
        # and the stall sweeper ends it with WATCH_LAGGED if its client stops reading.
        watcher = self.watch_hub.open(ALL_SESSIONS, after, ALL_SESSIONS)
        self._watch_contexts[watcher] = context
        self._ensure_stall_sweeper()
        try:
            async with contextlib.aclosing(watcher.follow(pull)) as events:
                async for _event_id, response in events:
                    yield response
        finally:
            self._watch_contexts.pop(watcher, None)
            self.watch_hub.close(watcher)
