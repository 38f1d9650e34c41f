"""Writing and removing ``.claw/endpoint.json``: where this daemon listens, for clients in any language.

The format (``format`` 1) and how clients read it are in
:mod:`claw_sessiond_client.endpoint` and docs/PROTOCOL.md "Discovery". The
daemon writes the file once its servers listen, after taking the workspace
lock (so a stale file of a killed daemon is simply replaced), and removes it
at a graceful stop if it is still its own. Written like the other files of
``.claw/``: a fresh temporary file created with ``O_EXCL | O_NOFOLLOW`` and
mode 0600, fsynced, then renamed over the target (``rename`` replaces a link
planted there, it never writes through it).

Must never: import grpc.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
import time
from pathlib import Path

from claw_sessiond_client.endpoint import ENDPOINT_FILE, ENDPOINT_FORMAT, MAX_ENDPOINT_BYTES

from . import __version__
from .lifecycle import process_start_time
from .logs import rfc3339_utc

__all__ = ["endpoint_record", "remove_endpoint", "tcp_endpoint", "write_endpoint"]


def tcp_endpoint(address: str | None, port: int | None) -> str | None:
    """``host:port`` of the bound ``--tcp`` listener (the port it got, for ``:0``), or None."""
    if not address or port is None:
        return None
    host = address.rpartition(":")[0]
    return f"{host}:{port}"


def endpoint_record(workspace: Path, socket_path: Path, tcp: str | None) -> dict[str, object]:
    """The endpoint file's content for this process."""
    now = time.time()
    return {
        "format": ENDPOINT_FORMAT,
        "socket": os.path.abspath(socket_path),
        "pid": os.getpid(),
        "process_start": process_start_time(os.getpid()),
        "version": __version__,
        "started_at": rfc3339_utc(now),
        "started_unix": now,
        "workspace": os.path.realpath(workspace),
        "tcp": tcp,
    }


def write_endpoint(claw_dir: Path, record: dict[str, object]) -> Path:
    """Put ``record`` at ``claw_dir/endpoint.json`` atomically (mode 0600); return the path.

    Raises:
        OSError: the file cannot be written (the caller turns this into a start-up error).
    """
    for stale in claw_dir.glob(f".{ENDPOINT_FILE}.*"):  # left by a daemon killed mid-write (we hold the lock)
        with contextlib.suppress(OSError):
            if stat.S_ISREG(stale.lstat().st_mode):
                stale.unlink()
    return write_private_file(claw_dir, ENDPOINT_FILE, json.dumps(record, sort_keys=True).encode() + b"\n")


def write_private_file(claw_dir: Path, name: str, data: bytes) -> Path:
    """Put ``data`` at ``claw_dir/name`` atomically, mode 0600 from creation, synced; return the path.

    Written to a fresh ``.name.<pid>.<random>`` beside it (never through a link: ``O_NOFOLLOW``,
    ``O_EXCL``), then renamed over ``name``; rename(2) replaces a symlink at the path itself,
    never its target. A failed write removes the temporary file.

    Raises:
        OSError: the file cannot be written.
    """
    path = claw_dir / name
    tmp = claw_dir / f".{name}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    return path


def remove_endpoint(claw_dir: Path) -> None:
    """Remove ``claw_dir/endpoint.json`` if it names this process (a successor's file stays)."""
    path = claw_dir / ENDPOINT_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENDPOINT_BYTES:
            return
        data = json.loads(os.read(fd, MAX_ENDPOINT_BYTES))
    except (OSError, ValueError):
        return
    finally:
        os.close(fd)
    if isinstance(data, dict) and data.get("pid") == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
