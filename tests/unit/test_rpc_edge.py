"""The error edge (``rpc/edge.py``) without a server: the status table, the ErrorInfo it sends, the wrappers.

The servicer context is the one stand-in here: a recorder of what ``abort``
was given, raising ``AbortError`` as grpc's own does. What is tested (the
table, the status and its detail, the wrappers' refusals and reports) is real.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from claw_sessiond import errors
from claw_sessiond.bounds import MAX_ERROR_MESSAGE_CHARS
from claw_sessiond.rpc.edge import (
    INTERNAL_MESSAGE,
    STATUS_OF,
    EdgeState,
    StreamState,
    answering_stream_edge,
    append_error,
    edge,
    status_for,
    stream_edge,
)
from claw_sessiond_client.errors import ERROR_DOMAIN, Reason

C = grpc.StatusCode

EXPECTED = [
    (errors.InvalidRequestError, C.INVALID_ARGUMENT),
    (errors.SessionNotFoundError, C.NOT_FOUND),
    (errors.ToolCallStateError, C.FAILED_PRECONDITION),
    (errors.PreconditionError, C.FAILED_PRECONDITION),
    (errors.AlreadyExistsError, C.ALREADY_EXISTS),
    (errors.SequenceConflictError, C.ABORTED),
    (errors.WatchLaggedError, C.ABORTED),
    (errors.StorageFullError, C.RESOURCE_EXHAUSTED),
    (errors.ResourceLimitError, C.RESOURCE_EXHAUSTED),
    (errors.StorageError, C.UNAVAILABLE),
    (errors.StorageUnavailableError, C.UNAVAILABLE),
    (errors.CorruptDatabaseError, C.UNAVAILABLE),
    (errors.ShuttingDownError, C.UNAVAILABLE),
    (errors.SessiondError, C.INTERNAL),
]


@pytest.mark.parametrize(("cls", "code"), EXPECTED, ids=[c.__name__ for c, _ in EXPECTED])
def test_each_domain_error_has_its_status(cls: type[errors.SessiondError], code: grpc.StatusCode) -> None:
    assert status_for(cls("x")) is code


def test_the_table_covers_every_domain_error_class_listed() -> None:
    listed = {cls for cls, _ in EXPECTED}
    assert set(STATUS_OF) <= listed
    for cls in listed:
        assert issubclass(cls, errors.SessiondError)


def test_a_subclass_takes_its_nearest_ancestors_status() -> None:
    class DeeperFull(errors.StorageFullError):
        pass

    class NewStorage(errors.StorageError):
        pass

    class Unlisted(errors.SessiondError):
        pass

    assert status_for(DeeperFull("x")) is C.RESOURCE_EXHAUSTED  # not StorageError's UNAVAILABLE
    assert status_for(NewStorage("x")) is C.UNAVAILABLE
    assert status_for(Unlisted("x")) is C.INTERNAL


# ---------------------------------------------------------------- AppendStream's per-item error


def test_append_error_carries_code_reason_and_clipped_text() -> None:
    exc = errors.InvalidRequestError("m" * 10_000, reason=Reason.FIELD_TOO_LARGE, field="v" * 1000)
    try:
        raise exc
    except errors.InvalidRequestError as caught:
        code, error = append_error(caught)
    assert code == "INVALID_ARGUMENT"
    assert error.code == C.INVALID_ARGUMENT.value[0]
    assert error.reason == "FIELD_TOO_LARGE"
    assert len(error.message) == MAX_ERROR_MESSAGE_CHARS and error.message.endswith("...")
    assert error.message.startswith("mmm")
    assert len(error.metadata["field"]) == 256 and error.metadata["field"].endswith("...")


def test_append_error_hides_an_unexpected_error_and_logs_it(caplog: pytest.LogCaptureFixture) -> None:
    try:
        raise ValueError("secret detail")
    except ValueError as caught:
        code, error = append_error(caught)
    assert code == "INTERNAL"
    assert error.code == C.INTERNAL.value[0]
    assert error.message == INTERNAL_MESSAGE and "secret" not in error.message
    assert error.reason == "INTERNAL"
    crashed = [r for r in caplog.records if "rpc_crashed" in r.getMessage()]
    assert crashed and crashed[0].exc_info is not None and "secret detail" in str(crashed[0].exc_info[1])


# ---------------------------------------------------------------- the wrappers


class _Aborted(grpc.aio.AbortError):
    pass


class _Context:
    """Records what the edge aborted with."""

    def __init__(self) -> None:
        self.aborted: tuple[Any, str, Any] | None = None

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> None:
        self.aborted = (code, details, trailing_metadata)
        raise _Aborted()

    def error_info(self) -> tuple[grpc.StatusCode, str, error_details_pb2.ErrorInfo]:
        assert self.aborted is not None
        code, details, trailers = self.aborted
        raw = dict(trailers)["grpc-status-details-bin"]
        status = status_pb2.Status.FromString(raw)
        assert status.code == code.value[0] and status.message == details
        info = error_details_pb2.ErrorInfo()
        assert status.details[0].Unpack(info)
        return code, details, info


class _Servicer(EdgeState):
    def __init__(self, exc: BaseException | None = None) -> None:
        super().__init__()
        self.exc = exc
        self.ran = 0
        self.seen: list[tuple[str, str]] = []
        self.states: list[StreamState] = []
        self.rpc_observers.append(lambda method, code, _s: self.seen.append((method, code)))

    @edge
    async def Unary(self, request: Any, context: Any) -> str:
        self.ran += 1
        if self.exc is not None:
            raise self.exc
        return f"ok {request}"

    @stream_edge
    async def Stream(self, request: Any, context: Any) -> Any:
        self.ran += 1
        yield 1
        if self.exc is not None:
            raise self.exc
        yield 2

    @answering_stream_edge
    async def Answering(self, request: Any, context: Any, state: StreamState) -> Any:
        self.states.append(state)
        assert not state.answered, "a call's state starts fresh"
        yield 1
        state.answered = request == "answered"
        await asyncio.Event().wait()  # the client's cancel ends it


async def test_a_unary_call_that_succeeds_is_reported_ok() -> None:
    svc = _Servicer()
    assert await svc.Unary("r", _Context()) == "ok r"
    assert svc.seen == [("Unary", "OK")]


async def test_a_domain_error_becomes_its_status_with_error_info() -> None:
    exc = errors.SequenceConflictError("expected 3, got 5", expected=3, actual=5)
    svc, ctx = _Servicer(exc), _Context()
    with pytest.raises(grpc.aio.AbortError):
        await svc.Unary("r", ctx)
    code, details, info = ctx.error_info()
    assert code is C.ABORTED and details == "expected 3, got 5"
    assert info.domain == ERROR_DOMAIN and info.reason == "SEQUENCE_CONFLICT"
    assert dict(info.metadata) == {"expected": "3", "actual": "5"}
    assert svc.seen == [("Unary", "ABORTED")]


async def test_an_unexpected_error_becomes_internal_without_its_text() -> None:
    svc, ctx = _Servicer(KeyError("private")), _Context()
    with pytest.raises(grpc.aio.AbortError):
        await svc.Unary("r", ctx)
    code, details, info = ctx.error_info()
    assert code is C.INTERNAL and details == INTERNAL_MESSAGE and "private" not in details
    assert info.reason == "INTERNAL"
    assert svc.seen == [("Unary", "INTERNAL")]


async def test_while_draining_calls_are_refused_before_the_method_runs() -> None:
    svc, ctx = _Servicer(), _Context()
    svc.draining = True
    with pytest.raises(grpc.aio.AbortError):
        await svc.Unary("r", ctx)
    code, _, info = ctx.error_info()
    assert code is C.UNAVAILABLE and info.reason == "SHUTTING_DOWN"
    assert svc.ran == 0
    stream_ctx = _Context()
    with pytest.raises(grpc.aio.AbortError):
        _ = [item async for item in svc.Stream("r", stream_ctx)]
    assert stream_ctx.error_info()[0] is C.UNAVAILABLE and svc.ran == 0
    assert svc.seen == [("Unary", "UNAVAILABLE"), ("Stream", "UNAVAILABLE")]


async def test_cancellation_passes_through_untouched() -> None:
    svc, ctx = _Servicer(asyncio.CancelledError()), _Context()
    with pytest.raises(asyncio.CancelledError):
        await svc.Unary("r", ctx)
    assert ctx.aborted is None
    assert svc.seen == [("Unary", "CANCELLED")]


async def test_a_cancel_counts_ok_only_while_the_calls_own_state_says_answered() -> None:
    svc = _Servicer()

    async def call(request: str) -> None:
        async for _ in svc.Answering(request, _Context()):
            pass

    for request in ("answered", "waiting", "answered", "waiting"):
        task = asyncio.ensure_future(call(request))
        for _ in range(100):  # bounded: the handler reaches its wait in a few loop turns
            if len(svc.states) == len(svc.seen) + 1 and svc.states[-1].answered == (request == "answered"):
                break
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert svc.seen == [("Answering", c) for c in ("OK", "CANCELLED", "OK", "CANCELLED")]
    assert len({id(s) for s in svc.states}) == 4, "each call has a state of its own"


async def test_a_stream_sends_what_it_had_then_ends_with_the_status() -> None:
    svc, ctx = _Servicer(errors.WatchLaggedError("fell behind", position=7)), _Context()
    got = []
    with pytest.raises(grpc.aio.AbortError):
        async for item in svc.Stream("r", ctx):
            got.append(item)
    assert got == [1]
    code, _, info = ctx.error_info()
    assert code is C.ABORTED and info.reason == "WATCH_LAGGED" and dict(info.metadata) == {"position": "7"}
    assert svc.seen == [("Stream", "ABORTED")]


async def test_a_long_message_and_metadata_are_clipped_for_the_trailers() -> None:
    svc, ctx = _Servicer(errors.InvalidRequestError("x" * 100_000, **{"k" * 100: "v" * 1000})), _Context()
    with pytest.raises(grpc.aio.AbortError):
        await svc.Unary("r", ctx)
    _, details, info = ctx.error_info()
    assert len(details) == MAX_ERROR_MESSAGE_CHARS and details.endswith("...")
    ((key, value),) = info.metadata.items()
    assert len(key) == 64 and len(value) == 256


# ---------------------------------------------------------------- every RPC of the service is in the edge


def test_every_rpc_of_the_proto_is_a_service_method_wrapped_in_the_edge() -> None:
    from claw_sessiond.rpc.service import SessionService
    from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

    async def unary(self: Any, request: Any, context: Any) -> None: ...

    async def streaming(self: Any, request: Any, context: Any) -> Any:
        yield None

    wrappers = {"unary": edge(unary).__code__, "stream": stream_edge(streaming).__code__}
    unwrapped = []
    for method in pb.DESCRIPTOR.services_by_name["SessionService"].methods:
        fn = getattr(SessionService, method.name, None)
        kind = "stream" if method.server_streaming else "unary"
        if fn is None or getattr(fn, "__code__", None) is not wrappers[kind]:
            unwrapped.append(f"{method.name} ({kind})")
    assert not unwrapped, f"RPCs not served through the error edge: {unwrapped}"
