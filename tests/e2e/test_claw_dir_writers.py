"""Every command that writes a workspace refuses what ``serve`` refuses, with ``serve``'s message.

``copy --to``, ``restore`` and ``import`` used to write into a ``.claw/`` that
others can write (which ``serve`` refuses) and into a ``sessions.db`` someone
else planted there. Here another local user (uid 65534, through ``setpriv``)
prepares each trap as an attacker would: a group- or world-writable ``.claw/``
with their own ``sessions.db`` in it, ``.claw`` a link to their folder, a
``sessions.db`` link into their folder, a ``sessions.db`` of theirs left in a
``.claw/`` closed since. ``serve`` is started first and its refusal read; each
command must then fail with that same message, and nothing under the workspace
or the attacker's folder may change (compared entry by entry: type, owner,
mode, size, time, link target).
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from claw_sessiond_client import Message
from tests.helpers.cli import claw, in_workspace
from tests.helpers.daemon import DaemonProcess
from tests.helpers.process import is_root, wait_refused

pytestmark = [
    pytest.mark.skipif(not is_root(), reason="planting files as another uid (setpriv, chown) needs root"),
    pytest.mark.backend_neutral("the checks of .claw/ come before any store is opened; restore writes SQLite files"),
]

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
CASES = ["group_writable", "world_writable", "claw_link", "db_link", "db_foreign"]
COMMANDS = ["copy", "restore", "import"]


@dataclass(frozen=True)
class Source:
    """A store to write with: a stopped workspace, its backup and its export."""

    workspace: Path
    backup: Path
    export: Path


@pytest.fixture(scope="module")
def source(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Source:
    root = tmp_path_factory.mktemp("writers-source")
    ws = root / "ws"
    ws.mkdir()
    daemon = DaemonProcess(ws).start()
    try:
        with daemon.client() as c:
            c.append("carried", [Message.user("from the source store")])
    finally:
        assert daemon.terminate() == 0
    backup, export = root / "store.backup", root / "store.jsonl"
    for args in (("backup", str(backup)), ("export", "--output", str(export))):
        proc = in_workspace(ws, *args)
        assert proc.returncode == 0, proc.stderr
    return Source(ws, backup, export)


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


def _as_nobody(*command: str) -> None:
    proc = subprocess.run([*AS_NOBODY, *command], capture_output=True, text=True, timeout=60, cwd="/")
    assert proc.returncode == 0, f"{command}: {proc.stderr}"


def _plant(case: str, ws: Path, theirs: Path) -> None:
    """Set the trap ``case`` in ``ws``; ``theirs`` is a folder of the other user's."""
    claw = ws / ".claw"
    if case in ("group_writable", "world_writable", "db_foreign"):
        claw.mkdir()
        if case == "group_writable":
            os.chown(claw, 0, NOBODY)
            os.chmod(claw, 0o770)
        else:
            os.chmod(claw, 0o777)
        _as_nobody("touch", str(claw / "sessions.db"))  # their database, where the victim's sessions would go
        if case == "db_foreign":
            os.chmod(claw, 0o700)  # the folder was closed since; their file stayed
    elif case == "claw_link":
        os.chmod(ws, 0o777)  # a shared folder (a build folder under /tmp, say)
        _as_nobody("mkdir", "-m", "700", str(theirs / "claw"))
        _as_nobody("ln", "-s", str(theirs / "claw"), str(claw))
    else:  # db_link: a dangling link into their folder (SQLite would create the file there)
        claw.mkdir(mode=0o700)
        (claw / "sessions.db").symlink_to(theirs / "planted.db")
        os.lchown(claw / "sessions.db", NOBODY, NOBODY)


