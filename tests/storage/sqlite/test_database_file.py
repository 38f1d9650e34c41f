"""The daemon's SQLite file: WAL mode, migrations recorded, older files upgraded, newer or foreign ones refused.

The upgrade tests open databases that earlier versions wrote
(tests/storage/sqlite/fixtures/, made by make_fixtures.py) with this daemon.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.storage.sqlite.schema import SCHEMA_VERSION
from claw_sessiond_client import Message
from tests.helpers.daemon import DaemonProcess, raw_watch
from tests.helpers.sqlite_file import db_path, install_old_database, read_only

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)

#: The last commit with schema version 1 (before incarnations and record times).
SCHEMA_1_COMMIT = "55a51f1"
#: The commit the search index started from (schema version 2, no search index).
SCHEMA_2_COMMIT = "a5e914a"


def test_wal_and_synchronous_full_are_in_effect(daemon: DaemonProcess, workspace: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(workspace / ".claw" / "sessions.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] >= 1
    finally:
        conn.close()


def test_migrations_are_named_ordered_and_recorded(daemon: DaemonProcess, workspace: Path) -> None:
    import sqlite3

    from claw_sessiond.storage.sqlite.schema import MIGRATIONS, SCHEMA_VERSION

    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    conn = sqlite3.connect(f"file:{workspace / '.claw' / 'sessions.db'}?mode=ro", uri=True)
    try:
        recorded = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()
    assert recorded == [(m.version, m.name) for m in MIGRATIONS]


def test_database_newer_than_the_code_is_refused(spawn_daemon, workspace: Path) -> None:
    import hashlib
    import sqlite3

    first = spawn_daemon()
    first.terminate()
    db = workspace / ".claw" / "sessions.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    d = spawn_daemon(start=False)
    assert d.spawn().wait(30) == 1
    assert "newer than this claw-sessiond" in d.log() and str(db) in d.log()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest


def test_corrupt_database_stops_the_daemon_naming_the_file(spawn_daemon, workspace: Path) -> None:
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    db = claw / "sessions.db"
    db.write_bytes(b"this is not a database" * 100)
    before = db.read_bytes()
    d = spawn_daemon(start=False)
    proc = d.spawn()
    assert proc.wait(30) == 1
    assert str(db) in d.log()
    assert db.read_bytes() == before


def test_a_database_written_by_the_base_commit_opens_and_upgrades(
    spawn_daemon: Any, workspace: Path, tmp_path: Path
) -> None:
    # Written by the code of SCHEMA_1_COMMIT (schema 1): Append "legacy" ["from v1"] with request id
    # "req-v1" (position 1), then Append "other" ["x"] (tests/storage/sqlite/fixtures/make_fixtures.py).
    install_old_database(workspace, "schema-v1.sessions.db")
    with read_only(db_path(workspace)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1

    new: DaemonProcess = spawn_daemon()
    with new.client() as c:
        stats = c.stats()
        assert stats["schema_version"] == SCHEMA_VERSION >= 2
        assert stats["request_records"] == 2
        retry = c.append("legacy", [Message.user("from v1")], request_id="req-v1")
        assert retry.replayed and retry.first_position == 1
        assert [m.content for m in c.load("legacy", str(workspace)).messages] == ["from v1"]
    replies = raw_watch(new.address, session_id="legacy")
    assert isinstance(replies, list) and replies and replies[0].incarnation
    assert new.terminate() == 0
    with read_only(db_path(workspace)) as conn:
        rows = conn.execute("SELECT incarnation FROM sessions").fetchall()
        assert len(rows) == 2 and all(len(r[0]) == 16 for r in rows) and rows[0][0] != rows[1][0]
        created = conn.execute("SELECT created_at FROM requests").fetchall()
        assert len(created) == 2 and all(r[0].endswith("Z") and r[0] > "2020" for r in created)


def test_the_upgrade_indexes_a_database_written_before_the_index(
    spawn_daemon: Any, workspace: Path, tmp_path: Path
) -> None:
    # Written by the code of SCHEMA_2_COMMIT (schema 2): "legacy" [user "written before the index
    # existed", assistant "indexed later"], "gone" [user "cleared before the upgrade"] then Clear,
    # and usage 5/1 tokens, 7 micro-USD, model "m" (tests/storage/sqlite/fixtures/make_fixtures.py).
    install_old_database(workspace, "schema-v2.sessions.db")
    with read_only(db_path(workspace)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2

    new: DaemonProcess = spawn_daemon()
    with new.client() as c:
        assert c.stats()["schema_version"] == SCHEMA_VERSION >= 4
        assert [(h.session_id, h.position) for h in c.search("index").hits] == [("legacy", 1)]
        assert [h.position for h in c.search("indexed later").hits] == [2]
        assert c.search("cleared upgrade").hits == []
        assert [h.session_id for h in c.search("cleared upgrade", include_cleared=True).hits] == ["gone"]
        c.append("legacy", Message.user("written after the upgrade"))
        assert sorted(h.position for h in c.search("written").hits) == [1, 3]
        report = c.usage_report()
        assert [(r.model, r.usage.cost_micros, r.usage.currency) for r in report.rows] == [("m", 7, "USD")]
        c.delete("legacy")
        assert c.search("written").hits == []
    assert new.terminate() == 0
