"""A throwaway PgBouncer (Debian's ``pgbouncer`` package) in front of the tests' throwaway PostgreSQL.

:func:`throwaway_pgbouncer` writes a configuration into a private temporary
folder, starts ``pgbouncer`` in the foreground on 127.0.0.1 at a free port
(as the ``postgres`` system user when the tests run as root: PgBouncer
refuses root, and only that user may enter the server's socket folder), waits
until the port answers, and at the end stops it by its pid (SIGINT, then
SIGKILL after a bound) and removes the folder. Clients log in as the tests'
role without a password (``auth_type = trust``); PgBouncer reaches the server
over its Unix socket. ``pool_mode`` and ``ignore_startup_parameters`` are the
test's to choose; everything else is PgBouncer's default configuration.

Without the package the tests that need it are skipped, except under
``CLAW_FULL=1`` (CI), where they fail: ``.ci/run`` and ``scripts/setup-tests``
install it.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from .postgres import ROLE, Server

__all__ = ["Bouncer", "require_pgbouncer", "throwaway_pgbouncer"]

_START_TIMEOUT_S: Final = 30.0
_STOP_TIMEOUT_S: Final = 10.0
_USER: Final = "postgres"


@dataclass(frozen=True)
class Bouncer:
    """A running PgBouncer: its port and pid."""

    port: int
    pid: int
    log: Path

    def url(self, database: str) -> str:
        """A URL of ``database`` through this PgBouncer (no password: trust)."""
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{database}"


def require_pgbouncer() -> str:
    """The ``pgbouncer`` binary; skips the test without it, or fails it under ``CLAW_FULL=1``."""
    found = shutil.which("pgbouncer") or ("/usr/sbin/pgbouncer" if os.path.exists("/usr/sbin/pgbouncer") else None)
    if found is None:
        message = "pgbouncer not found: apt-get install pgbouncer to run the PgBouncer tests"
        if os.environ.get("CLAW_FULL") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def throwaway_pgbouncer(
    server: Server, pool_mode: str = "session", ignore_startup_parameters: str = ""
) -> Iterator[Bouncer]:
    """Start PgBouncer in ``pool_mode`` in front of ``server`` (every database); stop it by pid at the end."""
    binary = require_pgbouncer()
    root = Path(tempfile.mkdtemp(prefix="claw-pgb-"))
    port = _free_port()
    (root / "users.txt").write_text(f'"{ROLE}" ""\n')
    lines = [
        "[databases]",
        f"* = host={server.socket_dir} port={server.port}",
        "[pgbouncer]",
        "listen_addr = 127.0.0.1",
        f"listen_port = {port}",
        "unix_socket_dir =",
        "auth_type = trust",
        f"auth_file = {root / 'users.txt'}",
        f"pool_mode = {pool_mode}",
        "max_client_conn = 200",
        "default_pool_size = 40",
        f"logfile = {root / 'pgbouncer.log'}",
    ]
    if ignore_startup_parameters:
        lines.append(f"ignore_startup_parameters = {ignore_startup_parameters}")
    (root / "pgbouncer.ini").write_text("\n".join(lines) + "\n")
    cmd = [binary, str(root / "pgbouncer.ini")]
    if os.geteuid() == 0:
        entry = pwd.getpwnam(_USER)
        for path in (root, root / "users.txt", root / "pgbouncer.ini"):
            os.chown(path, entry.pw_uid, entry.pw_gid)
        cmd = ["setpriv", f"--reuid={_USER}", f"--regid={_USER}", "--init-groups", "--", *cmd]
    os.chmod(root, 0o700)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"pgbouncer did not start (rc {proc.poll()}): {err[-2000:]}")
            time.sleep(0.05)
        yield Bouncer(port, proc.pid, root / "pgbouncer.log")
    finally:
        _stop(proc)
        shutil.rmtree(root, ignore_errors=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT by pid (PgBouncer's immediate shutdown), then SIGKILL after the bound."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=_STOP_TIMEOUT_S)
    if proc.stderr is not None:
        proc.stderr.close()
