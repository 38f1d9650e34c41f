"""Hard delete (right to erasure) and the retention policy: whole sessions only, bytes gone from both files."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.cli import claw
from tests.helpers.data import old_lines
from tests.helpers.sqlite_file import file_bytes


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
