"""The error edge: domain errors become gRPC statuses here, through one table.

Every RPC of the servicer is wrapped by :func:`edge` (unary) or
:func:`stream_edge` (server streaming). The wrapper refuses calls while the
daemon drains, reports each finished call to the metrics observers, maps a
domain error to its status code through :data:`STATUS_OF` (walking the MRO,
so a subclass inherits its parent's code), attaches a ``google.rpc.ErrorInfo``
(domain ``claw-sessiond``, a :class:`Reason`), and turns anything unexpected
into INTERNAL with a generic message: the traceback goes to the log, never to
the client. ``asyncio.CancelledError`` passes through untouched; a stream cancelled
while every request it read had its reply (:class:`StreamState`, :func:`answering_stream_edge`) is the
client's own way to end it and counts as OK in the metrics, not CANCELLED.

AppendStream reports each append's error inside its reply instead of ending
the stream; :func:`append_error` builds that reply from the same table.

Must never: touch storage, or decide anything but how an error is reported.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final, TypeAlias, TypeVar

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.errors import ERROR_DOMAIN

from ..bounds import MAX_ERROR_MESSAGE_CHARS
from ..errors import (
    AlreadyExistsError,
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
from ..peers import verified_start

__all__ = [
    "INTERNAL_MESSAGE",
    "STATUS_OF",
    "UNVERIFIED_PEER",
    "Context",
    "EdgeState",
    "StreamState",
    "VerifiedPids",
    "abort",
    "answering_stream_edge",
    "append_error",
    "clip",
    "edge",
    "on_unix_socket",
    "share_peer",
    "status_for",
    "stream_edge",
]

# The logger keeps the name it had when this lived in service.py: log lines and the filters
# people wrote for them stay the same.
_log = logging.getLogger("claw_sessiond.service")
T = TypeVar("T")
Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]

#: Domain error → gRPC status. Lookup walks the MRO, so subclasses inherit.
STATUS_OF: Final[Mapping[type[SessiondError], grpc.StatusCode]] = {
    InvalidRequestError: grpc.StatusCode.INVALID_ARGUMENT,
    SessionNotFoundError: grpc.StatusCode.NOT_FOUND,
    ToolCallStateError: grpc.StatusCode.FAILED_PRECONDITION,
    PreconditionError: grpc.StatusCode.FAILED_PRECONDITION,
    AlreadyExistsError: grpc.StatusCode.ALREADY_EXISTS,
    SequenceConflictError: grpc.StatusCode.ABORTED,
    WatchLaggedError: grpc.StatusCode.ABORTED,
    StorageFullError: grpc.StatusCode.RESOURCE_EXHAUSTED,
    ResourceLimitError: grpc.StatusCode.RESOURCE_EXHAUSTED,
    StorageError: grpc.StatusCode.UNAVAILABLE,
    ShuttingDownError: grpc.StatusCode.UNAVAILABLE,
    SessiondError: grpc.StatusCode.INTERNAL,
}
#: What a client is told about an error that is not a domain error (the traceback is logged).
INTERNAL_MESSAGE: Final = "internal error in claw-sessiond (see the daemon's log)"
_DRAINING: Final = "claw-sessiond is shutting down; retry in a moment"


def status_for(exc: SessiondError) -> grpc.StatusCode:
    """The status code of a domain error (walks the MRO)."""
    for cls in type(exc).__mro__:
        if cls in STATUS_OF:
            return STATUS_OF[cls]
    return grpc.StatusCode.INTERNAL


def clip(text: str, limit: int = MAX_ERROR_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters, ending in "..." when cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _rich_status(code: grpc.StatusCode, message: str, reason: str, metadata: Mapping[str, str]) -> Any:
    # Status and ErrorInfo travel in trailers, which clients cap: a message quoting a huge
    # input would turn into a client-side error about the trailer instead of this status.
    message = clip(message)
    metadata = {clip(k, 64): clip(v, 256) for k, v in metadata.items()}
    info = error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN, metadata=dict(metadata))
    status = status_pb2.Status(code=code.value[0], message=message)
    status.details.add().Pack(info)
    return rpc_status.to_status(status)


async def abort(context: Context, exc: BaseException, method: str) -> None:
    """End the call with the status of ``exc`` (see the module docstring); always raises."""
    if isinstance(exc, SessiondError):
        code = status_for(exc)
        message, reason, metadata = exc.message, str(exc.reason), exc.metadata
        level = logging.WARNING if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED) else 10
        _log.log(level, "event=rpc_error method=%s code=%s reason=%s", method, code.name, reason)
    else:
        _log.exception("event=rpc_crashed method=%s", method)
        code, message, reason, metadata = (grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE, str(Reason.INTERNAL), {})
    s = _rich_status(code, message, reason, metadata)
    await context.abort(s.code, s.details, s.trailing_metadata)


def append_error(exc: Exception) -> tuple[str, pb.AppendError]:
    """One AppendStream item's error, as Append would have reported it: (status code name, error).

    Call it from the ``except`` block that caught ``exc`` (an unexpected
    error's traceback is logged).
    """
    if isinstance(exc, SessiondError):
        status = status_for(exc)
        _log.debug("event=rpc_error method=AppendStream code=%s reason=%s", status.name, exc.reason)
        return status.name, pb.AppendError(
            code=status.value[0],
            message=clip(exc.message),
            reason=str(exc.reason),
            metadata={k: clip(v, 256) for k, v in exc.metadata.items()},
        )
    _log.exception("event=rpc_crashed method=AppendStream")
    return "INTERNAL", pb.AppendError(
        code=grpc.StatusCode.INTERNAL.value[0], message=INTERNAL_MESSAGE, reason=str(Reason.INTERNAL)
    )


class EdgeState:
    """What the edge needs of a servicer: the draining switch and the observers of finished calls."""

    def __init__(self) -> None:
        self.draining = False
        self.rpc_observers: list[Callable[[str, str, float], None]] = []

    def check_serving(self) -> None:
        """Refuse a call while the daemon drains.

        Raises:
            ShuttingDownError: the daemon is draining (clients retry against its successor).
        """
        if self.draining:
            raise ShuttingDownError(_DRAINING)

    def observe_rpc(self, method: str, code: str, seconds: float) -> None:
        """Report one finished RPC to the metrics observers."""
        for observer in self.rpc_observers:
            observer(method, code, seconds)


S = TypeVar("S", bound=EdgeState)


def on_unix_socket(context: Context) -> bool:
    """The call came over the Unix socket (grpc names such peers ``unix:...``)."""
    try:
        return str(context.peer()).startswith("unix:")
    except Exception:
        return False


#: The share of every Unix-socket Watch whose caller gave no pid, or one the kernel did not confirm.
UNVERIFIED_PEER: Final = "unix:unverified"


class VerifiedPids:
    """The kernel's confirmations of declared pids (:func:`claw_sessiond.peers.verified_start`), shared.

    A confirmation is one netlink dump of the socket's connections and a look at the process's
    descriptors: many streams starting at once from one process (a client opening thousands of
    Watches) must not each pay it on a thread, starving the daemon. So one check per pid runs at a
    time (later callers await it) and its answer stands for :data:`TTL_S` seconds; at most
    :data:`MAX_PIDS` answers are kept (older ones are dropped first). An answer a little stale is
    no weaker than a fresh one: the check proves that the process holds a connection, not that
    this call came from it (docs/security.md).
    """

    TTL_S: Final = 2.0
    MAX_PIDS: Final = 4096

    def __init__(self, socket_path: Path) -> None:
        self._socket_path = socket_path
        self._known: dict[int, tuple[float, int]] = {}
        self._pending: dict[int, asyncio.Task[int]] = {}

    async def start_of(self, pid: int) -> int:
        """The start time of ``pid`` if the kernel confirms it is connected to the socket, else 0."""
        known = self._known.get(pid)
        if known is not None and known[0] > time.monotonic():
            return known[1]
        task = self._pending.get(pid)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._check(pid))
            self._pending[pid] = task
        return await asyncio.shield(task)

    async def _check(self, pid: int) -> int:
        try:
            start = await asyncio.to_thread(verified_start, pid, self._socket_path)
        finally:
            self._pending.pop(pid, None)
        if len(self._known) >= self.MAX_PIDS:
            now = time.monotonic()
            self._known = {p: k for p, k in self._known.items() if k[0] > now}
            while len(self._known) >= self.MAX_PIDS:
                del self._known[next(iter(self._known))]
        self._known[pid] = (time.monotonic() + self.TTL_S, start)
        return start


async def share_peer(context: Context, pid: int, pids: VerifiedPids) -> str:
    """The peer whose share of ``--max-watchers`` a Watch or WatchAll stream counts against.

    Over TCP grpc names the connection (``ipv4:127.0.0.1:54321``): one connection is one
    peer, and ``pid`` is ignored. On the Unix socket grpc names every caller ``unix:``, so
    the caller declares its process id (the request's ``pid``) and the kernel confirms it
    (:class:`VerifiedPids`: that process holds a connection to this socket): the peer is
    ``pid:<pid>:<start time>``, one process. A stream with no pid, or one not confirmed,
    counts against :data:`UNVERIFIED_PEER`, one share all such streams have together.
    """
    if not on_unix_socket(context):
        return str(context.peer())
    start = await pids.start_of(pid) if pid > 0 else 0
    return f"pid:{pid}:{start}" if start else UNVERIFIED_PEER


def edge(fn: Callable[[S, Any, Context], Awaitable[T]]) -> Callable[[S, Any, Context], Awaitable[T]]:
    """Wrap a unary RPC: shutdown check, metrics, error mapping."""
    method = fn.__name__

    @functools.wraps(fn)
    async def wrapper(self: S, request: Any, context: Context) -> T:
        started = time.perf_counter()
        code: str | None = "OK"
        try:
            self.check_serving()
            return await fn(self, request, context)
        except asyncio.CancelledError:
            code = "CANCELLED"
            raise
        except BaseException as exc:
            code = status_for(exc).name if isinstance(exc, SessiondError) else "INTERNAL"
            if isinstance(exc, (grpc.aio.AbortError, GeneratorExit)):
                raise
            # Counted before ``abort`` sends the status: a client that reads the metrics once it has its error
            # finds the call counted (the ``finally`` then has nothing left to count).
            self.observe_rpc(method, code, time.perf_counter() - started)
            code = None
            await abort(context, exc, method)
            raise  # unreachable: abort raises
        finally:
            if code is not None:
                self.observe_rpc(method, code, time.perf_counter() - started)

    return wrapper


class StreamState:
    """What a streaming handler tells its :func:`answering_stream_edge`: whether every request it has read
    has had its reply (``answered``). A client that cancels the stream then ends it the way clients end
    streams they are done with (closing their channel with the stream open): counted OK, not CANCELLED.

    Each call gets its own, passed to its handler as an argument: nothing of one call outlives it.
    """

    __slots__ = ("answered",)

    def __init__(self) -> None:
        self.answered = False


def stream_edge(fn: Callable[[S, Any, Context], AsyncIterator[T]]) -> Callable[[S, Any, Context], AsyncIterator[T]]:
    """Wrap a server-streaming RPC the same way."""
    return _stream_wrapper(fn.__name__, lambda self, request, context, _state: fn(self, request, context), fn)


def answering_stream_edge(
    fn: Callable[[S, Any, Context, StreamState], AsyncIterator[T]],
) -> Callable[[S, Any, Context], AsyncIterator[T]]:
    """Wrap a streaming RPC that reads a stream of requests: ``fn`` also gets the call's :class:`StreamState`,
    and a cancel while its ``answered`` is set counts as OK."""
    return _stream_wrapper(fn.__name__, fn, fn)


def _stream_wrapper(
    method: str, run: Callable[[S, Any, Context, StreamState], AsyncIterator[T]], fn: Callable[..., Any]
) -> Callable[[S, Any, Context], AsyncIterator[T]]:
    @functools.wraps(fn)
    async def wrapper(self: S, request: Any, context: Context) -> Any:
        started = time.perf_counter()
        code: str | None = "OK"
        state = StreamState()
        try:
            self.check_serving()
            async for item in run(self, request, context, state):
                yield item
        except asyncio.CancelledError:
            code = "OK" if state.answered else "CANCELLED"
            raise
        except BaseException as exc:
            if isinstance(exc, (grpc.aio.AbortError, GeneratorExit)):
                raise
            code = status_for(exc).name if isinstance(exc, SessiondError) else "INTERNAL"
            # Counted before ``abort`` sends the status: a client that reads the metrics once it has its error
            # finds the call counted (the ``finally`` then has nothing left to count).
            self.observe_rpc(method, code, time.perf_counter() - started)
            code = None
            await abort(context, exc, method)
        finally:
            if code is not None:
                self.observe_rpc(method, code, time.perf_counter() - started)

    return wrapper
