"""Disk full and read-only storage (SPEC §2, §6): refuse, never lose, never pretend.

The workspace lives on a small tmpfs the test mounts (root only; skipped
with the reason otherwise). Appends that do not fit fail with
RESOURCE_EXHAUSTED (``StorageFullError``), every acknowledged write stays,
reads keep working, and writes succeed again once space is freed. A
read-only file system (or a read-only database file) at start-up gives a
clear start-up error naming the file, exit 1.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client import Message, StorageFullError, ToolCall
from tests.helpers.daemon import DaemonProcess, health_status
from tests.helpers.figures import record
from tests.helpers.process import is_root, wait_refused
from tests.helpers.sqlite_file import db_path, integrity
from tests.helpers.tiers import scale

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted for this test (unmounted at teardown)."""
    if not is_root():
        pytest.skip("mounting a small tmpfs needs root")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = _run("mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", str(mnt))
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        if _run("umount", str(mnt)).returncode != 0:
            _run("umount", "-l", str(mnt))


def _fill(path: Path, leave_bytes: int) -> int:
    """Write a filler file so that about ``leave_bytes`` stay free; return its size."""
    st = os.statvfs(path.parent)
    free = st.f_bavail * st.f_frsize
    size = max(0, free - leave_bytes)
    with open(path, "wb") as fh:
        fh.write(b"\0" * size)
        fh.flush()
        os.fsync(fh.fileno())
    return size


def _top_up(path: Path) -> None:
    """Grow ``path`` until the file system has no byte left."""
    with open(path, "ab", buffering=0) as fh:
        for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9, 1):
            try:
                while fh.write(b"\0" * size):
                    pass
            except OSError:
                continue


def test_disk_full_refuses_writes_keeps_acknowledged_ones_and_recovers(small_fs: Path) -> None:
    ws = small_fs / "ws"
    ws.mkdir()
    d = DaemonProcess(ws).start()
    filler = small_fs / "filler"
    acked: dict[str, list[str]] = {"full0": [], "full1": []}
    refused = 0
    try:
        with d.client(retry_window_s=2) as c:
            for sid in acked:  # some history before the disk fills up
                for i in range(5):
                    text = f"{sid} early {i}"
                    c.append(sid, Message.user(text))
                    acked[sid].append(text)
            # An interrupted tool call: repairing it on Load is a write.
            c.append("full-open", [Message.user("run it"), Message.assistant("", [ToolCall("open-1", "bash", "{}")])])
            _fill(filler, leave_bytes=1536 * 1024)
            body = "x" * 16 * 1024
            attempts = scale(400, 1000)
            for i in range(attempts):
                sid = f"full{i % 2}"
                text = f"{sid} {i} {body}"
                try:
                    c.append(sid, [Message.user(text)], request_id=f"full-{i}")
                except StorageFullError as exc:
                    assert exc.message, "the error must say what is wrong"
                    assert exc.reason == "STORAGE_FULL"
                    refused += 1
                    if refused >= 5:
                        break
                    continue
                acked[sid].append(text)
            assert refused >= 5, f"the disk never filled up ({attempts} appends of 16 KiB on a 4 MiB tmpfs)"

            _top_up(filler)  # not one byte left, so even a small repair cannot fit

            # Reads keep working while the disk is full, and show exactly the acknowledged writes.
            for sid, texts in acked.items():
                assert [m.content for m in c.load(sid).messages] == texts
            assert c.stats()["write_failures"] >= refused
            # A Load that must repair is a write: it fails as storage full, it does not pretend.
            with pytest.raises(StorageFullError):
                c.load("full-open")
            # A small write may still fit in WAL pages the file already holds; if it is
            # acknowledged it must be stored, otherwise it is refused as storage full.
            before = c.usage("full0").total.input_tokens
            try:
                c.record_usage("full0", input_tokens=1)
            except StorageFullError:
                assert c.usage("full0").total.input_tokens == before
            else:
                assert c.usage("full0").total.input_tokens == before + 1

            # Free the space: writes succeed again (a retried request id is written once).
            filler.unlink()
            after = c.append("full0", Message.user("after freeing space"), request_id="after-free")
            again = c.append("full0", Message.user("after freeing space"), request_id="after-free")
            assert again.replayed and again.last_position == after.last_position
            acked["full0"].append("after freeing space")
            for sid, texts in acked.items():
                assert [m.content for m in c.load(sid).messages] == texts
            repaired = c.load("full-open")
            assert [r.tool_call_id for r in repaired.repairs] == ["open-1"]
            assert repaired.messages[-1].synthetic
        assert d.terminate() == 0
    finally:
        d.stop()
    # Nothing acknowledged was lost, across a restart too.
    assert integrity(db_path(ws)) == ["ok"]
    d2 = DaemonProcess(ws).start()
    try:
        with d2.client() as c:
            for sid, texts in acked.items():
                assert [m.content for m in c.load(sid).messages] == texts
    finally:
        assert d2.terminate() == 0
    record(
        "disk_full",
        acked_checked=sum(len(t) for t in acked.values()),
        refused_storage_full=refused,
        lost=0,
        duplicated=0,
    )


