"""Shared test harness: real daemon subprocesses on real sockets and database files.

``DaemonProcess`` runs ``python -m claw_sessiond serve`` for a workspace and
waits until the gRPC health check says SERVING. Every process a test starts
is stopped by its pid at teardown. Set ``CLAW_FULL=1`` for the long versions
of the robustness tests (CI does).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from claw_sessiond_client import SessionClient
from claw_sessiond_client.paths import default_socket_path
from tests._figures import (  # noqa: F401  (collect and print the robustness figures)
    pytest_configure,
    pytest_terminal_summary,
    pytest_unconfigure,
)

FULL = os.environ.get("CLAW_FULL") == "1"
ROOT = Path(__file__).resolve().parent.parent


#: Tests that must not run at the same time as each other under pytest-xdist (``--dist loadgroup``
#: puts a group on one worker): ``perms`` open the shared temporary folders to another uid for a
#: moment and restore them; ``timing`` compare latencies or memory against a baseline measured in
#: the same test, so two of them must not run at once; ``load`` put heavy load on the machine
#: (slow connections by the thousand, kill -9 under eight writers), kept apart from each other.
_GROUPS = {
    "test_users.py": "perms",
    "test_tcp_auth.py": "perms",
    "test_daemon.py": "perms",
    "test_interference.py": "timing",
    "test_soak.py": "timing",
    "test_metrics_limits.py": "load",
    "test_stream_bounds.py": "timing",
    "test_crash.py": "load",
}


def pytest_itemcollected(item: pytest.Item) -> None:
    """Every test file is one unit for the workers (its module fixtures are made once, and tests
    that read what an earlier test of the file left, such as figures, see it); the groups above
    join several files into one unit. Marked as each item is collected: xdist reads the marks
    in its own ``pytest_collection_modifyitems``."""
    item.add_marker(pytest.mark.xdist_group(_GROUPS.get(item.path.name, item.path.name)))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With CLAW_FULL=1 (what CI runs) a skipped test is a failure: CI must run every test."""
    if not FULL or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped:
        for report in skipped:
            reporter.write_line(f"CLAW_FULL=1 and skipped: {report.nodeid}: {report.longrepr}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def scale(short: int, full: int) -> int:
    """A loop bound: ``short`` by default, ``full`` when CLAW_FULL=1."""
    return full if FULL else short


class DaemonProcess:
    """One real daemon subprocess for a workspace."""

    def __init__(self, workspace: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.workspace = workspace
        self.args = list(args)
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
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
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(self.workspace), *self.args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=str(self.workspace),
        )
        return self.proc

    def start(self, timeout_s: float = 20.0) -> DaemonProcess:
        """Start and wait until SERVING; fail the test with the log if it does not come up."""
        self.spawn()
        self.wait_ready(timeout_s)
        return self

    def wait_ready(self, timeout_s: float = 20.0) -> None:
        assert self.proc is not None
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                pytest.fail(f"daemon exited with {self.proc.returncode}:\n{self.log()}")
            if self.socket_path.exists() and health_status(self.address) == "SERVING":
                return
            time.sleep(0.05)
        pytest.fail(f"daemon did not become ready in {timeout_s}s:\n{self.log()}")

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
        code = self.proc.wait(timeout_s)
        self._log.close()
        return code

    def kill(self) -> None:
        """SIGKILL and reap."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self._log.close()

    def stop(self) -> None:
        """Teardown: SIGTERM, then SIGKILL if it hangs."""
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None and not self._log.closed:
                self._log.close()
            return
        try:
            self.terminate(15)
        except subprocess.TimeoutExpired:
            self.kill()


def health_status(address: str, service: str = "") -> str:
    """The daemon's health status name, or "UNREACHABLE"."""
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
        except grpc.RpcError:
            return "UNREACHABLE"
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def spawn_daemon(workspace: Path) -> Iterator[Any]:
    """A factory: ``spawn_daemon(*args, workspace=..., env=..., start=True)``; all are stopped at teardown."""
    started: list[DaemonProcess] = []

    def make(*args: str, workspace_path: Path | None = None, env: dict[str, str] | None = None, start: bool = True):
        d = DaemonProcess(workspace_path or workspace, *args, env=env)
        started.append(d)
        return d.start() if start else d

    yield make
    for d in started:
        d.stop()


@pytest.fixture
def daemon(spawn_daemon: Any) -> DaemonProcess:
    """A running daemon on ``workspace``."""
    d: DaemonProcess = spawn_daemon()
    return d


@pytest.fixture
def client(daemon: DaemonProcess) -> Iterator[SessionClient]:
    """A sync client of ``daemon`` (no auto-start)."""
    c = daemon.client()
    yield c
    c.close()


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
