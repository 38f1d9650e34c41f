"""Where a workspace's daemon listens: the one rule shared by daemon and clients.

The socket is ``<workspace>/.claw/sessiond.sock``. A Unix socket path is
limited to 108 bytes (``sun_path``, NUL included), so a deep workspace uses a
short path instead: ``$XDG_RUNTIME_DIR/claw-sessiond/<hash>.sock`` (or
``/tmp/claw-sessiond-<uid>/<hash>.sock`` without XDG_RUNTIME_DIR, or if it is too deep), where
``<hash>`` is derived from the workspace's absolute path. Both sides compute
the same path from the same inputs, so nothing has to be discovered.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = [
    "CLAW_DIR",
    "MAX_UNIX_PATH_BYTES",
    "claw_dir",
    "default_socket_path",
]

CLAW_DIR = ".claw"
SOCKET_NAME = "sessiond.sock"
#: sun_path is 108 bytes including the terminating NUL.
MAX_UNIX_PATH_BYTES = 107


def claw_dir(workspace: str | os.PathLike[str]) -> Path:
    """The workspace's ``.claw`` folder (absolute)."""
    return Path(os.path.abspath(workspace)) / CLAW_DIR


def _runtime_base(runtime_dir: str | None) -> Path:
    if runtime_dir:
        return Path(runtime_dir) / "claw-sessiond"
    return Path(f"/tmp/claw-sessiond-{os.getuid()}")


def default_socket_path(workspace: str | os.PathLike[str], runtime_dir: str | None = None) -> Path:
    """The socket path of ``workspace``'s daemon.

    Args:
        workspace: the workspace folder.
        runtime_dir: ``$XDG_RUNTIME_DIR`` (pass ``os.environ.get("XDG_RUNTIME_DIR")``).
    """
    primary = claw_dir(workspace) / SOCKET_NAME
    if len(os.fsencode(primary)) <= MAX_UNIX_PATH_BYTES:
        return primary
    digest = hashlib.sha256(os.fsencode(claw_dir(workspace))).hexdigest()[:24]
    short = _runtime_base(runtime_dir) / f"{digest}.sock"
    if len(os.fsencode(short)) <= MAX_UNIX_PATH_BYTES:
        return short
    return _runtime_base(None) / f"{digest}.sock"  # $XDG_RUNTIME_DIR itself is too deep
