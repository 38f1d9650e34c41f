"""Where the daemon is, and whether it may be trusted.

The target comes from an address, or from the workspace (searched upward for
``.claw/``): the socket its endpoint file names, else the path the daemon computes for it. Before anything is
sent over a Unix socket, :func:`verify_peer` checks that the socket's folder,
the socket and the process listening there belong to a trusted user.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
from pathlib import Path
from typing import Final

from . import errors as E
from .endpoint import discover_socket
from .paths import WORKSPACE_ENV, find_workspace, folder_problem, user_label, workspace_owner

__all__ = [
    "PEER_CHECK_TIMEOUT_S",
    "WORKSPACE_ENV",
    "resolve_target",
    "resolve_workspace",
    "trusted_uids",
    "unix_path",
    "verify_peer",
]


def resolve_workspace(workspace: str | os.PathLike[str] | None) -> Path:
    """The workspace a client talks to.

    A path argument, or the current folder, is searched upward for the
    nearest folder holding ``.claw/`` (:func:`~claw_sessiond_client.paths.find_workspace`),
    so a client started in a subfolder reaches the workspace's daemon instead
    of starting a second one with an empty history; another user's ``.claw``
    found there is refused. A path argument is named: root accepts a
    ``.claw`` of any owner in that very folder. Without a path argument,
    ``$CLAW_SESSIOND_WORKSPACE`` (when set) is used as is.
    """
    if workspace is None:
        explicit = os.environ.get(WORKSPACE_ENV)
        if explicit:
            return Path(os.path.abspath(explicit))
        return find_workspace(os.getcwd())
    return find_workspace(workspace, named=True)


def resolve_target(workspace: str | os.PathLike[str] | None, address: str | None) -> tuple[str, Path | None]:
    """The gRPC target and the workspace (None when connecting by address)."""
    if address:
        if address.startswith(("unix:", "dns:", "ipv4:", "ipv6:")):
            return address, None
        if address.startswith("/"):
            return f"unix:{address}", None
        return address, None
    ws = resolve_workspace(workspace)
    return f"unix:{discover_socket(ws, os.environ.get('XDG_RUNTIME_DIR'))}", ws


def unix_path(target: str) -> Path | None:
    """The socket path of a ``unix:`` target (``unix:/p`` or ``unix:///p``), else None."""
    if not target.startswith("unix:"):
        return None
    rest = target[5:]
    if rest.startswith("//"):
        rest = rest[2:]
    return Path(rest)


def trusted_uids(workspace: Path | None, socket_path: Path) -> set[int]:
    """The uids the daemon may run as: the caller's; for root also the workspace's owner.

    Root connecting by address alone (no workspace) also trusts the owner of
    the socket's folder: it named that exact path itself.
    """
    uid = os.geteuid()
    uids = {uid}
    if uid == 0:
        if workspace is not None:
            uids.add(workspace_owner(workspace))
        else:
            with contextlib.suppress(OSError):
                uids.add(socket_path.parent.lstat().st_uid)
    return uids


_UCRED: Final = struct.Struct("3i")  # struct ucred: pid, uid, gid
#: How long the peer check waits to connect (a listener whose backlog is full).
PEER_CHECK_TIMEOUT_S: Final = 5.0


def verify_peer(target: str, workspace: Path | None) -> None:
    """Check, before anything is sent, that the daemon at ``target`` is who it should be.

    For a Unix socket: its folder must be owned by a trusted uid
    (:func:`trusted_uids`) and writable by nobody else, the socket file must
    be owned by a trusted uid, and the process listening on it
    (``SO_PEERCRED`` of a plain connection made here first) must run as a
    trusted uid. grpc-python exposes no peer credentials, so grpc connects
    on its own afterwards. That check-then-connect window is safe because of
    the folder check: only a trusted uid can create, remove or rename entries
    in that folder, so the socket grpc reaches is one a trusted uid made.
    Nothing listening (no folder, no socket, connection refused) passes: the
    call then fails as unavailable (or auto-starts a daemon, checked again
    before use). TCP targets are not checked.

    Raises:
        UntrustedPeerError: the folder, the socket or the peer belongs to another user.
    """
    path = unix_path(target)
    if path is None:
        return
    uids = trusted_uids(workspace, path)
    problem = folder_problem(path.parent, uids)
    if problem is not None:
        raise E.UntrustedPeerError(f"refusing to talk to {path}: {problem}", reason=E.Reason.UNTRUSTED_PEER)
    try:
        info = path.lstat()
    except OSError:
        return
    if info.st_uid not in uids:
        raise E.UntrustedPeerError(
            f"refusing to talk to {path}: the socket is owned by {user_label(info.st_uid)}, not by "
            f"{' or '.join(user_label(u) for u in sorted(uids))}",
            reason=E.Reason.UNTRUSTED_PEER,
        )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as probe:
        probe.settimeout(PEER_CHECK_TIMEOUT_S)
        try:
            probe.connect(os.fspath(path))
        except OSError:
            return  # nothing (live) listens, or no permission: grpc reports it as unavailable
        pid, peer_uid, _gid = _UCRED.unpack(probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    if peer_uid not in uids:
        raise E.UntrustedPeerError(
            f"refusing to talk to {path}: the process listening there (pid {pid}) runs as {user_label(peer_uid)}, "
            f"not as {' or '.join(user_label(u) for u in sorted(uids))}; nothing was sent",
            reason=E.Reason.UNTRUSTED_PEER,
        )
