"""``backup FILE`` and ``restore FILE`` against real daemons, the real CLI and real files.

A backup is taken while a client writes; copies are verified; a backup whose
bytes were damaged, or a foreign database, is refused by ``restore`` and
changes nothing; the round trip backup → delete → stop → restore gives the
deleted session back, byte-identical in its export.
"""

from __future__ import annotations

import json
import re
import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.storage.sqlite.schema import APPLICATION_ID, SCHEMA_VERSION
from claw_sessiond_client import Message
from tests.helpers.cli import claw, in_workspace
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import populate_demo
from tests.helpers.sqlite_file import db_path, file_digests, integrity, sha256_of
from tests.helpers.tiers import scale

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)

LINE = re.compile(r"^backup (\S+): (\d+) sessions, (\d+) events, (\d+) bytes, verified$")


def run_json(workspace: Path, *args: str) -> dict[str, Any]:
    proc = in_workspace(workspace, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["format"] == 1 and doc["verified"] is True
    return doc


def copy_counts(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert int(conn.execute("PRAGMA application_id").fetchone()[0]) == APPLICATION_ID
        return (
            int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0]),
            int(conn.execute("SELECT count(*) FROM events").fetchone()[0]),
        )
    finally:
        conn.close()


def export_bytes(workspace: Path, session: str) -> bytes:
    proc = claw("export", session, "--workspace", str(workspace), timeout_s=30, text=False)
    assert proc.returncode == 0, proc.stderr
    return bytes(proc.stdout)


@pytest.mark.parametrize("command", ["backup", "restore"])
def test_help_and_usage(command: str, tmp_path: Path) -> None:
    proc = in_workspace(tmp_path, command, "--help")
    assert proc.returncode == 0 and "--json" in proc.stdout and "--force" in proc.stdout
    assert "Exit codes: 0 ok, 1 failure" in proc.stdout
    assert in_workspace(tmp_path, command).returncode == 2  # FILE missing


def test_backup_while_a_client_writes(daemon: DaemonProcess, tmp_path: Path) -> None:
    with daemon.client() as c:
        populate_demo(c)
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        with daemon.client() as c:
            for i in range(scale(300, 3000)):
                if stop.is_set():
                    break
                c.append(f"busy-{i % 7}", Message.user(f"line {i}"))
                written.append(i)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        target = tmp_path / "copy.db"
        proc = in_workspace(daemon.workspace, "backup", str(target))
    finally:
        stop.set()
        thread.join(60)
    assert proc.returncode == 0, proc.stderr
    match = LINE.match(proc.stdout.strip())
    assert match, proc.stdout
    sessions, events, size = int(match[2]), int(match[3]), int(match[4])
    assert copy_counts(target) == (sessions, events)
    assert target.stat().st_size == size
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert integrity(target) == ["ok"]
    assert not list((daemon.workspace / ".claw").glob(".backup-*")), "the daemon's temporary copy was left"
    assert not list(tmp_path.glob(".copy.db.*")), "the CLI's temporary file was left"
    assert not Path(f"{target}-wal").exists()  # one self-contained file


def test_backup_refuses_an_existing_file_unless_forced(daemon: DaemonProcess, tmp_path: Path) -> None:
    with daemon.client() as c:
        populate_demo(c)
    target = tmp_path / "copy.db"
    target.write_bytes(b"precious")
    proc = in_workspace(daemon.workspace, "backup", str(target))
    assert proc.returncode == 1 and "--force" in proc.stderr
    assert target.read_bytes() == b"precious"
    doc = run_json(daemon.workspace, "backup", str(target), "--force")
    assert doc["source"] == "daemon" and doc["sessions"] == 2 and doc["schema_version"] == SCHEMA_VERSION
    assert copy_counts(target) == (doc["sessions"], doc["events"])


def test_backup_with_the_daemon_down_uses_the_lock(spawn_daemon: Any, workspace: Path, tmp_path: Path) -> None:
    d: DaemonProcess = spawn_daemon()
    with d.client() as c:
        populate_demo(c)
    d.terminate()
    before = file_digests(db_path(workspace))
    doc = run_json(workspace, "backup", str(tmp_path / "b.db"))
    assert doc["source"] == "offline" and doc["sessions"] == 2
    assert file_digests(db_path(workspace)) == before, "an offline backup changed (or added) a database file"
    assert not (workspace / ".claw" / "sessiond.sock").exists(), "backup must not start a daemon"


