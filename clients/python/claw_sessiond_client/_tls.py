"""How a client reaches a daemon's ``--tcp`` port: TLS pinned to the daemon's certificate, then the token.

Any local user can bind the daemon's port while the daemon is down. So a
client never speaks plaintext over TCP and trusts one certificate only: the
one the daemon wrote to ``.claw/tcp-cert.pem`` at its start (its key never
leaves the daemon's memory). Until the TLS handshake has proven the listener
holds that key, nothing but a TLS ClientHello is sent: no token, no request.

The certificate is, in this order: the file ``tls_cert=`` names; the
``.claw/tcp-cert.pem`` of a workspace passed explicitly; the file
``$CLAW_TLS_CERT`` names. It is re-read whenever it changed (each start makes
a new one), before the first call and again after the daemon was
unreachable, and the channel is rebuilt when it did, so a long-lived client
follows restarts. Without a certificate a TCP client refuses before
connecting (:class:`~claw_sessiond_client.errors.UntrustedPeerError`).
Clients check the name :data:`~claw_sessiond_client.tcp.SERVER_NAME`, whatever address they dial.

Over a Unix socket nothing changes: plaintext, no token (the socket's
private folder and the peer check of :mod:`~claw_sessiond_client._peer` are
the credentials).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import grpc

from . import errors as E
from ._auth import TokenSource, WatchedFile, aio_interceptors, intercept, token_source
from .paths import claw_dir, folder_problem, workspace_owner
from .tcp import CERT_ENV, CERT_FILE, SERVER_NAME

__all__ = ["CERT_ENV", "CERT_FILE", "MAX_CERT_BYTES", "SERVER_NAME", "TLS_OPTIONS", "Transport"]

#: A larger file is not a certificate (the daemon's is under 1 KiB).
MAX_CERT_BYTES: Final = 64 * 1024
#: Channel options of a TCP channel: the name the certificate must carry.
TLS_OPTIONS: Final = (("grpc.ssl_target_name_override", SERVER_NAME),)
#: Words of grpc's error details when the TLS handshake failed (a certificate that is not the pinned one,
#: a listener that does not speak TLS).
_HANDSHAKE_FAILED: Final = ("handshake", "ssl", "tls", "certificate", "tsi_")
_HEALTH_CHECK: Final = "/grpc.health.v1.Health/Check"


def _cert_path(
    workspace: str | os.PathLike[str] | None, tls_cert: str | os.PathLike[str] | None, env: Mapping[str, str]
) -> Path | None:
    if tls_cert is not None:
        return Path(os.path.abspath(tls_cert))
    if workspace is not None:
        return claw_dir(Path(os.path.abspath(workspace))) / CERT_FILE
    named = env.get(CERT_ENV)
    return Path(os.path.abspath(named)) if named else None


class Transport:
    """The channels of one client: plaintext to a Unix socket; TLS pinned to the daemon's certificate,
    with the token, to a TCP address.

    Args:
        target: the client's gRPC target (``unix:…`` or a TCP address).
        workspace: the workspace passed explicitly (its ``.claw/`` holds the token and the certificate), or None.
        token: the ``token=`` argument.
        tls_cert: the ``tls_cert=`` argument (a file holding the daemon's certificate).
        env: the environment (default ``os.environ``).
    """

    def __init__(
        self,
        target: str,
        workspace: str | os.PathLike[str] | None,
        token: str | None,
        tls_cert: str | os.PathLike[str] | None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        environ: Mapping[str, str] = os.environ if env is None else env
        self.tcp = not target.startswith("unix:")
        self.tokens: TokenSource | None = token_source(target, workspace, token, environ)
        path = _cert_path(workspace, tls_cert, environ) if self.tcp else None
        self._cert = WatchedFile(path, MAX_CERT_BYTES) if path is not None else None
        #: The workspace whose ``.claw/`` the certificate comes from (checked as the endpoint file's folder is).
        self._workspace = Path(os.path.abspath(workspace)) if path is not None and workspace is not None else None
        if tls_cert is not None:
            self._workspace = None
        self._problem: str | None = None
        #: The certificate the current channel trusts (None: no channel yet, or none to trust).
        self.pinned: bytes | None = None

    @property
    def cert_path(self) -> Path | None:
        """The file the certificate is read from (None for a Unix socket, or when none was named)."""
        return self._cert.path if self._cert is not None else None

    def _folder_problem(self) -> str | None:
        """Why the workspace's ``.claw/`` cannot be trusted to hold the certificate (another user owns it, or
        others can write in it and so plant a certificate), or None."""
        if self._workspace is None:
            return None
        uids = {os.geteuid()} | ({workspace_owner(self._workspace)} if os.geteuid() == 0 else set())
        return folder_problem(claw_dir(self._workspace), uids)

    def _credentials(self) -> grpc.ChannelCredentials:
        self._problem = self._folder_problem()
        self.pinned = self._cert.read() if self._cert is not None and self._problem is None else None
        # No certificate: still TLS (never plaintext over TCP), and check_pinned refuses before any call.
        return grpc.ssl_channel_credentials(root_certificates=self.pinned)

    def channel(self, target: str, options: Sequence[tuple[str, Any]]) -> grpc.Channel:
        """A new blocking channel to ``target``."""
        if not self.tcp:
            return grpc.insecure_channel(target, options=options)
        secure = grpc.secure_channel(target, self._credentials(), options=(*options, *TLS_OPTIONS))
        return intercept(secure, self.tokens)

    def aio_channel(self, target: str, options: Sequence[tuple[str, Any]]) -> grpc.aio.Channel:
        """A new asyncio channel to ``target``."""
        if not self.tcp:
            return grpc.aio.insecure_channel(target, options=options)
        return grpc.aio.secure_channel(
            target, self._credentials(), options=(*options, *TLS_OPTIONS), interceptors=aio_interceptors(self.tokens)
        )

    def renewed(self) -> bool:
        """The certificate file changed since the current channel was built (a restarted daemon)."""
        return self._cert is not None and self._cert.read() != self.pinned

    def check_pinned(self, target: str) -> None:
        """Refuse a TCP target without a certificate to check the daemon against.

        Raises:
            UntrustedPeerError: no certificate (none named, or the file is missing or unreadable).
        """
        if not self.tcp or self.pinned is not None:
            return
        where = f"{self.cert_path} cannot be read" if self.cert_path is not None else "none was named"
        if self._problem is not None:
            where = self._problem
        raise E.UntrustedPeerError(
            f"refusing to talk to {target}: no certificate to check the daemon against ({where}); nothing was "
            f"sent. Over TCP a client trusts only the daemon's certificate: pass the workspace (its "
            f".claw/{CERT_FILE}), tls_cert=<file>, or set ${CERT_ENV}",
            reason=E.Reason.UNTRUSTED_PEER,
            metadata={"address": target},
        )

    def refusal(self, target: str, code: grpc.StatusCode, details: str, waited_s: float) -> E.SessiondError | None:
        """The error to raise when the health check that opens a TCP connection failed with ``code``
        (None: leave it to the call, e.g. nothing listens).

        ``UNAVAILABLE`` with a failed TLS handshake means the listener is not the daemon whose certificate
        this client holds; ``DEADLINE_EXCEEDED`` means the handshake never finished (a stopped daemon, or a
        listener that takes bytes and answers nothing).
        """
        if code == grpc.StatusCode.UNAVAILABLE and any(w in details.lower() for w in _HANDSHAKE_FAILED):
            return E.UntrustedPeerError(
                f"refusing to talk to {target}: the listener there did not prove it is the daemon (the TLS "
                f"handshake with the certificate of {self.cert_path} failed: {details}); nothing was sent",
                reason=E.Reason.UNTRUSTED_PEER,
                metadata={"address": target},
            )
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return E.DaemonNotRespondingError(
                f"{target} accepts connections but did not complete the TLS handshake within {waited_s:.1f} s "
                "(a stopped daemon, or a listener that is not the daemon); nothing was sent",
                reason=E.Reason.DEADLINE_EXCEEDED,
                metadata={"address": target, "waited_s": f"{waited_s:g}"},
            )
        return None

    def prove(self, channel: grpc.Channel, target: str, timeout_s: float) -> None:
        """Before anything else goes over a TCP channel: the listener completes the TLS handshake (a health
        check, which reveals nothing).

        Raises:
            UntrustedPeerError: no certificate, or the listener failed the handshake.
            DaemonNotRespondingError: the handshake did not finish within ``timeout_s``.
        """
        if not self.tcp:
            return
        self.check_pinned(target)
        try:
            channel.unary_unary(_HEALTH_CHECK, None, None)(b"", timeout=timeout_s)
        except grpc.RpcError as exc:
            err = self.refusal(target, exc.code(), exc.details() or "", timeout_s)
            if err is not None:
                raise err from None

    async def aio_prove(self, channel: grpc.aio.Channel, target: str, timeout_s: float) -> None:
        """:meth:`prove` on an asyncio channel."""
        if not self.tcp:
            return
        self.check_pinned(target)
        try:
            await channel.unary_unary(_HEALTH_CHECK, None, None)(b"", timeout=timeout_s)
        except grpc.RpcError as exc:
            err = self.refusal(target, exc.code(), exc.details() or "", timeout_s)
            if err is not None:
                raise err from None
