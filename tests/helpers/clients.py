"""Client processes that talk JSON lines: start one, read what it prints, tell it what to do; stop them all by pid."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from typing import Any

import pytest


class ClientProcesses:
    """Python client processes started by a test (``python -c CODE ARGS``), each stopped by its pid in :meth:`stop`."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[str]] = []

    def start(self, code: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        p = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.started.append(p)
        return p

    def stop(self) -> None:
        for p in self.started:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)
                os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
            for stream in (p.stdin, p.stdout):
                if stream is not None:
                    stream.close()


def read_json(p: subprocess.Popen[str], timeout_s: float = 20.0) -> dict[str, Any]:
    """The next JSON line the process prints (fails the test if it exits or hangs)."""
    assert p.stdout is not None
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        ready, _, _ = select.select([p.stdout], [], [], 0.1)
        if ready:
            line = p.stdout.readline()
            if not line:
                pytest.fail(f"process {p.pid} exited ({p.wait(5)}) without output")
            return dict(json.loads(line))
    pytest.fail(f"process {p.pid} printed nothing in {timeout_s}s")


def send(p: subprocess.Popen[str], line: str) -> None:
    """Write one line to the process's stdin."""
    assert p.stdin is not None
    p.stdin.write(line + "\n")
    p.stdin.flush()
