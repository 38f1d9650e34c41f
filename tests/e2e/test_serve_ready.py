"""``serve`` on a terminal: a ready line for people on stdout beside the structured log on stderr,
and the log names the ports it really bound (``--tcp 127.0.0.1:0``, ``--metrics 127.0.0.1:0``).

The real ``claw-sessiond serve`` with stdout on a real pseudo-terminal, stopped with SIGINT (Ctrl-C)
by its pid.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.cli import claw
from tests.helpers.process import stop_pid

INSTALLED = Path(sys.executable).with_name("claw-sessiond")
#: A structured log line: time, level, logger, then the event.
LOG_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR) claw_sessiond[.\w]* event=\w+"
)


def serve_on_a_terminal(workspace: Path, *args: str) -> tuple[str, str, int, dict[str, object]]:
    """Run ``serve`` with stdout on a pty until its ready text is complete, then Ctrl-C it.

    Returns:
        stdout, stderr, the exit code, and the endpoint file as it was while serving.
    """
    leader, follower = pty.openpty()
    log = workspace.parent / "serve-stderr.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [str(INSTALLED), "serve", "--workspace", str(workspace), *args],
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=err,
            cwd=workspace,
        )
    os.close(follower)
    out = b""
    try:
        end = time.monotonic() + 60
        while b"next:" not in out and time.monotonic() < end and proc.poll() is None:
            if select.select([leader], [], [], 0.2)[0]:
                try:
                    out += os.read(leader, 65536)
                except OSError:
                    break
        assert b"next:" in out, (out, log.read_text())
        endpoint = json.loads((workspace / ".claw" / "endpoint.json").read_text())
        proc.send_signal(signal.SIGINT)  # Ctrl-C, as the ready line says
        code = proc.wait(30)
    finally:
        if proc.poll() is None:
            stop_pid(proc.pid)
        os.close(leader)
    return out.decode().replace("\r\n", "\n"), log.read_text(), code, endpoint


@pytest.mark.smoke
def test_serve_says_it_is_ready_and_logs_the_ports_it_bound(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out, err, code, endpoint = serve_on_a_terminal(workspace, "--tcp", "127.0.0.1:0", "--metrics", "127.0.0.1:0")
    assert code == 0, err
    lines = out.strip().splitlines()
    tcp = str(endpoint["tcp"])
    assert tcp.startswith("127.0.0.1:") and not tcp.endswith(":0")
    assert (
        lines[0]
        == f"claw-sessiond ready: pid {lines[0].split()[3]} serves {workspace} on "
        + str(workspace / ".claw" / "sessiond.sock")
        + f" and TCP {tcp}"
    ), lines
    assert lines[1] == f"  store: sqlite {workspace / '.claw' / 'sessions.db'}"
    assert lines[2] == f"  stop:  Ctrl-C here, or: claw-sessiond stop --workspace {workspace}"
    assert lines[3] == f"  next:  claw-sessiond ls --workspace {workspace}   (in another terminal)"
    # the log stays one parseable event a line, on stderr only, and names the real ports
    logged = err.strip().splitlines()
    assert logged and all(LOG_LINE.match(line) for line in logged), logged
    assert "claw-sessiond ready" not in err and "event=ready " in err and "event=stopped" in err
    assert re.search(rf"event=tcp_listening address={re.escape(tcp)} ", err), err
    metrics = re.search(r"event=metrics_listening address=127\.0\.0\.1:(\d+) ", err)
    assert metrics is not None and int(metrics.group(1)) > 0, err


def test_serve_off_a_terminal_prints_only_its_log(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    proc = subprocess.Popen(
        [str(INSTALLED), "serve", "--workspace", str(workspace)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workspace,
    )
    try:
        end = time.monotonic() + 60
        sock = workspace / ".claw" / "sessiond.sock"
        while time.monotonic() < end and proc.poll() is None:
            if sock.exists() and claw("status", "--workspace", str(workspace)).returncode == 0:
                break
            time.sleep(0.2)
        probe = socket.socket(socket.AF_UNIX)
        probe.connect(str(sock))
        probe.close()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            stop_pid(proc.pid)
    assert proc.returncode == 0 and out == b"", out  # a pipe (systemd, a log file) gets the log alone
    assert b"event=ready " in err
