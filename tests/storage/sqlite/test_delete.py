"""Hard delete (right to erasure) and the retention policy: whole sessions only, bytes gone from both files.

The last two tests come from the other-user suite (tests/e2e/test_users.py) and run as root like it:
nothing of a cleared and deleted session stays in the daemon's log or files, also while other sessions
are read all the time.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path

import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.cli import claw
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import old_lines
from tests.helpers.figures import record
from tests.helpers.process import is_root
from tests.helpers.sqlite_file import db_path, file_bytes

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)


def old_session(c: SessionClient, sid: str, text: str) -> None:
    """Import :func:`old_lines`."""
    c.import_lines(old_lines(sid, text))


def test_delete_erases_the_bytes_from_db_and_wal(daemon, client: SessionClient, workspace: Path) -> None:
    marker = f"SECRET-{uuid.uuid4().hex}"
    client.append("victim", [Message.user(f"my key is {marker}"), Message.assistant("", [ToolCall("c", "t", "{}")])])
    client.append("victim", Message.tool("c", f"echo {marker}" * 50))  # long enough for an overflow page
    client.record_event("victim", "error", {"detail": marker})
    client.append("keep", Message.user("unrelated"))
    old_session(client, "old-but-no-retention", "kept: retention is off by default")
    assert marker.encode() in file_bytes(workspace)

    r = claw("delete", "victim", "--socket", str(daemon.socket_path), "--json", "--yes")  # --yes: no terminal here
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"format": 1, "session_id": "victim", "events_deleted": 4}
    assert marker.encode() not in file_bytes(workspace)
    assert [s.id for s in client.list_sessions()] == ["keep", "old-but-no-retention"]
    assert client.load("victim", str(workspace)).session.stored is False

    r = claw("delete", "victim", "--socket", str(daemon.socket_path), "--yes")
    assert r.returncode == 1 and "not stored" in r.stderr
    r = claw("delete", "../x", "--socket", str(daemon.socket_path), "--yes")
    assert r.returncode == 1
    # the marker stays gone after a restart (nothing was resurrected from the WAL)
    assert daemon.terminate() == 0
    assert marker.encode() not in file_bytes(workspace)


def test_retention_removes_only_expired_whole_sessions(spawn_daemon, workspace: Path) -> None:
    d = spawn_daemon("--retention-days", "30", "--retention-interval-s", "0.1")
    marker = f"OLD-{uuid.uuid4().hex}"
    with d.client() as c:
        c.append("fresh", Message.user("recent"))
        old_session(c, "old-1", marker)
        old_session(c, "old-2", marker)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len(c.list_sessions()) > 1:
            time.sleep(0.05)
        assert [s.id for s in c.list_sessions()] == ["fresh"]
        assert [m.content for m in c.load("fresh", str(workspace)).messages] == ["recent"]
        # The counters move when each erasure call returns (after its checkpoint), a moment after
        # the rows are gone from listings.
        while time.monotonic() < deadline and c.stats()["retention_sessions_deleted"] < 2:
            time.sleep(0.05)
        stats = c.stats()
        assert stats["retention_sessions_deleted"] == 2 and stats["sessions_deleted"] == 2
    assert marker.encode() not in file_bytes(workspace)
    assert d.terminate() == 0
    log = d.log()
    assert log.count("event=retention_deleted") == 2 and "session=old-1" in log


@pytest.mark.skipif(not is_root(), reason="with the other-user tests, which run as root")
def test_clear_and_delete_leave_no_secret_in_logs_or_files(workspace: Path) -> None:
    canary = "CANARY-" + os.urandom(8).hex()
    d = DaemonProcess(workspace, "--log-level", "debug").start()
    db = db_path(workspace)
    try:
        with d.client() as c:
            c.append("keep", Message.user("unrelated, kept"))
            for sid in ("to-clear", "to-delete"):
                call = ToolCall(f"call-{sid}", "bash", json.dumps({"cmd": f"echo {canary}"}))
                c.append(sid, [Message.user(f"my token is {canary}"), Message.assistant(canary, [call])])
                c.append(sid, Message.tool(call.id, f"{canary}\n"))
                c.record_usage(sid, input_tokens=1, model="m")
                c.load(sid)
            c.clear("to-clear")
            c.load("to-clear")
            # Clear keeps the past in the log (SPEC §5); Delete is the erasure, so delete both.
            assert c.delete("to-clear") > 0
            assert c.delete("to-delete") > 0
            assert c.load("keep").messages[0].content == "unrelated, kept"
        blobs = {p.name: p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists()}
        assert blobs, "no database files to check"
        for name, blob in blobs.items():
            assert canary.encode() not in blob, f"{name} still holds the deleted content after delete + checkpoint"
        assert b"unrelated, kept" in b"".join(blobs.values()), "control: kept content must be findable"
    finally:
        assert d.terminate() == 0
    log = d.log()
    assert log, "the daemon wrote no log at all (debug level), so the check proves nothing"
    assert canary not in log, "message content reached the daemon's log"
    after_stop = db.read_bytes() + (Path(f"{db}-wal").read_bytes() if Path(f"{db}-wal").exists() else b"")
    assert canary.encode() not in after_stop
    record("users", canary_absent_after_delete=1, secret_in_logs=0)


@pytest.mark.skipif(not is_root(), reason="with the other-user tests, which run as root")
def test_delete_erases_even_while_other_sessions_are_being_read(workspace: Path) -> None:
    """The checkpoint after Delete must not give up because readers are busy: Loads run all the time."""
    canary = "CANARY-" + os.urandom(8).hex()
    d = DaemonProcess(workspace).start()
    db = db_path(workspace)
    stop = threading.Event()
    failures: list[str] = []

    def read_all_the_time() -> None:
        with d.client() as c:
            while not stop.is_set():
                try:
                    c.load("busy", workdir="/tmp")
                except Exception as exc:
                    failures.append(repr(exc))
                    return

    try:
        with d.client() as c:
            c.append("busy", [Message.user("x" * 2000) for _ in range(200)])
            readers = [threading.Thread(target=read_all_the_time, daemon=True) for _ in range(3)]
            for t in readers:
                t.start()
            rounds = 5
            for r in range(rounds):
                sid = f"erase-{r}"
                c.append(sid, [Message.user(f"{canary} round {r}") for _ in range(20)])
                result = c.delete(sid)
                assert result == 20
                if result.erasure_pending:  # a reader held an old snapshot past the wait: finished in the background
                    deadline = time.monotonic() + 30
                    while c.stats()["erasure_pending_sessions"] and time.monotonic() < deadline:
                        time.sleep(0.05)
                    assert c.stats()["erasure_pending_sessions"] == 0, f"round {r}: erasure never completed"
                blob = db.read_bytes() + Path(f"{db}-wal").read_bytes()
                assert canary.encode() not in blob, f"round {r}: deleted content still in the files"
            stop.set()
            for t in readers:
                t.join(10)
        assert not failures, failures
    finally:
        stop.set()
        assert d.terminate() == 0
    record("users", erased_under_read_load=rounds)
