"""A headless Chromium for the viewer's browser tests (``claw-sessiond ui`` itself: tests/helpers/ui.py).

``Browser`` runs ``tests/browser/drive.mjs`` (playwright-core
driving the system's headless Chromium, /usr/bin/chromium-headless-shell or ``CHROMIUM``), one JSON command a line
on its stdin and one reply a line on its stdout; every wait is bounded and both are stopped by pid. The headless
shell (Debian's ``chromium-headless-shell``, what Playwright itself runs for headless Chromium) is the engine of the
``chromium`` browser without the browser's user interface, which cost the browser tests about three times the CPU.
``missing()`` says what is not installed (``scripts/setup-tests`` installs both; a skip fails the
full tier).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests" / "browser" / "drive.mjs"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium-headless-shell")
#: The longest one browser command may take (a page load on a busy two-core machine).
COMMAND_S = 60.0


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not Path(CHROMIUM).is_file():
        package = "chromium-headless-shell"
        return f"no Chromium at {CHROMIUM} (install the '{package}' package; scripts/setup-tests does as root)"
    if shutil.which("node") is None:
        return "no node (Node.js 20+)"
    if not (ROOT / "tests" / "browser" / "node_modules" / "playwright-core").is_dir():
        return "no tests/browser/node_modules (scripts/setup-tests runs npm ci there)"
    return None


def _lines(stream: IO[str], into: queue.Queue[str | None]) -> None:
    try:
        for line in stream:
            into.put(line.rstrip("\n"))
    except ValueError:  # the pipe was closed at teardown
        pass
    into.put(None)


class Browser:
    """Headless Chromium through ``tests/browser/drive.mjs``; ``do(op, **fields)`` returns the reply."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            ["node", str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            cwd=DRIVER.parent,
            env={**os.environ, "CHROMIUM": CHROMIUM},
        )
        self.replies: queue.Queue[str | None] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=_lines, args=(self.proc.stdout, self.replies), daemon=True).start()

    def do(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one command and wait (at most :data:`COMMAND_S`) for its reply; a failed command fails the test."""
        reply = self.send(op, **fields)
        if not reply.get("ok"):
            pytest.fail(f"browser: {op} {fields} failed: {reply.get('error')}")
        return reply

    def send(self, op: str, **fields: Any) -> dict[str, Any]:
        """Like :meth:`do`, but a failed command is returned (``ok`` False, ``error``)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        try:
            line = self.replies.get(timeout=COMMAND_S)
        except queue.Empty:
            pytest.fail(f"browser: no reply to {op} in {COMMAND_S} s:\n{self.log()}")
        if line is None:
            pytest.fail(f"browser driver exited ({self.proc.poll()}) during {op}:\n{self.log()}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def wait(self, selector: str, timeout_s: float = 15.0) -> None:
        self.do("wait", selector=selector, timeout_ms=int(timeout_s * 1000))

    def count(self, selector: str) -> int:
        return int(self.do("count", selector=selector)["count"])

    def texts(self, selector: str) -> list[str]:
        return list(self.do("texts", selector=selector)["texts"])

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """Close the browser, then end the driver by its pid (SIGKILL after 15 s)."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps({"op": "close"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(15)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()
