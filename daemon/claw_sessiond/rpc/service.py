"""The RPC methods of ``claw.sessiond.v1.SessionService``, on a :class:`~claw_sessiond.storage.Storage`.

Each method checks its request (:mod:`claw_sessiond.validate`), converts it
(:mod:`.convert`), calls the store, and converts the result back. Every one
runs inside the error edge (:func:`.edge.edge` or :func:`.edge.stream_edge`),
which maps domain errors to statuses. The methods that follow commits (Watch,
WatchAll) are in ``service_watch.py``; those that move whole histories or read
across sessions (Export, Import, Backup, Search, GetUsageReport) are in
``service_history.py``; live runs (Attach, EndRun, PingRun) in ``service_runs.py``; EditTail in
``service_edits.py``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Final

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc

from .. import __version__
from ..config import Config
from ..entries import check_load_window
from ..ids import check_request_id, check_session_id
from ..model import Message, UsageDelta
from ..retention import WrittenSessions
from ..sharing import SharedReads
from ..storage import RunRegistry, Storage, run_host
from ..validate import (
    check_clear_expected,
    check_list_sessions,
    check_run_id,
    check_workdir,
    page_after,
    page_key,
    page_token,
    parse_json_object,
    prepare_append,
    prepare_usage,
)
from ..validate_sessions import check_label_filter, check_scopes
from ..watch import Watcher, WatchHub
from .convert import (
    event_kind_of,
    message_from_pb,
    scope_state_pb,
    session_pb,
    time_bound,
    timestamp,
    tool_policy_of,
    trace_id_of,
    usage_pb,
)
from .edge import Context, VerifiedPids, append_error, edge, stream_edge
from .service_edits import EditRpcs
from .service_history import HistoryRpcs
from .service_runs import RunRpcs
from .service_sessions import SessionRpcs
from .service_watch import WatchCall, WatchPull, WatchRpcs
from .wire import DONE_FIELD, message_entry

__all__ = ["APPEND_STREAM_WINDOW", "LOAD_CHUNK_BYTES", "LOAD_YIELD_EVERY", "SessionService"]

_log = logging.getLogger("claw_sessiond.service")

#: Most appends of one AppendStream in flight at once (reading stops until replies go out).
APPEND_STREAM_WINDOW: Final = 256
#: AppendStream tasks still running (kept referenced until they finish).
_RUNNING: Final[set[asyncio.Task[Any]]] = set()
#: Keep each Load chunk well under the 4 MiB default receive limit.
LOAD_CHUNK_BYTES: Final = 1024 * 1024
#: Messages converted for a Load between looks at the clock (bounds one slice of loop time).
LOAD_YIELD_EVERY: Final = 32
#: Loop time a Load's conversion holds before it yields (looked at every LOAD_YIELD_EVERY messages).
LOAD_SLICE_S: Final = 0.001


async def _one_page(messages: list[Message]) -> AsyncGenerator[list[Message], None]:
    yield messages


def _chunk(head: pb.LoadResponse | None, entries: list[bytes]) -> bytes:
    """One Load chunk's wire bytes: the header fields (first chunk only), then the entries."""
    if head is not None:
        entries.insert(0, head.SerializeToString())
    return b"".join(entries)


