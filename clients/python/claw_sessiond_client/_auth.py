"""The token a client sends to a daemon's ``--tcp`` port (``authorization: Bearer <token>``).

Over a Unix socket no token is sent: the socket's private folder is the
credential. Over TCP the token is, in this order: the ``token=`` argument;
``<workspace>/.claw/tcp-token`` when a workspace was passed explicitly and
the file can be read; ``$CLAW_TOKEN``. The file is re-read whenever it
changed (the daemon writes a fresh token at every start), so a long-lived
client follows restarts. A workspace is never guessed from the current
folder: that would send one workspace's token to whatever listens on the
address given.

The token goes only over TLS, after the daemon proved who it is
(:mod:`~claw_sessiond_client._tls` builds the channels).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import grpc

from .paths import claw_dir
from .tcp import TOKEN_ENV, TOKEN_FILE

__all__ = [
    "MAX_TOKEN_BYTES",
    "TOKEN_ENV",
    "TOKEN_FILE",
    "TokenSource",
    "WatchedFile",
    "aio_interceptors",
    "intercept",
    "token_source",
]


class WatchedFile:
    """A small file, re-read whenever it changed (inode, mtime, size).

    Args:
        path: the file.
        limit: a larger file reads as None (bounded: nothing unbounded is read into memory).
    """

    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self._limit = limit
        self._data: bytes | None = None
        self._seen: tuple[int, int, int] | None = None

    def read(self) -> bytes | None:
        """The file's bytes, or None (missing, unreadable, not a regular file, empty or over the limit).

        Opened without blocking (a FIFO planted there cannot hang the client), then checked to be a regular file.
        """
        try:
            st = os.stat(self.path)
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            if key != self._seen:
                fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                try:
                    regular = stat.S_ISREG(os.fstat(fd).st_mode)
                    data = os.read(fd, self._limit + 1) if regular else b""
                finally:
                    os.close(fd)
                self._data = data if 0 < len(data) <= self._limit else None
                self._seen = key
        except OSError:
            self._data, self._seen = None, None
        return self._data


#: A larger token file is not one (the daemon's is 44 bytes).
MAX_TOKEN_BYTES: Final = 4096


class TokenSource:
    """The token file of a workspace (re-read when it changes), else a fixed token.

    Args:
        token: used when there is no file or it cannot be read.
        path: a workspace's ``.claw/tcp-token``.
    """

    def __init__(self, token: str | None = None, path: Path | None = None) -> None:
        self._fallback = token
        self.path = path
        self._file = WatchedFile(path, MAX_TOKEN_BYTES) if path is not None else None

    def value(self) -> str | None:
        """The current token (None if there is none)."""
        data = self._file.read() if self._file is not None else None
        from_file = data.decode(errors="replace").strip() if data is not None else None
        return from_file or self._fallback

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The ``authorization`` entry to add to a call (empty without a token)."""
        token = self.value()
        return (("authorization", f"Bearer {token}"),) if token else ()


def token_source(
    target: str, workspace: str | os.PathLike[str] | None, token: str | None, env: Mapping[str, str] | None = None
) -> TokenSource | None:
    """Where a client to ``target`` gets its token; None for a Unix socket or when there is none."""
    if target.startswith("unix:"):
        return None
    environ = os.environ if env is None else env
    if token:
        return TokenSource(token=token)
    path = claw_dir(Path(os.path.abspath(workspace))) / TOKEN_FILE if workspace is not None else None
    if path is None and not environ.get(TOKEN_ENV):
        return None
    return TokenSource(token=environ.get(TOKEN_ENV) or None, path=path)