def test_round_trip_backup_delete_restore(spawn_daemon: Any, workspace: Path, tmp_path: Path) -> None:
    d: DaemonProcess = spawn_daemon()
    with d.client() as c:
        populate_demo(c)
        c.append("keep", [Message.user("ünïcode ✓"), Message.assistant("ok")])
    original = export_bytes(workspace, "keep")
    backup = tmp_path / "b.db"
    assert in_workspace(workspace, "backup", str(backup)).returncode == 0
    with d.client() as c:
        assert c.delete("keep").events_deleted == 2
    # The daemon runs: restore refuses and points at `stop`.
    proc = in_workspace(workspace, "restore", str(backup), "--force")
    assert proc.returncode == 1 and "claw-sessiond stop" in proc.stderr
    assert in_workspace(workspace, "stop").returncode == 0
    d.terminate()
    db = db_path(workspace)
    before = sha256_of(db)
    proc = in_workspace(workspace, "restore", str(backup))
    assert proc.returncode == 1 and "--force" in proc.stderr and "nothing was changed" in proc.stderr
    assert sha256_of(db) == before
    doc = run_json(workspace, "restore", str(backup), "--force")
    kept = Path(doc["kept"])
    assert kept.name.startswith("sessions.db.before-restore-") and stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert copy_counts(kept)[0] == 2, "the previous database (without 'keep') is kept, readable"
    assert not list((workspace / ".claw").glob(".restore-*"))
    d2: DaemonProcess = spawn_daemon()
    with d2.client() as c:
        loaded = c.load("keep")
        assert [m.content for m in loaded.messages] == ["ünïcode ✓", "ok"]
    assert export_bytes(workspace, "keep") == original


def test_restore_into_a_new_workspace(spawn_daemon: Any, daemon: DaemonProcess, tmp_path: Path) -> None:
    with daemon.client() as c:
        populate_demo(c)
    backup = tmp_path / "b.db"
    assert in_workspace(daemon.workspace, "backup", str(backup)).returncode == 0
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    doc = run_json(fresh, "restore", str(backup))
    assert doc["kept"] is None and doc["sessions"] == 2
    d: DaemonProcess = spawn_daemon(workspace_path=fresh)
    with d.client() as c:
        assert {s.id for s in c.list_sessions()} == {"demo", "crashed"}


def _damage(path: Path) -> None:
    """Overwrite the start of every page after the first (b-tree headers) with garbage, in place."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for offset in range(page, len(data), page):
        data[offset : offset + 12] = b"\xa5" * 12
    path.write_bytes(bytes(data))


def _foreign(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("spoil", ["damaged", "truncated", "foreign", "not_sqlite"])
def test_restore_refuses_a_bad_file_and_changes_nothing(
    spawn_daemon: Any, workspace: Path, tmp_path: Path, spoil: str
) -> None:
    d: DaemonProcess = spawn_daemon()
    with d.client() as c:
        populate_demo(c)
    bad = tmp_path / "bad.db"
    assert in_workspace(workspace, "backup", str(bad)).returncode == 0
    d.terminate()
    if spoil == "damaged":
        _damage(bad)
    elif spoil == "truncated":
        bad.write_bytes(bad.read_bytes()[: 4096 + 100])
    elif spoil == "foreign":
        bad.unlink()
        _foreign(bad)
    else:
        bad.write_bytes(b"hello, this is not a database\n" * 200)
    folder = workspace / ".claw"
    before = {p.name: sha256_of(p) for p in folder.iterdir() if p.name.startswith("sessions.db")}
    proc = in_workspace(workspace, "restore", str(bad), "--force")
    assert proc.returncode == 1, proc.stdout
    assert "not a usable backup" in proc.stderr and "nothing was changed" in proc.stderr
    after = {p.name: sha256_of(p) for p in folder.iterdir() if p.name.startswith("sessions.db")}
    assert after == before
    assert not list(folder.glob(".restore-*"))


def test_async_client_backup_matches_the_sync_one(daemon: DaemonProcess) -> None:
    import asyncio
    import io

    from claw_sessiond_client import AsyncSessionClient

    with daemon.client() as c:
        populate_demo(c)
        sync_copy = io.BytesIO()
        sync_figures = c.backup(sync_copy)

    async def run() -> tuple[Any, bytes]:
        async with AsyncSessionClient(address=daemon.address, autostart=False) as ac:
            out = io.BytesIO()
            return await ac.backup(out), out.getvalue()

    figures, data = asyncio.run(run())
    assert figures == sync_figures and len(data) == figures.bytes == len(sync_copy.getvalue())
    assert data.startswith(b"SQLite format 3\x00")
