"""Daemons with ``--metrics`` under the descriptor limits a service usually gets, and their scrapes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from tests.helpers.daemon import DaemonProcess, free_port

PRLIMIT = ["prlimit", "--nofile=1024:4096", "--"]


class LimitedDaemon(DaemonProcess):
    """A daemon started with soft/hard descriptor limits 1024/4096 (a common service default)."""

    prlimit: ClassVar[list[str]] = PRLIMIT

    def spawn(self) -> subprocess.Popen[bytes]:
        log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self._log = log
        self.proc = subprocess.Popen(
            [
                *self.prlimit,
                sys.executable,
                "-m",
                "claw_sessiond",
                "serve",
                "--workspace",
                str(self.workspace),
                *self.args,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=str(self.workspace),
        )
        return self.proc


def scrape_text(port: int, timeout_s: float = 10) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout_s) as r:
        return str(r.read().decode())


@contextlib.contextmanager
def limited_metrics_daemon(workspace: Path) -> Iterator[tuple[LimitedDaemon, int]]:
    """A running :class:`LimitedDaemon` with ``--metrics`` on a free loopback port: (daemon, port); stopped after."""
    port = free_port()
    d = LimitedDaemon(workspace, "--metrics", f"127.0.0.1:{port}")
    d.start()
    try:
        yield d, port
    finally:
        d.stop()