def _make_db(ws: Path) -> Path:
    d = DaemonProcess(ws).start()
    with d.client() as c:
        c.append("ro", Message.user("written before the file system became read-only"))
    assert d.terminate() == 0
    return db_path(ws)


def test_full_disk_at_startup_is_a_clear_error(small_fs: Path) -> None:
    ws = small_fs / "ws"
    ws.mkdir()
    db = _make_db(ws)
    before = db.read_bytes()
    filler = small_fs / "filler"
    _top_up(filler)
    d = DaemonProcess(ws)
    d.log_path = small_fs.parent / "full-daemon.log"  # no room for the log in the workspace
    d.spawn()
    try:
        code = wait_refused(d)
    finally:
        d.stop()
    log = d.log()
    assert code == 1, log
    assert str(db) in log, f"the message should name the file:\n{log}"
    assert "full" in log.lower(), f"the message should say the disk is full:\n{log}"
    assert "Traceback" not in log, log
    assert db.read_bytes() == before
    filler.unlink()
    DaemonProcess(ws).start().terminate()  # and it starts once there is room again
    record("disk_full", refused_at_startup_full=1)


def test_read_only_filesystem_at_startup_is_a_clear_error(small_fs: Path) -> None:
    ws = small_fs / "ws"
    ws.mkdir()
    db = _make_db(ws)
    before = db.read_bytes()
    proc = _run("mount", "-o", "remount,ro", str(small_fs))
    if proc.returncode != 0:
        pytest.skip(f"cannot remount read-only: {proc.stderr.strip()}")
    try:
        d = DaemonProcess(ws)
        d.log_path = small_fs.parent / "ro-daemon.log"  # the workspace cannot hold the log now
        d.spawn()
        try:
            code = wait_refused(d)
        finally:
            d.stop()
        log = d.log()
        assert code == 1, log
        assert str(ws / ".claw") in log, f"the message should name the file:\n{log}"
        assert "read-only" in log.lower(), log
        assert "Traceback" not in log, log
    finally:
        _run("mount", "-o", "remount,rw", str(small_fs))
    assert db.read_bytes() == before
    record("read_only", refused_at_startup=1)


def test_read_only_database_file_at_startup_is_a_clear_error(small_fs: Path) -> None:
    """Only the database file is read-only (a ro bind mount over it): the folder and the lock still work."""
    ws = small_fs / "ws"
    ws.mkdir()
    db = _make_db(ws)
    before = db.read_bytes()
    if _run("mount", "--bind", str(db), str(db)).returncode != 0:
        pytest.skip("cannot bind-mount the database file")
    try:
        proc = _run("mount", "-o", "remount,bind,ro", str(db))
        if proc.returncode != 0:
            pytest.skip(f"cannot make the bind mount read-only: {proc.stderr.strip()}")
        d = DaemonProcess(ws)
        d.spawn()
        try:
            code = wait_refused(d)
        finally:
            d.stop()
        log = d.log()
        assert code == 1, log
        assert str(db) in log, f"the message should name the file:\n{log}"
        assert "read-only" in log.lower() or "readonly" in log.lower(), log
        assert "Traceback" not in log, log
    finally:
        _run("umount", str(db))
    assert db.read_bytes() == before
    record("read_only", refused_at_startup=1)


