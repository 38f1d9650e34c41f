"""A throwaway PostgreSQL server for the tests, started from the distribution's ``postgresql`` package.

The suite starts it itself (SPEC §8): ``initdb`` and ``pg_ctl`` from
``/usr/lib/postgresql/<version>/bin`` on a private temporary folder, the
server listening on a Unix socket in that folder (trust authentication for
the one role ``claw``) and on 127.0.0.1 at a free port (where it asks for
:data:`PASSWORD`: the start-up error tests need a real login), ``fsync`` on (durable before reply
is part of what is tested). ``initdb`` and the server refuse to run as root,
so when the tests run as root only those binaries run as the ``postgres``
system user (``setpriv``); the folder is then owned by that user. At the end
the server is stopped by the pid it wrote (``postmaster.pid``): SIGQUIT
(immediate shutdown: no shutdown checkpoint, since its data is thrown away;
a fast shutdown's checkpoint took over a minute on a loaded machine after a
few hundred databases), then SIGKILL if it has not gone within
:data:`_STOP_TIMEOUT_S`, and the folder is removed, its databases' folders by
:data:`_REMOVERS` threads at once (after a few hundred databases, over 100,000 files:
one by one that took 38-46 s on the loaded development machine, the last thing each pytest
worker did; eight at once, 5 s).

Without the package the tests that need it are skipped, except under
``CLAW_FULL=1`` (CI), where a missing server fails them: ``.ci/run`` installs
the package first.

Each storage or workspace of a test gets a database of its own, cloned from one
migrated per server (:class:`_Shared`); a test of the migrations asks for an
empty one.
"""

from __future__ import annotations

import concurrent.futures
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
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import asyncpg
import pytest

from tests.helpers.loop_thread import LoopThread

__all__ = ["SHARED", "TEMPLATE", "Server", "find_bin_dir", "require_server", "throwaway_postgres"]

T = TypeVar("T")

