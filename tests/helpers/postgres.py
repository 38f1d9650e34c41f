"""A throwaway PostgreSQL server for the tests, started from the distribution's ``postgresql`` package.

The suite starts it itself (SPEC §8): ``initdb`` and ``pg_ctl`` from
``/usr/lib/postgresql/<version>/bin`` on a private temporary folder, the
server listening on a Unix socket in that folder (trust authentication for
the one role ``claw``) and on 127.0.0.1 at a free port (where it asks for
:data:`PASSWORD`: the start-up error tests need a real login), ``fsync`` on (durable before reply
is part of what is tested). ``initdb`` and the server refuse to run as root,
so when the tests run as root only those binaries run as the ``postgres``
system user (``setpriv``); the folder is then owned by that user. At the end
the server is stopped by the pid it wrote (``postmaster.pid``): SIGINT (fast
shutdown), then SIGKILL if it has not gone within a bound, and the folder is
removed.

Without the package the tests that need it are skipped, except under
``CLAW_FULL=1`` (CI), where a missing server fails them: ``.ci/run`` installs
the package first.

Each storage opened by a test gets a database of its own (:meth:`Server.create_database`).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

__all__ = ["Server", "find_bin_dir", "require_server", "throwaway_postgres"]

#: The role the tests connect as (a superuser of the throwaway cluster).
ROLE: Final = "claw"
#: The password of ROLE over TCP (the Unix socket trusts it; 127.0.0.1 asks for this password).
PASSWORD: Final = "claw-test-secret-7f3a"
_START_TIMEOUT_S: Final = 60.0
_STOP_TIMEOUT_S: Final = 20.0
_SERVER_USER: Final = "postgres"


def find_bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` that has ``initdb``, or None."""
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")

    def version(path: str) -> int:
        m = re.search(r"/postgresql/(\d+)/", path)
        return int(m.group(1)) if m else 0

    return Path(max(found, key=version)).parent if found else None


def _as_server_user(cmd: list[str]) -> list[str]:
    """``cmd`` as the ``postgres`` system user when we are root (initdb and postgres refuse root)."""
    if os.geteuid() != 0:
        return cmd
    return ["setpriv", f"--reuid={_SERVER_USER}", f"--regid={_SERVER_USER}", "--init-groups", "--", *cmd]