def test_stop_while_the_disk_is_full_keeps_every_acknowledged_write(small_fs: Path) -> None:
    """SIGTERM on a full disk: the final checkpoint cannot grow the file; the daemon still stops cleanly
    and the acknowledged writes are all there at the next start (replayed from the WAL)."""
    ws = small_fs / "ws"
    ws.mkdir()
    d = DaemonProcess(ws).start()
    filler = small_fs / "filler"
    acked: list[str] = []
    try:
        with d.client(retry_window_s=1) as c:
            _fill(filler, leave_bytes=1024 * 1024)
            for i in range(200):
                text = f"before stop {i} " + "y" * 8 * 1024
                try:
                    c.append("stop-full", Message.user(text), request_id=f"stop-{i}")
                except StorageFullError:
                    break
                acked.append(text)
            _top_up(filler)
        code = d.terminate(30)
    finally:
        d.stop()
    log = d.log()
    assert acked, "nothing was written before the disk filled up"
    assert code == 0, f"stopping on a full disk should still exit 0, got {code}:\n{log}"
    assert "Traceback" not in log, log
    filler.unlink()
    d2 = DaemonProcess(ws).start()
    try:
        with d2.client() as c:
            assert [m.content for m in c.load("stop-full").messages] == acked
    finally:
        assert d2.terminate() == 0
    assert integrity(db_path(ws)) == ["ok"]
    record("disk_full", acked_checked=len(acked), stopped_on_full_disk=1, lost=0)


def test_delete_on_a_full_disk_is_all_or_nothing_and_works_once_space_is_freed(small_fs: Path) -> None:
    """Delete while the disk is full: either the session is wholly gone (the reply may say the erasure of its
    bytes is pending), or the call fails with RESOURCE_EXHAUSTED (STORAGE_FULL) and the session is wholly
    there. The daemon stays healthy, and once space is freed the same Delete erases it."""
    ws = small_fs / "ws"
    ws.mkdir()
    victim: list[str] = []
    first = DaemonProcess(ws).start()
    with first.client() as c:
        for i in range(40):
            text = f"victim {i} " + "v" * 4096
            c.append("victim", Message.user(text))
            victim.append(text)
        c.append("other", Message.user("stays"))
        c.record_usage("victim", input_tokens=5)
    assert first.terminate() == 0  # its final checkpoint empties the WAL: the filler below takes the room
    d = DaemonProcess(ws).start()
    filler = small_fs / "filler"
    try:
        with d.client(retry_window_s=1) as c:
            _fill(filler, leave_bytes=256 * 1024)
            for i in range(200):  # the WAL takes what is left
                try:
                    c.append("other", Message.user(f"filler {i} " + "f" * 8192), request_id=f"fill-{i}")
                except StorageFullError:
                    break
            _top_up(filler)
            export_before = list(c.export("victim"))
            try:
                result = c.delete("victim")
            except StorageFullError as exc:
                assert exc.reason == "STORAGE_FULL" and exc.message, exc
                # Wholly there: every message, the usage, the export line for line.
                assert [m.content for m in c.load("victim").messages] == victim
                assert c.usage("victim").total.input_tokens == 5
                assert list(c.export("victim")) == export_before
                assert "victim" in {s.id for s in c.list_sessions()}
                outcome = "refused"
            else:
                assert result == len(victim) + 1, result
                assert c.load("victim").messages == [] and "victim" not in {s.id for s in c.list_sessions()}
                outcome = "deleted"
            assert health_status(d.address) == "SERVING"
            assert c.load("other").messages[0].content == "stays"

            filler.unlink()
            c.delete("victim")  # once space is freed it works (a delete of a session already gone is a no-op)
            assert c.load("victim").messages == [] and "victim" not in {s.id for s in c.list_sessions()}
            assert c.append("victim", Message.user("a new life")).last_position == 1
        assert d.terminate() == 0
    finally:
        d.stop()
    assert integrity(db_path(ws)) == ["ok"]
    assert b"v" * 4096 not in db_path(ws).read_bytes(), "the deleted messages' bytes are still in the database"
    record("disk_full", **{f"delete_on_full_disk_{outcome}": 1})
