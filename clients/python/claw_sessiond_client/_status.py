"""Status mapping: a gRPC error (code + the daemon's ``ErrorInfo``) becomes a client exception.

The daemon attaches a ``google.rpc.ErrorInfo`` (domain ``claw-sessiond``) to
every error it returns; its ``reason`` picks the exception class, else the
status code does. Errors the daemon's code never saw (the transport refused a
message, a request could not be decoded, a graceful stop cancelled a call)
are recognised here too. :func:`auto_retried` says after which errors the client
sends the same request (same request id) again. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import grpc
from google.rpc import error_details_pb2, status_pb2

from . import errors as E
from .api.v1 import sessiond_pb2 as pb

__all__ = ["append_stream_error", "auto_retried", "closed_error", "error_from_rpc", "error_from_status"]


def closed_error() -> E.ClientClosedError:
    """The error of a call on a closed client."""
    return E.ClientClosedError(
        "this client is closed (close() was called or its with block ended); create a new client",
        reason=E.Reason.CLIENT_CLOSED,
    )


_BY_REASON: Final[dict[str, type[E.SessiondError]]] = {
    "UNKNOWN_TOOL_CALL": E.ToolCallStateError,
    "TOOL_CALL_ALREADY_ANSWERED": E.ToolCallStateError,
    "SEQUENCE_CONFLICT": E.SequenceConflictError,
    "WATCH_LAGGED": E.WatchLaggedError,
    "TOO_MANY_STREAMS": E.ResourceLimitError,
    "STORAGE_FULL": E.StorageFullError,
    "STORAGE_UNAVAILABLE": E.StorageUnavailableError,
    "CORRUPT_DATABASE": E.CorruptDatabaseError,
    "SHUTTING_DOWN": E.ShuttingDownError,
    "SESSION_NOT_FOUND": E.SessionNotFoundError,
    "CLIENT_ID_EXISTS": E.AlreadyExistsError,
    "UNAUTHENTICATED": E.UnauthenticatedError,
    "INTERNAL": E.InternalError,
}


_BY_CODE: Final[dict[grpc.StatusCode, type[E.SessiondError]]] = {
    grpc.StatusCode.INVALID_ARGUMENT: E.InvalidRequestError,
    grpc.StatusCode.NOT_FOUND: E.SessionNotFoundError,
    grpc.StatusCode.FAILED_PRECONDITION: E.PreconditionError,
    grpc.StatusCode.ALREADY_EXISTS: E.AlreadyExistsError,
    grpc.StatusCode.ABORTED: E.SequenceConflictError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: E.StorageFullError,
    grpc.StatusCode.UNAVAILABLE: E.DaemonUnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: E.DeadlineError,
    grpc.StatusCode.UNAUTHENTICATED: E.UnauthenticatedError,
}


def _error_info(trailing: Any) -> error_details_pb2.ErrorInfo | None:
    for key, value in trailing or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info) and info.domain == E.ERROR_DOMAIN:
                    return info
    return None


def error_from_rpc(exc: grpc.RpcError) -> E.SessiondError:
    """Map a gRPC error (sync or aio) to the client exception tree."""
    code: grpc.StatusCode = exc.code()
    details: str = exc.details() or code.name
    info = _error_info(exc.trailing_metadata())
    if info is None:
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            # The transport refused an oversized message before the daemon saw it.
            return E.InvalidRequestError(details, reason=E.Reason.FIELD_TOO_LARGE)
        if code == grpc.StatusCode.CANCELLED:
            # This library never cancels a unary call, so the daemon did: a graceful stop cancels the
            # calls it had received but not yet started (measured: a few per SIGTERM under load). The
            # write may or may not have committed; a retry with the same request id settles it.
            return E.DaemonUnavailableError(
                f"the daemon cancelled the call (it is probably stopping): {details}",
                reason=E.Reason.DAEMON_UNAVAILABLE,
            )
        # grpcio reports a request its protobuf layer cannot decode as UNKNOWN "Unexpected <class
        # 'google.protobuf.message.DecodeError'>: Error parsing message ..." (no ErrorInfo: the daemon's
        # code never ran). Note "parsing" does not contain "parse".
        lowered = details.lower()
        decode_failed = "decodeerror" in lowered or "error parsing" in lowered or "parse" in lowered
        if code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL) and decode_failed:
            return E.InvalidRequestError(
                f"the request could not be decoded (invalid UTF-8 in a string field?): {details}",
                reason=E.Reason.INVALID_MESSAGE,
            )
        return _BY_CODE.get(code, E.InternalError)(details)
    return error_from_status(code, details, info.reason, info.metadata)


def error_from_status(code: grpc.StatusCode, details: str, reason: str, metadata: Mapping[str, str]) -> E.SessiondError:
    """Map a status code + ErrorInfo reason (a unary error, or an AppendStream reply's error) to an exception."""
    cls = _BY_REASON.get(reason) or _BY_CODE.get(code, E.InternalError)
    try:
        reason_enum: E.Reason | None = E.Reason(reason)
    except ValueError:
        reason_enum = None
    return cls(details, reason=reason_enum, metadata=dict(metadata))


_CODE_OF_NUMBER: Final[dict[int, grpc.StatusCode]] = {c.value[0]: c for c in grpc.StatusCode}


def append_stream_error(e: pb.AppendError) -> E.SessiondError:
    """The exception for one failed AppendStream reply."""
    return error_from_status(_CODE_OF_NUMBER.get(e.code, grpc.StatusCode.UNKNOWN), e.message, e.reason, e.metadata)


def auto_retried(err: E.SessiondError) -> bool:
    """Errors after which the client itself sends the same request (same request id) again, within its window.

    The transient ones (:attr:`~claw_sessiond_client.errors.SessiondError.retryable`), except a
    refused stream slot (``ResourceLimitError``): waiting for one is the caller's decision.
    """
    return err.retryable and not isinstance(err, E.ResourceLimitError)
