"""The daemon process: lock, socket, permissions, large loads, graceful stop, generated code, API surface.

Tests that start, stop or signal a daemon, or check the files of a fresh ``.claw/``, have a daemon of
their own; the others share the module's (``module_daemon``), each on a session of its own.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest

from claw_sessiond_client import Message, SessionClient, ShuttingDownError, default_socket_path
from tests.helpers.daemon import ROOT, DaemonProcess, health_status
from tests.helpers.inspect import stored
from tests.helpers.process import wait_for


@pytest.mark.smoke
@pytest.mark.sqlite_only("checks the modes of the SQLite files under .claw/ (sessions.db, -wal)")
def test_state_is_private(daemon: DaemonProcess, workspace: Path) -> None:
    claw = workspace / ".claw"
    with daemon.client() as c:
        c.load("p", str(workspace))
        c.append("p", Message.user("secret"))
    assert stat.S_IMODE(claw.stat().st_mode) == 0o700
    for name in ("sessions.db", "sessions.db-wal", "sessiond.lock"):
        assert stat.S_IMODE((claw / name).stat().st_mode) == 0o600, name
    sock = claw / "sessiond.sock"
    assert stat.S_ISSOCK(sock.lstat().st_mode) and stat.S_IMODE(sock.lstat().st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as uid 65534")
def test_other_user_cannot_connect(daemon: DaemonProcess, workspace: Path, tmp_path: Path) -> None:
    # Make every parent traversable so the test proves .claw's own permissions.
    for parent in [workspace, *workspace.parents]:
        if parent == Path("/"):
            break
        os.chmod(parent, os.stat(parent).st_mode | 0o011)
    probe = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        "    s.connect(sys.argv[1]); print('connected')\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
    )
    out = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            sys.executable,
            "-c",
            probe,
            str(daemon.socket_path),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.stdout.startswith("refused 13"), out.stdout + out.stderr


def test_second_daemon_is_refused_and_first_keeps_serving(spawn_daemon, daemon: DaemonProcess, workspace: Path) -> None:
    second = spawn_daemon(start=False)
    proc = second.spawn()
    assert proc.wait(30) == 1
    log = second.log()
    assert "sessiond.lock" in log and f"pid {daemon.proc.pid}" in log
    assert health_status(daemon.address) == "SERVING"
    with daemon.client() as c:
        c.load("still", str(workspace))
        assert c.append("still", Message.user("here")).last_position == 1


def test_lock_of_a_killed_daemon_does_not_block_a_new_one(spawn_daemon, workspace: Path) -> None:
    first = spawn_daemon()
    first.kill()
    assert (workspace / ".claw" / "sessiond.sock").exists(), "a killed daemon leaves its socket file"
    started = time.monotonic()
    second = spawn_daemon()
    assert time.monotonic() - started < 15
    assert health_status(second.address) == "SERVING"


def test_a_non_socket_file_at_the_socket_path_is_not_replaced(spawn_daemon, workspace: Path) -> None:
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    (claw / "sessiond.sock").write_text("precious")
    d = spawn_daemon(start=False)
    assert d.spawn().wait(30) == 1
    assert "not a socket" in d.log()
    assert (claw / "sessiond.sock").read_text() == "precious"


def test_deep_workspace_uses_a_short_socket_path(spawn_daemon, tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 5)
    deep.mkdir(parents=True)
    assert len(os.fsencode(deep / ".claw" / "sessiond.sock")) > 107
    import tempfile

    runtime = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # short, like /run/user/UID
    d = spawn_daemon(workspace_path=deep, env={"XDG_RUNTIME_DIR": str(runtime)})
    expected = default_socket_path(deep, str(runtime))
    assert d.socket_path == expected and expected.exists() and len(os.fsencode(expected)) <= 107
    script = (
        "import sys\n"
        "from claw_sessiond_client import Message, SessionClient\n"
        "c = SessionClient(sys.argv[1], autostart=False)\n"
        "c.load('deep', sys.argv[1]); print(c.append('deep', Message.user('hi')).last_position)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(deep)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
    )
    assert out.stdout.strip() == "1", out.stderr
    d.stop()
    import shutil

    shutil.rmtree(runtime)


def test_session_larger_than_4_mib_loads_with_default_channel_options(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client, workspace = module_client, module_daemon.workspace
    client.load(sid, str(workspace))
    chunk = "x" * (512 * 1024)
    for i in range(12):  # 6 MiB
        client.append(sid, Message.user(f"{i}:{chunk}"))
    loaded = client.load(sid, str(workspace))
    assert len(loaded.messages) == 12
    assert sum(len(m.content) for m in loaded.messages) > 6 * 1024 * 1024
    assert [m.content.split(":")[0] for m in loaded.messages] == [str(i) for i in range(12)]


def test_sigterm_finishes_in_flight_writes_and_exits_zero(daemon: DaemonProcess, workspace: Path) -> None:
    results: list[object] = []

    def writer() -> None:
        with daemon.client(retry_window_s=0) as c:
            for i in range(10_000):
                try:
                    results.append(c.append("term", Message.user(f"m{i}")).last_position)
                except ShuttingDownError as exc:
                    results.append(exc)
                    return
                except Exception as exc:  # the socket may close between calls
                    results.append(exc)
                    return

    with daemon.client() as c:
        c.load("term", str(workspace))
    thread = threading.Thread(target=writer)
    thread.start()
    # Stop with writes in flight: once the writer has been acknowledged a few times and is still going.
    wait_for(
        lambda: sum(isinstance(r, int) for r in results) >= 20 or not thread.is_alive(),
        60,
        "the writer's first acknowledged appends",
    )
    assert thread.is_alive(), f"the writer stopped before the SIGTERM, so nothing was in flight: {results[-1:]}"
    assert daemon.terminate() == 0
    thread.join(30)
    acked = [r for r in results if isinstance(r, int)]
    assert acked, "the writer made progress before the stop"
    log = daemon.log()
    assert "event=stopping" in log and "event=stopped" in log
    claw = workspace / ".claw"
    assert not (claw / "sessiond.sock").exists()
    assert stored(workspace).write_ahead_log_empty(), "WAL checkpointed (TRUNCATE) at stop"
    assert len(stored(workspace).events("term")) >= len(acked), "every acknowledged append is durable"


def test_sigint_also_stops_gracefully(daemon: DaemonProcess) -> None:
    assert daemon.proc is not None
    daemon.proc.send_signal(signal.SIGINT)
    assert daemon.proc.wait(30) == 0


def test_health_and_reflection_are_served(module_daemon: DaemonProcess) -> None:
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    assert health_status(module_daemon.address, "claw.sessiond.v1.SessionService") == "SERVING"
    with grpc.insecure_channel(module_daemon.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = list(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")])))
    names = {s.name for s in replies[0].list_services_response.service}
    assert {"claw.sessiond.v1.SessionService", "grpc.health.v1.Health"} <= names


def test_tcp_is_off_by_default_and_loopback_only(module_daemon: DaemonProcess) -> None:
    import psutil

    assert module_daemon.proc is not None
    workspace = module_daemon.workspace
    inet = [c for c in psutil.Process(module_daemon.proc.pid).net_connections(kind="inet")]
    assert inet == []
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bad = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(workspace), "--tcp", f"0.0.0.0:{port}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "loopback" in bad.stderr


def test_bad_option_exits_2_naming_the_field(workspace: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(workspace / "missing")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "workspace: not an existing folder" in out.stderr


def test_generated_stubs_match_the_proto() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_protos.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def test_public_surface_is_sorted_and_complete() -> None:
    import claw_sessiond_client

    exported = claw_sessiond_client.__all__
    assert exported == sorted(exported)
    public = {n for n in dir(claw_sessiond_client) if not n.startswith("_")}
    modules = {"aio", "api", "contrib", "endpoint", "errors", "install", "paths", "sync", "tcp"}
    assert public - modules - set(exported) == set(), "public names missing from __all__"


def test_every_domain_error_has_a_status_a_reason_and_a_client_twin() -> None:
    from claw_sessiond import errors as daemon_errors
    from claw_sessiond.rpc.edge import status_for
    from claw_sessiond_client import errors as client_errors

    def subclasses(cls: type) -> list[type]:
        out = []
        for sub in cls.__subclasses__():
            out += [sub, *subclasses(sub)]
        return out

    for cls in subclasses(daemon_errors.SessiondError):
        exc = cls("x")
        assert status_for(exc) is not None and status_for(exc) != grpc.StatusCode.OK
        assert isinstance(exc.reason, client_errors.Reason)
        twin = getattr(client_errors, cls.__name__)
        assert issubclass(twin, client_errors.SessiondError)


def test_client_connects_by_workspace(module_daemon: DaemonProcess, sid: str) -> None:
    workspace = module_daemon.workspace
    with SessionClient(workspace, autostart=False) as c:
        assert c.load(sid, str(workspace)).session.id == sid
