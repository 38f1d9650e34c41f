"""The client's status mapping (``_status``): a gRPC error becomes the documented exception.

Pure: each error is built as the daemon sends it (a ``google.rpc.Status`` with
an ``ErrorInfo`` detail in the ``grpc-status-details-bin`` trailer) or as the
transport reports it (a code and details, no trailer), and handed to the
mapping; no daemon runs.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from claw_sessiond_client import errors as E
from claw_sessiond_client._status import (
    append_stream_error,
    auto_retried,
    closed_error,
    error_from_rpc,
    error_from_status,
)
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb


class _CallError(grpc.RpcError):
    """A failed call as grpc hands it to the client: code, details and trailing metadata."""

    def __init__(self, code: grpc.StatusCode, details: str | None, trailing: Any = ()) -> None:
        self._code, self._details, self._trailing = code, details, trailing

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str | None:
        return self._details

    def trailing_metadata(self) -> Any:
        return self._trailing


def _daemon_error(
    code: grpc.StatusCode,
    details: str,
    reason: str,
    metadata: dict[str, str] | None = None,
    domain: str = E.ERROR_DOMAIN,
) -> _CallError:
    """An error as the daemon's edge returns it: ErrorInfo packed into the status details trailer."""
    info = error_details_pb2.ErrorInfo(reason=reason, domain=domain, metadata=metadata or {})
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code.value[0], message=details, details=[detail])
    return _CallError(code, details, (("grpc-status-details-bin", status.SerializeToString()),))


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (grpc.StatusCode.FAILED_PRECONDITION, "UNKNOWN_TOOL_CALL", E.ToolCallStateError),
        (grpc.StatusCode.FAILED_PRECONDITION, "TOOL_CALL_ALREADY_ANSWERED", E.ToolCallStateError),
        (grpc.StatusCode.FAILED_PRECONDITION, "RUN_ALREADY_OWNED", E.PreconditionError),
        (grpc.StatusCode.ABORTED, "SEQUENCE_CONFLICT", E.SequenceConflictError),
        (grpc.StatusCode.ABORTED, "WATCH_LAGGED", E.WatchLaggedError),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS", E.ResourceLimitError),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "STORAGE_FULL", E.StorageFullError),
        (grpc.StatusCode.UNAVAILABLE, "STORAGE_UNAVAILABLE", E.StorageUnavailableError),
        (grpc.StatusCode.UNAVAILABLE, "CORRUPT_DATABASE", E.CorruptDatabaseError),
        (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", E.ShuttingDownError),
        (grpc.StatusCode.NOT_FOUND, "SESSION_NOT_FOUND", E.SessionNotFoundError),
        (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_SESSION_ID", E.InvalidRequestError),
        (grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED", E.UnauthenticatedError),
        (grpc.StatusCode.INTERNAL, "INTERNAL", E.InternalError),
    ],
)
def test_the_reason_picks_the_class_and_travels_with_message_and_metadata(
    code: grpc.StatusCode, reason: str, cls: type[E.SessiondError]
) -> None:
    err = error_from_rpc(_daemon_error(code, "what went wrong", reason, {"expected": "3", "actual": "4"}))
    assert type(err) is cls
    assert err.reason == E.Reason(reason)
    assert err.message == str(err) == "what went wrong"
    assert err.metadata == {"expected": "3", "actual": "4"}


def test_a_reason_this_client_does_not_know_falls_back_to_the_code() -> None:
    err = error_from_rpc(_daemon_error(grpc.StatusCode.FAILED_PRECONDITION, "newer daemon", "SOMETHING_NEW"))
    assert type(err) is E.PreconditionError
    assert err.reason == E.PreconditionError.default_reason  # not a Reason: the class's own


def test_error_info_of_another_domain_is_not_read() -> None:
    foreign = _daemon_error(grpc.StatusCode.ABORTED, "someone else's", "SHUTTING_DOWN", domain="example.com")
    err = error_from_rpc(foreign)
    assert type(err) is E.SequenceConflictError  # by code (ABORTED), not by the foreign reason
    assert err.metadata == {}


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (grpc.StatusCode.INVALID_ARGUMENT, E.InvalidRequestError),
        (grpc.StatusCode.NOT_FOUND, E.SessionNotFoundError),
        (grpc.StatusCode.FAILED_PRECONDITION, E.PreconditionError),
        (grpc.StatusCode.ABORTED, E.SequenceConflictError),
        (grpc.StatusCode.UNAVAILABLE, E.DaemonUnavailableError),
        (grpc.StatusCode.DEADLINE_EXCEEDED, E.DeadlineError),
        (grpc.StatusCode.UNAUTHENTICATED, E.UnauthenticatedError),
        (grpc.StatusCode.PERMISSION_DENIED, E.InternalError),
        (grpc.StatusCode.UNKNOWN, E.InternalError),
    ],
)
def test_without_error_info_the_code_picks_the_class(code: grpc.StatusCode, cls: type[E.SessiondError]) -> None:
    err = error_from_rpc(_CallError(code, "transport says no"))
    assert type(err) is cls
    assert err.message == "transport says no"


