"""Discovery by file (issue 16): ``.claw/endpoint.json``, written by the daemon, read by every client.

Real daemons, real client processes with their own environments; the deep
workspaces make the socket fall back to a short path that depends on
``XDG_RUNTIME_DIR`` and, before this file existed, on how the workspace was spelled.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond import __version__
from claw_sessiond_client import SessionClient
from claw_sessiond_client.endpoint import ENDPOINT_FILE, discover_socket, read_endpoint
from claw_sessiond_client.paths import default_socket_path
from tests.helpers.daemon import DaemonProcess, free_port
from tests.helpers.process import pid_alive, wait_for

CLIENT = r"""
import json, os, sys
from claw_sessiond_client import Message, SessionClient
workspace, text = sys.argv[1], sys.argv[2]
client = SessionClient(workspace, autostart=sys.argv[3] == "autostart")
r = client.append("shared", Message.user(text))
print(json.dumps({"socket": str(client.socket_path), "position": r.last_position,
                  "daemon_pid": client.stats()["pid"]}), flush=True)
client.close()
"""


pytestmark = pytest.mark.backend_neutral("discovery by .claw/endpoint.json: where clients find the daemon")


@pytest.fixture
def runtime_dirs() -> Iterator[list[Path]]:
    """Three short private folders, as ``XDG_RUNTIME_DIR`` values (removed at teardown)."""
    made = [Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp")) for _ in range(3)]
    yield made
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def deep_workspace(tmp_path: Path) -> tuple[Path, Path]:
    """(the real folder, a symlink to it): deep enough that the socket needs the short fallback path."""
    real = tmp_path.joinpath(*["a-rather-long-folder-name"] * 5, "ws")
    real.mkdir(parents=True)
    assert len(os.fsencode(real / ".claw" / "sessiond.sock")) > 107
    link = tmp_path / "ln"
    link.symlink_to(real)
    return real, link


def run_client(workspace: Path, text: str, runtime: Path | None, *, autostart: bool = False) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "CLAW_SESSIOND_WORKSPACE")}
    if runtime is not None:
        env["XDG_RUNTIME_DIR"] = str(runtime)
    out = subprocess.run(
        [sys.executable, "-c", CLIENT, str(workspace), text, "autostart" if autostart else "-"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd="/",
    )
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


@pytest.mark.smoke
def test_the_daemon_writes_where_it_listens_and_removes_it_at_stop(spawn_daemon: Any, workspace: Path) -> None:
    port = free_port()
    d: DaemonProcess = spawn_daemon("--tcp", f"127.0.0.1:{port}")
    path = workspace / ".claw" / ENDPOINT_FILE
    info = path.lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
    data = json.loads(path.read_text())
    assert d.proc is not None
    assert data["format"] == 1 and data["pid"] == d.proc.pid and data["version"] == __version__
    assert data["socket"] == str(d.socket_path) and os.path.isabs(data["socket"])
    assert data["workspace"] == os.path.realpath(workspace) and data["tcp"] == f"127.0.0.1:{port}"
    assert data["started_at"].endswith("Z") and data["process_start"] > 0
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(f".{ENDPOINT_FILE}")] == []
    endpoint = read_endpoint(workspace)
    assert endpoint is not None and endpoint.socket == d.socket_path and endpoint.tcp == f"127.0.0.1:{port}"
    assert d.terminate() == 0
    assert not path.exists()  # a graceful stop removes it


def test_a_planted_link_is_replaced_never_followed(spawn_daemon: Any, workspace: Path, tmp_path: Path) -> None:
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    decoy = tmp_path / "decoy"
    decoy.write_text("precious")
    (claw / ENDPOINT_FILE).symlink_to(decoy)
    spawn_daemon()
    assert decoy.read_text() == "precious"
    assert stat.S_ISREG((claw / ENDPOINT_FILE).lstat().st_mode)


def test_a_stale_or_foreign_endpoint_file_is_not_used(workspace: Path, tmp_path: Path) -> None:
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    gone = subprocess.Popen(["true"])
    gone.wait(10)
    record = {"format": 1, "socket": "/nonexistent/x.sock", "pid": gone.pid, "version": "0"}
    (claw / ENDPOINT_FILE).write_text(json.dumps(record))
    assert read_endpoint(workspace) is None  # its daemon is gone: the path rule applies
    assert discover_socket(workspace, None) == default_socket_path(workspace, None)
    (claw / ENDPOINT_FILE).write_text(json.dumps({**record, "pid": os.getpid()}))
    assert read_endpoint(workspace) is not None
    (claw / ENDPOINT_FILE).write_text(json.dumps({**record, "pid": os.getpid(), "format": 2}))
    assert read_endpoint(workspace) is None  # a format this client does not know
    (claw / ENDPOINT_FILE).unlink()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({**record, "pid": os.getpid()}))
    (claw / ENDPOINT_FILE).symlink_to(elsewhere)
    assert read_endpoint(workspace) is None  # a link is not the daemon's file
    (claw / ENDPOINT_FILE).unlink()
    (claw / ENDPOINT_FILE).write_text(json.dumps({**record, "pid": os.getpid()}))
    os.chmod(claw, 0o777)
    try:
        assert read_endpoint(workspace) is None  # others could have written it
    finally:
        os.chmod(claw, 0o700)


def test_clients_with_other_runtime_dirs_and_a_symlinked_spelling_reach_the_same_daemon(
    spawn_daemon: Any, tmp_path: Path, runtime_dirs: list[Path]
) -> None:
    real, link = deep_workspace(tmp_path)
    first, second, third = runtime_dirs
    d: DaemonProcess = spawn_daemon(workspace_path=real, env={"XDG_RUNTIME_DIR": str(first)})
    assert d.socket_path.parent == first / "claw-sessiond"
    # The path rule alone would send these clients elsewhere: that is what the endpoint file fixes.
    assert default_socket_path(link, str(second)) != d.socket_path
    a = run_client(link, "via the link", second)
    b = run_client(real, "via the real path", third)
    c = run_client(link, "without XDG_RUNTIME_DIR", None)
    assert d.proc is not None
    for reply in (a, b, c):
        assert reply["socket"] == str(d.socket_path) and reply["daemon_pid"] == d.proc.pid
    assert [a["position"], b["position"], c["position"]] == [1, 2, 3]


def test_racing_autostarts_from_different_environments_end_with_one_daemon(
    tmp_path: Path, runtime_dirs: list[Path]
) -> None:
    real, link = deep_workspace(tmp_path)
    first, second, _ = runtime_dirs
    env = {k: v for k, v in os.environ.items() if k != "CLAW_SESSIOND_WORKSPACE"}
    procs = []
    for workspace, runtime, text in ((real, first, "a"), (link, second, "b")):
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", CLIENT, str(workspace), text, "autostart"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**env, "XDG_RUNTIME_DIR": str(runtime)},
                cwd="/",
            )
        )
    daemon_pid = 0
    try:
        replies = []
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
            replies.append(json.loads(out))
        daemon_pid = replies[0]["daemon_pid"]
        assert replies[1]["daemon_pid"] == daemon_pid and replies[0]["socket"] == replies[1]["socket"]
        assert sorted(r["position"] for r in replies) == [1, 2]
        endpoint = read_endpoint(real)
        assert endpoint is not None and endpoint.pid == daemon_pid
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        pid = daemon_pid or (json.loads((real / ".claw" / ENDPOINT_FILE).read_text())["pid"])
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not pid_alive(pid), 20, "the auto-started daemon to stop")


def test_the_python_client_follows_a_daemon_that_moved(
    spawn_daemon: Any, tmp_path: Path, runtime_dirs: list[Path]
) -> None:
    """A client that knew one socket reaches the daemon's successor at another one (no auto-start)."""
    real, _link = deep_workspace(tmp_path)
    first, second, _ = runtime_dirs
    d: DaemonProcess = spawn_daemon(workspace_path=real, env={"XDG_RUNTIME_DIR": str(first)})
    with SessionClient(real, autostart=False, retry_window_s=20) as c:
        c.load("s", "/tmp")
        assert c.socket_path == d.socket_path
        assert d.terminate() == 0
        successor: DaemonProcess = spawn_daemon(workspace_path=real, env={"XDG_RUNTIME_DIR": str(second)})
        assert successor.socket_path != d.socket_path
        c.load("s", "/tmp")
        assert c.socket_path == successor.socket_path
