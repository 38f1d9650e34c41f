"""The backend is a property of the workspace: ``.claw/config.toml`` records it, every entry point reads it.

A workspace first served with ``--database postgresql://...`` remembers it: after a stop, ``serve``
without flags, a Python client's auto-start, ``ls``/``show``/``doctor`` offline and ``status`` all
reach that database, and no SQLite file appears. A flag that names another store is a start-up error
naming both (exit 2) unless ``--switch-backend``; ``init`` refuses a URL holding a password and
records where the password is found instead; malformed URLs end ``serve`` and ``copy`` with one line.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client import Message, SessionClient
from tests.helpers.cli import claw, in_workspace
from tests.helpers.daemon import DaemonProcess, free_port
from tests.helpers.metrics import scrape_text
from tests.helpers.postgres import PASSWORD
from tests.helpers.postgres import SHARED as POSTGRES
from tests.helpers.process import daemons_for, stop_pid

pytestmark = pytest.mark.backend_neutral("picks its PostgreSQL database itself")

#: No URL from the environment: only what each test names.
NO_URL = {"CLAW_DATABASE_URL": ""}


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    """A fresh workspace; at teardown every daemon serving it (auto-started ones too) is stopped by its pid."""
    folder = tmp_path / "ws"
    folder.mkdir()
    yield folder
    for proc in daemons_for(folder):
        stop_pid(proc.pid)


def _config(ws: Path) -> Path:
    return ws / ".claw" / "config.toml"


def _serve(ws: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``serve`` that is expected to refuse at start (bounded: a daemon that came up is stopped by the timeout)."""
    return claw("serve", "--workspace", str(ws), *args, env={**NO_URL, **(env or {})}, timeout_s=60)


def test_serve_records_postgres_and_every_entry_point_reads_it(ws: Path) -> None:
    url = POSTGRES.database_for(f"wsb-{ws}")
    first = DaemonProcess(ws, "--database", url, env=NO_URL).start()
    with first.client() as c:
        c.append("remembered", Message.user("kept in postgres"))
    first.stop()
    config = _config(ws)
    assert stat.S_IMODE(config.lstat().st_mode) == 0o600
    assert "database = " in config.read_text() and urllib.parse.urlsplit(url).path in config.read_text()
    assert not (ws / ".claw" / "sessions.db").exists()

    # Offline, daemon down: the recorded database, never an empty SQLite file.
    listed = in_workspace(ws, "ls", env=NO_URL)
    assert listed.returncode == 0 and "remembered" in listed.stdout, listed.stderr
    doctor = in_workspace(ws, "doctor", "--json", env=NO_URL)
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["database"]["status"] == "ok" and "quick_check" not in checks, checks
    assert checks["backend"]["detail"].startswith("PostgreSQL "), checks
    assert not (ws / ".claw" / "sessions.db").exists()

    # serve without flags: the same database; the ready line, stats, status and /metrics name it.
    port = free_port()
    again = DaemonProcess(ws, "--metrics", f"127.0.0.1:{port}", env=NO_URL).start()
    with again.client() as c:
        assert [m.content for m in c.load("remembered").messages] == ["kept in postgres"]
        stats = c.stats()
    assert stats["backend"] == "postgresql" and urllib.parse.urlsplit(url).path.lstrip("/") in stats["database"]
    assert "backend=postgresql" in again.log() and PASSWORD not in again.log()
    status = in_workspace(ws, "status", "--json", env=NO_URL)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["daemons"][0]["database"].startswith("PostgreSQL "), status.stdout
    table = in_workspace(ws, "status", env=NO_URL).stdout.splitlines()
    assert table[0].split()[-1] == "STORE" and " pg " in table[1], table
    scraped = scrape_text(port)
    assert f'claw_sessiond_store_info{{backend="postgresql",database="{stats["database"]}"}} 1.0' in scraped
    assert PASSWORD not in scraped
    again.stop()
    assert not (ws / ".claw" / "sessions.db").exists()


