"""Helpers shared by the robustness tests (crash, disk full, corruption, hostile input, users, soak).

Everything here reads the database only through read-only connections, so
a helper can never be the thing that changed the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.conftest import DaemonProcess, health_status


def db_path(workspace: Path) -> Path:
    """``<workspace>/.claw/sessions.db``."""
    return workspace / ".claw" / "sessions.db"


def sha256_of(path: Path) -> str | None:
    """Hex digest of a file's bytes, or None if it does not exist."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def file_digests(db: Path) -> dict[str, str | None]:
    """Digests of the database and its WAL (None for a missing file)."""
    return {"db": sha256_of(db), "wal": sha256_of(Path(f"{db}-wal"))}


@contextlib.contextmanager
def read_only(db: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection (``mode=ro``) that is always closed."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        yield conn
    finally:
        conn.close()


def dump(db: Path) -> list[str]:
    """The whole database as SQL text (``iterdump``) through a read-only connection."""
    with read_only(db) as conn:
        return list(conn.iterdump())


def integrity(db: Path) -> list[str]:
    """``PRAGMA integrity_check`` rows (``["ok"]`` when healthy)."""
    with read_only(db) as conn:
        return [str(r[0]) for r in conn.execute("PRAGMA integrity_check").fetchall()]


def populate(client: SessionClient, sessions: int = 3, turns: int = 5, prefix: str = "s") -> int:
    """Write a few realistic turns (user, assistant with a call, its result) per session; return messages."""
    written = 0
    for s in range(sessions):
        sid = f"{prefix}{s}"
        for t in range(turns):
            call = ToolCall(f"call-{s}-{t}", "bash", f'{{"cmd": "echo {t}"}}')
            client.append(sid, [Message.user(f"turn {t} of {sid}"), Message.assistant("ok", [call])])
            client.append(sid, Message.tool(call.id, f"output {t}"))
            written += 3
        client.record_usage(sid, input_tokens=10 * (s + 1), output_tokens=s + 1)
    return written


def wait_exit(proc: subprocess.Popen[bytes], timeout_s: float = 30.0) -> int:
    """Wait for a process to exit and return its code (kill it and fail if it does not)."""
    try:
        return proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        raise AssertionError(f"process {proc.pid} did not exit within {timeout_s}s") from None


def wait_refused(daemon: DaemonProcess, timeout_s: float = 30.0) -> int:
    """Wait for a daemon that should refuse to start; fail fast (and stop it) if it starts serving instead."""
    assert daemon.proc is not None
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        code = daemon.proc.poll()
        if code is not None:
            return code
        if daemon.socket_path.exists() and health_status(daemon.address) == "SERVING":
            daemon.stop()
            raise AssertionError(f"the daemon started instead of refusing:\n{daemon.log()}")
        time.sleep(0.05)
    daemon.stop()
    raise AssertionError(f"the daemon neither exited nor served within {timeout_s}s:\n{daemon.log()}")


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def wait_until(predicate: object, timeout_s: float, interval_s: float = 0.05) -> bool:
    """Poll ``predicate()`` until it is true or ``timeout_s`` passes."""
    assert callable(predicate)
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval_s)
    return bool(predicate())


def is_root() -> bool:
    """True when running as uid 0."""
    return os.geteuid() == 0
