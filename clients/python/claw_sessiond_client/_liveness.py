"""Why nothing answers: no daemon at all, one starting or stopping, or one that accepts but is hung.

A call that failed as unavailable or past its deadline is looked into here
(the socket, the workspace lock and its holder, a health check on a fresh
connection), so the client can say at once that no daemon runs (and how to
start one) or that it does not answer (naming its pid), instead of retrying
in vain. Only blocking I/O: the asyncio client runs these in a thread.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Final

import grpc

from . import errors as E
from ._peer import PEER_CHECK_TIMEOUT_S, unix_path
from .paths import claw_dir

__all__ = [
    "CONNECT_TIMEOUT_S",
    "HEALTH_CHECK_METHOD",
    "HUNG_CHECK_S",
    "LOCK_NAME",
    "LOG_NAME",
    "accepts_connections",
    "answers_within",
    "health_ping",
    "hung_error",
    "lock_holder",
    "lock_path_for",
    "no_daemon_error",
    "not_responding_error",
    "ping_verdict",
    "socket_state",
]


#: How long a new connection to a daemon that accepts it may take to answer (the HTTP/2 handshake)
#: before the client reports it as not responding (:class:`~claw_sessiond_client.errors.DaemonNotRespondingError`).
CONNECT_TIMEOUT_S: Final = 5.0
#: How long the check after a call's deadline waits for a fresh connection to the daemon to answer.
HUNG_CHECK_S: Final = 1.0
LOCK_NAME: Final = "sessiond.lock"
LOG_NAME: Final = "sessiond.log"


def lock_path_for(target: str, workspace: Path | None) -> Path | None:
    """The workspace lock file of the daemon at ``target``, when it can be known.

    From the workspace, else from a socket at ``<workspace>/.claw/sessiond.sock``.
    """
    if workspace is not None:
        return claw_dir(workspace) / LOCK_NAME
    path = unix_path(target)
    if path is not None and path.parent.name == ".claw":
        return path.parent / LOCK_NAME
    return None


def lock_holder(lock: Path) -> int | None:
    """The pid holding the daemon's ``flock`` on ``lock`` (0 if held by an unknown pid), or None if free.

    Read from ``/proc/locks`` (Linux), which does not touch the lock: a probe
    ``flock`` here could make a daemon starting at that instant fail to take
    it. Elsewhere the pid the daemon writes into the file is checked alive.
    """
    try:
        info = os.stat(lock)
    except OSError:
        return None
    key = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            table = f.read()
    except OSError:
        table = None
    if table is not None:
        for line in table.splitlines():
            parts = line.split()
            # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2147763 0 EOF"; blocked waiters have "->" after the number.
            if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == key:
                return int(parts[4]) if parts[4].isdigit() else 0
        return None
    try:
        text = lock.read_text(errors="replace").strip()
    except OSError:
        return None
    if not text.isdigit():
        return None
    try:
        os.kill(int(text), 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return int(text)


def socket_state(path: Path) -> str:
    """``missing``, ``refused`` (a socket file nobody listens on), ``accepts``, or ``error`` (anything else)."""
    if not os.path.lexists(path):
        return "missing"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as probe:
        probe.settimeout(PEER_CHECK_TIMEOUT_S)
        try:
            probe.connect(os.fspath(path))
        except FileNotFoundError:
            return "missing"
        except ConnectionRefusedError:
            return "refused"
        except OSError:
            return "error"
    return "accepts"


def _workspace_of(target: str, workspace: Path | None) -> Path | None:
    if workspace is not None:
        return workspace
    lock = lock_path_for(target, None)
    return lock.parent.parent if lock is not None else None


def no_daemon_error(
    target: str, workspace: Path | None, autostart_hint: bool = True
) -> E.DaemonUnavailableError | None:
    """The error to raise at once when no daemon runs for ``target``, or None when a retry may help.

    No daemon: the socket is missing, or refuses connections (left by a
    crash), and nobody holds the workspace lock. A held lock means a daemon
    is starting or stopping (transient). Without a known lock (a TCP or a
    bare socket address) nothing can be concluded: None.
    """
    path = unix_path(target)
    lock = lock_path_for(target, workspace)
    if path is None or lock is None:
        return None
    state = socket_state(path)
    if state not in ("missing", "refused") or lock_holder(lock) is not None:
        return None
    ws = _workspace_of(target, workspace)
    where = f"no socket at {path}" if state == "missing" else f"{path} is left from a daemon that is gone"
    return E.DaemonUnavailableError(
        f"no claw-sessiond runs for {ws} ({where}); start one with: claw-sessiond serve --workspace {ws}"
        + (", or use autostart=True" if autostart_hint else ""),
        reason=E.Reason.DAEMON_UNAVAILABLE,
        metadata={"workspace": str(ws), "socket": str(path)},
    )


def accepts_connections(target: str) -> bool:
    """Something listens on ``target``'s Unix socket (always False for other targets)."""
    path = unix_path(target)
    return path is not None and socket_state(path) == "accepts"


