"""Other local users (SPEC §5, §7): nothing of a workspace's sessions is reachable by another uid.

Root only: the probes run as uid 65534 through ``setpriv``. The daemon is
started from a shell whose umask is 000 and in a workspace that is 0777, so
only the daemon's own choices (umask 077, ``.claw/`` 0700, socket 0600)
keep the other user out. The parents of ``tmp_path`` are made traversable
for the test, and a positive control (a world-readable file next to
``.claw/``) proves the other user really gets that far.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from claw_sessiond_client import Message
from tests.helpers.daemon import DaemonProcess, health_status
from tests.helpers.figures import record
from tests.helpers.process import is_root, wait_refused

pytestmark = pytest.mark.skipif(not is_root(), reason="probing as another uid (setpriv) needs root")

NOBODY = 65534

PROBE = r"""
import json, os, socket, sys
out = {"uid": os.getuid()}
claw = sys.argv[1]
def attempt(name, fn):
    try:
        fn()
        out[name] = "ok"
    except OSError as exc:
        out[name] = type(exc).__name__ + ":" + str(exc.errno)
attempt("control_read", lambda: open(sys.argv[2], "rb").read())
attempt("list_claw", lambda: os.listdir(claw))
for f in ("sessions.db", "sessions.db-wal", "sessions.db-shm", "sessiond.lock", "sessiond.log"):
    attempt("read " + f, lambda f=f: open(os.path.join(claw, f), "rb").read(1))
def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(5)
        s.connect(sys.argv[3])
    finally:
        s.close()
