"""The endpoint file: where a workspace's daemon listens, read from ``.claw/endpoint.json`` (docs/PROTOCOL.md).

The daemon writes it once it serves (atomically, mode 0600, never through a
link) and removes it when it stops. Every client, in any language, finds
the daemon the same way, with no path rule to port:

1. find the workspace (the nearest folder holding ``.claw/``);
2. read ``<workspace>/.claw/endpoint.json``: a JSON object with ``format`` 1,
   ``socket`` (absolute path of the Unix socket), ``pid``, ``version``,
   ``started_at``, ``workspace`` (symlinks resolved) and ``tcp`` (the
   ``host:port`` of ``--tcp``, or null). Use it if ``.claw/`` and the file
   belong to you (or, for root, to the workspace's owner), the file is a
   regular file (not a link) and a process with ``pid`` exists;
3. otherwise use the rule of :mod:`claw_sessiond_client.paths` (for a
   workspace without a running daemon: where auto-start will put it).

Because the file is reached through the workspace (any spelling of it,
symlinked or not) and records the socket the daemon actually bound, two
clients with different ``XDG_RUNTIME_DIR`` values reach the same daemon.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .paths import claw_dir, folder_problem, socket_path_for, workspace_owner

__all__ = [
    "ENDPOINT_FILE",
    "ENDPOINT_FORMAT",
    "MAX_ENDPOINT_BYTES",
    "Endpoint",
    "discover_socket",
    "endpoint_path",
    "read_endpoint",
]

#: The endpoint file's name inside ``.claw/``.
ENDPOINT_FILE: Final = "endpoint.json"
#: The format this client reads (and the daemon writes).
ENDPOINT_FORMAT: Final = 1
#: A larger file is not an endpoint file.
MAX_ENDPOINT_BYTES: Final = 64 * 1024


@dataclass(frozen=True)
class Endpoint:
    """What a running daemon says about where it listens."""

    socket: Path
    pid: int
    version: str
    started_at: str
    workspace: str
    tcp: str | None


def endpoint_path(workspace: str | os.PathLike[str]) -> Path:
    """``<workspace>/.claw/endpoint.json``."""
    return claw_dir(workspace) / ENDPOINT_FILE


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _parse(data: Any) -> Endpoint | None:
    if not isinstance(data, dict) or data.get("format") != ENDPOINT_FORMAT:
        return None
    socket, pid = data.get("socket"), data.get("pid")
    if not isinstance(socket, str) or not os.path.isabs(socket) or not isinstance(pid, int) or pid <= 0:
        return None
    tcp = data.get("tcp")
    return Endpoint(
        socket=Path(socket),
        pid=pid,
        version=str(data.get("version", "")),
        started_at=str(data.get("started_at", "")),
        workspace=str(data.get("workspace", "")),
        tcp=tcp if isinstance(tcp, str) and tcp else None,
    )


def read_endpoint(workspace: str | os.PathLike[str], uids: Collection[int] | None = None) -> Endpoint | None:
    """The endpoint of ``workspace``'s running daemon, or None (no file, a stale one, or one not to trust).

    Args:
        workspace: the workspace folder.
        uids: who may have written it (default: this user; for root also the workspace's owner).
    """
    if uids is None:
        uids = {os.geteuid()} | ({workspace_owner(workspace)} if os.geteuid() == 0 else set())
    folder = claw_dir(workspace)
    if folder_problem(folder, uids) is not None:
        return None
    try:
        fd = os.open(folder / ENDPOINT_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid not in uids or info.st_size > MAX_ENDPOINT_BYTES:
            return None
        endpoint = _parse(json.loads(os.read(fd, MAX_ENDPOINT_BYTES)))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if endpoint is None or not _pid_exists(endpoint.pid):
        return None
    return endpoint


def discover_socket(workspace: str | os.PathLike[str], runtime_dir: str | None) -> Path:
    """The socket of ``workspace``'s daemon: the endpoint file's, else the path rule's (see the module docstring)."""
    endpoint = read_endpoint(workspace)
    if endpoint is not None:
        return endpoint.socket
    return socket_path_for(workspace, runtime_dir)
