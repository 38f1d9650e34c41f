"""The daemon on a PostgreSQL database (issue 17): selected by --database, CLAW_DATABASE_URL or
.claw/config.toml; two daemons on two workspaces serve the same sessions; start-up errors name the
server, never the password.

Every test uses the test process's throwaway server (``tests/helpers/postgres.py``), a database
of its own per test. Runs across daemons and Watch across daemons are not covered yet
(docs/postgres.md, Status).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond_client import Message
from tests.helpers.postgres import PASSWORD
from tests.helpers.postgres import SHARED as POSTGRES

pytestmark = pytest.mark.backend_neutral("picks its PostgreSQL databases itself")


def _url(tmp_path: Path) -> str:
    return POSTGRES.database_for(str(tmp_path / "db"))


def _start_failure(workspace: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``serve`` expecting it to fail at start; its exit code and output."""
    done = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    return done.returncode, done.stdout + done.stderr


def test_two_daemons_on_two_workspaces_serve_the_same_sessions(tmp_path: Path, spawn_daemon: Any) -> None:
    url = _url(tmp_path)
    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    ws_a.mkdir()
    ws_b.mkdir()
    a = spawn_daemon("--database", url, workspace_path=ws_a)
    b = spawn_daemon("--database", url, workspace_path=ws_b)
    with a.client() as ca, b.client() as cb:
        ca.append("shared", [Message.user("one"), Message.assistant("two")])
        cb.append("shared", Message.user("three"), expected_last_position=2)
        assert [m.content for m in ca.load("shared").messages] == ["one", "two", "three"]
        assert [m.content for m in cb.load("shared").messages] == ["one", "two", "three"]
    assert not (ws_a / ".claw" / "sessions.db").exists(), "the SQLite file must not be created"
    # A restarted daemon finds what was stored.
    a.terminate()
    again = spawn_daemon("--database", url, workspace_path=ws_a)
    with again.client() as c:
        assert c.load("shared").session.last_position == 3


def test_database_from_the_environment_and_from_config_toml(tmp_path: Path, workspace: Path, spawn_daemon: Any) -> None:
    url = _url(tmp_path)
    via_env = spawn_daemon(env={"CLAW_DATABASE_URL": url})
    with via_env.client() as c:
        c.append("from-env", Message.user("hello"))
    via_env.terminate()
    other = tmp_path / "other"
    (other / ".claw").mkdir(parents=True)
    (other / ".claw" / "config.toml").write_text(f'database = "{url}"\n')
    via_toml = spawn_daemon(workspace_path=other)
    with via_toml.client() as c:
        assert [m.content for m in c.load("from-env").messages] == ["hello"]


def test_wrong_password_names_the_server_never_the_password(tmp_path: Path, workspace: Path) -> None:
    url = _url(tmp_path)
    POSTGRES.server()  # started
    wrong = "wrong-Secret-91x"
    tcp = POSTGRES.server().tcp_url(url.rsplit("/", 1)[1].split("?")[0], password=wrong)
    code, out = _start_failure(workspace, env={"CLAW_DATABASE_URL": tcp, "PATH": "/usr/bin:/bin"})
    assert code != 0
    assert f"127.0.0.1:{POSTGRES.server().port}" in out, out
    assert "password authentication failed" in out, out
    assert wrong not in out and PASSWORD not in out, out
    # The right password over TCP works (the refusal above was the password, not the route).
    right = POSTGRES.server().tcp_url(url.rsplit("/", 1)[1].split("?")[0])
    daemon = subprocess.Popen(
        [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(workspace)],
        env={"CLAW_DATABASE_URL": right, "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        sock = workspace / ".claw" / "sessiond.sock"
        while not sock.exists() and daemon.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert daemon.poll() is None, daemon.stdout.read().decode() if daemon.stdout else ""
    finally:
        daemon.terminate()
        output = daemon.communicate(timeout=30)[0].decode()
    assert PASSWORD not in output


def test_unreachable_server_names_the_host(workspace: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out = _start_failure(workspace, "--database", f"postgresql://claw@127.0.0.1:{port}/nowhere")
    assert code != 0
    assert f"127.0.0.1:{port}/nowhere" in out and "cannot connect" in out, out


def test_a_database_url_of_another_kind_is_a_configuration_error(workspace: Path) -> None:
    code, out = _start_failure(workspace, "--database", "mysql://user:pw@host/db")
    assert code == 2, out
    assert "postgresql://" in out and "pw" not in out, out
