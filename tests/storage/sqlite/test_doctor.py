"""``doctor`` on the SQLite file itself: healthy and unchanged, damaged, readable by others.

The real CLI on a workspace whose daemon wrote sessions and stopped; doctor
checks the file offline under the workspace lock and changes no byte of it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from claw_sessiond.storage.sqlite.schema import SCHEMA_VERSION
from tests.helpers.cli import in_workspace, in_workspace_json
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import stop_after_demo

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)


@pytest.fixture
def stopped(workspace: Path) -> Path:
    """A workspace whose daemon wrote sessions and stopped."""
    return stop_after_demo(workspace)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_doctor_offline_healthy(stopped: Path) -> None:
    db = stopped / ".claw" / "sessions.db"
    before = _digest(db)
    data = in_workspace_json(stopped, "doctor")
    checks = {c["check"]: c for c in data["checks"]}
    assert data["ok"] is True
    assert checks["daemon"]["status"] == "warn" and "checked offline under its lock" in checks["daemon"]["detail"]
    assert checks["quick_check"]["status"] == "ok" and checks["schema_version"]["detail"] == str(SCHEMA_VERSION)
    assert _digest(db) == before, "doctor changed the database"
    for extra in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        if extra.exists():
            assert extra.stat().st_mode & 0o077 == 0
    # The daemon starts normally afterwards (doctor released the lock).
    DaemonProcess(stopped).start().stop()


def _corrupt_btree(db: Path) -> None:
    page = int.from_bytes(db.read_bytes()[16:18], "big")
    pages = db.stat().st_size // page
    with open(db, "r+b") as fh:
        for n in range(1, pages):
            fh.seek(n * page + 8)
            fh.write(b"\xff" * 64)


@pytest.mark.parametrize("damage", ["garbage", "btree"])
def test_doctor_on_corrupt_database(stopped: Path, damage: str) -> None:
    db = stopped / ".claw" / "sessions.db"
    if damage == "garbage":
        db.write_bytes(b"this is not a database at all" * 100)
    else:
        _corrupt_btree(db)
    before = _digest(db)
    proc = in_workspace(stopped, "doctor")
    assert proc.returncode == 1, proc.stdout
    expected = "FAIL  database:" if damage == "garbage" else "FAIL  quick_check:"
    assert expected in proc.stdout
    data = json.loads(in_workspace(stopped, "doctor", "--json").stdout)
    assert data["ok"] is False
    assert any(c["status"] == "fail" for c in data["checks"])
    assert _digest(db) == before


def test_doctor_on_loose_permissions(stopped: Path) -> None:
    db = stopped / ".claw" / "sessions.db"
    db.chmod(0o644)
    proc = in_workspace(stopped, "doctor")
    assert proc.returncode == 1
    assert "FAIL  permissions: readable by other users: sessions.db 0644" in proc.stdout