def _state(*roots: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under ``roots`` (links not followed): type and mode, owner, size, mtime, link target.

    The daemon's own log files (``daemon-*.log`` in the workspace, written by the test helper) are left out.
    """
    seen: dict[str, tuple[object, ...]] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root, followlinks=False):
            for name in [*dirs, *files]:
                path = Path(folder) / name
                if name.startswith("daemon-") and name.endswith(".log"):
                    continue
                info = path.lstat()
                target = os.readlink(path) if stat.S_ISLNK(info.st_mode) else ""
                seen[str(path)] = (info.st_mode, info.st_uid, info.st_size, info.st_mtime_ns, target)
        info = root.lstat()
        seen[str(root)] = (info.st_mode, info.st_uid)  # its time changes with the daemon's log file
    return seen


def _serve_refusal(ws: Path) -> str:
    """What ``serve`` says when it refuses ``ws`` (its ``claw-sessiond: error:`` line)."""
    daemon = DaemonProcess(ws)
    daemon.spawn()
    try:
        code = wait_refused(daemon)
    finally:
        daemon.stop()
    log = daemon.log()
    found = re.search(r"^claw-sessiond: error: (.+)$", log, re.MULTILINE)
    assert code == 1 and found is not None, log
    return found.group(1)


def _write(command: str, ws: Path, source: Source, cwd: Path) -> subprocess.CompletedProcess[str]:
    if command == "copy":
        return claw("copy", "--from", str(source.workspace), "--to", str(ws), cwd=cwd)
    if command == "restore":
        return claw("restore", "--workspace", str(ws), str(source.backup), cwd=cwd)
    return claw("import", "--workspace", str(ws), str(source.export), cwd=cwd)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", CASES)
def test_a_writer_refuses_what_serve_refuses_with_its_message(
    case: str, command: str, source: Source, workspace: Path, tmp_path: Path, open_parents: None
) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chmod(theirs, 0o777)
    _plant(case, workspace, theirs)
    before = _state(workspace, theirs)
    refusal = _serve_refusal(workspace)
    assert _state(workspace, theirs) == before, "serve changed something in a workspace it refused"
    proc = _write(command, workspace, source, tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert refusal in proc.stderr, f"serve said:\n{refusal}\n{command} said:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    assert _state(workspace, theirs) == before, f"{command} wrote into a workspace serve refuses"


@pytest.mark.parametrize("command", COMMANDS)
def test_the_same_writers_work_in_a_private_workspace(command: str, source: Source, workspace: Path) -> None:
    """The positive control: the refusals above come from the traps, not from the commands."""
    daemon = DaemonProcess(workspace).start() if command == "import" else None  # import goes through the daemon
    try:
        proc = _write(command, workspace, source, workspace)
        assert proc.returncode == 0, proc.stderr
        if daemon is None:
            daemon = DaemonProcess(workspace).start()
        with daemon.client() as c:
            assert [m.content for m in c.load("carried").messages] == ["from the source store"]
    finally:
        if daemon is not None:
            assert daemon.terminate() == 0


@pytest.mark.smoke
def test_a_folder_opened_up_under_a_running_daemon_gets_nothing_imported(source: Source, workspace: Path) -> None:
    """The daemon checked .claw/ at its start; a writer checks again before it sends anything."""
    daemon = DaemonProcess(workspace).start()
    claw = workspace / ".claw"
    try:
        os.chmod(claw, 0o770)
        proc = _write("import", workspace, source, workspace)
        assert proc.returncode == 1, proc.stderr
        assert f"{claw}: the folder" in proc.stderr and "(mode 0770)" in proc.stderr, proc.stderr
        assert "nothing was sent" in proc.stderr, proc.stderr
        os.chmod(claw, 0o700)
        with daemon.client() as c:
            assert c.list_sessions() == [], "the import was sent although the folder failed serve's checks"
    finally:
        os.chmod(claw, 0o700)
        assert daemon.terminate() == 0


@pytest.mark.parametrize(
    "args",
    [
        ("migrate-legacy", "{legacy}"),
        ("delete", "--yes", "carried"),
        ("clear", "carried"),
        ("repair", "carried"),
        ("doctor", "--json"),
    ],
    ids=lambda a: a[0],
)
def test_the_other_writers_and_doctor_say_what_serve_says(
    args: tuple[str, ...], workspace: Path, tmp_path: Path, open_parents: None
) -> None:
    """migrate-legacy, delete, clear and repair refuse before sending; doctor fails its workspace check."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chmod(theirs, 0o777)
    _plant("world_writable", workspace, theirs)
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "one.json").write_text('{"messages": [{"role": "user", "content": "hi"}]}')
    before = _state(workspace, theirs)
    refusal = _serve_refusal(workspace)
    words = [a.replace("{legacy}", str(legacy)) for a in args]
    proc = claw(words[0], "--workspace", str(workspace), *words[1:], cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    if words[0] == "doctor":
        checks = {c["check"]: c for c in json.loads(proc.stdout)["checks"]}
        assert checks["workspace"] == {"check": "workspace", "status": "fail", "detail": refusal}, checks
    else:
        assert refusal in proc.stderr, f"serve said:\n{refusal}\n{words[0]} said:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    assert _state(workspace, theirs) == before, f"{words[0]} wrote into a workspace serve refuses"
