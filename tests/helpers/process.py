"""Waiting for processes and conditions; daemons found and stopped by their pid."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from tests.helpers.daemon import DaemonProcess, health_status


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


def wait_for(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``check()`` until it is true; fail the test ("timed out waiting for WHAT") after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def is_root() -> bool:
    """True when running as uid 0."""
    return os.geteuid() == 0


def daemons_for(workspace: Path) -> list[psutil.Process]:
    """Every ``claw_sessiond serve`` process whose command line names ``workspace`` (auto-started ones too)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "claw_sessiond" in cmd and "serve" in cmd and str(workspace) in cmd:
            found.append(proc)
    return found


def stop_pid(pid: int) -> None:
    """SIGTERM ``pid`` and wait until it is gone (SIGKILL after 20 s)."""
    with_timeout = time.monotonic() + 20
    try:
        os.kill(pid, signal.SIGTERM)
        while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            if time.monotonic() > with_timeout:
                os.kill(pid, signal.SIGKILL)
                break
            time.sleep(0.05)
    except (ProcessLookupError, psutil.NoSuchProcess):
        pass


def stop_lock_holder(workspace: Path) -> None:
    """Stop the daemon whose pid is in the workspace lock file (one a client auto-started), if any."""
    try:
        text = (workspace / ".claw" / "sessiond.lock").read_text().strip()
    except OSError:
        return
    if text.isdigit():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(text), signal.SIGTERM)
            wait_until(lambda: not pid_alive(int(text)), 20)
