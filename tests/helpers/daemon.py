"""Real daemon subprocesses on real sockets and database files.

``DaemonProcess`` runs ``python -m claw_sessiond serve`` for a workspace and
waits until the gRPC health check says SERVING; when the running test is on PostgreSQL
it serves a database of its workspace on the throwaway PostgreSQL server
(``tests/helpers/backend.py``). Set ``CLAW_FULL=1`` for the
long versions of the robustness tests (CI does).
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from claw_sessiond_client import SessionClient
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from claw_sessiond_client.paths import default_socket_path
from tests.helpers.backend import database_url_for, on_postgres
from tests.helpers.checkout import ROOT as ROOT  # the checkout, for the many tests that import it from here
from tests.helpers.postgres import SHARED as POSTGRES


class _NotifySocket:
    """A ``$NOTIFY_SOCKET`` for one daemon start: a datagram socket in a private temporary folder (a short path: a
    Unix socket's is limited to 107 bytes). Open until the daemon is stopped, so that its later datagrams
    (``STOPPING=1``) find it and it logs no failed notification."""

    def __init__(self) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="claw-notify-"))
        self.path = self._folder / "n"
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self._sock.bind(str(self.path))
        self.ready = False
        # Closed and removed by close(), or when this object goes (a test that killed its daemon by pid alone).
        self._gone = weakref.finalize(self, _remove_notify, self._sock, self._folder)

    def wait_ready(self, timeout_s: float) -> None:
        """Read what arrived within ``timeout_s``; ``ready`` once a datagram said READY=1."""
        if select.select([self._sock], [], [], timeout_s)[0]:
            while not self.ready:
                try:
                    data = self._sock.recv(4096, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    return
                self.ready = b"READY=1" in data.split(b"\n")

    def close(self) -> None:
        self._gone()


def _remove_notify(sock: socket.socket, folder: Path) -> None:
    sock.close()
    shutil.rmtree(folder, ignore_errors=True)


class DaemonProcess:
    """One real daemon subprocess for a workspace."""

    def __init__(self, workspace: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.workspace = workspace
        self.args = list(args)
        self.env = {**os.environ, **(env or {})}
        if on_postgres() and "--database" not in self.args and "CLAW_DATABASE_URL" not in (env or {}):
            # on PostgreSQL: the workspace's database, unless its config.toml names one
            config = workspace / ".claw" / "config.toml"
            if config.exists() and "database" in config.read_text(errors="replace"):
                self.env.pop("CLAW_DATABASE_URL", None)
            else:
                self.env["CLAW_DATABASE_URL"] = database_url_for(workspace)
        self.proc: subprocess.Popen[bytes] | None = None
        self._notify: _NotifySocket | None = None
        self.socket_path = default_socket_path(workspace, self.env.get("XDG_RUNTIME_DIR"))
        if "--socket" in self.args:
            self.socket_path = Path(self.args[self.args.index("--socket") + 1])
        self.log_path = workspace / f"daemon-{time.monotonic_ns()}.log"

    @property
    def address(self) -> str:
        return f"unix:{self.socket_path}"

    def spawn(self) -> subprocess.Popen[bytes]:
        """Start the process without waiting for it."""
        log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self._log = log
        env = self.env
        self._close_notify()
        if "NOTIFY_SOCKET" not in env:  # a test that gives its own listens itself (tests/e2e/test_systemd.py)
            self._notify = _NotifySocket()
            env = {**env, "NOTIFY_SOCKET": str(self._notify.path)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(self.workspace), *self.args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=str(self.workspace),
        )
        return self.proc

    def start(self, timeout_s: float = 20.0) -> DaemonProcess:
        """Start and wait until SERVING; fail the test with the log if it does not come up."""
        self.spawn()
        self.wait_ready(timeout_s)
        return self

    def wait_ready(self, timeout_s: float = 20.0) -> None:
        """Wait until the health check says SERVING. A daemon this object spawned says READY=1 on its
        ``$NOTIFY_SOCKET`` first (as under systemd's ``Type=notify``): the wait wakes on that datagram, then checks
        health once, instead of polling every 50 ms (about 25 ms lost per start, by the hundred in a run)."""
        assert self.proc is not None
        end = time.monotonic() + timeout_s
        notify = self._notify
        patient_until = time.monotonic() + min(5.0, timeout_s / 2)  # then health polls alone, READY=1 or not
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                pytest.fail(f"daemon exited with {self.proc.returncode}:\n{self.log()}")
            if notify is not None and not notify.ready and time.monotonic() < patient_until:
                notify.wait_ready(min(0.05, max(0.0, end - time.monotonic())))
                continue  # woken by READY=1 (then health below), or 50 ms passed: is the process still there?
            if self.socket_path.exists() and health_status(self.address) == "SERVING":
                return
            time.sleep(0.05)
        pytest.fail(f"daemon did not become ready in {timeout_s}s:\n{self.log()}")

    def _close_notify(self) -> None:
        if self._notify is not None:
            self._notify.close()
            self._notify = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def client(self, **kw: Any) -> SessionClient:
        kw.setdefault("autostart", False)
        return SessionClient(address=self.address, **kw)

    def terminate(self, timeout_s: float = 20.0) -> int:
        """SIGTERM and wait; returns the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            stacks = _py_spy_dump(self.proc.pid)
            self.proc.kill()
            self.proc.wait(10)
            self._log.close()
            pytest.fail(f"daemon did not stop within {timeout_s}s of SIGTERM:\n{self.log()[-4000:]}\n{stacks}")
        self._log.close()
        self._close_notify()
        return code

    def kill(self) -> None:
        """SIGKILL and reap; on PostgreSQL, then wait until the server has ended the daemon's sessions.

        The process is gone at once, but a statement it had sent runs on in the server: a COMMIT
        sent just before the kill commits after it (during the WAL flush). Until the server has
        ended those sessions, what the database holds may still change (``tests/e2e/test_kill_postgres.py``).
        """
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self._log.close()
        self._close_notify()
        wait_for_server_sessions_to_end(self.proc.pid)

    def stop(self) -> None:
        """Teardown: SIGTERM, then SIGKILL if it hangs."""
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None and not self._log.closed:
                self._log.close()
            self._close_notify()
            return
        try:
            self.terminate(15)
        except subprocess.TimeoutExpired:
            self.kill()


#: The longest a killed daemon's server sessions may run on (a statement in flight finishing).
KILLED_SESSIONS_END_S = 20.0


def wait_for_server_sessions_to_end(pid: int, timeout_s: float = KILLED_SESSIONS_END_S) -> None:
    """Wait until the PostgreSQL server of this test process has no session of the dead process ``pid``."""
    if not POSTGRES.running:
        return
    end = time.monotonic() + timeout_s
    while (left := POSTGRES.sessions_of(pid)) > 0:
        if time.monotonic() > end:
            pytest.fail(f"{left} server sessions of the killed daemon {pid} still run after {timeout_s:.0f}s")
        time.sleep(0.02)


def health_status(address: str, service: str = "", *, cert: Path | None = None) -> str:
    """The daemon's health status name, or "UNREACHABLE"; over TLS trusting ``cert`` (a ``--tcp`` port) if given."""
    if cert is None:
        channel = grpc.insecure_channel(address)
    else:
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        options = (("grpc.ssl_target_name_override", "claw-sessiond"),)
        channel = grpc.secure_channel(address, credentials, options=options)
    with channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
        except grpc.RpcError:
            return "UNREACHABLE"
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def raw_watch(address: str, **fields: Any) -> list[pb.WatchResponse] | grpc.RpcError:
    """Read a Watch stream with the bare stub until it has nothing more within a short deadline."""
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        replies: list[pb.WatchResponse] = []
        try:
            for reply in stub.Watch(pb.WatchRequest(**fields), timeout=1.5):
                replies.append(reply)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                return replies
            return exc
        return replies


def run_python(code: str, *args: str, timeout_s: float = 60, env: dict[str, str] | None = None) -> str:
    """Run ``code`` in a fresh interpreter (a separate client process); return stdout, fail on error."""
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, **(env or {})},
    )
    if proc.returncode != 0:
        pytest.fail(f"client process failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _py_spy_dump(pid: int) -> str:
    """The daemon's Python stacks now (py-spy, when installed), to tell where a stop hangs."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    try:
        out = subprocess.run([spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"(no py-spy dump: {exc})"
    return out.stdout[-8000:] + out.stderr[-2000:]