class SessionService(WatchRpcs, HistoryRpcs, RunRpcs, EditRpcs, SessionRpcs, pb_grpc.SessionServiceServicer):  # type: ignore[misc]
    """Implements claw.sessiond.v1.SessionService on a :class:`Store`."""

    def __init__(self, store: Storage, config: Config, owners: RunRegistry, watch_hub: WatchHub | None = None) -> None:
        super().__init__()
        self.store = store
        self.config = config
        self.owners = owners
        #: What this daemon wrote since start: noted before each write is submitted, spared by retention.
        self.written = WrittenSessions(enabled=config.retention_days > 0)
        self.watch_hub = watch_hub if watch_hub is not None else WatchHub()
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
        self.started = time.monotonic()
        #: Extra GetStats fields (request counts, commit figures), set by the daemon's metrics.
        self.stats_extra: Callable[[], Mapping[str, Any]] = dict
        #: The wake-up of each open AppendStream (``end_append_streams``).
        self._append_streams: set[asyncio.Event] = set()

    @stream_edge
    async def Load(self, request: pb.LoadRequest, context: Context) -> Any:
        check_session_id(request.session_id)
        check_workdir(request.workdir, required=True)
        scopes = check_scopes(list(request.scopes), required=False)
        window = check_load_window(request.last, request.after_position, time_bound(request, "after_time"))
        trace_id = trace_id_of(request.trace_id, context)
        self.confirm_owner(request.session_id)  # the kernel's word on the owner's process, before any repair
        result = await self.store.load(
            request.session_id, request.workdir, trace_id, repair=not request.no_repair, window=window, reply_only=True
        )
        first = pb.LoadResponse(
            complete=result.complete,
            session=session_pb(result.session),
            in_flight=[
                pb.InFlightCall(
                    tool_call_id=c.tool_call_id,
                    assistant_position=c.assistant_position,
                    run_id=c.run_id,
                    owner_pid=self.owners.pid_of(c.run_id),
                    owner_host=run_host(self.owners, c.run_id),
                )
                for c in result.in_flight
            ],
            trace_id=trace_id,
            scope_states=[scope_state_pb(s) for s in await self.store.scope_states(scopes)] if scopes else [],
        )
        # A large repair's report (up to --max-open-tool-calls entries) is built in
        # slices, yielding to the loop between them.
        for i, r in enumerate(result.repairs, 1):
            first.repairs.add(tool_call_id=r.tool_call_id, assistant_position=r.assistant_position, position=r.position)
            if i % 512 == 0:
                await asyncio.sleep(0)
        # One chunk of at most LOAD_CHUNK_BYTES is built at a time, and a large
        # history is read page by page only as the client takes chunks (see storage/sqlite/reads.py).
        # Chunks are wire bytes: each entry encoded once (``wire.py``), the header fields first.
        parts: list[bytes] = []
        size = first.ByteSize()
        head: pb.LoadResponse | None = first
        pages: AsyncGenerator[list[Message], None] = (
            self.store.history_pages(result.cursor) if result.cursor is not None else _one_page(result.messages)
        )
        since = time.perf_counter()
        async with contextlib.aclosing(pages):
            async for page in pages:
                for n, message in enumerate(page, 1):
                    if n % LOAD_YIELD_EVERY == 0 and time.perf_counter() - since >= LOAD_SLICE_S:
                        await asyncio.sleep(0)  # a page is up to 512 messages: let others in between
                        since = time.perf_counter()
                    if head is not None and not parts:
                        first.start_position = message.position
                    entry = message_entry(message)
                    if size + len(entry) > LOAD_CHUNK_BYTES and parts:
                        yield _chunk(head, parts)
                        head, parts, size = None, [], 0
                    parts.append(entry)
                    size += len(entry)
                del page
        parts.append(DONE_FIELD)
        yield _chunk(head, parts)

    @edge
    async def Append(self, request: pb.AppendRequest, context: Context) -> Any:
        return await self._append(request, context)

    @stream_edge
    async def AppendStream(self, requests: Any, context: Context) -> Any:
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
                if self.draining and not ended:  # stopping: answer what was read, then end (end_append_streams)
                    reader.cancel()
                    ended, reading = True, False
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
            if not ended:
                await reader  # a broken request stream surfaces here
        finally:
            self._append_streams.discard(wake)
            reader.cancel()

    def end_append_streams(self) -> None:
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
            self.check_serving()
            return pb.AppendReply(result=await self._append(request, context))
        except Exception as exc:
            code, error = append_error(exc)
            return pb.AppendReply(error=error)
        finally:
            self.observe_rpc("Append", code, time.perf_counter() - started)

    async def _append(self, request: pb.AppendRequest, context: Context) -> pb.AppendResponse:
        trace_id = trace_id_of(request.trace_id, context)
        if request.run_id:
            check_run_id(request.run_id)
            if self.owners.get(request.run_id) is not None:
                self.owners.check_run(request.run_id, request.session_id)
            else:  # not live here: on a shared database perhaps another daemon's run (asked in SQL, pinged there)
                await self.owners.confirm_run(request.run_id, request.session_id, ping=True)
            self.renew_run(request.run_id)
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

    @edge
    async def RecordUsage(self, request: pb.RecordUsageRequest, context: Context) -> Any:
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
        self.written.note(request.session_id)
        result = await self.store.record_usage(
            request.session_id, delta, request_id=request.request_id, workdir=request.workdir, trace_id=trace_id
        )
        return pb.RecordUsageResponse(usage=usage_pb(result.usage), replayed=result.replayed, trace_id=result.trace_id)

    @edge
    async def Clear(self, request: pb.ClearRequest, context: Context) -> Any:
        check_session_id(request.session_id)
        check_request_id(request.request_id)
        check_workdir(request.workdir, required=False)
        check_clear_expected(request.expected_last_position)
        trace_id = trace_id_of(request.trace_id, context)
        self.written.note(request.session_id)
        result = await self.store.clear(
            request.session_id,
            request_id=request.request_id,
            expected_last_position=request.expected_last_position,
            workdir=request.workdir,
            trace_id=trace_id,
            erase=request.erase,
        )
        if request.erase and not result.replayed:
            _log.info("event=session_erased events=%d erasure_pending=%s", result.events_erased, result.erasure_pending)
        return pb.ClearResponse(
            position=result.position,
            replayed=result.replayed,
            trace_id=result.trace_id,
            events_erased=result.events_erased,
            erasure_pending=result.erasure_pending,
        )

    @edge
    async def RecordEvent(self, request: pb.RecordEventRequest, context: Context) -> Any:
        check_session_id(request.session_id)
        check_request_id(request.request_id)
        kind = event_kind_of(request.kind)
        payload = parse_json_object(request.payload, "payload", self.config.max_message_bytes)
        trace_id = trace_id_of(request.trace_id, context)
        self.written.note(request.session_id)
        result = await self.store.record_event(
            request.session_id, kind, payload, request_id=request.request_id, trace_id=trace_id
        )
        return pb.RecordEventResponse(event_id=result.event_id, replayed=result.replayed, trace_id=result.trace_id)

    @edge
    async def ListSessions(self, request: pb.ListSessionsRequest, context: Context) -> Any:
        limit = check_list_sessions(request.id_contains, request.limit)
        labels = check_label_filter(request.labels)
        after = page_after(request.page_token) if request.page_token else None
        rows = await self.store.list_sessions(request.id_contains, limit, after, labels)
        total = await self.store.count_sessions(request.id_contains, labels)
        more = len(rows) == limit and len(
            await self.store.list_sessions(request.id_contains, 1, page_key(rows[-1]), labels)
        )
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
                    labels=dict(r.labels),
                    created_at=timestamp(r.created_at),
                )
                for r in rows
            ],
        )

    @edge
    async def GetUsage(self, request: pb.GetUsageRequest, context: Context) -> Any:
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
    async def Delete(self, request: pb.DeleteRequest, context: Context) -> Any:
        check_session_id(request.session_id)
        result = await self.store.delete(request.session_id)
        _log.info("event=session_deleted events=%d erasure_pending=%s", result.events_deleted, result.erasure_pending)
        return pb.DeleteResponse(events_deleted=result.events_deleted, erasure_pending=result.erasure_pending)

    @edge
    async def GetStats(self, request: pb.GetStatsRequest, context: Context) -> Any:
        figures = await self.store.figures()
        c = self.store.counters
        return pb.GetStatsResponse(
            sessions=figures.sessions,
            events=figures.events,
            database_bytes=figures.stored_bytes,
            wal_bytes=figures.log_bytes,
            schema_version=figures.schema_version,
            request_records=figures.request_records,
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
            backend=self.config.database.backend,
            database=self.config.store_label,
            **self.stats_extra(),
        )
