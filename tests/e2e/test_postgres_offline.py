"""Offline views (daemon down) and ``doctor`` with a PostgreSQL database configured for the workspace.

A workspace whose ``.claw/`` still holds a SQLite file from before (another session in it) while
``CLAW_DATABASE_URL`` names a PostgreSQL database is refused by ``serve``, ``ls`` and ``doctor``,
naming both stores (one store is the workspace's). With the file moved away, ``ls``/``show`` with
the daemon down read that database, say so on stderr, and ``doctor`` checks that database.
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
    pg = {"CLAW_DATABASE_URL": url}
    both = (in_workspace(ws, "serve", env=pg, timeout_s=60), in_workspace(ws, "ls", env=pg))
    for refused in both:
        assert refused.returncode in (1, 2), refused.stderr
        assert "SQLite file" in refused.stderr and "PostgreSQL" in refused.stderr, refused.stderr
    doctor = in_workspace(ws, "doctor", "--json", env=pg)
    assert doctor.returncode == 1 and "SQLite file" in json.loads(doctor.stdout)["checks"][0]["detail"]
    stale = ws / ".claw" / "sessions.db"
    stale.rename(ws / "moved-away.db")
    on_pg = DaemonProcess(ws, env=pg)
    on_pg.start()
    with on_pg.client() as c:
        c.append("in-postgres", Message.user("new"))
    on_pg.stop()
    assert not stale.exists()

    listed = in_workspace(ws, "ls", env=pg)
    assert listed.returncode == 0, listed.stderr
    assert "read-only view of postgresql://" in listed.stderr
    assert "in-postgres" in listed.stdout and "in-the-file" not in listed.stdout
    shown = in_workspace(ws, "show", "in-postgres", env=pg)
    assert shown.returncode == 0 and "new" in shown.stdout, shown.stderr
    assert in_workspace(ws, "show", "in-the-file", env=pg).returncode == 1

    # Without the URL: the database recorded in .claw/config.toml at the first start, not a file.
    local = in_workspace(ws, "ls", env={"CLAW_DATABASE_URL": ""})
    assert local.returncode == 0 and "in-postgres" in local.stdout and "in-the-file" not in local.stdout
    assert not stale.exists()

    doctor = in_workspace(ws, "doctor", "--json", env=pg)
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["database"]["status"] == "ok" and "quick_check" not in checks, checks
    assert "postgresql://" in checks["database"]["detail"]
    wrong = in_workspace(ws, "ls", env={"CLAW_DATABASE_URL": "mysql://x/y"})
    assert wrong.returncode == 1 and "postgresql://" in wrong.stderr and "Traceback" not in wrong.stderr
