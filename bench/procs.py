"""Processes the benchmark starts: the daemon, the echo server, workers. Each is stopped by its pid.

Every wait here is bounded in time; a process that does not answer in time
is killed (by pid) and the benchmark fails with its log. Every script starts its
daemons with :class:`Daemon` and reads a process's CPU time with :func:`cpu_s`.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import grpc
import psutil
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.echo_server import METHOD

ROOT = Path(__file__).resolve().parent.parent
_LIBC = ctypes.CDLL(None, use_errno=True)


class BenchError(RuntimeError):
    """A benchmark step failed (a process did not start, a worker crashed)."""


def cpu_s(pid: int) -> float:
    """The CPU seconds (user + system) process ``pid`` has used so far: every thread, ended ones too.

    Read from the kernel's CPU clock of the process (``clock_getcpuclockid``), in nanoseconds, so a
    single call's cost is resolved (``/proc/<pid>/stat`` counts in 10 ms ticks; the threads' own
    ``schedstat`` misses the threads that have ended).
    """
    clock = ctypes.c_int()
    err = _LIBC.clock_getcpuclockid(pid, ctypes.byref(clock))
    if err:
        raise BenchError(f"no CPU clock for pid {pid}: {os.strerror(err)}")
    return time.clock_gettime(clock.value)


def stop(proc: subprocess.Popen[Any], timeout_s: float = 20.0) -> None:
    """SIGTERM the process by its pid, wait; SIGKILL if it does not exit in time."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)


def _healthy(address: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=1)
        except grpc.RpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def _echo_answers(address: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        try:
            channel.unary_unary(METHOD)(b"ping", timeout=1)
        except grpc.RpcError:
            return False
        return True


class Daemon:
    """``python -m claw_sessiond serve`` on a workspace; ``ready_s`` is spawn-to-SERVING time.

    ``checkout``: run another checkout's daemon (a folder holding its ``daemon/`` and
    ``clients/python/``) from that source with this interpreter, for a before/after in one sitting.
    """

    def __init__(self, workspace: Path, *extra: str, checkout: Path | None = None) -> None:
        from claw_sessiond_client.paths import default_socket_path

        self.workspace = workspace
        self.socket = default_socket_path(workspace, os.environ.get("XDG_RUNTIME_DIR"))
        self.address = f"unix:{self.socket}"
        self.log_path = workspace / "daemon.log"
        env = None
        if checkout is not None:
            env = {**os.environ, "PYTHONPATH": f"{checkout / 'daemon'}{os.pathsep}{checkout / 'clients' / 'python'}"}
        who = f"{checkout}: daemon" if checkout is not None else "daemon"
        log = open(self.log_path, "ab")  # noqa: SIM115 - closed in close()
        self._log = log
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(workspace), *extra],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=str(workspace),
            env=env,
        )
        deadline = started + 60
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                self._log.close()
                raise BenchError(f"{who} exited with {self.proc.returncode}: {self.log_path.read_text()[-2000:]}")
            if self.socket.exists() and _healthy(self.address):
                break
            time.sleep(0.005)
        else:
            self.close()
            raise BenchError(f"{who} not SERVING within 60 s; log {self.log_path}")
        self.ready_s = time.perf_counter() - started

    @property
    def pid(self) -> int:
        """The daemon's process id."""
        return self.proc.pid

    def close(self) -> None:
        """Stop the daemon (SIGTERM by pid: it checkpoints and exits 0)."""
        stop(self.proc)
        self._log.close()


class EchoServer:
    """``python -m bench.echo_server`` on a Unix socket (``commit_db``: one durable commit per call)."""

    def __init__(self, socket_path: Path, commit_db: Path | None = None) -> None:
        self.socket = socket_path
        self.address = f"unix:{socket_path}"
        extra = ["--commit", str(commit_db)] if commit_db is not None else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.echo_server", "--socket", str(socket_path), *extra], cwd=str(ROOT)
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"echo server exited with {self.proc.returncode}")
            if socket_path.exists() and _echo_answers(self.address):
                return
            time.sleep(0.01)
        self.close()
        raise BenchError("echo server did not answer within 60 s")

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.proc.pid

    def close(self) -> None:
        """Stop the server by pid."""
        stop(self.proc)


class RssSampler:
    """Samples a process's RSS (psutil) every ``interval_s`` on a thread; ``peak`` is the maximum seen."""

    def __init__(self, pid: int, interval_s: float = 0.02) -> None:
        self._proc = psutil.Process(pid)
        self._interval_s = interval_s
        self._stop = threading.Event()
        self.peak = self._proc.memory_info().rss
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self.peak = max(self.peak, self._proc.memory_info().rss)
            except psutil.Error:
                return

    def close(self) -> int:
        """Stop sampling; return the peak RSS in bytes."""
        self._stop.set()
        self._thread.join(5)
        return self.peak


def _readline(stream: IO[bytes], deadline: float) -> bytes:
    buf = b""
    fd = stream.fileno()
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise BenchError("worker did not answer in time")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise BenchError(f"worker closed its output early: {buf[-500:]!r}")
            buf += chunk
    return buf


def run_workers(specs: list[dict[str, Any]], duration_s: float, start_timeout_s: float = 120.0) -> list[dict[str, Any]]:
    """Start one worker per spec, release them together, return their JSON results.

    Raises:
        BenchError: a worker failed to start, crashed, or overran its window.
    """
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.worker", json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=str(ROOT),
        )
        for spec in specs
    ]
    try:
        deadline = time.monotonic() + start_timeout_s
        pending = [b""] * len(procs)
        for i, p in enumerate(procs):
            assert p.stdout is not None
            pending[i] = _readline(p.stdout, deadline)
            if not pending[i].startswith(b"ready"):
                raise BenchError(f"worker {i} said {pending[i][:200]!r}")
        start = time.time() + 0.3
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(f"{start}\n".encode())
            p.stdin.flush()
        deadline = time.monotonic() + 0.3 + duration_s + 60
        results = []
        for p in procs:
            assert p.stdout is not None
            line = _readline(p.stdout, deadline)
            results.append(json.loads(line))
            p.wait(max(1.0, deadline - time.monotonic()))
        return results
    finally:
        for p in procs:
            stop(p, 5)
            for stream in (p.stdin, p.stdout):
                if stream is not None:
                    stream.close()
