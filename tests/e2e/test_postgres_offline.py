"""Offline views (daemon down) and ``doctor`` with a PostgreSQL database configured for the workspace.

A workspace whose ``.claw/`` still holds a SQLite file from before (another session in it) and whose
``CLAW_DATABASE_URL`` names a PostgreSQL database: ``ls``/``show`` with the daemon down read that
database, say so on stderr, and never show the file's sessions; ``doctor`` checks that database.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claw_sessiond_client import Message
from tests.helpers.cli import in_workspace
from tests.helpers.daemon import DaemonProcess
from tests.helpers.postgres import SHARED as POSTGRES

pytestmark = pytest.mark.backend_neutral("picks its PostgreSQL database itself")


def test_offline_views_and_doctor_read_the_configured_database_not_a_stale_file(tmp_path: Path) -> None:
    ws = tmp_path / "stale"
    ws.mkdir()
    on_file = DaemonProcess(ws, env={"CLAW_DATABASE_URL": ""})  # the SQLite file, on either test pass
    on_file.start()
    with on_file.client() as c:
        c.append("in-the-file", Message.user("old"))
    on_file.stop()
    url = POSTGRES.database_for("offline-stale")
    on_pg = DaemonProcess(ws, env={"CLAW_DATABASE_URL": url})
    on_pg.start()
    with on_pg.client() as c:
        c.append("in-postgres", Message.user("new"))
    on_pg.stop()
    assert (ws / ".claw" / "sessions.db").exists()

    pg = {"CLAW_DATABASE_URL": url}
    listed = in_workspace(ws, "ls", env=pg)
    assert listed.returncode == 0, listed.stderr
    assert "read-only view of postgresql://" in listed.stderr
    assert "in-postgres" in listed.stdout and "in-the-file" not in listed.stdout
    shown = in_workspace(ws, "show", "in-postgres", env=pg)
    assert shown.returncode == 0 and "new" in shown.stdout, shown.stderr
    assert in_workspace(ws, "show", "in-the-file", env=pg).returncode == 1

    # Without the URL: the file, as before.
    local = in_workspace(ws, "ls", env={"CLAW_DATABASE_URL": ""})
    assert local.returncode == 0 and "in-the-file" in local.stdout and "in-postgres" not in local.stdout

    doctor = in_workspace(ws, "doctor", "--json", env=pg)
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["database"]["status"] == "ok" and "quick_check" not in checks, checks
    assert "postgresql://" in checks["database"]["detail"]
    wrong = in_workspace(ws, "ls", env={"CLAW_DATABASE_URL": "mysql://x/y"})
    assert wrong.returncode == 1 and "postgresql://" in wrong.stderr and "Traceback" not in wrong.stderr