def test_without_details_the_message_is_the_code_name() -> None:
    assert error_from_rpc(_CallError(grpc.StatusCode.UNAVAILABLE, None)).message == "UNAVAILABLE"


def test_a_message_the_transport_refused_as_too_large_is_an_invalid_request() -> None:
    err = error_from_rpc(_CallError(grpc.StatusCode.RESOURCE_EXHAUSTED, "Sent message larger than max"))
    assert type(err) is E.InvalidRequestError
    assert err.reason is E.Reason.FIELD_TOO_LARGE


def test_a_call_the_daemon_cancelled_while_stopping_is_unavailable_and_retryable() -> None:
    err = error_from_rpc(_CallError(grpc.StatusCode.CANCELLED, "Cancelled"))
    assert type(err) is E.DaemonUnavailableError
    assert err.reason is E.Reason.DAEMON_UNAVAILABLE
    assert err.message == "the daemon cancelled the call (it is probably stopping): Cancelled"
    assert auto_retried(err) and err.retryable


@pytest.mark.parametrize(
    "details",
    [
        "Unexpected <class 'google.protobuf.message.DecodeError'>: Error parsing message with type 'x'",
        "Error parsing message",
        "failed to parse request",
    ],
)
def test_a_request_the_daemon_could_not_decode_is_an_invalid_message(details: str) -> None:
    for code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL):
        err = error_from_rpc(_CallError(code, details))
        assert type(err) is E.InvalidRequestError
        assert err.reason is E.Reason.INVALID_MESSAGE
        assert err.message.startswith("the request could not be decoded (invalid UTF-8 in a string field?): ")


def test_an_append_stream_reply_error_maps_like_a_unary_one() -> None:
    reply = pb.AppendError(
        code=grpc.StatusCode.ABORTED.value[0],
        message="expected 3, at 4",
        reason="SEQUENCE_CONFLICT",
        metadata={"expected": "3", "actual": "4"},
    )
    err = append_stream_error(reply)
    assert type(err) is E.SequenceConflictError
    assert (err.message, err.reason, err.metadata) == (
        "expected 3, at 4",
        E.Reason.SEQUENCE_CONFLICT,
        {"expected": "3", "actual": "4"},
    )
    unknown = append_stream_error(pb.AppendError(code=999, message="?", reason=""))
    assert type(unknown) is E.InternalError


def test_error_from_status_prefers_the_reason_over_the_code() -> None:
    err = error_from_status(grpc.StatusCode.UNAVAILABLE, "stopping", "SHUTTING_DOWN", {})
    assert type(err) is E.ShuttingDownError
    assert type(error_from_status(grpc.StatusCode.UNAVAILABLE, "gone", "", {})) is E.DaemonUnavailableError


@pytest.mark.parametrize(
    ("err", "expected"),
    [
        (E.DaemonUnavailableError("x"), True),
        (E.ShuttingDownError("x"), True),
        (E.DeadlineError("x"), True),
        (E.DaemonNotRespondingError("x"), True),  # a DeadlineError, though the client raises it at once
        (E.StorageUnavailableError("x"), True),
        (E.StorageFullError("x"), False),
        (E.CorruptDatabaseError("x"), False),
        (E.SequenceConflictError("x"), False),
        (E.InvalidRequestError("x"), False),
        (E.WatchLaggedError("x"), False),
        (E.InternalError("x"), False),
        (E.ClientClosedError("x"), False),
        (E.ResourceLimitError("x"), False),  # transient, but a refused stream is the caller's to wait out
    ],
)
def test_only_outages_are_retried_with_the_same_request(err: E.SessiondError, expected: bool) -> None:
    assert auto_retried(err) is expected


def _every_error_class() -> list[type[E.SessiondError]]:
    found: list[type[E.SessiondError]] = []
    todo: list[type[E.SessiondError]] = [E.SessiondError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(c for c in cls.__subclasses__() if c.__module__ == E.__name__)
    return found


TRANSIENT = {
    E.DaemonUnavailableError,
    E.ShuttingDownError,
    E.StorageUnavailableError,
    E.DeadlineError,
    E.DaemonNotRespondingError,
    E.ResourceLimitError,
}


@pytest.mark.parametrize("cls", _every_error_class(), ids=lambda c: c.__name__)
def test_each_error_class_says_whether_it_is_transient(cls: type[E.SessiondError]) -> None:
    assert cls("x").retryable is (cls in TRANSIENT)
    assert cls.__name__ in E.__all__


def test_what_the_client_retries_itself_is_transient() -> None:
    for cls in _every_error_class():
        if auto_retried(cls("x")):
            assert cls("x").retryable, cls


def test_the_closed_client_error_says_what_to_do() -> None:
    err = closed_error()
    assert type(err) is E.ClientClosedError
    assert err.reason is E.Reason.CLIENT_CLOSED
    assert "create a new client" in err.message
