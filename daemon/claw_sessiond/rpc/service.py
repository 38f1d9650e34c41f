"""The RPC methods of ``claw.sessiond.v1.SessionService``, on a :class:`~claw_sessiond.storage.Storage`.

Each method checks its request (:mod:`claw_sessiond.validate`), converts it
(:mod:`.convert`), calls the store, and converts the result back. Every one
runs inside the error edge (:func:`.edge.edge`, :func:`.edge.stream_edge` or
:func:`.edge.answering_stream_edge`),
which maps domain errors to statuses; the edge wraps the methods here, and only
here. The service does Load and the small unary calls itself and hands each
other family to the module of its job, with that job's dependencies given
explicitly (no module reaches into the service):

- ``service_appends.py``: Append, AppendStream (:class:`.service_appends.Appends`);
- ``service_watch.py``: Watch, WatchAll and the stall sweeper (:class:`.service_watch.Watches`);
- ``service_runs.py``: Attach, EndRun, PingRun (:class:`.service_runs.Runs`);
- ``service_history.py``: Export, Import, Backup, Search, GetUsageReport (functions);
- ``service_sessions.py``: CreateSession, ForkSession, UpdateSession, GetScopeStates (functions);
- ``service_edits.py``: EditTail and DeleteEntries (functions).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc

from .. import __version__
from ..config import Config
from ..entries import check_items_format, check_load_window
from ..ids import check_request_id, check_session_id
from ..model import LoadResult, UsageDelta
from ..retention import WrittenSessions
from ..storage import RunRegistry, Storage, run_host
from ..validate import (
    check_clear_expected,
    check_list_sessions,
    check_workdir,
    page_after,
    page_key,
    page_token,
    parse_json_object,
    prepare_usage,
)
from ..validate_sessions import check_label_filter, check_scopes
from ..watch import WatchHub
from . import service_history as history
from . import service_sessions as sessions
from .convert import (
    event_kind_of,
    scope_state_pb,
    session_pb,
    time_bound,
    timestamp,
    trace_id_of,
    usage_pb,
)
from .edge import Context, EdgeState, StreamState, answering_stream_edge, edge, stream_edge
from .loading import LOAD_CHUNK_BYTES, LOAD_YIELD_EVERY, item_chunks, message_chunks, one_page
from .service_appends import Appends
from .service_edits import delete_entries, edit_tail
from .service_runs import Runs
from .service_watch import Watches

__all__ = ["LOAD_CHUNK_BYTES", "LOAD_YIELD_EVERY", "SessionService"]

_log = logging.getLogger("claw_sessiond.service")


async def _items_of(
    store: Storage, result: LoadResult, item_format: str
) -> AsyncGenerator[tuple[list[bytes], bool], None]:
    """A Load's items by pages, each with True if it is the last: the first page read with the Load, then its
    cursor's (``Storage.item_pages``)."""
    yield result.items, result.cursor is None
    if result.cursor is not None:
        async with contextlib.aclosing(store.item_pages(result.cursor, item_format)) as pages:
            async for page in pages:
                yield page


