"""The idle clock of ``serve --idle-exit-s``: counts SessionService calls in progress.

The daemon wraps each SessionService handler once, when it registers them
(:meth:`IdleTracker.track`): a server interceptor would run again on every
call (a coroutine and a rebuilt handler per call, on the path of every unary
Append). :meth:`IdleTracker.intercept_service`
does the same for a server that registers handlers it did not wrap.

GetStats (``status``, ``stats``, ``doctor``), health checks and reflection
do not count as use: looking at a daemon does not keep it alive. The
decision to exit is :func:`claw_sessiond.lifecycle.run`'s.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import grpc

__all__ = ["IdleTracker"]

_SERVICE_PREFIX: Final = "/claw.sessiond.v1.SessionService/"
#: Calls that only look at the daemon: they do not reset the idle clock.
_NEUTRAL: Final = frozenset({"GetStats"})


if TYPE_CHECKING:
    _Interceptor = grpc.aio.ServerInterceptor[Any, Any]
else:  # grpcio's class is not subscriptable at run time; grpc-stubs' is generic
    _Interceptor = grpc.aio.ServerInterceptor


class IdleTracker(_Interceptor):
    """Counts SessionService calls and streams in progress and remembers the last start or end of one."""

    def __init__(self, live_runs: Callable[[], int] = lambda: 0) -> None:
        self.in_progress = 0
        self.last_activity = time.monotonic()
        self.live_runs = live_runs

    def _enter(self) -> None:
        self.in_progress += 1
        self.last_activity = time.monotonic()

    def _exit(self) -> None:
        self.in_progress -= 1
        self.last_activity = time.monotonic()

    def idle_for(self) -> float:
        """Seconds without use (0 while a call, stream or run is live)."""
        if self.in_progress or self.live_runs():
            return 0.0
        return time.monotonic() - self.last_activity

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or not method.startswith(_SERVICE_PREFIX) or method[len(_SERVICE_PREFIX) :] in _NEUTRAL:
            return handler
        return self._wrap(handler)

    def track(self, name: str, handler: grpc.RpcMethodHandler[Any, Any]) -> grpc.RpcMethodHandler[Any, Any]:
        """SessionService method ``name``'s handler, counted as use (unchanged for GetStats)."""
        return handler if name in _NEUTRAL else self._wrap(handler)

    def _wrap(self, handler: grpc.RpcMethodHandler[Any, Any]) -> grpc.RpcMethodHandler[Any, Any]:
        kinds = {
            "unary_unary": grpc.unary_unary_rpc_method_handler,
            "unary_stream": grpc.unary_stream_rpc_method_handler,
            "stream_unary": grpc.stream_unary_rpc_method_handler,
            "stream_stream": grpc.stream_stream_rpc_method_handler,
        }
        for attr, make in kinds.items():
            behavior = getattr(handler, attr)
            if behavior is not None:
                wrapped = self._tracked(behavior)
                return make(
                    wrapped,
                    request_deserializer=handler.request_deserializer,
                    response_serializer=handler.response_serializer,
                )
        return handler

    def _tracked(self, behavior: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.isasyncgenfunction(behavior):

            async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
                self._enter()
                try:
                    async for item in behavior(request, context):
                        yield item
                finally:
                    self._exit()

            return stream

        async def call(request: Any, context: Any) -> Any:
            self._enter()
            try:
                return await behavior(request, context)
            finally:
                self._exit()

        return call
