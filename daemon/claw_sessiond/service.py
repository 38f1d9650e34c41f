"""The SessionService servicer: proto ↔ domain.

Every RPC is wrapped by :func:`~claw_sessiond.rpc.edge.edge` (unary) or
:func:`~claw_sessiond.rpc.edge.stream_edge` (server streaming): the error edge,
with its one table from domain error to status, lives in ``rpc/edge.py``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any, Final, TypeVar

import grpc
from google.protobuf.message import DecodeError

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc

from . import __version__, export, queries, reads
from .config import Config
from .errors import (
    InvalidRequestError,
    Reason,
    SequenceConflictError,
    SessionNotFoundError,
    WatchLaggedError,
)
from .ids import check_request_id, check_session_id
from .model import Message, UsageDelta
from .owners import Owners
from .rpc.convert import (
    event_kind_of,
    fill_message_pb,
    import_mode_of,
    message_from_pb,
    message_pb,
    role_filter_of,
    role_pb,
    session_pb,
    set_timestamp,
    time_bound,
    timestamp,
    trace_id_of,
    usage_pb,
)
from .rpc.edge import STATUS_OF, EdgeState, abort, append_error, edge, status_for, stream_edge
from .sharing import SharedReads
from .store import BACKUP_CHUNK_BYTES, Store
from .validate import (
    check_attach,
    check_clear_expected,
    check_follow_start,
    check_list_sessions,
    check_run_id,
    check_search_limit,
    check_watch_after,
    check_workdir,
    page_after,
    page_key,
    page_token,
    parse_json_object,
    prepare_append,
    prepare_usage,
)
from .watch import ALL_SESSIONS, Watcher, WatchHub

__all__ = ["STATUS_OF", "SessionService", "add_to_server", "status_for"]

_log = logging.getLogger("claw_sessiond.service")
T = TypeVar("T")

#: Most appends of one AppendStream in flight at once (reading stops until replies go out).
APPEND_STREAM_WINDOW: Final = 256
#: AppendStream tasks still running (kept referenced until they finish).
_RUNNING: Final[set[asyncio.Task[Any]]] = set()
#: Keep each Load chunk well under the 4 MiB default receive limit.
LOAD_CHUNK_BYTES: Final = 1024 * 1024
#: Export pacing: pause this many times the time a page took before the next page.
EXPORT_PAUSE_RATIO: Final = 1.0
#: Messages converted for a Load before it yields to the loop (bounds one slice of loop time).
LOAD_YIELD_EVERY: Final = 32


# ---------------------------------------------------------------- conversions


async def _one_page(messages: list[Message]) -> AsyncGenerator[list[Message], None]:
    yield messages


def _export_line(session_id: str, ordinal: int, row: Any) -> str:
    """Encode one export row as its line (``ordinal``: its 1-based index in the session)."""
    return export.event_line(ordinal, session_id, reads.decode_events([row])[0])


# ---------------------------------------------------------------- the servicer


class SessionService(EdgeState, pb_grpc.SessionServiceServicer):  # type: ignore[misc]
    """Implements claw.sessiond.v1.SessionService on a :class:`Store`."""

    def __init__(self, store: Store, config: Config, owners: Owners, watch_hub: WatchHub | None = None) -> None:
        EdgeState.__init__(self)
        self.store = store
        self.config = config
        self.owners = owners
        self.watch_hub = watch_hub if watch_hub is not None else WatchHub()
        self._watch_contexts: dict[Watcher, grpc.aio.ServicerContext[Any, Any]] = {}
        self._stall_sweeper: asyncio.Task[None] | None = None
        self._lag_aborts: set[asyncio.Task[None]] = set()
        #: Watchers at the same place share one read and one encoding (see ``sharing.py``).
        self._watch_reads: SharedReads[tuple[str | None, list[tuple[int, pb.WatchResponse]], bool]] = SharedReads(
            self._read_watch_batch, lambda: self.watch_hub.generation
        )
        self.started = time.monotonic()
        #: Extra GetStats fields (request counts, commit figures), set by the daemon's metrics.
        self.stats_extra: Callable[[], Mapping[str, Any]] = dict

    @stream_edge
    async def Load(self, request: pb.LoadRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        check_workdir(request.workdir, required=True)
        trace_id = trace_id_of(request.trace_id, context)
        result = await self.store.load(
            request.session_id, request.workdir, trace_id, self.owners.is_live, repair=not request.no_repair
        )
        first = pb.LoadResponse(
            session=session_pb(result.session),
            in_flight=[
                pb.InFlightCall(
                    tool_call_id=c.tool_call_id,
                    assistant_position=c.assistant_position,
                    run_id=c.run_id,
                    owner_pid=self.owners.pid_of(c.run_id),
                )
                for c in result.in_flight
            ],
            trace_id=trace_id,
        )
        # A large repair's report (up to --max-open-tool-calls entries) is built in
        # slices, yielding to the loop between them.
        for i, r in enumerate(result.repairs, 1):
            first.repairs.add(tool_call_id=r.tool_call_id, assistant_position=r.assistant_position, position=r.position)
            if i % 512 == 0:
                await asyncio.sleep(0)
        # One chunk of at most LOAD_CHUNK_BYTES is built at a time, and a large
        # history is read page by page only as the client takes chunks (see reads.py).
        chunk = first
        size = chunk.ByteSize()
        pages: AsyncGenerator[list[Message], None] = (
            self.store.history_pages(result.cursor) if result.cursor is not None else _one_page(result.messages)
        )
        async with contextlib.aclosing(pages):
            async for page in pages:
                for n, message in enumerate(page, 1):
                    if n % LOAD_YIELD_EVERY == 0:
                        await asyncio.sleep(0)  # a page is up to 512 messages: let others in between
                    # Built in place (``append`` would copy each message once more).
                    item = chunk.messages.add()
                    fill_message_pb(item, message)
                    item_size = item.ByteSize() + 8
                    if size + item_size > LOAD_CHUNK_BYTES and len(chunk.messages) > 1:
                        del chunk.messages[-1]
                        yield chunk
                        chunk = pb.LoadResponse()
                        fill_message_pb(chunk.messages.add(), message)
                        size = 0
                    size += item_size
                del page
        chunk.done = True
        yield chunk

    @edge
    async def Append(self, request: pb.AppendRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await self._append(request, context)

    @stream_edge
    async def AppendStream(self, requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
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
        try:
            while True:
                if not queued:
                    if not reading:
                        break
                    wake.clear()
                    await wake.wait()
                    continue
                out = pb.AppendStreamResponse()
                out.replies.append(await queued[0])
                queued.popleft()
                window.release()
                while queued and queued[0].done():
                    out.replies.append(queued.popleft().result())
                    window.release()
                yield out
            await reader  # a broken request stream surfaces here
        finally:
            reader.cancel()

    async def _append_reply(
        self, request: pb.AppendRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.AppendReply:
        """One append of AppendStream: its result, or its error as Append would have reported it."""
        started = time.perf_counter()
        code = "OK"
        try:
            self.check_serving()
            return pb.AppendReply(result=await self._append(request, context))
        except Exception as exc:
            code, error = append_error(exc)
            return pb.AppendReply(error=error)
        finally:
            self.observe_rpc("Append", code, time.perf_counter() - started)

    async def _append(
        self, request: pb.AppendRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.AppendResponse:
        trace_id = trace_id_of(request.trace_id, context)
        if request.run_id:
            check_run_id(request.run_id)
            self.owners.check_run(request.run_id, request.session_id)
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
        )
        result = await self.store.append(job)
        return pb.AppendResponse(
            first_position=result.first_position,
            last_position=result.last_position,
            replayed=result.replayed,
            trace_id=result.trace_id,
            created_at=timestamp(result.created_at),
        )

    @edge
    async def RecordUsage(self, request: pb.RecordUsageRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        check_request_id(request.request_id)
        check_workdir(request.workdir, required=False)
        trace_id = trace_id_of(request.trace_id, context)
        delta = prepare_usage(
            UsageDelta(
                request.input_tokens,
                request.output_tokens,
                request.cache_read_tokens,
                request.cache_write_tokens,
                request.cost_micros,
                request.currency,
                request.model,
                request.pricing_version,
            )
        )
        result = await self.store.record_usage(
            request.session_id, delta, request_id=request.request_id, workdir=request.workdir, trace_id=trace_id
        )
        return pb.RecordUsageResponse(usage=usage_pb(result.usage), replayed=result.replayed, trace_id=result.trace_id)

    @edge
    async def Clear(self, request: pb.ClearRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        check_request_id(request.request_id)
        check_workdir(request.workdir, required=False)
        check_clear_expected(request.expected_last_position)
        trace_id = trace_id_of(request.trace_id, context)
        result = await self.store.clear(
            request.session_id,
            request_id=request.request_id,
            expected_last_position=request.expected_last_position,
            workdir=request.workdir,
            trace_id=trace_id,
        )
        return pb.ClearResponse(position=result.position, replayed=result.replayed, trace_id=result.trace_id)

    @edge
    async def RecordEvent(self, request: pb.RecordEventRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        check_request_id(request.request_id)
        kind = event_kind_of(request.kind)
        payload = parse_json_object(request.payload, "payload", self.config.max_message_bytes)
        trace_id = trace_id_of(request.trace_id, context)
        result = await self.store.record_event(
            request.session_id, kind, payload, request_id=request.request_id, trace_id=trace_id
        )
        return pb.RecordEventResponse(event_id=result.event_id, replayed=result.replayed, trace_id=result.trace_id)

    @stream_edge
    async def Attach(self, request: pb.AttachRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        check_attach(request.pid, request.label)
        run = self.owners.register(request.session_id, int(request.pid), request.label)
        try:
            yield pb.AttachResponse(run_id=run.run_id, lease_seconds=self.config.lease_s)
            await run.ended.wait()  # until the client goes away (cancellation) or shutdown
        finally:
            self.owners.unregister(run.run_id)

    @stream_edge
    async def Watch(self, request: pb.WatchRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
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
            (
                position,
                pb.WatchResponse(position=position, cleared=True, incarnation=tag)
                if message is None
                else pb.WatchResponse(message=message_pb(message), position=position, incarnation=tag),
            )
            for position, message in batch
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

    async def _end_lagged_watch(self, watcher: Watcher, context: grpc.aio.ServicerContext[Any, Any]) -> None:
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

    @edge
    async def ListSessions(self, request: pb.ListSessionsRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        limit = check_list_sessions(request.id_contains, request.limit)
        after = page_after(request.page_token) if request.page_token else None
        rows = await self.store.list_sessions(request.id_contains, limit, after)
        total = await self.store.count_sessions(request.id_contains)
        more = len(rows) == limit and len(await self.store.list_sessions(request.id_contains, 1, page_key(rows[-1])))
        return pb.ListSessionsResponse(
            next_page_token=page_token(rows[-1]) if more else "",
            total=total,
            sessions=[
                pb.SessionSummary(
                    id=r.id,
                    message_count=r.message_count,
                    usage=usage_pb(r.usage),
                    updated_at=timestamp(r.updated_at),
                    workdir=r.workdir,
                    last_position=r.last_position,
                )
                for r in rows
            ],
        )

    @edge
    async def GetUsage(self, request: pb.GetUsageRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        total, by_model = await self.store.usage_by_model(request.session_id)
        return pb.GetUsageResponse(
            total=usage_pb(total),
            by_model=[
                pb.ModelUsage(model=m.model, pricing_version=m.pricing_version, usage=usage_pb(m.usage))
                for m in by_model
            ],
        )

    @edge
    async def Delete(self, request: pb.DeleteRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        result = await self.store.delete(request.session_id)
        _log.info("event=session_deleted events=%d erasure_pending=%s", result.events_deleted, result.erasure_pending)
        return pb.DeleteResponse(events_deleted=result.events_deleted, erasure_pending=result.erasure_pending)

    @stream_edge
    async def Export(self, request: pb.ExportRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if request.session_id:
            check_session_id(request.session_id)
            ids = [request.session_id]
        else:
            ids = await self.store.session_ids()
        for session_id in ids:
            found = await self.store.export_start(session_id)
            if found is None:
                if request.session_id:
                    raise SessionNotFoundError(f"session {session_id!r} is not stored", session_id=session_id)
                continue  # deleted while the export ran
            header, cursor, max_event_id = found
            yield pb.ExportResponse(line=export.header_line(header))
            ordinal = 0
            # One page at a time, and the next page is read only once this one was
            # handed on. Each line is encoded just before it is sent: the cost is spread
            # over the stream's writes, so it never blocks the loop in one piece.
            # (Encoding in a worker thread measured worse: the thread holds the GIL in
            # 5 ms slices and every other request's thread hand-offs queue behind it.)
            #
            # Paced: after each page the stream pauses for EXPORT_PAUSE_RATIO times the
            # wall time the page took, so that an export (and the client draining it as
            # fast as it can) uses at most about half of the machine's time. On a busy
            # machine an export at full speed starved everything else, down to the disk's
            # journal thread: commits (fsync) of ordinary Appends took 20-130 ms.
            pages = self.store.export_pages(cursor, max_event_id)
            async with contextlib.aclosing(pages):
                started = time.perf_counter()
                async for rows in pages:
                    for row in rows:
                        ordinal += 1
                        yield pb.ExportResponse(line=_export_line(session_id, ordinal, row))
                    del rows
                    now = time.perf_counter()
                    await asyncio.sleep((now - started) * EXPORT_PAUSE_RATIO)
                    started = time.perf_counter()
            if ordinal != header.events:
                raise SequenceConflictError(
                    f"session {session_id!r} changed while it was exported ({ordinal} events sent, header says "
                    f"{header.events}); export it again",
                    expected=header.events,
                    actual=ordinal,
                )

    @edge
    async def Import(self, request: pb.ImportRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        mode = import_mode_of(request.mode)
        session = export.parse_session(request.lines)
        count = await self.store.import_session(session, mode)
        _log.info("event=session_imported mode=%s events=%d", mode, count)
        return pb.ImportResponse(session_id=session.header.session_id, events_imported=count)

    @edge
    async def GetStats(self, request: pb.GetStatsRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        figures = await self.store.figures()
        c = self.store.counters
        return pb.GetStatsResponse(
            sessions=figures["sessions"],
            events=figures["events"],
            database_bytes=figures["database_bytes"],
            wal_bytes=figures["wal_bytes"],
            schema_version=figures["schema_version"],
            request_records=figures["request_records"],
            appends=c.appends,
            messages_written=c.messages_written,
            repairs=c.repairs,
            write_failures=c.write_failures,
            commits=c.commits,
            active_watchers=self.watch_hub.count(),
            active_runs=self.owners.count(),
            pid=os.getpid(),
            uptime_seconds=time.monotonic() - self.started,
            version=__version__,
            **self.stats_extra(),
        )

    @stream_edge
    async def Backup(self, request: pb.BackupRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        path, figures = await self.store.backup()
        try:
            _log.info(
                "event=backup_copied sessions=%d events=%d bytes=%d", figures.sessions, figures.events, figures.bytes
            )
            fd = await asyncio.to_thread(os.open, path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as fh:
                first = pb.BackupFigures(
                    sessions=figures.sessions,
                    events=figures.events,
                    bytes=figures.bytes,
                    schema_version=figures.schema_version,
                )
                chunk = await asyncio.to_thread(fh.read, BACKUP_CHUNK_BYTES)
                yield pb.BackupResponse(data=chunk, figures=first)
                # At most one chunk in memory here; the next is read once this one was handed on.
                while chunk := await asyncio.to_thread(fh.read, BACKUP_CHUNK_BYTES):
                    yield pb.BackupResponse(data=chunk)
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    # -- cross-session reads for people: search, follow all, usage report

    @edge
    async def Search(self, request: pb.SearchRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        match = queries.fts_query(request.query, raw=request.raw)
        if request.session_id:
            check_session_id(request.session_id)
        role = role_filter_of(request.role)
        limit = check_search_limit(
            request.limit, max_hits=queries.MAX_SEARCH_HITS, default_hits=queries.DEFAULT_SEARCH_HITS
        )
        filters = queries.SearchFilter(
            session_id=request.session_id,
            role=role,
            since=time_bound(request, "since"),
            until=time_bound(request, "until"),
            include_cleared=request.include_cleared,
        )
        hits, truncated = await self.store.search(match, filters, limit)
        out = pb.SearchResponse(truncated=truncated)
        for h in hits:
            hit = out.hits.add(
                session_id=h.session_id,
                position=h.position,
                role=role_pb(h.role),
                rank=h.rank,
                cleared=h.cleared,
            )
            set_timestamp(hit.created_at, h.ts)
            for text, is_match in queries.split_snippet(h.snippet):
                hit.snippet.add(text=text, match=is_match)
        return out

    @stream_edge
    async def WatchAll(self, request: pb.WatchAllRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
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
                    pb.WatchAllResponse(event_id=event_id, session_id=sid, position=position, cleared=True)
                    if message is None
                    else pb.WatchAllResponse(
                        event_id=event_id, session_id=sid, position=position, message=message_pb(message)
                    ),
                )
                for event_id, sid, position, message in batch
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

    @edge
    async def GetUsageReport(
        self, request: pb.GetUsageReportRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Any:
        rows, truncated = await self.store.usage_report(
            time_bound(request, "since"), time_bound(request, "until"), by_session=request.by_session
        )
        return pb.GetUsageReportResponse(
            rows=[
                pb.UsageReportRow(
                    day=r.day,
                    model=r.model,
                    pricing_version=r.pricing_version,
                    session_id=r.session_id,
                    events=r.events,
                    usage=pb.Usage(
                        input_tokens=r.input_tokens,
                        output_tokens=r.output_tokens,
                        cache_read_tokens=r.cache_read_tokens,
                        cache_write_tokens=r.cache_write_tokens,
                        cost_micros=r.cost_micros,
                        currency=r.currency,
                    ),
                )
                for r in rows
            ],
            truncated=truncated,
        )


# ---------------------------------------------------------------- registration (request decoding)


def _decoder(cls: Any) -> Callable[[bytes], Any]:
    name = cls.DESCRIPTOR.full_name

    def decode(raw: bytes) -> Any:
        try:
            return cls.FromString(raw)
        except DecodeError as exc:
            raise InvalidRequestError(
                f"the request is not a valid {name}: {exc} (a string field holds invalid UTF-8, "
                "or the bytes are not this message)",
                reason=Reason.INVALID_MESSAGE,
            ) from exc

    return decode


def _handler(service: SessionService, method: Any) -> grpc.RpcMethodHandler[Any, Any]:
    """One RPC whose request bytes are decoded inside the handler, not by grpcio.

    A request that grpcio's own deserializer cannot decode (invalid UTF-8 in a
    string field, truncated or garbage bytes) ends as UNKNOWN "Unexpected
    DecodeError", before any servicer code runs. Decoding here instead lets the
    error edge refuse it as INVALID_ARGUMENT (reason INVALID_MESSAGE), counted
    in the metrics like any other refusal.
    """
    name = method.name
    decode = _decoder(getattr(pb, method.input_type.name))
    serialize = getattr(pb, method.output_type.name).SerializeToString
    servicer_method = getattr(service, name)

    async def decoded(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            return decode(raw)
        except InvalidRequestError as exc:
            service.observe_rpc(name, grpc.StatusCode.INVALID_ARGUMENT.name, 0.0)
            await abort(context, exc, name)
            raise  # unreachable: abort raises

    if method.client_streaming and method.server_streaming:

        async def stream_stream(raws: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            async def requests() -> AsyncIterator[Any]:
                async for raw in raws:
                    yield decode(raw)  # an InvalidRequestError ends the stream through the servicer's edge

            async with contextlib.aclosing(servicer_method(requests(), context)) as replies:
                async for reply in replies:
                    yield reply

        return grpc.stream_stream_rpc_method_handler(stream_stream, response_serializer=serialize)
    if method.server_streaming:

        async def unary_stream(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            request = await decoded(raw, context)
            async with contextlib.aclosing(servicer_method(request, context)) as replies:
                async for reply in replies:
                    yield reply

        return grpc.unary_stream_rpc_method_handler(unary_stream, response_serializer=serialize)
    if method.client_streaming:
        raise NotImplementedError(f"{name}: client-streaming RPCs are not wired here")

    async def unary_unary(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await servicer_method(await decoded(raw, context), context)

    return grpc.unary_unary_rpc_method_handler(unary_unary, response_serializer=serialize)


def add_to_server(service: SessionService, server: grpc.aio.Server) -> None:
    """Register every RPC of SessionService (in place of the generated ``add_…_to_server``).

    Same methods and serializers as the generated code, but requests arrive
    as bytes and are decoded by :func:`_handler`, so undecodable requests get
    INVALID_ARGUMENT instead of grpcio's UNKNOWN.
    """
    descriptor = pb.DESCRIPTOR.services_by_name["SessionService"]
    handlers = {m.name: _handler(service, m) for m in descriptor.methods}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(descriptor.full_name, handlers),))
