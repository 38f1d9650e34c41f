"""The ``--tcp`` door: a bearer token in ``.claw/tcp-token``, checked on every call that arrives over TCP.

The Unix socket needs no token: it lives in ``.claw/`` (0700) with mode 0600,
so reaching it already proves the caller is the workspace's owner (or root).
A loopback TCP port proves nothing: every local user can connect. So the TCP
port is served by a second grpc server object that shares the servicers and
has :class:`TokenInterceptor`; grpc's aio interceptors do not see the peer
address, so one server could not tell the two doors apart.

The token: 32 random bytes (URL-safe base64, 43 characters), written at every
start, before the port is bound, to ``.claw/tcp-token`` (mode 0600, created
with ``O_EXCL | O_NOFOLLOW`` under a temporary name and renamed into place,
so a planted symlink is replaced, never followed). Fresh per start, not kept:
a token that leaked (sent to an impostor that held the port while the daemon
was down, copied into a container) stops working at the next restart, and
clients that read the file pick up the new one by themselves. Reading it
needs the owner's access to ``.claw/``, which already gives the database.

Callers send ``authorization: Bearer <token>``; the comparison is constant
time. A call without it, or with another, gets UNAUTHENTICATED (reason
``UNAUTHENTICATED``, ErrorInfo metadata ``problem``: ``missing`` or
``mismatch``) before any servicer code runs: nothing is read or written. All
of ``claw.sessiond.v1.SessionService`` and server reflection need it;
``grpc.health.v1.Health`` stays open, since it tells only whether a daemon
serves, which the open port already tells.

This module is part of the RPC edge (``rpc/``): it imports grpc and never
speaks SQL.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from claw_sessiond_client.errors import ERROR_DOMAIN, Reason
from claw_sessiond_client.tcp import TOKEN_FILE

from ..endpoint import write_private_file
from ..limits import Throttle

__all__ = ["OPEN_PREFIXES", "TOKEN_FILE", "TokenInterceptor", "write_token"]

_log = logging.getLogger("claw_sessiond.auth")
#: Methods served over TCP without a token (they reveal nothing the open port does not).
OPEN_PREFIXES: Final = ("/grpc.health.v1.Health/",)
_SCHEME: Final = "bearer "


def write_token(claw_dir: Path) -> tuple[Path, str]:
    """Create a fresh token and put it at ``claw_dir/tcp-token`` (0600); return the path and the token.

    Raises:
        OSError: the file cannot be written (the caller turns this into a start-up error).
    """
    token = secrets.token_urlsafe(32)
    return write_private_file(claw_dir, TOKEN_FILE, f"{token}\n".encode()), token


def _denial(problem: str) -> Any:
    info = error_details_pb2.ErrorInfo(
        reason=str(Reason.UNAUTHENTICATED), domain=ERROR_DOMAIN, metadata={"problem": problem}
    )
    text = (
        "this TCP port needs the daemon's token: send 'authorization: Bearer <token>' with the token from "
        f"<workspace>/.claw/{TOKEN_FILE} ({problem})"
    )
    status = status_pb2.Status(code=grpc.StatusCode.UNAUTHENTICATED.value[0], message=text)
    status.details.add().Pack(info)
    return rpc_status.to_status(status)


if TYPE_CHECKING:
    _ServerInterceptor = grpc.aio.ServerInterceptor[Any, Any]
else:  # the stubs make it generic; at run time it is not subscriptable
    _ServerInterceptor = grpc.aio.ServerInterceptor


class TokenInterceptor(_ServerInterceptor):
    """Refuses every call without ``authorization: Bearer <token>`` (except :data:`OPEN_PREFIXES`).

    Args:
        token: the expected token.
    """

    def __init__(self, token: str) -> None:
        self._expected = f"{_SCHEME}{token}".encode()
        self._throttle = Throttle()

    def _problem(self, metadata: Any) -> str | None:
        values = [v for k, v in metadata or () if k == "authorization"]
        if not values:
            return "missing"
        given = values[0].encode() if isinstance(values[0], str) else bytes(values[0])
        # Only the scheme is case-insensitive (RFC 9110 §11.1); compare_digest takes constant time.
        given = given[: len(_SCHEME)].lower() + given[len(_SCHEME) :]
        return None if len(values) == 1 and hmac.compare_digest(given, self._expected) else "mismatch"

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method = str(handler_call_details.method)
        if method.startswith(OPEN_PREFIXES):
            return await continuation(handler_call_details)
        problem = self._problem(handler_call_details.invocation_metadata)
        if problem is None:
            return await continuation(handler_call_details)
        if (left_out := self._throttle.admit(problem)) is not None:
            _log.warning(
                "event=tcp_unauthenticated method=%s problem=%s suppressed_since_last=%d", method, problem, left_out
            )
        handler: grpc.RpcMethodHandler[Any, Any] | None = await continuation(
            handler_call_details
        )  # None: no such method
        return _refusing(handler, _denial(problem))


def _refusing(like: grpc.RpcMethodHandler[Any, Any] | None, status: Any) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of the same shape as ``like`` that aborts at once (the request is never decoded)."""

    async def refuse(_request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort(status.code, status.details, status.trailing_metadata)

    streaming_in = bool(like is not None and like.request_streaming)
    streaming_out = bool(like is not None and like.response_streaming)
    if streaming_in and streaming_out:
        return grpc.stream_stream_rpc_method_handler(refuse)
    if streaming_in:
        return grpc.stream_unary_rpc_method_handler(refuse)
    if streaming_out:
        return grpc.unary_stream_rpc_method_handler(refuse)
    return grpc.unary_unary_rpc_method_handler(refuse)