attempt("connect", connect)
print(json.dumps(out))
"""


@pytest.fixture
def open_parents(tmp_path: Path) -> Iterator[None]:
    """Make every parent of tmp_path traversable by others (o+x) for the test; restore afterwards."""
    changed: list[tuple[Path, int]] = []
    for parent in [tmp_path, *tmp_path.parents]:
        mode = stat.S_IMODE(parent.stat().st_mode)
        if not mode & stat.S_IXOTH:
            os.chmod(parent, mode | stat.S_IXOTH)
            changed.append((parent, mode))
    try:
        yield
    finally:
        for parent, mode in changed:
            os.chmod(parent, mode)


def _probe_as_nobody(claw: Path, control: Path, sock: Path) -> dict[str, str]:
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    proc = subprocess.run(
        [*as_nobody, sys.executable, "-c", PROBE, str(claw), str(control), str(sock)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, str] = json.loads(proc.stdout)
    return result


def _start_with_umask_000(ws: Path, *args: str) -> DaemonProcess:
    old = os.umask(0)
    try:
        return DaemonProcess(ws, *args).start()
    finally:
        os.umask(old)


@pytest.mark.sqlite_only("reads the SQLite files under .claw/ as another uid")
def test_another_uid_can_neither_connect_nor_read(tmp_path: Path, open_parents: None) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.chmod(ws, 0o777)
    control = ws / "world-readable.txt"
    control.write_text("anyone may read this")
    os.chmod(control, 0o644)
    d = _start_with_umask_000(ws)
    try:
        with d.client() as c:  # data in the WAL, and a live -shm, while probing
            c.append("secret", [Message.user("the password is hunter2")])
        claw = ws / ".claw"
        for path, mode in (
            (claw, 0o700),
            (d.socket_path, 0o600),
            (claw / "sessions.db", 0o600),
            (claw / "sessions.db-wal", 0o600),
            (claw / "sessions.db-shm", 0o600),
            (claw / "sessiond.lock", 0o600),
        ):
            assert stat.S_IMODE(path.stat().st_mode) == mode, f"{path}: mode {oct(path.stat().st_mode)}"
            assert path.stat().st_uid == os.getuid()
        got = _probe_as_nobody(claw, control, d.socket_path)
        assert got["uid"] == NOBODY
        assert got["control_read"] == "ok", f"the probe cannot even reach the workspace: {got}"
        denied = {k: v for k, v in got.items() if k not in ("uid", "control_read")}
        assert all(v.startswith("PermissionError") for v in denied.values()), got
        # Even with .claw/ opened up, the socket itself (0600) refuses the other uid.
        os.chmod(claw, 0o711)
        try:
            again = _probe_as_nobody(claw, control, d.socket_path)
        finally:
            os.chmod(claw, 0o700)
        assert again["connect"].startswith("PermissionError"), again
        assert health_status(d.address) == "SERVING"
    finally:
        assert d.terminate() == 0
    record("users", denied_probes=len(denied) + 1)


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def _unix_paths(inodes: set[int]) -> list[str]:
    paths = []
    with open("/proc/net/unix") as fh:
        next(fh)
        for line in fh:
            parts = line.split()
            if len(parts) >= 8 and int(parts[6]) in inodes:
                paths.append(parts[7])
    return paths


def _listeners(pid: int) -> list[str]:
    proc = psutil.Process(pid)
    conns = proc.net_connections(kind="inet") if hasattr(proc, "net_connections") else proc.connections("inet")
    return [f"{c.laddr}" for c in conns if c.status == psutil.CONN_LISTEN]


@pytest.mark.smoke
def test_no_abstract_socket_and_no_tcp_unless_configured(workspace: Path) -> None:
    d = DaemonProcess(workspace).start()
    try:
        assert d.proc is not None
        paths = _unix_paths(_socket_inodes(d.proc.pid))
        assert str(d.socket_path) in paths, f"the daemon's socket is not among its Unix sockets: {paths}"
        abstract = [p for p in paths if p.startswith("@")]
        assert not abstract, f"abstract-namespace sockets (any uid can connect): {abstract}"
        assert _listeners(d.proc.pid) == [], "a TCP listener without --tcp"
    finally:
        assert d.terminate() == 0
    # Positive control: with --tcp the same check sees the listener.
    tcp = DaemonProcess(workspace, "--tcp", "127.0.0.1:0").start()
    try:
        assert tcp.proc is not None
        assert _listeners(tcp.proc.pid), "the listener check cannot see a configured TCP listener"
    finally:
        assert tcp.terminate() == 0
    record("users", abstract_sockets=0, unconfigured_tcp_listeners=0)


def test_loose_permissions_left_by_an_old_version_are_tightened(workspace: Path) -> None:
    """A .claw/ and files created world-readable (old version, careless copy) are made private at start-up.

    A .claw/ that others can *write* is refused instead (tests/e2e/test_claw_dir.py).
    """
    d = DaemonProcess(workspace).start()
    with d.client() as c:
        c.append("loose", Message.user("private"))
    assert d.terminate() == 0
    claw = workspace / ".claw"
    os.chmod(claw, 0o755)
    for f in claw.iterdir():
        os.chmod(f, 0o666)
    d2 = _start_with_umask_000(workspace)
    try:
        assert stat.S_IMODE(claw.stat().st_mode) == 0o700
        for name in ("sessions.db", "sessions.db-wal", "sessions.db-shm", "sessiond.lock", "sessiond.sock"):
            path = claw / name
            if path.exists():
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{name}: {oct(path.stat().st_mode)}"
    finally:
        assert d2.terminate() == 0
    record("users", loose_permissions_tightened=1)


@pytest.mark.parametrize("planted", ["owned_by_other_user", "symlink_to_other_users_folder"])
def test_a_claw_folder_another_user_controls_is_refused(planted: str, workspace: Path, tmp_path: Path) -> None:
    """Whoever owns .claw/ can replace the socket (and read what clients send): refuse to serve from it."""
    claw = workspace / ".claw"
    if planted == "owned_by_other_user":
        claw.mkdir(mode=0o700)
        os.chown(claw, NOBODY, NOBODY)
    else:
        target = tmp_path / "theirs"
        target.mkdir(mode=0o777)
        os.chown(target, NOBODY, NOBODY)
        claw.symlink_to(target)
        os.lchown(claw, NOBODY, NOBODY)
    d = DaemonProcess(workspace)
    d.spawn()
    try:
        code = wait_refused(d)
    finally:
        d.stop()
    log = d.log()
    assert code == 1, f"{planted}: the daemon must refuse (exit 1), got {code}:\n{log}"
    assert str(claw) in log and "Traceback" not in log, log
    assert not any(p.name.startswith("sessions.db") for p in Path(os.path.realpath(claw)).iterdir()), (
        "the database was created in a folder another user controls"
    )
    record("users", foreign_claw_refused=1)