@dataclass(frozen=True)
class Server:
    """A running throwaway server: its socket folder and data folder."""

    socket_dir: Path
    data_dir: Path
    pid: int
    port: int

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL for ``database`` over the Unix socket (no password: trust)."""
        query = urllib.parse.urlencode({"host": str(self.socket_dir), "port": str(self.port)})
        return f"postgresql://{ROLE}@/{database}?{query}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` with ``psql`` (unaligned, tuples only) and return its output."""
        psql = self.data_dir.parent / "psql"
        out = subprocess.run(
            [
                str(psql),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                str(self.socket_dir),
                "-p",
                str(self.port),
                "-U",
                ROLE,
                "-d",
                database,
                "-c",
                sql,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return out.stdout.strip()

    def tcp_url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        """A URL over TCP on 127.0.0.1, where the server asks for ROLE's password (scram-sha-256)."""
        return f"postgresql://{ROLE}:{urllib.parse.quote(password)}@127.0.0.1:{self.port}/{database}"

    def restart_fast(self) -> float:
        """``pg_ctl restart -m fast`` (every connection is cut, the server comes back); the seconds it took."""
        began = time.monotonic()
        pg_ctl = str((self.data_dir.parent / "psql").resolve().parent / "pg_ctl")
        _run(
            _as_server_user(
                [
                    pg_ctl,
                    "-D",
                    str(self.data_dir),
                    "-w",
                    "-t",
                    str(int(_START_TIMEOUT_S)),
                    "-m",
                    "fast",
                    "-l",
                    str(self.data_dir.parent / "server.log"),
                    "restart",
                ]
            ),
            "pg_ctl restart",
            log=self.data_dir.parent / "server.log",
        )
        object.__setattr__(self, "pid", int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0]))
        return time.monotonic() - began

    def create_database(self, name: str) -> str:
        """Create an empty database ``name`` (a plain identifier) and return its URL."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
            raise ValueError(f"not a plain database name: {name!r}")
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)


@contextlib.contextmanager
def throwaway_postgres(bin_dir: Path, extra_options: str = "") -> Iterator[Server]:
    """Start a private server from ``bin_dir``; stop it by its pid and remove its folder at the end.

    ``extra_options`` are added to the server's command line after the usual ones, so they win (a test of
    weakened durability starts one with ``-c fsync=off``)."""
    root = Path(tempfile.mkdtemp(prefix="claw-pg-"))
    data = root / "data"
    uid = gid = -1
    if os.geteuid() == 0:
        entry = pwd.getpwnam(_SERVER_USER)
        uid, gid = entry.pw_uid, entry.pw_gid
        os.chown(root, uid, gid)
    os.chmod(root, 0o700)
    # psql runs as us: a link beside the data folder, so Server.psql needs no bin_dir.
    (root / "psql").symlink_to(bin_dir / "psql")
    pid = 0
    server: Server | None = None
    try:
        _run(
            _as_server_user(
                [
                    str(bin_dir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    ROLE,
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                    "--no-sync",
                    "--no-instructions",
                ]
            ),
            "initdb",
        )
        port = _free_port()
        options = (
            f"-k {root} -c listen_addresses=127.0.0.1 -p {port} -c fsync=on -c synchronous_commit=on "
            "-c max_connections=300 -c shared_buffers=32MB -c log_min_messages=warning"
        )
        if extra_options:
            options += f" {extra_options}"
        _run(
            _as_server_user(
                [
                    str(bin_dir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-w",
                    "-t",
                    str(int(_START_TIMEOUT_S)),
                    "-l",
                    str(root / "server.log"),
                    "-o",
                    options,
                    "start",
                ]
            ),
            "pg_ctl start",
            log=root / "server.log",
        )
        pid = int((data / "postmaster.pid").read_text().split("\n", 1)[0])
        server = Server(root, data, pid, port)
        server.psql(f"ALTER ROLE {ROLE} PASSWORD '{PASSWORD}'")
        yield server
    finally:
        if server is not None:
            pid = server.pid  # restart_fast() changes it
        if pid:
            _stop(pid)
        shutil.rmtree(root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(cmd: list[str], what: str, log: Path | None = None) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=_START_TIMEOUT_S + 30)
    if done.returncode != 0:
        tail = ""
        if log is not None and log.exists():
            tail = log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{what} failed ({done.returncode}): {done.stderr.strip()} {tail}")


def _stop(pid: int) -> None:
    """Fast shutdown by pid (SIGINT), then SIGKILL if it is still there after the bound."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + _STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def require_server() -> Path:
    """The server binaries folder; skips the test without one, or fails it under ``CLAW_FULL=1``."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        message = (
            "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb): "
            "apt-get install postgresql to run the PostgreSQL backend's tests"
        )
        if os.environ.get("CLAW_FULL") == "1":
            pytest.fail(message)
        pytest.skip(message)
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.fail("running as root needs setpriv (util-linux) to start PostgreSQL as the postgres user")
    return bin_dir


class _Shared:
    """One server per test process (an xdist worker), started at first use and stopped at the session's end."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._server: Server | None = None
        self._databases: dict[str, str] = {}

    def server(self) -> Server:
        if self._server is None:
            self._server = self._stack.enter_context(throwaway_postgres(require_server()))
        return self._server

    def database_for(self, key: str) -> str:
        """The URL of the database of ``key`` (a test folder): created at first use, the same one after."""
        if key not in self._databases:
            server = self.server()
            self._databases[key] = server.create_database(f"t_{os.getpid()}_{len(self._databases)}")
        return self._databases[key]

    @property
    def running(self) -> bool:
        """True once this process has started its server."""
        return self._server is not None

    def sessions_of(self, pid: int) -> int:
        """How many server sessions (backends) the daemon process ``pid`` still has (its connections are named
        ``claw-sessiond … <pid>``); 0 when no server runs."""
        if self._server is None:
            return 0
        return int(
            self._server.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'claw-sessiond%' "
                f"AND split_part(application_name, ' ', -1) = '{int(pid)}'"
            )
        )

    def stop(self) -> None:
        self._stack.close()
        self._server = None
        self._databases.clear()


#: The test process's server (``tests/conftest.py`` stops it at the end of the session).
SHARED: Final = _Shared()
