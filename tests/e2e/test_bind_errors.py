"""``serve --tcp`` on an address it cannot bind ends with one clear line; ``:0`` reports the port it got.

A taken port, a host that does not resolve, an address not on this machine,
and a privileged port for an unprivileged user each end the start with
exit 1 (a start-up failure, docs/operations.md) and one line naming the
address and the operating system's reason: no Python traceback, no grpc
C-core log line. ``--tcp 127.0.0.1:0`` logs and records (``.claw/endpoint.json``)
the port the kernel chose, and that port answers. Real daemon subprocesses,
a real listener holding the port, a real second uid through ``setpriv``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.daemon import DaemonProcess, free_port, health_status
from tests.helpers.process import is_root, wait_exit, wait_refused

pytestmark = pytest.mark.backend_neutral("binding the TCP listener happens before any request reaches storage")

NOBODY = 65534


def _refusal(d: DaemonProcess) -> str:
    """Wait for the start to fail; return the log after checking exit 1 and no traceback."""
    d.spawn()
    try:
        code = wait_refused(d)
    finally:
        d.stop()
    log = d.log()
    assert code == 1, log
    assert "Traceback" not in log, log
    assert "add_port.cc" not in log, f"grpc's own log line leaked:\n{log}"
    return log


@pytest.mark.smoke
def test_a_taken_port_is_one_line_naming_the_address_and_the_cause(workspace: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        log = _refusal(DaemonProcess(workspace, "--tcp", f"127.0.0.1:{port}"))
    errors = [line for line in log.splitlines() if line.startswith("claw-sessiond: error:")]
    assert errors == [f"claw-sessiond: error: tcp 127.0.0.1:{port}: cannot bind: Address already in use"], log
    assert not (workspace / ".claw" / "endpoint.json").exists(), "a failed start must not advertise an endpoint"


@pytest.mark.parametrize(
    ("host", "cause"),
    [
        ("no-such-host.invalid", "cannot resolve the host"),
        ("192.0.2.1", "Cannot assign requested address"),  # TEST-NET-1: on no interface here
    ],
    ids=["unknown-host", "not-on-this-machine"],
)
def test_an_address_that_cannot_be_bound_is_one_line(workspace: Path, host: str, cause: str) -> None:
    address = f"{host}:{free_port()}"
    log = _refusal(DaemonProcess(workspace, "--tcp", address, "--allow-non-loopback"))
    assert f"claw-sessiond: error: tcp {address}: cannot bind: {cause}" in log, log


@pytest.fixture
def public() -> Iterator[Path]:
    """A folder under /tmp that uid 65534 can reach (tmp_path's parents are root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="bind-", dir="/tmp"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(not is_root(), reason="a second uid (setpriv) needs root")
def test_a_privileged_port_for_an_unprivileged_user_is_one_line(public: Path) -> None:
    start = int(Path("/proc/sys/net/ipv4/ip_unprivileged_port_start").read_text())
    netns: list[str] = []
    host, extra = "127.0.0.1", []
    if start == 0:  # containers often make every port unprivileged; a new network namespace has the default, 1024
        netns, start = ["unshare", "--net", "--"], 1024
        host, extra = "0.0.0.0", ["--allow-non-loopback"]  # its loopback interface is down
    port = start - 1
    ws = public / "ws"
    ws.mkdir(mode=0o700)
    os.chown(ws, NOBODY, NOBODY)
    log_path = public / "serve.log"
    env = {k: v for k, v in os.environ.items() if k != "CLAW_DATABASE_URL"}  # its own SQLite file
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    serve = [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(ws), "--tcp", f"{host}:{port}", *extra]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([*netns, *as_nobody, *serve], stdout=log, stderr=subprocess.STDOUT, cwd="/", env=env)
    code = wait_exit(proc, 60)
    text = log_path.read_text(errors="replace")
    assert code == 1, text
    assert f"claw-sessiond: error: tcp {host}:{port}: cannot bind: Permission denied" in text, text
    assert "Traceback" not in text and "add_port.cc" not in text, text


def test_port_zero_logs_and_records_the_port_it_got(spawn_daemon, workspace: Path) -> None:
    d: DaemonProcess = spawn_daemon("--tcp", "127.0.0.1:0")
    found = re.search(r"event=tcp_listening address=127\.0\.0\.1:(\d+) ", d.log())
    assert found, d.log()
    port = int(found.group(1))
    assert port != 0, d.log()
    record = json.loads((workspace / ".claw" / "endpoint.json").read_text())
    assert record["tcp"] == f"127.0.0.1:{port}", record
    cert = workspace / ".claw" / "tcp-cert.pem"  # the port speaks TLS only (test_tcp_tls.py)
    assert health_status(f"127.0.0.1:{port}", cert=cert) == "SERVING"  # health needs no token (test_tcp_auth.py)
    assert d.terminate() == 0
