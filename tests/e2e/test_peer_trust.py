"""Who listens on the socket (issue "Harden", item 1; SPEC §7).

A deep workspace's socket falls back to a short path outside the workspace.
Another uid can create that folder first, run its own daemon there, and so
receive the victim's messages and serve forged history. The client checks the
socket's folder (owner, mode, not a link) and the peer's uid (``SO_PEERCRED``)
before it sends anything, and raises ``UntrustedPeerError`` naming the path and
the owner; the daemon refuses such a folder too. The attacker here is a real
second uid (65534, through ``setpriv``) running a real daemon. Root only.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client import (
    AsyncSessionClient,
    Message,
    SessionClient,
    UntrustedPeerError,
    default_socket_path,
)
from tests.helpers.daemon import DaemonProcess, health_status
from tests.helpers.process import is_root, wait_exit, wait_until

pytestmark = [
    pytest.mark.skipif(not is_root(), reason="a second uid (setpriv) needs root"),
    pytest.mark.backend_neutral(
        "who listens on the Unix socket (peer uid checks); uid 65534's daemons keep their own SQLite file"
    ),
]

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
SERVE = [sys.executable, "-m", "claw_sessiond", "serve"]


#: The other uid's daemons keep their sessions in their own workspace's SQLite file, on either backend pass
#: (these tests are about the Unix socket; uid 65534 cannot reach the throwaway PostgreSQL server's socket).
def own_file() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "CLAW_DATABASE_URL"}


@pytest.fixture
def public() -> Iterator[Path]:
    """A folder under /tmp that uid 65534 can reach (0755), for what the other user owns.

    Not under tmp_path: making /tmp/pytest-of-root traversable would race with
    other test runs that restore its mode.
    """
    path = Path(tempfile.mkdtemp(prefix="peer-", dir="/tmp"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    """A short ``$XDG_RUNTIME_DIR`` stand-in under /tmp (tmp_path may be too deep for a socket path)."""
    path = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Intruder:
    """A daemon run by uid 65534 on a socket path of its choice, in a workspace of its own."""

    def __init__(self, public: Path, socket_path: Path) -> None:
        self.workspace = public / "intruder-ws"
        self.workspace.mkdir(mode=0o700)
        os.chown(self.workspace, NOBODY, NOBODY)
        self.socket_path = socket_path
        self.log_path = public / "intruder.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Intruder:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [*AS_NOBODY, *SERVE, "--workspace", str(self.workspace), "--socket", str(self.socket_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd="/",
                env=own_file(),
            )
        ready = wait_until(lambda: health_status(f"unix:{self.socket_path}") == "SERVING" or self.proc.poll(), 60)
        assert ready and self.proc.poll() is None, self.log_path.read_text()
        return self

    def stored_sessions(self) -> list[str]:
        # Root, naming the exact path itself, trusts the folder's owner: this is the intruder's own view.
        with SessionClient(address=f"unix:{self.socket_path}", autostart=False) as c:
            return sorted(s.id for s in c.list_sessions())

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            wait_exit(self.proc, 20)


@pytest.fixture
def intruders(tmp_path: Path) -> Iterator[list[Intruder]]:
    started: list[Intruder] = []
    yield started
    for intruder in started:
        intruder.stop()


def _deep_workspace(tmp_path: Path) -> Path:
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 5)
    deep.mkdir(parents=True)
    assert len(os.fsencode(deep / ".claw" / "sessiond.sock")) > 107
    return deep


def _squat(runtime_dir: Path) -> Path:
    """What the other uid does first: create the fallback socket folder (its own, 0700: root gets in anyway)."""
    folder = runtime_dir / "claw-sessiond"
    folder.mkdir()
    os.chown(folder, NOBODY, NOBODY)
    os.chmod(folder, 0o700)
    return folder


def _send(kind: str, workspace: Path, **kw: object) -> None:
    if kind == "sync":
        with SessionClient(workspace, retry_window_s=0, **kw) as c:  # type: ignore[arg-type]
            c.load("victim")
            c.append("victim", Message.user("the deploy key is hunter2"))
        return

    async def main() -> None:
        async with AsyncSessionClient(workspace, retry_window_s=0, **kw) as c:  # type: ignore[arg-type]
            await c.load("victim")
            await c.append("victim", Message.user("the deploy key is hunter2"))

    asyncio.run(main())


@pytest.mark.parametrize("autostart", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_client_refuses_a_daemon_another_user_runs_in_the_fallback_folder(
    tmp_path: Path,
    public: Path,
    runtime_dir: Path,
    intruders: list[Intruder],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    autostart: bool,
) -> None:
    deep = _deep_workspace(tmp_path)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    sock = default_socket_path(deep, str(runtime_dir))
    assert sock.parent == runtime_dir / "claw-sessiond"
    folder = _squat(runtime_dir)
    intruder = Intruder(public, sock)
    intruders.append(intruder)
    intruder.start()
    with pytest.raises(UntrustedPeerError) as caught:
        _send(kind, deep, autostart=autostart)
    text = str(caught.value)
    assert str(folder) in text and f"uid {NOBODY}" in text and "nobody" in text, text
    assert intruder.stored_sessions() == [], "the intruder received the victim's request"
    assert not (deep / ".claw").exists(), "nothing was started or created for the victim"


@pytest.mark.smoke
def test_client_checks_the_peer_uid_even_when_the_folder_is_private(
    tmp_path: Path, public: Path, intruders: list[Intruder]
) -> None:
    """SO_PEERCRED: a socket file that looks right (ours, in our 0700 folder) but another uid listens on it."""
    theirs = public / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    intruder = Intruder(public, theirs / "s.sock")
    intruders.append(intruder)
    intruder.start()
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o700)
    moved = ours / "sessiond.sock"
    os.rename(intruder.socket_path, moved)  # the listening socket stays reachable through its new name
    os.chown(moved, os.getuid(), os.getgid())
    assert stat.S_ISSOCK(moved.lstat().st_mode) and moved.lstat().st_uid == os.getuid()
    with pytest.raises(UntrustedPeerError) as caught, SessionClient(address=str(moved), autostart=False) as c:
        c.append("victim", Message.user("the deploy key is hunter2"))
    text = str(caught.value)
    assert str(moved) in text and f"uid {NOBODY}" in text and f"pid {intruder.proc.pid}" in text, text  # type: ignore[union-attr]
    os.rename(moved, intruder.socket_path)
    assert intruder.stored_sessions() == []


def test_daemon_refuses_a_fallback_folder_another_user_created(
    tmp_path: Path, runtime_dir: Path, spawn_daemon: object
) -> None:
    deep = _deep_workspace(tmp_path)
    folder = _squat(runtime_dir)
    d = DaemonProcess(deep, env={"XDG_RUNTIME_DIR": str(runtime_dir)})
    d.spawn()
    try:
        assert d.proc is not None and wait_exit(d.proc, 30) == 1, d.log()
    finally:
        d.stop()
    log = d.log()
    assert str(folder) in log and f"uid {NOBODY} (nobody)" in log and "Traceback" not in log, log
    assert sorted(p.name for p in folder.iterdir()) == []
    assert not (deep / ".claw").exists(), "refused before anything was written (lock, database)"


def test_without_xdg_runtime_dir_the_fallback_is_not_a_predictable_tmp_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawn_daemon: object
) -> None:
    """cron, ssh without a login session, containers: no XDG_RUNTIME_DIR.

    The short path must be in a folder only we can create (/run/user/<uid> or the home folder), not /tmp.
    """
    deep = _deep_workspace(tmp_path)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    sock = default_socket_path(deep, None)
    assert not str(sock).startswith("/tmp/"), sock
    assert len(os.fsencode(sock)) <= 107
    base = sock.parent.parent
    assert base.lstat().st_uid == os.getuid() and stat.S_ISDIR(base.lstat().st_mode), base
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    d = DaemonProcess(deep)
    d.env = env
    d.start()
    try:
        assert d.socket_path == sock and sock.exists()
        assert stat.S_IMODE(sock.parent.lstat().st_mode) == 0o700 and sock.parent.lstat().st_uid == os.getuid()
        with SessionClient(deep, autostart=False) as c:
            assert c.socket_path == sock
            assert c.append("deep", Message.user("hi")).last_position == 1
    finally:
        assert d.terminate() == 0


def test_root_trusts_the_workspace_owners_daemon(tmp_path: Path, public: Path, intruders: list[Intruder]) -> None:
    """Positive control: root reaching a workspace whose owner (65534) runs the daemon is not refused."""
    owner_ws = public / "owner-ws"
    owner_ws.mkdir(mode=0o700)
    os.chown(owner_ws, NOBODY, NOBODY)
    sock = owner_ws / ".claw" / "sessiond.sock"
    log_path = public / "owner.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [*AS_NOBODY, *SERVE, "--workspace", str(owner_ws)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd="/",
            env=own_file(),
        )
    try:
        assert wait_until(lambda: health_status(f"unix:{sock}") == "SERVING" or proc.poll() is not None, 60)
        assert proc.poll() is None, log_path.read_text()
        with SessionClient(owner_ws, autostart=False) as c:
            assert c.append("admin", Message.user("checked by root")).last_position == 1
    finally:
        proc.terminate()
        wait_exit(proc, 20)
