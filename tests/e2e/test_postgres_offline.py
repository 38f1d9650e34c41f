"""Offline views (daemon down) and ``doctor`` with a PostgreSQL database configured for the workspace.

- A workspace whose store is a PostgreSQL database (recorded in ``.claw/config.toml`` by its first
  ``serve``, or given by ``CLAW_DATABASE_URL``): ``ls``/``show`` with the daemon down read that database
  and say so on stderr; ``doctor`` checks it.
- A workspace whose ``.claw/`` still holds a SQLite file (a session in it) and records nothing, given a
  PostgreSQL URL: two stores for one workspace. ``serve`` (exit 2), a client's auto-start, ``ls``,
  ``show``, ``search``, ``stats``, ``usage``, ``doctor``, ``backup`` and ``restore`` (exit 1) refuse with
  one line naming both, ``--switch-backend`` or not; nothing is written (no ``config.toml``, the file byte
  for byte, no schema in the database). Without the URL the file is read, as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client import DaemonUnavailableError, Message, SessionClient
from tests.helpers.cli import claw, in_workspace
from tests.helpers.daemon import DaemonProcess
from tests.helpers.postgres import SHARED as POSTGRES
from tests.helpers.process import daemons_for, stop_pid

pytestmark = pytest.mark.backend_neutral("picks its PostgreSQL database itself")

NO_URL = {"CLAW_DATABASE_URL": ""}


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    """A fresh workspace; at teardown every daemon serving it (an auto-started one too) is stopped by its pid."""
    folder = tmp_path / "ws"
    folder.mkdir()
    yield folder
    for proc in daemons_for(folder):
        stop_pid(proc.pid)


def test_offline_views_and_doctor_read_the_configured_database(ws: Path, tmp_path: Path) -> None:
    url = POSTGRES.database_for(f"offline-{ws}")
    on_pg = DaemonProcess(ws, env={"CLAW_DATABASE_URL": url})  # first use: recorded in .claw/config.toml
    on_pg.start()
    with on_pg.client() as c:
        c.append("in-postgres", Message.user("new"))
    on_pg.stop()
    assert (ws / ".claw" / "config.toml").exists() and not (ws / ".claw" / "sessions.db").exists()

    for env in (NO_URL, {"CLAW_DATABASE_URL": url}):  # the record, and a URL that agrees with it
        listed = in_workspace(ws, "ls", env=env)
        assert listed.returncode == 0, listed.stderr
        assert "read-only view of postgresql://" in listed.stderr
        assert "in-postgres" in listed.stdout
        shown = in_workspace(ws, "show", "in-postgres", env=env)
        assert shown.returncode == 0 and "new" in shown.stdout, shown.stderr
        assert in_workspace(ws, "show", "no-such-session", env=env).returncode == 1

        doctor = in_workspace(ws, "doctor", "--json", env=env)
        checks = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}
        assert checks["database"]["status"] == "ok" and "quick_check" not in checks, checks
        assert "postgresql://" in checks["database"]["detail"]
        assert not (ws / ".claw" / "sessions.db").exists()

    # A URL of another scheme, in a workspace that records nothing: one clear line.
    bare = tmp_path / "bare"
    (bare / ".claw").mkdir(parents=True, mode=0o700)
    wrong = in_workspace(bare, "ls", env={"CLAW_DATABASE_URL": "mysql://x/y"})
    assert wrong.returncode == 1 and "postgresql://" in wrong.stderr and "Traceback" not in wrong.stderr


def _one_line_naming_both(text: str, sqlite_file: Path, database: str) -> None:
    """``text`` (a command's stderr, or an error) says in one line that the workspace would have two stores."""
    lines = [line for line in text.strip().splitlines() if "also holds the SQLite file" in line]
    assert len(lines) == 1, text
    assert str(sqlite_file) in lines[0] and f"/{database}" in lines[0] and "PostgreSQL" in lines[0], text
    assert "claw-sessiond copy" in lines[0] and "Traceback" not in text, text


def test_a_postgres_url_beside_a_sqlite_file_is_refused_everywhere(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_file = DaemonProcess(ws, env=NO_URL)  # the SQLite file, on either test pass
    on_file.start()
    with on_file.client() as c:
        c.append("in-the-file", Message.user("the parser in the file"))
        c.record_usage("in-the-file", input_tokens=7, model="file-model", cost_micros=1, currency="USD")
    on_file.stop()
    claw_folder = ws / ".claw"
    db = claw_folder / "sessions.db"
    url = POSTGRES.empty_database_for(f"beside-{ws}")  # shown to stay without a schema
    database = url.split("/")[-1].split("?")[0]
    before = sorted(p.name for p in claw_folder.iterdir())
    digest = db.read_bytes()
    backup_file = tmp_path / "copy.db"
    made = in_workspace(ws, "backup", str(backup_file), env=NO_URL)  # a real backup, to offer restore
    assert made.returncode == 0, made.stderr
    backup_bytes = backup_file.read_bytes()

    pg = {"CLAW_DATABASE_URL": url}
    for args in ((), ("--switch-backend",)):
        served = claw("serve", "--workspace", str(ws), *args, env=pg, timeout_s=60)
        assert served.returncode == 2, served.stderr
        assert len(served.stderr.strip().splitlines()) == 1, served.stderr
        _one_line_naming_both(served.stderr, db, database)
    flag = claw("serve", "--workspace", str(ws), "--database", url, env=NO_URL, timeout_s=60)
    assert flag.returncode == 2 and "--database names" in flag.stderr, flag.stderr
    _one_line_naming_both(flag.stderr, db, database)

    for command in (
        ("ls",),
        ("show", "in-the-file"),
        ("search", "parser"),
        ("stats",),
        ("usage",),
        ("backup", str(backup_file), "--force"),
        ("restore", str(backup_file), "--force"),
    ):
        refused = in_workspace(ws, *command, env=pg)
        assert refused.returncode == 1, (command, refused.stdout, refused.stderr)
        _one_line_naming_both(refused.stderr + refused.stdout, db, database)
        assert "file-model" not in refused.stdout and "the parser in the file" not in refused.stdout, command

    doctor = in_workspace(ws, "doctor", "--json", env=pg)  # its text output wraps lines: the check itself
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert doctor.returncode == 1 and checks["database"]["status"] == "fail", checks
    _one_line_naming_both(checks["database"]["detail"], db, database)
    assert "quick_check" not in checks and "backend" not in checks, checks

    # Nothing was written: no config.toml, the file and the backup byte for byte, no schema in the database.
    assert sorted(p.name for p in claw_folder.iterdir()) == before
    assert db.read_bytes() == digest and backup_file.read_bytes() == backup_bytes
    schema_query = "SELECT count(*) FROM pg_namespace WHERE nspname = 'claw_sessiond'"
    assert POSTGRES.server().psql(schema_query, database).strip() == "0"

    # A client that auto-starts a daemon with the URL in its environment is refused the same way (only the
    # auto-start's own log files are added to .claw/).
    monkeypatch.setenv("CLAW_DATABASE_URL", url)
    with pytest.raises(DaemonUnavailableError) as caught, SessionClient(ws, retry_window_s=0) as client:
        client.append("written-nowhere", Message.user("lost?"))
    assert "also holds the SQLite file" in str(caught.value), caught.value
    monkeypatch.delenv("CLAW_DATABASE_URL")
    assert not (claw_folder / "config.toml").exists() and db.read_bytes() == digest
    assert POSTGRES.server().psql(schema_query, database).strip() == "0"

    # Without the URL the workspace is what it was: the SQLite file.
    local = in_workspace(ws, "ls", env=NO_URL)
    assert local.returncode == 0 and "in-the-file" in local.stdout, local.stderr


def test_a_database_file_beside_a_sqlite_file_is_refused_with_one_line(ws: Path, tmp_path: Path) -> None:
    """``--database-file`` (how systemd units give the URL): the same refusal, nothing recorded."""
    DaemonProcess(ws, env=NO_URL).start().stop()
    url = POSTGRES.database_for(f"beside-file-{ws}")
    url_file = tmp_path / "database-url"
    url_file.write_text(url + "\n")
    url_file.chmod(0o600)
    served = claw("serve", "--workspace", str(ws), "--database-file", str(url_file), env=NO_URL, timeout_s=60)
    assert served.returncode == 2 and "--database-file names" in served.stderr, served.stderr
    _one_line_naming_both(served.stderr, ws / ".claw" / "sessions.db", url.split("/")[-1].split("?")[0])
    assert not (ws / ".claw" / "config.toml").exists()
