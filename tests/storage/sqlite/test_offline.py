"""``ls``, ``show``, ``stats`` and ``export`` with no daemon: a read-only view under the workspace lock.

Real daemon subprocesses write the data and are stopped; the real CLI then
reads. The database files are byte-identical afterwards (nothing repaired,
migrated or checkpointed), no daemon is started, and the offline output is
the online output.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.cli import claw, in_workspace
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import populate_demo
from tests.helpers.sqlite_file import file_digests

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)

NOTE = "claw-sessiond: no daemon running; read-only view of"


def export_out(workspace: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return claw("export", *args, "--workspace", str(workspace), timeout_s=30, text=False)


@pytest.fixture
def stopped(spawn_daemon: object, workspace: Path) -> Iterator[tuple[Path, dict[str, object]]]:
    """A workspace with sessions (one with interrupted calls) and the online outputs; its daemon stopped."""
    d: DaemonProcess = spawn_daemon()  # type: ignore[operator]
    with d.client() as c:
        populate_demo(c)
    online: dict[str, object] = {
        "ls": json.loads(in_workspace(workspace, "ls", "--json").stdout),
        "show": json.loads(in_workspace(workspace, "show", "crashed", "--json").stdout),
        "export": export_out(workspace).stdout,
    }
    d.terminate()
    yield workspace, online


def test_inspection_works_offline_and_writes_nothing(stopped: tuple[Path, dict[str, object]]) -> None:
    workspace, online = stopped
    db = workspace / ".claw" / "sessions.db"
    before = file_digests(db)
    ls = in_workspace(workspace, "ls", "--json")
    assert ls.returncode == 0 and NOTE in ls.stderr and str(db) in ls.stderr
    assert json.loads(ls.stdout) == online["ls"]
    show = in_workspace(workspace, "show", "crashed", "--json")
    assert show.returncode == 0, show.stderr
    assert json.loads(show.stdout) == online["show"]
    assert json.loads(show.stdout)["open_calls"] == ["c1", "c2"]
    text = in_workspace(workspace, "show", "crashed")
    assert text.returncode == 0 and text.stdout.count("no result (daemon down: not repaired)") >= 2
    assert "SYNTHETIC" not in text.stdout
    stats = in_workspace(workspace, "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    figures = json.loads(stats.stdout)["stats"]
    assert figures["sessions"] == 2 and figures["messages"] == 6 and "pid" not in figures
    exported = export_out(workspace)
    assert exported.returncode == 0 and exported.stdout == online["export"]
    assert file_digests(db) == before, "an offline read changed the database"
    assert not (workspace / ".claw" / "sessiond.sock").exists(), "an offline read started a daemon"


def test_no_offline_keeps_the_error_and_repair_needs_the_daemon(stopped: tuple[Path, dict[str, object]]) -> None:
    workspace, _ = stopped
    for args in (("ls", "--no-offline"), ("stats", "--no-offline"), ("show", "demo", "--no-offline")):
        proc = in_workspace(workspace, *args)
        assert proc.returncode == 1 and "no claw-sessiond answers" in proc.stderr and NOTE not in proc.stderr
    assert export_out(workspace, "--no-offline").returncode == 1
    db = workspace / ".claw" / "sessions.db"
    before = file_digests(db)
    proc = in_workspace(workspace, "show", "crashed", "--repair")
    assert proc.returncode == 1 and "needs the daemon" in proc.stderr
    assert file_digests(db) == before
    assert in_workspace(workspace, "show", "nope").returncode == 1


def test_offline_is_refused_while_the_lock_is_held(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        populate_demo(c)
    # --offline beside a running daemon: its lock is held, so no read-only view (and never a second writer).
    proc = in_workspace(daemon.workspace, "ls", "--offline")
    assert proc.returncode == 1 and "holds the lock" in proc.stderr
    assert in_workspace(daemon.workspace, "ls").returncode == 0  # online as usual, no note
    assert NOTE not in in_workspace(daemon.workspace, "ls").stderr


def test_a_lock_holder_that_does_not_answer_is_reported(stopped: tuple[Path, dict[str, object]]) -> None:
    workspace, _ = stopped
    fd = os.open(workspace / ".claw" / "sessiond.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        proc = in_workspace(workspace, "ls")
        assert proc.returncode == 1 and "does not answer" in proc.stderr
    finally:
        os.close(fd)


def test_nothing_stored_is_an_error_without_creating_anything(tmp_path: Path) -> None:
    proc = in_workspace(tmp_path, "ls")
    assert proc.returncode == 1 and "does not exist" in proc.stderr
    assert not (tmp_path / ".claw").exists()