#: The role the tests connect as (a superuser of the throwaway cluster).
ROLE: Final = "claw"
#: The password of ROLE over TCP (the Unix socket trusts it; 127.0.0.1 asks for this password).
PASSWORD: Final = "claw-test-secret-7f3a"
_START_TIMEOUT_S: Final = 60.0
_STOP_TIMEOUT_S: Final = 10.0
#: The longest one statement of the kept connection may take (a CREATE DATABASE on a loaded machine).
_ADMIN_TIMEOUT_S: Final = 120.0
#: The migrated database every test database is a copy of (one per server, so per pytest worker).
TEMPLATE: Final = "claw_migrated"
_SERVER_USER: Final = "postgres"
#: How many threads remove a stopped server's database folders (module docstring).
_REMOVERS: Final = 8


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
        """Create an empty database ``name`` (a plain identifier) with ``psql`` and return its URL (for a test's own
        server; the shared one's databases come from :data:`SHARED`)."""
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
        _remove(root)


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
    """Immediate shutdown by pid (SIGQUIT: its children are stopped, nothing is flushed), then SIGKILL if it is
    still there after the bound."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGQUIT)
    deadline = time.monotonic() + _STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _remove(root: Path) -> None:
    """Remove a stopped server's folder: the database folders under ``data/base`` by :data:`_REMOVERS` threads at
    once (the unlinks of one folder wait on the disk; several folders' overlap), then the rest."""
    base = root / "data" / "base"
    folders = [path for path in base.iterdir() if path.is_dir()] if base.is_dir() else []
    with concurrent.futures.ThreadPoolExecutor(_REMOVERS, thread_name_prefix="postgres-remove") as pool:
        for _ in pool.map(lambda path: shutil.rmtree(path, ignore_errors=True), folders):
            pass
    shutil.rmtree(root, ignore_errors=True)


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


class _Admin:
    """One connection to the server's ``postgres`` database, kept on a loop thread of its own: the tests'
    databases are created and the catalog read through it, without a ``psql`` process each."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._thread = LoopThread("postgres-admin")
        self._conn: Any = None

    def fetchval(self, sql: str, *args: object) -> Any:
        """The first value of ``sql``'s first row (None for a statement without rows)."""
        return self._thread.run(lambda: self._fetchval(sql, args), _ADMIN_TIMEOUT_S)

    def run(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run ``make()`` on the admin thread's loop (for work on another database's connection)."""
        return self._thread.run(make, _ADMIN_TIMEOUT_S)

    async def _fetchval(self, sql: str, args: tuple[object, ...]) -> Any:
        for attempt in (1, 2):
            if self._conn is None or self._conn.is_closed():
                self._conn = await asyncpg.connect(self._url)
            try:
                return await self._conn.fetchval(sql, *args)
            except (asyncpg.exceptions.ConnectionDoesNotExistError, asyncpg.exceptions.AdminShutdownError):
                self._conn = None  # the server cut it (a test restarted the server): once more, anew
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close(timeout=5)

    def close(self) -> None:
        self._thread.stop(self._drop, _ADMIN_TIMEOUT_S)


async def _migrate(url: str) -> None:
    """Migrate the database at ``url`` as ``claw-sessiond migrate-db`` does."""
    from claw_sessiond.storage.postgres.connect import PostgresSettings, migrate_only

    await migrate_only(url, PostgresSettings())


async def _new_database_id(url: str) -> None:
    """Give a clone of :data:`TEMPLATE` an id of its own, as a migration of its own would have."""
    from claw_sessiond.storage.postgres.schema import SCHEMA

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            f"UPDATE {SCHEMA}.meta SET value = md5(random()::text || clock_timestamp()::text) WHERE key = 'database_id'"
        )
    finally:
        await conn.close(timeout=5)


class _Shared:
    """One server per test process (an xdist worker), started at first use and stopped at the session's end.

    The databases the tests get are clones of :data:`TEMPLATE`, migrated once per server by the daemon's
    own ``migrate-db`` path: ``CREATE DATABASE … TEMPLATE`` copies its files, so no test pays for the
    migrations. A test of the migrations themselves asks for an empty database
    (:meth:`empty_database_for`)."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._server: Server | None = None
        self._admin: _Admin | None = None
        self._template = False
        self._databases: dict[str, tuple[str, bool]] = {}

    def server(self) -> Server:
        if self._server is None:
            self._server = self._stack.enter_context(throwaway_postgres(require_server()))
        return self._server

    def _admin_of(self) -> _Admin:
        if self._admin is None:
            self._admin = _Admin(self.server().url())
        return self._admin

    def database_for(self, key: str) -> str:
        """The URL of the database of ``key`` (a test folder): a migrated one, created at first use, the same
        one after."""
        return self._database(key, migrated=True)

    def empty_database_for(self, key: str) -> str:
        """As :meth:`database_for`, but an empty database (no schema): for the tests of the migrations."""
        return self._database(key, migrated=False)

    def _database(self, key: str, *, migrated: bool) -> str:
        if key in self._databases:
            url, was_migrated = self._databases[key]
            if was_migrated != migrated:
                raise ValueError(f"{key!r} has a database already, {'' if was_migrated else 'not '}migrated")
            return url
        admin = self._admin_of()
        name = f"t_{os.getpid()}_{len(self._databases)}"
        if migrated and not self._template:
            admin.fetchval(f"CREATE DATABASE {TEMPLATE}")
            admin.run(lambda: _migrate(self.server().url(TEMPLATE)))
            # no connection may reach it from now on: a clone needs a template nobody is connected to
            admin.fetchval(f"ALTER DATABASE {TEMPLATE} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
            self._template = True
        admin.fetchval(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE if migrated else 'template1'}")
        url = self.server().url(name)
        if migrated:
            admin.run(lambda: _new_database_id(url))
        self._databases[key] = (url, migrated)
        return url

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
            self._admin_of().fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'claw-sessiond%' "
                "AND split_part(application_name, ' ', -1) = $1",
                str(int(pid)),
            )
        )

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        self._stack.close()
        self._server = None
        self._template = False
        self._databases.clear()


#: The test process's server (``tests/conftest.py`` stops it at the end of the session).
SHARED: Final = _Shared()
