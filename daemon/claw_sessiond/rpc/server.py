"""Building the grpc.aio servers: options, registration, health, reflection, binding.

SessionService is registered with its own request decoding (see
:func:`add_to_server`), beside ``grpc.health.v1.Health`` and server
reflection. The Unix socket's folder is checked and a stale socket removed
(only if it is a socket) before bind, and the socket is made 0600 right after.
With ``--tcp`` a second server object serves the same servicers over TLS
(``tls.py``: a certificate made at each start, which clients pin) behind the
token check (``auth.py`` says why it must be a second one).

The process around these servers (the lock, sd_notify, signals, graceful
stop) is :mod:`claw_sessiond.daemon`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import stat
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import _async as reflection_aio
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.paths import folder_problem

from ..config import Config, parse_host_port
from ..endpoint import tcp_endpoint
from ..errors import InvalidRequestError, Reason, StartupError
from . import auth, tls
from .edge import Context, abort
from .idle import IdleTracker
from .service import SessionService

__all__ = ["NO_KEEPALIVE_MS", "SERVICE_NAME", "Servers", "add_to_server", "prepare_socket_path", "server_options"]

# The logger keeps the name it had when this lived in server.py (log lines stay the same).
_log = logging.getLogger("claw_sessiond.server")
SERVICE_NAME: Final = pb.DESCRIPTOR.services_by_name["SessionService"].full_name


#: grpc's largest keepalive interval (INT_MAX ms, about 24.8 days): in effect, no keepalive pings.
NO_KEEPALIVE_MS: Final = 2**31 - 1


def server_options(cfg: Config, *, tcp: bool = False) -> list[tuple[str, Any]]:
    """Channel arguments: the request size limit, and keepalive pings only where they are the last resort.

    On the **Unix socket** the daemon sends no keepalive pings (grpc's server
    default is a ping every 2 hours that closes the connection unanswered 20 s
    later): a client that exits or is killed has its socket closed by the
    kernel at once, and one that is only blocked (a busy event loop, SIGSTOP,
    a long synchronous tool) must keep its connection and so its run
    (``service_runs.py``). Pings are answered on the client's event loop in
    some languages (Node.js), so they cannot tell a blocked client from a dead one.

    Over **TCP** a vanished host leaves a half-open connection that nothing
    else reports, so pings stay as the last resort: a ping after ``lease_s / 2``
    seconds without reads, and the connection is closed if the ack does not
    come within another ``lease_s / 2`` (each at least 1 s): within
    ``max(lease_s, 2)`` seconds. grpcio 1.85 times a keepalive ping out after
    ``grpc.http2.ping_timeout_ms`` (default 60 s), *not* after
    ``grpc.keepalive_timeout_ms`` alone (measured), so both are set.
    """
    half_ms = max(1000, cfg.lease_s * 1000 // 2)
    # On the Unix socket no ping may ever time out: grpc also sends pings of its own (flow-control
    # "BDP" probes after data arrives), and an unanswered one closes the connection after
    # grpc.http2.ping_timeout_ms (default 60 s; measured: a client stopped right after an append
    # lost its connection when this was 1 s).
    ping_ms = half_ms if tcp else NO_KEEPALIVE_MS
    return [
        ("grpc.max_receive_message_length", cfg.max_request_bytes),
        ("grpc.keepalive_time_ms", ping_ms),
        ("grpc.keepalive_timeout_ms", ping_ms),
        ("grpc.http2.ping_timeout_ms", ping_ms),
        ("grpc.keepalive_permit_without_calls", 1 if tcp else 0),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_ping_interval_without_data_ms", 1000),
        ("grpc.http2.min_recv_ping_interval_without_data_ms", 1000),
        ("grpc.so_reuseport", 0),
    ]


def prepare_socket_path(path: Path) -> None:
    """Make sure the socket's folder is ours and private, and remove a stale socket (only if it is a socket).

    A fallback folder (``/tmp/claw-sessiond-<uid>`` above all) may have been
    created first by another user to receive the clients' messages: it is
    refused, naming its owner, never used or repaired.

    Raises:
        StartupError: the folder belongs to another user or others can write in it; a non-socket is in the way.
    """
    parent = path.parent
    uid = os.getuid()
    problem = folder_problem(parent, {uid})
    if problem is None and not os.path.lexists(parent):
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        problem = folder_problem(parent, {uid})
    if problem is not None:
        raise StartupError(problem)
    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise StartupError(f"{path}: exists and is not a socket; refusing to replace it")
    path.unlink()  # stale: we hold the lock, so no live daemon owns it


def _private_socket(path: Path) -> None:
    """chmod 0600 the socket just bound, after checking it is one (chmod follows links)."""
    info = path.lstat()
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        raise StartupError(f"{path}: is not the socket this daemon bound; refusing to change its mode")
    os.chmod(path, 0o600)


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


def _serializer(to_bytes: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """A reply's serializer: a reply already encoded (Load's chunks, ``wire.py``) goes out as is."""

    def serialize(reply: Any) -> bytes:
        return reply if type(reply) is bytes else to_bytes(reply)

    return serialize


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
    serialize = _serializer(getattr(pb, method.output_type.name).SerializeToString)
    servicer_method = getattr(service, name)

    async def decoded(raw: bytes, context: Context) -> Any:
        try:
            return decode(raw)
        except InvalidRequestError as exc:
            service.observe_rpc(name, grpc.StatusCode.INVALID_ARGUMENT.name, 0.0)
            await abort(context, exc, name)
            raise  # unreachable: abort raises

    if method.client_streaming and method.server_streaming:

        async def stream_stream(raws: AsyncIterator[bytes], context: Context) -> Any:
            async def requests() -> AsyncIterator[Any]:
                async for raw in raws:
                    yield decode(raw)  # an InvalidRequestError ends the stream through the servicer's edge

            async with contextlib.aclosing(servicer_method(requests(), context)) as replies:
                async for reply in replies:
                    yield reply

        return grpc.stream_stream_rpc_method_handler(stream_stream, response_serializer=serialize)
    if method.server_streaming:

        async def unary_stream(raw: bytes, context: Context) -> Any:
            request = await decoded(raw, context)
            async with contextlib.aclosing(servicer_method(request, context)) as replies:
                async for reply in replies:
                    yield reply

        return grpc.unary_stream_rpc_method_handler(unary_stream, response_serializer=serialize)
    if method.client_streaming:
        raise NotImplementedError(f"{name}: client-streaming RPCs are not wired here")

    async def unary_unary(raw: bytes, context: Context) -> Any:
        try:
            request = decode(raw)  # inline: no coroutine of its own on the path every unary call takes
        except InvalidRequestError:
            request = await decoded(raw, context)  # refuses it (raises)
        return await servicer_method(request, context)

    return grpc.unary_unary_rpc_method_handler(unary_unary, response_serializer=serialize)


def add_to_server(service: SessionService, server: grpc.aio.Server, idle: IdleTracker | None = None) -> None:
    """Register every RPC of SessionService (in place of the generated ``add_…_to_server``).

    Same methods and serializers as the generated code, but requests arrive
    as bytes and are decoded by :func:`_handler`, so undecodable requests get
    INVALID_ARGUMENT instead of grpcio's UNKNOWN. With ``idle``, each handler
    is wrapped once here to count as use (no per-call interceptor).
    """
    descriptor = pb.DESCRIPTOR.services_by_name["SessionService"]
    handlers = {m.name: _handler(service, m) for m in descriptor.methods}
    if idle is not None:
        handlers = {name: idle.track(name, h) for name, h in handlers.items()}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(descriptor.full_name, handlers),))


class _GenericOnly:
    """A server as the generated ``add_…_to_server`` functions see it: each service they add is served by its
    generic handler alone.

    Those functions add a service twice, as a generic handler and as registered methods. grpc.aio's server keeps
    a pending request per registered method and waits on them all again (``asyncio.wait``) after every call it
    takes, SessionService's too; health and reflection made that four more (a bare grpc.aio server, callgrind:
    0.56 -> 0.59 M instructions per call). The generic handler serves the same methods.
    """

    def __init__(self, srv: grpc.aio.Server) -> None:
        self._srv = srv

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler[Any, Any]]) -> None:
        self._srv.add_generic_rpc_handlers(handlers)

    def add_registered_method_handlers(self, service: str, handlers: Mapping[str, Any]) -> None:
        """Nothing: the generic handler added with them serves these methods."""


class Servers:
    """The daemon's gRPC side: the Unix-socket server, the ``--tcp`` one if asked for, and their health servicer.

    Built unbound and stopped; :meth:`bind_unix` and :meth:`bind_tcp` bind
    them (start-up errors name the socket or address), :meth:`start` starts
    them and reports SERVING.
    """

    def __init__(self, cfg: Config, service: SessionService, idle: IdleTracker) -> None:
        self.config = cfg
        self.service = service
        self.idle = idle
        # No interceptor on the Unix socket: any interceptor puts a coroutine on every call's path.
        self.unix = grpc.aio.server(options=server_options(cfg))
        self.health = health_aio.HealthServicer()
        self.tcp: grpc.aio.Server | None = None
        self.tcp_port: int | None = None
        self._register(self.unix)

    def _register(self, srv: grpc.aio.Server) -> None:
        add_to_server(self.service, srv, self.idle)  # decodes requests itself: undecodable bytes get INVALID_ARGUMENT
        generic: Any = _GenericOnly(srv)  # what the generated add_…_to_server functions use of a server
        health_pb2_grpc.add_HealthServicer_to_server(self.health, generic)
        names = (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME)
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(reflection_aio.ReflectionServicer(names), generic)

    def bind_unix(self, sock: Path) -> int:
        """Bind the Unix socket at ``sock`` (mode 0600); return its inode.

        Raises:
            StartupError: the folder is not ours, a non-socket is in the way, or bind failed.
        """
        try:
            prepare_socket_path(sock)
        except OSError as exc:
            raise StartupError(f"{sock}: {exc.strerror}") from exc
        if _add_port(self.unix, f"unix:{sock}") == 0:
            raise StartupError(f"{sock}: cannot bind the Unix socket")
        _private_socket(sock)
        return sock.lstat().st_ino

    def bind_tcp(self, address: str) -> int:
        """Write a fresh token and TLS certificate, then serve ``address`` over TLS behind the token; return the port.

        Raises:
            StartupError: the token or certificate cannot be written or the address cannot be bound.
        """
        cfg = self.config
        # Its own server object, so the token check applies to TCP only (auth.py says why).
        try:
            token_path, token = auth.write_token(cfg.claw_dir)
        except OSError as exc:
            raise StartupError(f"{cfg.claw_dir / auth.TOKEN_FILE}: cannot write: {exc.strerror}") from exc
        identity = tls.make_identity(address.rpartition(":")[0])
        try:
            cert_path = identity.write_certificate(cfg.claw_dir)
        except OSError as exc:
            raise StartupError(f"{cfg.claw_dir / tls.CERT_FILE}: cannot write: {exc.strerror}") from exc
        tcp_server = grpc.aio.server(options=server_options(cfg, tcp=True), interceptors=[auth.TokenInterceptor(token)])
        self._register(tcp_server)
        self.tcp = tcp_server
        # Asked of the OS first: grpc's own failure names no cause and prints a C-core log line.
        problem = _bind_problem(address)
        credentials = grpc.ssl_server_credentials([(identity.key_pem, identity.cert_pem)])
        tcp_port = 0 if problem else _add_port(tcp_server, address, credentials)
        if tcp_port == 0:
            problem = problem or _bind_problem(address) or "taken meanwhile by another process"
            raise StartupError(f"tcp {address}: cannot bind: {problem}")
        self.tcp_port = tcp_port
        bound = tcp_endpoint(address, tcp_port)  # the port it got, for ":0" (as the endpoint file says)
        _log.warning(
            "event=tcp_listening address=%s token_file=%s cert_file=%s (TLS; clients pin the certificate; token "
            "required)",
            bound,
            token_path,
            cert_path,
        )
        return tcp_port

    async def start(self) -> None:
        """Start serving, then report SERVING (overall and for SessionService)."""
        await self.unix.start()
        if self.tcp is not None:
            await self.tcp.start()
        await self.health.set("", health_pb2.HealthCheckResponse.SERVING)
        await self.health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)

    async def enter_graceful_shutdown(self) -> None:
        """Report NOT_SERVING on every health check (first step of a stop)."""
        await self.health.enter_graceful_shutdown()

    async def stop(self, grace_s: float) -> None:
        """Refuse new calls and give those in flight ``grace_s`` to finish."""
        await asyncio.gather(*(s.stop(grace_s) for s in (self.unix, self.tcp) if s is not None))


def _add_port(server: grpc.aio.Server, address: str, credentials: grpc.ServerCredentials | None = None) -> int:
    """Bind ``address`` (over TLS with ``credentials``); the port, or 0 if it could not be bound.

    grpcio 1.6x+ raises instead of returning 0.
    """
    try:
        if credentials is not None:
            return server.add_secure_port(address, credentials)
        return server.add_insecure_port(address)
    except RuntimeError:
        return 0


def _bind_problem(address: str) -> str | None:
    """Why ``host:port`` cannot be bound, in the operating system's words; None if it can be.

    The bind is tried on a plain socket (with ``SO_REUSEADDR``, as grpc binds)
    that is closed at once: "Address already in use", "Permission denied",
    "Cannot assign requested address", or the resolver's message for an
    unknown host. As with grpc, one bindable address of those the host
    resolves to is enough.
    """
    try:
        host, port = parse_host_port("tcp", address)
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"cannot resolve the host: {exc.strerror}"
    except ValueError as exc:  # ConfigError: validate() refuses it first; kept for a direct caller
        return str(exc)
    problems = []
    for family, kind, proto, _name, sockaddr in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(sockaddr)
            except OSError as exc:
                problems.append(exc.strerror or str(exc))
            else:
                return None
    return problems[0] if problems else "the host resolves to no address"