def test_python_client_autostart_in_a_postgres_workspace_reaches_postgres(ws: Path) -> None:
    url = POSTGRES.database_for(f"wsb-auto-{ws}")
    first = DaemonProcess(ws, "--database", url, env=NO_URL).start()
    with first.client() as c:
        c.append("seen-by-autostart", Message.user("hello"))
    first.stop()
    code = (
        "import sys\nfrom claw_sessiond_client import SessionClient\n"
        "with SessionClient(sys.argv[1]) as c:\n"
        "    print([m.content for m in c.load('seen-by-autostart').messages], c.stats()['backend'])\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "CLAW_DATABASE_URL"}
    run = subprocess.run(
        [sys.executable, "-c", code, str(ws)], capture_output=True, text=True, timeout=90, env=env, cwd=ws
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "['hello'] postgresql", run.stdout
    assert not (ws / ".claw" / "sessions.db").exists()


def test_a_flag_naming_another_store_is_a_startup_error_naming_both(ws: Path) -> None:
    url = POSTGRES.database_for(f"wsb-mismatch-{ws}")
    other = POSTGRES.database_for(f"wsb-mismatch-other-{ws}")
    DaemonProcess(ws, "--database", url, env=NO_URL).start().stop()
    recorded = _config(ws).read_text()
    for args, env in (
        (("--database", "sqlite:"), {}),
        (("--database", other), {}),
        ((), {"CLAW_DATABASE_URL": other}),
    ):
        refused = _serve(ws, *args, env=env)
        assert refused.returncode == 2, (args, refused.stderr)
        line = refused.stderr.strip()
        assert "\n" not in line and "Traceback" not in line, line
        assert "uses PostgreSQL" in line and "--switch-backend" in line, line
        assert ("SQLite" in line) if args[-1:] == ("sqlite:",) else (urllib.parse.urlsplit(other).path in line)
        assert _config(ws).read_text() == recorded  # nothing written
    # ls with a URL in the environment that disagrees: refused the same way, not a view of either store.
    listed = in_workspace(ws, "ls", env={"CLAW_DATABASE_URL": other})
    assert listed.returncode != 0 and "uses PostgreSQL" in listed.stderr, listed.stderr

    # Switching is explicit, and then recorded.
    switched = DaemonProcess(ws, "--database", other, "--switch-backend", env=NO_URL).start()
    switched.stop()
    assert urllib.parse.urlsplit(other).path in _config(ws).read_text()


def test_a_sqlite_file_beside_a_postgres_record_is_refused_naming_both(ws: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    DaemonProcess(old, env=NO_URL).start().stop()  # a SQLite workspace, as before (no config.toml written)
    assert (old / ".claw" / "sessions.db").exists() and not _config(old).exists()
    url = POSTGRES.database_for(f"wsb-beside-{ws}")
    refused = in_workspace(old, "init", "--database", url, env=NO_URL)  # recording it would name two stores
    assert refused.returncode == 2 and "SQLite file" in refused.stderr, refused.stderr
    assert not _config(old).exists()

    DaemonProcess(ws, "--database", url, env=NO_URL).start().stop()  # records PostgreSQL
    (ws / ".claw" / "sessions.db").write_bytes((old / ".claw" / "sessions.db").read_bytes())
    for proc in (_serve(ws), in_workspace(ws, "ls", env=NO_URL)):
        assert proc.returncode in (1, 2), proc.stderr
        assert "SQLite file" in proc.stderr and "PostgreSQL" in proc.stderr and "Traceback" not in proc.stderr
    assert _serve(ws).returncode == 2


def test_init_refuses_a_password_and_records_where_to_find_it(ws: Path, tmp_path: Path) -> None:
    unix_url = POSTGRES.database_for(f"wsb-init-{ws}")
    name = urllib.parse.urlsplit(unix_url).path.lstrip("/")
    with_password = POSTGRES.server().tcp_url(name)
    refused = in_workspace(ws, "init", "--database", with_password, env=NO_URL)
    assert refused.returncode == 2 and "password" in refused.stderr, refused.stderr
    assert PASSWORD not in refused.stderr + refused.stdout
    assert not _config(ws).exists()

    secret = tmp_path / "pg-password"
    secret.write_text(PASSWORD + "\n")
    secret.chmod(0o600)
    without = POSTGRES.server().tcp_url(name).replace(":" + urllib.parse.quote(PASSWORD) + "@", "@")
    assert PASSWORD not in without
    done = in_workspace(ws, "init", "--database", without, "--password-file", str(secret), env=NO_URL)
    assert done.returncode == 0, done.stderr
    text = _config(ws).read_text()
    assert PASSWORD not in text and str(secret) in text
    assert stat.S_IMODE(_config(ws).lstat().st_mode) == 0o600
    daemon = DaemonProcess(ws, env=NO_URL).start()  # the password comes from the file the config names
    with daemon.client() as c:
        c.append("over-tcp-login", Message.user("ok"))
        assert c.stats()["backend"] == "postgresql"
    daemon.stop()
    assert PASSWORD not in daemon.log()


@pytest.mark.parametrize(
    "url", ["postgresql://db.example:notaport/x", "postgresql://[::1/x", "postgresql://[zz::q]:5432/x", "mysql://h/x"]
)
def test_a_malformed_database_url_ends_serve_and_copy_with_one_line(ws: Path, url: str) -> None:
    served = _serve(ws, "--database", url)
    copied = claw("copy", "--from", url, "--to", str(ws), env=NO_URL, timeout_s=60)
    for proc in (served, copied):
        assert proc.returncode == 2, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert not _config(ws).exists()


def test_client_sqlite_workspace_without_config_keeps_working(ws: Path) -> None:
    daemon = DaemonProcess(ws, env=NO_URL).start()
    with SessionClient(address=daemon.address, autostart=False) as c:
        c.append("plain", Message.user("sqlite as before"))
        assert c.stats()["backend"] == "sqlite"
    daemon.stop()
    assert not _config(ws).exists()


def test_a_linked_config_is_never_followed(ws: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "planted.toml"
    elsewhere.write_text('database = "postgresql://someone@evil.example/theirs"\n')
    (ws / ".claw").mkdir(mode=0o700)
    _config(ws).symlink_to(elsewhere)
    served = _serve(ws)
    assert served.returncode == 2, served.stderr
    for refused in (served, in_workspace(ws, "ls", env=NO_URL), in_workspace(ws, "init", env=NO_URL)):
        assert refused.returncode != 0 and "symbolic link" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr, refused.stderr
    assert _config(ws).is_symlink() and "evil.example" in elsewhere.read_text()
    assert not (ws / ".claw" / "sessions.db").exists()


def test_first_use_from_a_database_file_records_the_url_without_its_password(ws: Path, tmp_path: Path) -> None:
    name = urllib.parse.urlsplit(POSTGRES.database_for(f"wsb-file-{ws}")).path.lstrip("/")
    url_file = tmp_path / "database-url"
    url_file.write_text(POSTGRES.server().tcp_url(name) + "\n")
    url_file.chmod(0o600)
    daemon = DaemonProcess(ws, "--database-file", str(url_file), env=NO_URL).start()
    daemon.stop()
    text = _config(ws).read_text()
    assert f"127.0.0.1:{POSTGRES.server().port}/{name}" in text and PASSWORD not in text, text
    assert "not recorded in .claw/config.toml" in daemon.log() and PASSWORD not in daemon.log()
    # Without the file, the recorded store is used, and the missing password is said plainly, as one line.
    refused = _serve(ws)
    assert refused.returncode == 1 and "password" in refused.stderr and "Traceback" not in refused.stderr
    assert f"127.0.0.1:{POSTGRES.server().port}/{name}" in refused.stderr and PASSWORD not in refused.stderr
    assert not (ws / ".claw" / "sessions.db").exists()