# The stubs make the interceptor classes generic; at run time they are not subscriptable.
if TYPE_CHECKING:
    _BaseUnaryUnary = grpc.UnaryUnaryClientInterceptor[Any, Any]
    _AioBaseUnaryUnary = grpc.aio.UnaryUnaryClientInterceptor[Any, Any]
    _BaseUnaryStream = grpc.UnaryStreamClientInterceptor[Any, Any]
    _AioBaseUnaryStream = grpc.aio.UnaryStreamClientInterceptor[Any, Any]
    _BaseStreamUnary = grpc.StreamUnaryClientInterceptor[Any, Any]
    _AioBaseStreamUnary = grpc.aio.StreamUnaryClientInterceptor[Any, Any]
    _BaseStreamStream = grpc.StreamStreamClientInterceptor[Any, Any]
    _AioBaseStreamStream = grpc.aio.StreamStreamClientInterceptor[Any, Any]
else:
    _BaseUnaryUnary = grpc.UnaryUnaryClientInterceptor
    _AioBaseUnaryUnary = grpc.aio.UnaryUnaryClientInterceptor
    _BaseUnaryStream = grpc.UnaryStreamClientInterceptor
    _AioBaseUnaryStream = grpc.aio.UnaryStreamClientInterceptor
    _BaseStreamUnary = grpc.StreamUnaryClientInterceptor
    _AioBaseStreamUnary = grpc.aio.StreamUnaryClientInterceptor
    _BaseStreamStream = grpc.StreamStreamClientInterceptor
    _AioBaseStreamStream = grpc.aio.StreamStreamClientInterceptor


class _Details(NamedTuple):
    method: str
    timeout: float | None
    metadata: Any
    credentials: Any
    wait_for_ready: bool | None
    compression: Any


def _with_token(details: Any, source: TokenSource) -> Any:
    extra = source.metadata()
    if not extra:
        return details
    metadata = tuple(details.metadata or ()) + extra
    return _Details(
        details.method,
        details.timeout,
        metadata,
        details.credentials,
        details.wait_for_ready,
        getattr(details, "compression", None),
    )


class _SyncAuth(
    _BaseUnaryUnary,
    _BaseUnaryStream,
    _BaseStreamUnary,
    _BaseStreamStream,
):
    def __init__(self, source: TokenSource) -> None:
        self._source = source

    def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return continuation(_with_token(details, self._source), request)

    def intercept_unary_stream(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return continuation(_with_token(details, self._source), request)

    def intercept_stream_unary(self, continuation: Callable[..., Any], details: Any, requests: Any) -> Any:
        return continuation(_with_token(details, self._source), requests)

    def intercept_stream_stream(self, continuation: Callable[..., Any], details: Any, requests: Any) -> Any:
        return continuation(_with_token(details, self._source), requests)


def intercept(channel: grpc.Channel, source: TokenSource | None) -> grpc.Channel:
    """``channel`` sending the token with every call (unchanged without a source)."""
    return channel if source is None else grpc.intercept_channel(channel, _SyncAuth(source))


def _aio_details(details: grpc.aio.ClientCallDetails, source: TokenSource) -> grpc.aio.ClientCallDetails:
    extra = source.metadata()
    if not extra:
        return details
    metadata = grpc.aio.Metadata(*tuple(details.metadata or ()), *extra)
    return grpc.aio.ClientCallDetails(
        details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
    )


class _AioUnaryUnary(_AioBaseUnaryUnary):
    def __init__(self, source: TokenSource) -> None:
        self._source = source

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_aio_details(details, self._source), request)


class _AioUnaryStream(_AioBaseUnaryStream):
    def __init__(self, source: TokenSource) -> None:
        self._source = source

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_aio_details(details, self._source), request)


class _AioStreamUnary(_AioBaseStreamUnary):
    def __init__(self, source: TokenSource) -> None:
        self._source = source

    async def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(_aio_details(details, self._source), requests)


class _AioStreamStream(_AioBaseStreamStream):
    def __init__(self, source: TokenSource) -> None:
        self._source = source

    async def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(_aio_details(details, self._source), requests)


def aio_interceptors(source: TokenSource | None) -> list[Any] | None:
    """Interceptors for an asyncio channel that send the token (None without a source)."""
    if source is None:
        return None
    return [_AioUnaryUnary(source), _AioUnaryStream(source), _AioStreamUnary(source), _AioStreamStream(source)]