class SessionService(EdgeState, pb_grpc.SessionServiceServicer):  # type: ignore[misc]
    """Implements claw.sessiond.v1.SessionService on a :class:`~claw_sessiond.storage.Storage`."""

    def __init__(self, store: Storage, config: Config, owners: RunRegistry, watch_hub: WatchHub | None = None) -> None:
        super().__init__()
        self.store = store
        self.config = config
        self.owners = owners
        #: What this daemon wrote since start: noted before each write is submitted, spared by retention.
        self.written = WrittenSessions(enabled=config.retention_days > 0)
        self.watch_hub = watch_hub if watch_hub is not None else WatchHub()
        self.runs = Runs(config, owners)
        self.watches = Watches(store, config, self.watch_hub)
        self.appends = Appends(store, config, owners, self.runs, self, self.written)
        self.started = time.monotonic()
        #: Extra GetStats fields (request counts, commit figures), set by the daemon's metrics.
        self.stats_extra: Callable[[], Mapping[str, Any]] = dict

    def close_watches(self) -> None:
        """Shutdown: end every Watch stream with UNAVAILABLE (clients resume against the successor)."""
        self.watch_hub.end_all()

    def end_append_streams(self) -> None:
        """Shutdown (``draining`` set): each open AppendStream answers what it read, then ends."""
        self.appends.end_streams()

    @stream_edge
    async def Load(self, request: pb.LoadRequest, context: Context) -> Any:
        check_session_id(request.session_id)
        check_workdir(request.workdir, required=not request.no_repair)  # looking writes nothing: no workdir needed
        scopes = check_scopes(list(request.scopes), required=False)
        window = check_load_window(
            request.last,
            request.after_position,
            time_bound(request, "after_time"),
            before_position=request.before_position,
            client_ids=list(request.client_ids),
            client_id_prefix=request.client_id_prefix,
            max_ids=self.config.max_batch_messages,
        )
        item_format = check_items_format(request.items_format)
        trace_id = trace_id_of(request.trace_id, context)
        self.runs.confirm_owner(request.session_id)  # the kernel's word on the owner's process, before any repair
        result = await self.store.load(
            request.session_id,
            request.workdir,
            trace_id,
            repair=not request.no_repair,
            window=window,
            reply_only=True,
            items_format=item_format,
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
                    owner_label=self.owners.label_of(c.run_id),
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
        # One chunk (at most LOAD_CHUNK_BYTES) is built at a time, and a large history is read page by page
        # only as the client takes chunks (see storage/history_reads.py): rpc/loading.py.
        chunks: AsyncIterator[bytes]
        if item_format:
            chunks = item_chunks(first, _items_of(self.store, result, item_format))
        else:
            pages = self.store.history_pages(result.cursor) if result.cursor is not None else one_page(result.messages)
            chunks = message_chunks(first, pages)
        async with contextlib.aclosing(chunks):  # type: ignore[type-var]
            async for chunk in chunks:
                yield chunk

    @edge
    async def Append(self, request: pb.AppendRequest, context: Context) -> Any:
        return await self.appends.append(request, context)

    @answering_stream_edge
    def AppendStream(self, requests: Any, context: Context, state: StreamState) -> AsyncIterator[Any]:
        return self.appends.append_stream(requests, context, state)

    @edge
    async def EditTail(self, request: pb.EditTailRequest, context: Context) -> Any:
        return await edit_tail(self.store, self.config, self.owners, self.written, request, context)

    @edge
    async def DeleteEntries(self, request: pb.DeleteEntriesRequest, context: Context) -> Any:
        return await delete_entries(self.store, self.config, self.written, request, context)

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

    # -- the other families, each in the module of its job

    @stream_edge
    def Watch(self, request: pb.WatchRequest, context: Context) -> AsyncIterator[Any]:
        return self.watches.watch(request, context)

    @stream_edge
    def WatchAll(self, request: pb.WatchAllRequest, context: Context) -> AsyncIterator[Any]:
        return self.watches.watch_all(request, context)

    @stream_edge
    def Attach(self, request: pb.AttachRequest, context: Context) -> AsyncIterator[Any]:
        return self.runs.attach(request, context)

    @edge
    async def EndRun(self, request: pb.EndRunRequest, context: Context) -> Any:
        return await self.runs.end_run(request)

    @edge
    async def PingRun(self, request: pb.PingRunRequest, context: Context) -> Any:
        return await self.runs.ping_run(request)

    @stream_edge
    def Export(self, request: pb.ExportRequest, context: Context) -> AsyncIterator[Any]:
        return history.export_sessions(self.store, request)

    @edge
    async def Import(self, request: pb.ImportRequest, context: Context) -> Any:
        return await history.import_session(self.store, self.config, request)

    @stream_edge
    def Backup(self, request: pb.BackupRequest, context: Context) -> AsyncIterator[Any]:
        return history.backup(self.store)

    @edge
    async def Search(self, request: pb.SearchRequest, context: Context) -> Any:
        return await history.search(self.store, request)

    @edge
    async def GetUsageReport(self, request: pb.GetUsageReportRequest, context: Context) -> Any:
        return await history.usage_report(self.store, request)

    @edge
    async def CreateSession(self, request: pb.CreateSessionRequest, context: Context) -> Any:
        return await sessions.create_session(self.store, self.written, request, context)

    @edge
    async def ForkSession(self, request: pb.ForkSessionRequest, context: Context) -> Any:
        return await sessions.fork_session(self.store, self.written, request, context)

    @edge
    async def UpdateSession(self, request: pb.UpdateSessionRequest, context: Context) -> Any:
        return await sessions.update_session(self.store, self.written, request, context)

    @edge
    async def GetScopeStates(self, request: pb.GetScopeStatesRequest, context: Context) -> Any:
        return await sessions.get_scope_states(self.store, request)