def not_responding_error(target: str, workspace: Path | None, waited_s: float) -> E.DaemonNotRespondingError:
    """The error for a daemon that accepts connections but did not answer within ``waited_s``."""
    ws = _workspace_of(target, workspace)
    lock = lock_path_for(target, workspace)
    pid = lock_holder(lock) if lock is not None else None
    who = f"claw-sessiond pid {pid}" if pid else "claw-sessiond"
    where = f" for {ws}" if ws is not None else f" at {target}"
    log = f"; see {claw_dir(ws) / LOG_NAME}" if ws is not None else ""
    metadata = {"waited_s": f"{waited_s:g}"}
    if pid:
        metadata["pid"] = str(pid)
    return E.DaemonNotRespondingError(
        f"{who}{where} accepts connections but did not answer within {waited_s:.1f} s (stopped? overloaded?){log}",
        reason=E.Reason.DEADLINE_EXCEEDED,
        metadata=metadata,
    )


#: The daemon's health check, called with raw bytes (an empty ``HealthCheckRequest`` is ``b""``): the
#: client distribution does not depend on grpcio-health-checking.
HEALTH_CHECK_METHOD: Final = "/grpc.health.v1.Health/Check"


def ping_verdict(code: grpc.StatusCode) -> bool | None:
    """What a health check that failed with ``code`` says (see :func:`health_ping`).

    False: no answer in time (DEADLINE_EXCEEDED). True: an answer (any other
    error but UNAVAILABLE). None: UNAVAILABLE, to be tried again while the
    socket still accepts connections.
    """
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return False
    if code != grpc.StatusCode.UNAVAILABLE:
        return True
    return None


def health_ping(channel: grpc.Channel, target: str, timeout_s: float) -> bool:
    """False when the daemon at ``target`` accepts connections but does not answer a health check within ``timeout_s``.

    A stopped daemon's kernel still accepts connections (the listen backlog),
    and gRPC may even report the channel ready, so only a round trip tells
    whether the process answers. Any reply, or an error other than
    UNAVAILABLE / DEADLINE_EXCEEDED, is an answer; UNAVAILABLE while the
    socket still accepts (gRPC gave up waiting for the daemon's first HTTP/2
    frame) is tried again until ``timeout_s``; a socket that stops accepting
    is left to the caller's own error path (True).
    """
    ping = channel.unary_unary(HEALTH_CHECK_METHOD, None, None)
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            ping(b"", timeout=left)
            return True
        except grpc.RpcError as exc:
            verdict = ping_verdict(exc.code())
        if verdict is not None:
            return verdict
        if not accepts_connections(target):
            return True
        time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))


def answers_within(target: str, timeout_s: float) -> bool:
    """A fresh connection to ``target`` answers a health check within ``timeout_s`` (see :func:`health_ping`)."""
    with grpc.insecure_channel(target) as channel:
        return health_ping(channel, target, timeout_s)


def hung_error(target: str, workspace: Path | None, err: E.SessiondError, waited_s: float) -> E.SessiondError:
    """After a call's deadline: :class:`DaemonNotRespondingError` if the daemon no longer answers at all, else ``err``.

    Blocks up to :data:`HUNG_CHECK_S` (only after a deadline, only for a Unix socket).
    """
    if type(err) is not E.DeadlineError or not accepts_connections(target):
        return err
    if answers_within(target, HUNG_CHECK_S):
        return err
    return not_responding_error(target, workspace, waited_s)
