"""Erasure while a reader holds an old snapshot: the reply says pending, writes go on, the bytes go later.

A real sqlite3 reader (read-only, as ``tests/helpers/sqlite_file.py`` opens them) keeps a
read transaction open on the daemon's database, which stops the
``wal_checkpoint(TRUNCATE)`` that takes deleted bytes out of the files.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from pathlib import Path

import pytest

from claw_sessiond_client import Message
from tests.helpers.daemon import DaemonProcess
from tests.helpers.process import wait_until
from tests.helpers.sqlite_file import db_path

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)

BUSY_TIMEOUT_MS = 3000


def wal_bytes(db: Path) -> bytes:
    wal = Path(f"{db}-wal")
    return wal.read_bytes() if wal.exists() else b""


def test_delete_under_an_old_snapshot_reports_pending_and_finishes_later(spawn_daemon, workspace: Path) -> None:
    d: DaemonProcess = spawn_daemon("--busy-timeout-ms", str(BUSY_TIMEOUT_MS))
    db = db_path(workspace)
    marker = f"SECRET-{uuid.uuid4().hex}"
    with d.client() as c:
        c.append("victim", [Message.user(f"key {marker}"), Message.assistant(marker * 40)])
        c.append("other", Message.user("unrelated"))
        assert marker.encode() in wal_bytes(db)

        reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
        try:
            reader.execute("BEGIN")
            assert reader.execute("SELECT count(*) FROM events").fetchone()[0] == 3  # the snapshot is taken

            box: dict[str, object] = {}

            def delete() -> None:
                started = time.monotonic()
                box["result"] = c.delete("victim")
                box["seconds"] = time.monotonic() - started

            deleter = threading.Thread(target=delete)
            deleter.start()
            time.sleep(0.02)
            started = time.monotonic()
            c.append("other", Message.user("written while the delete checkpoints"))
            append_s = time.monotonic() - started
            deleter.join(30)
            assert not deleter.is_alive()

            result = box["result"]
            assert result == 2 and getattr(result, "erasure_pending", None) is True
            # Neither the delete nor the append waited for the busy timeout.
            assert float(box["seconds"]) < BUSY_TIMEOUT_MS / 2000, box  # type: ignore[arg-type]
            assert append_s < BUSY_TIMEOUT_MS / 2000, append_s
            assert marker.encode() in wal_bytes(db)  # honestly reported: the bytes are still there
            assert c.stats()["erasure_pending_sessions"] == 1
            time.sleep(0.5)  # retries meanwhile cannot finish while the snapshot is held
            assert c.stats()["erasure_pending_sessions"] == 1
            assert [m.content for m in c.load("other", str(workspace)).messages][-1].startswith("written while")
        finally:
            reader.execute("COMMIT")
            reader.close()

        assert wait_until(lambda: c.stats()["erasure_pending_sessions"] == 0, 10.0), d.log()
        assert marker.encode() not in db.read_bytes()
        assert marker.encode() not in wal_bytes(db)
        assert [s.id for s in c.list_sessions()] == ["other"]
    assert d.terminate() == 0
    log = d.log()
    assert log.count("event=erasure_pending session=victim") == 1, log
    assert log.count("event=erasure_completed session=victim") == 1, log


def test_delete_without_readers_is_complete_at_once(daemon: DaemonProcess, workspace: Path) -> None:
    marker = f"SECRET-{uuid.uuid4().hex}"
    with daemon.client() as c:
        c.append("victim", Message.user(marker * 20))
        result = c.delete("victim")
        assert result.events_deleted == 1 and result.erasure_pending is False
        assert c.stats()["erasure_pending_sessions"] == 0
    db = db_path(workspace)
    assert marker.encode() not in db.read_bytes() + wal_bytes(db)
