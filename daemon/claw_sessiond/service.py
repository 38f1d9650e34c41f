"""The SessionService servicer: proto ↔ domain, and THE error edge.

Only this module and ``server.py`` import grpc. Every RPC is wrapped by
:func:`_edge` (unary) or :func:`_stream_edge` (server streaming), which map
domain errors to status codes through one table, attach a
``google.rpc.ErrorInfo`` (domain ``claw-sessiond``, a :class:`Reason`), and
turn anything unexpected into INTERNAL with a generic message (the traceback
goes to the log, never to the client).
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import datetime as dt
import functools
import json
import logging
import os
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final, TypeVar

import grpc
from google.protobuf.message import DecodeError
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from claw_sessiond_client.errors import ERROR_DOMAIN

from . import __version__, events, export, queries
from .bounds import MAX_ERROR_MESSAGE_CHARS
from .config import Config
from .errors import (
    InvalidRequestError,
    PreconditionError,
    Reason,
    ResourceLimitError,
    SequenceConflictError,
    SessiondError,
    SessionNotFoundError,
    ShuttingDownError,
    StorageError,
    StorageFullError,
    ToolCallStateError,
    WatchLaggedError,
)
from .ids import check_request_id, check_session_id
from .model import ImportMode, Message, SessionMeta, ToolCall, Usage, UsageDelta
from .sharing import SharedReads
from .storage import BACKUP_CHUNK_BYTES, RunRegistry, Storage
from .validate import (
    check_attach,
    check_list_sessions,
    check_run_id,
    check_workdir,
    parse_json_object,
    prepare_append,
    prepare_usage,
)
from .watch import ALL_SESSIONS, Watcher, WatchHub

__all__ = ["STATUS_OF", "SessionService", "add_to_server", "status_for"]

_log = logging.getLogger("claw_sessiond.service")
T = TypeVar("T")

#: Domain error → gRPC status. Lookup walks the MRO, so subclasses inherit.
STATUS_OF: Final[Mapping[type[SessiondError], grpc.StatusCode]] = {
    InvalidRequestError: grpc.StatusCode.INVALID_ARGUMENT,
    SessionNotFoundError: grpc.StatusCode.NOT_FOUND,
    ToolCallStateError: grpc.StatusCode.FAILED_PRECONDITION,
    PreconditionError: grpc.StatusCode.FAILED_PRECONDITION,
    SequenceConflictError: grpc.StatusCode.ABORTED,
    WatchLaggedError: grpc.StatusCode.ABORTED,
    StorageFullError: grpc.StatusCode.RESOURCE_EXHAUSTED,
    ResourceLimitError: grpc.StatusCode.RESOURCE_EXHAUSTED,
    StorageError: grpc.StatusCode.UNAVAILABLE,
    ShuttingDownError: grpc.StatusCode.UNAVAILABLE,
    SessiondError: grpc.StatusCode.INTERNAL,
}

_ROLE_NAME: Final = {
    pb.ROLE_SYSTEM: "system",
    pb.ROLE_USER: "user",
    pb.ROLE_ASSISTANT: "assistant",
    pb.ROLE_TOOL: "tool",
}
_ROLE_ENUM: Final = {v: k for k, v in _ROLE_NAME.items()}
_TRACEPARENT: Final = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")
_MAX_TRACE_ID: Final = 128
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
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


def status_for(exc: SessiondError) -> grpc.StatusCode:
    """The status code of a domain error (walks the MRO)."""
    for cls in type(exc).__mro__:
        if cls in STATUS_OF:
            return STATUS_OF[cls]
    return grpc.StatusCode.INTERNAL


def _clip(text: str, limit: int = MAX_ERROR_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _rich_status(code: grpc.StatusCode, message: str, reason: str, metadata: Mapping[str, str]) -> Any:
    # Status and ErrorInfo travel in trailers, which clients cap: a message quoting a huge
    # input would turn into a client-side error about the trailer instead of this status.
    message = _clip(message)
    metadata = {_clip(k, 64): _clip(v, 256) for k, v in metadata.items()}
    info = error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN, metadata=dict(metadata))
    status = status_pb2.Status(code=code.value[0], message=message)
    status.details.add().Pack(info)
    return rpc_status.to_status(status)


async def _abort(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException, method: str) -> None:
    if isinstance(exc, SessiondError):
        code = status_for(exc)
        message, reason, metadata = exc.message, str(exc.reason), exc.metadata
        level = logging.WARNING if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED) else 10
        _log.log(level, "event=rpc_error method=%s code=%s reason=%s", method, code.name, reason)
    else:
        _log.exception("event=rpc_crashed method=%s", method)
        code, message, reason, metadata = (
            grpc.StatusCode.INTERNAL,
            "internal error in claw-sessiond (see the daemon's log)",
            str(Reason.INTERNAL),
            {},
        )
    s = _rich_status(code, message, reason, metadata)
    await context.abort(s.code, s.details, s.trailing_metadata)


RequestT = TypeVar("RequestT")


def _edge(
    fn: Callable[[SessionService, Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[T]],
) -> Callable[[SessionService, Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[T]]:
    """Wrap a unary RPC: shutdown check, metrics, error mapping."""
    method = fn.__name__

    @functools.wraps(fn)
    async def wrapper(self: SessionService, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> T:
        started = time.perf_counter()
        code = "OK"
        try:
            if self.draining:
                raise ShuttingDownError("claw-sessiond is shutting down; retry in a moment")
            return await fn(self, request, context)
        except asyncio.CancelledError:
            code = "CANCELLED"
            raise
        except BaseException as exc:
            code = status_for(exc).name if isinstance(exc, SessiondError) else "INTERNAL"
            if isinstance(exc, (grpc.aio.AbortError, GeneratorExit)):
                raise
            await _abort(context, exc, method)
            raise  # unreachable: abort raises
        finally:
            self.observe_rpc(method, code, time.perf_counter() - started)

    return wrapper


def _stream_edge(
    fn: Callable[[SessionService, Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[T]],
) -> Callable[[SessionService, Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[T]]:
    """Wrap a server-streaming RPC the same way."""
    method = fn.__name__

    @functools.wraps(fn)
    async def wrapper(self: SessionService, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        started = time.perf_counter()
        code = "OK"
        try:
            if self.draining:
                raise ShuttingDownError("claw-sessiond is shutting down; retry in a moment")
            async for item in fn(self, request, context):
                yield item
        except asyncio.CancelledError:
            code = "CANCELLED"
            raise
        except BaseException as exc:
            if isinstance(exc, (grpc.aio.AbortError, GeneratorExit)):
                raise
            code = status_for(exc).name if isinstance(exc, SessiondError) else "INTERNAL"
            await _abort(context, exc, method)
        finally:
            self.observe_rpc(method, code, time.perf_counter() - started)

    return wrapper


# ---------------------------------------------------------------- conversions


def _set_timestamp(out: Timestamp, value: str) -> None:
    # Hot path (every Append reply, every message of a Load): ``FromJsonString`` goes
    # through ``strptime`` (~14 µs); ``fromisoformat`` is C (~2 µs). Only our own
    # ``now_rfc3339`` shape (microseconds, "Z") takes it, so nothing is rounded.
    when = None
    if len(value) == 27 and value[-1] == "Z":
        try:
            when = dt.datetime.fromisoformat(value)
        except ValueError:
            when = None
    if when is None:
        out.FromJsonString(value)
        return
    delta = when - _EPOCH
    out.seconds = delta.days * 86400 + delta.seconds
    out.nanos = delta.microseconds * 1000


def timestamp(value: str | None) -> Timestamp | None:
    """RFC 3339 text → Timestamp (None stays None)."""
    if not value:
        return None
    ts = Timestamp()
    _set_timestamp(ts, value)
    return ts


def usage_pb(u: Usage) -> pb.Usage:
    """Domain usage → proto."""
    return pb.Usage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_tokens=u.cache_read_tokens,
        cache_write_tokens=u.cache_write_tokens,
        cost_micros=u.cost_micros,
        currency=u.currency,
    )


def fill_message_pb(out: pb.Message, m: Message) -> None:
    """Write a domain message into ``out`` (for example ``chunk.messages.add()``: no copy)."""
    out.role = _ROLE_ENUM.get(m.role, pb.ROLE_UNSPECIFIED)
    if m.content:
        out.content = m.content
    for c in m.tool_calls:
        out.tool_calls.add(id=c.id, name=c.name, arguments=c.arguments)
    if m.tool_call_id:
        out.tool_call_id = m.tool_call_id
    if m.name:
        out.name = m.name
    out.position = m.position
    if m.created_at:
        _set_timestamp(out.created_at, m.created_at)
    if m.trace_id:
        out.trace_id = m.trace_id
    if m.synthetic_reason == "interrupted":
        out.synthetic.reason = pb.SYNTHETIC_REASON_INTERRUPTED


def message_pb(m: Message) -> pb.Message:
    """Domain message → proto."""
    out = pb.Message()
    fill_message_pb(out, m)
    return out


def session_pb(s: SessionMeta) -> pb.Session:
    """Domain session metadata → proto."""
    return pb.Session(
        id=s.id,
        workdir=s.workdir,
        created_at=timestamp(s.created_at),
        updated_at=timestamp(s.updated_at),
        usage=usage_pb(s.usage),
        last_position=s.last_position,
        stored=s.stored,
        message_count=s.message_count,
    )


def message_from_pb(m: pb.Message) -> Message:
    """Proto message → domain (role "unknown(N)" for unknown enum values; validation refuses it)."""
    return Message(
        role=_ROLE_NAME.get(m.role, f"unknown({m.role})"),
        content=m.content,
        tool_calls=tuple(ToolCall(c.id, c.name, c.arguments) for c in m.tool_calls),
        tool_call_id=m.tool_call_id,
        name=m.name,
    )


def trace_id_of(request_trace_id: str, context: grpc.aio.ServicerContext[Any, Any]) -> str:
    """Trace id: the request's, else W3C ``traceparent`` metadata's, else a new one."""
    if request_trace_id:
        if len(request_trace_id) > _MAX_TRACE_ID or not request_trace_id.isprintable():
            raise InvalidRequestError(
                f"trace_id must be at most {_MAX_TRACE_ID} printable characters", reason=Reason.FIELD_TOO_LARGE
            )
        return request_trace_id
    for key, value in context.invocation_metadata() or ():
        if key == "traceparent" and isinstance(value, str):
            match = _TRACEPARENT.match(value.strip().lower())
            if match and match.group(1) != "0" * 32:
                return match.group(1)
    return os.urandom(16).hex()  # 128 random bits, like uuid4, at a third of its cost


async def _one_page(messages: list[Message]) -> AsyncGenerator[list[Message], None]:
    yield messages


def _export_line(session_id: str, ordinal: int, row: Any) -> str:
    """Encode one export row as its line (``ordinal``: its 1-based index in the session)."""
    return export.event_line(ordinal, session_id, events.decode_events([row])[0])


# ---------------------------------------------------------------- the servicer


class SessionService(pb_grpc.SessionServiceServicer):  # type: ignore[misc]
    """Implements claw.sessiond.v1.SessionService on a :class:`~claw_sessiond.storage.Storage`."""

    def __init__(self, store: Storage, config: Config, owners: RunRegistry, watch_hub: WatchHub | None = None) -> None:
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
        self.draining = False
        self.started = time.monotonic()
        self.rpc_observers: list[Callable[[str, str, float], None]] = []
        #: Extra GetStats fields (request counts, commit figures), set by the daemon's metrics.
        self.stats_extra: Callable[[], Mapping[str, Any]] = dict

    def observe_rpc(self, method: str, code: str, seconds: float) -> None:
        """Report one finished RPC to the metrics observers."""
        for observer in self.rpc_observers:
            observer(method, code, seconds)

    @_stream_edge
    async def Load(self, request: pb.LoadRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        check_workdir(request.workdir, required=True)
        trace_id = trace_id_of(request.trace_id, context)
        result = await self.store.load(request.session_id, request.workdir, trace_id, repair=not request.no_repair)
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

    @_edge
    async def Append(self, request: pb.AppendRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await self._append(request, context)

    @_stream_edge
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
            if self.draining:
                raise ShuttingDownError("claw-sessiond is shutting down; retry in a moment")
            return pb.AppendReply(result=await self._append(request, context))
        except SessiondError as exc:
            status = status_for(exc)
            code = status.name
            _log.debug("event=rpc_error method=AppendStream code=%s reason=%s", code, exc.reason)
            return pb.AppendReply(
                error=pb.AppendError(
                    code=status.value[0],
                    message=_clip(exc.message),
                    reason=str(exc.reason),
                    metadata={k: _clip(v, 256) for k, v in exc.metadata.items()},
                )
            )
        except Exception:
            code = "INTERNAL"
            _log.exception("event=rpc_crashed method=AppendStream")
            return pb.AppendReply(
                error=pb.AppendError(
                    code=grpc.StatusCode.INTERNAL.value[0],
                    message="internal error in claw-sessiond (see the daemon's log)",
                    reason=str(Reason.INTERNAL),
                )
            )
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

    @_edge
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

    @_edge
    async def Clear(self, request: pb.ClearRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        check_request_id(request.request_id)
        check_workdir(request.workdir, required=False)
        if request.expected_last_position < -1:
            raise InvalidRequestError("expected_last_position must be -1, 0 or a position")
        trace_id = trace_id_of(request.trace_id, context)
        result = await self.store.clear(
            request.session_id,
            request_id=request.request_id,
            expected_last_position=request.expected_last_position,
            workdir=request.workdir,
            trace_id=trace_id,
        )
        return pb.ClearResponse(position=result.position, replayed=result.replayed, trace_id=result.trace_id)

    @_edge
    async def RecordEvent(self, request: pb.RecordEventRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        check_request_id(request.request_id)
        kinds = {pb.EVENT_KIND_PERMISSION_DENIAL: "permission_denial", pb.EVENT_KIND_ERROR: "error"}
        if request.kind not in kinds:
            raise InvalidRequestError(
                "kind must be EVENT_KIND_PERMISSION_DENIAL or EVENT_KIND_ERROR", reason=Reason.INVALID_EVENT
            )
        payload = parse_json_object(request.payload, "payload", self.config.max_message_bytes)
        trace_id = trace_id_of(request.trace_id, context)
        result = await self.store.record_event(
            request.session_id, kinds[request.kind], payload, request_id=request.request_id, trace_id=trace_id
        )
        return pb.RecordEventResponse(event_id=result.event_id, replayed=result.replayed, trace_id=result.trace_id)

    @_stream_edge
    async def Attach(self, request: pb.AttachRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        check_attach(request.pid, request.label)
        run = self.owners.register(request.session_id, int(request.pid), request.label)
        try:
            yield pb.AttachResponse(run_id=run.run_id, lease_seconds=self.config.lease_s)
            await run.ended.wait()  # until the client goes away (cancellation) or shutdown
        finally:
            self.owners.unregister(run.run_id)

    @_stream_edge
    async def Watch(self, request: pb.WatchRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        session_id = request.session_id
        check_session_id(session_id)
        if request.after_position < 0:
            raise InvalidRequestError("after_position must be 0 (from the start) or a position")

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
            await _abort(context, exc, "Watch")
        except grpc.aio.AbortError:
            pass
        except Exception as gone:  # the client went away before reading the status
            _log.debug("event=watch_lagged_unsent error=%s", type(gone).__name__)

    def close_watches(self) -> None:
        """Shutdown: end every Watch stream with UNAVAILABLE (clients resume against the successor)."""
        self.watch_hub.end_all()

    @_edge
    async def ListSessions(self, request: pb.ListSessionsRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        limit = check_list_sessions(request.id_contains, request.limit)
        after = _page_after(request.page_token) if request.page_token else None
        rows = await self.store.list_sessions(request.id_contains, limit, after)
        total = await self.store.count_sessions(request.id_contains)
        more = len(rows) == limit and len(await self.store.list_sessions(request.id_contains, 1, _page_key(rows[-1])))
        return pb.ListSessionsResponse(
            next_page_token=_page_token(rows[-1]) if more else "",
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

    @_edge
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

    @_edge
    async def Delete(self, request: pb.DeleteRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        check_session_id(request.session_id)
        result = await self.store.delete(request.session_id)
        _log.info("event=session_deleted events=%d erasure_pending=%s", result.events_deleted, result.erasure_pending)
        return pb.DeleteResponse(events_deleted=result.events_deleted, erasure_pending=result.erasure_pending)

    @_stream_edge
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

    @_edge
    async def Import(self, request: pb.ImportRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        modes: dict[int, ImportMode] = {
            pb.IMPORT_MODE_UNSPECIFIED: "refuse",
            pb.IMPORT_MODE_REPLACE: "replace",
            pb.IMPORT_MODE_MERGE: "merge",
        }
        if request.mode not in modes:
            raise InvalidRequestError(f"unknown import mode {request.mode}", reason=Reason.INVALID_IMPORT)
        session = export.parse_session(request.lines)
        count = await self.store.import_session(session, modes[request.mode])
        _log.info("event=session_imported mode=%s events=%d", modes[request.mode], count)
        return pb.ImportResponse(session_id=session.header.session_id, events_imported=count)

    @_edge
    async def GetStats(self, request: pb.GetStatsRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
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
            **self.stats_extra(),
        )

    @_stream_edge
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

    @_edge
    async def Search(self, request: pb.SearchRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        match = queries.fts_query(request.query, raw=request.raw)
        if request.session_id:
            check_session_id(request.session_id)
        role = ""
        if request.role != pb.ROLE_UNSPECIFIED:
            if request.role not in _ROLE_NAME:
                raise InvalidRequestError(f"unknown role {request.role}", reason=Reason.INVALID_MESSAGE)
            role = _ROLE_NAME[request.role]
        if not 0 <= request.limit <= queries.MAX_SEARCH_HITS:
            raise InvalidRequestError(
                f"limit must be between 1 and {queries.MAX_SEARCH_HITS} (0: {queries.DEFAULT_SEARCH_HITS})",
                reason=Reason.FIELD_TOO_LARGE,
            )
        filters = queries.SearchFilter(
            session_id=request.session_id,
            role=role,
            since=_time_bound(request, "since"),
            until=_time_bound(request, "until"),
            include_cleared=request.include_cleared,
        )
        hits, truncated = await self.store.search(match, filters, request.limit or queries.DEFAULT_SEARCH_HITS)
        out = pb.SearchResponse(truncated=truncated)
        for h in hits:
            hit = out.hits.add(
                session_id=h.session_id,
                position=h.position,
                role=_ROLE_ENUM.get(h.role, pb.ROLE_UNSPECIFIED),
                rank=h.rank,
                cleared=h.cleared,
            )
            _set_timestamp(hit.created_at, h.ts)
            for text, is_match in queries.split_snippet(h.snippet):
                hit.snippet.add(text=text, match=is_match)
        return out

    @_stream_edge
    async def WatchAll(self, request: pb.WatchAllRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if request.after_event_id < 0 or not 0 <= request.last <= queries.MAX_FOLLOW_LAST:
            raise InvalidRequestError(
                f"after_event_id must be 0 or an event id, and last between 0 and {queries.MAX_FOLLOW_LAST}",
                reason=Reason.FIELD_TOO_LARGE,
            )
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

    @_edge
    async def GetUsageReport(
        self, request: pb.GetUsageReportRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Any:
        rows, truncated = await self.store.usage_report(
            _time_bound(request, "since"), _time_bound(request, "until"), by_session=request.by_session
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


def _time_bound(request: Any, field: str) -> str:
    """A request's optional Timestamp field as stored-time text ("" if unset)."""
    if not request.HasField(field):
        return ""
    try:
        when = getattr(request, field).ToDatetime(tzinfo=dt.UTC)
    except (ValueError, OverflowError) as exc:
        raise InvalidRequestError(f"{field} is not a valid time: {exc}", reason=Reason.INVALID_MESSAGE) from exc
    return str(when.isoformat(timespec="microseconds")).replace("+00:00", "Z")


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
            await _abort(context, exc, name)
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


#: A page token holds an RFC 3339 time and a session id (at most 256 bytes): base64 of that JSON is far shorter.
_MAX_PAGE_TOKEN_CHARS: Final = 1024


def _page_key(row: Any) -> tuple[str, str]:
    return (str(row.updated_at), str(row.id))


def _page_token(row: Any) -> str:
    """ListSessions' opaque cursor: the sort key of a page's last row."""
    return base64.urlsafe_b64encode(json.dumps(_page_key(row)).encode()).decode()


def _page_after(token: str) -> tuple[str, str]:
    """Decode a ``page_token``.

    Raises:
        InvalidRequestError: not a token ListSessions gave.
    """
    if len(token) > _MAX_PAGE_TOKEN_CHARS:
        raise InvalidRequestError("page_token is not a token ListSessions returned", reason=Reason.INVALID_MESSAGE)
    try:
        updated_at, session_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        if isinstance(updated_at, str) and isinstance(session_id, str):
            return updated_at, session_id
    except (ValueError, TypeError):
        pass
    raise InvalidRequestError("page_token is not a token ListSessions returned", reason=Reason.INVALID_MESSAGE)
