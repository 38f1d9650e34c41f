"""The CLI for people (``ls``, ``show``, ``stats``, ``doctor``) against real daemons and real files.

Every command runs as ``python -m claw_sessiond ...`` in a subprocess, with
and without ``--json``, on a workspace with real sessions, one of which has
interrupted tool calls that the daemon repairs.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.storage.sqlite.schema import SCHEMA_VERSION
from tests.helpers.backend import on_postgres, schema_version
from tests.helpers.cli import in_workspace, in_workspace_json
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import populate_demo, stop_after_demo

COMMANDS = ("ls", "show", "stats", "doctor")


@pytest.fixture(scope="module")
def live(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """One daemon with sessions for the read-only checks of this module."""
    ws = tmp_path_factory.mktemp("cli") / "ws"
    ws.mkdir()
    daemon = DaemonProcess(ws).start()
    try:
        with daemon.client() as client:
            populate_demo(client)
        yield daemon
    finally:
        daemon.stop()


@pytest.mark.parametrize("command", COMMANDS)
def test_help(command: str, tmp_path: Path) -> None:
    proc = in_workspace(tmp_path, command, "--help")
    assert proc.returncode == 0
    assert "--json" in proc.stdout and "--workspace" in proc.stdout
    text = " ".join(proc.stdout.split())  # folded to the width
    assert "Exit codes: 0 ok, 1 failure" in text and "2 usage" in text


@pytest.mark.smoke
def test_top_level_help_lists_commands(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "claw_sessiond", "--help"], capture_output=True, text=True)
    for command in COMMANDS:
        assert command in proc.stdout


def test_usage_error_exits_2(tmp_path: Path) -> None:
    assert in_workspace(tmp_path, "show").returncode == 2
    assert in_workspace(tmp_path, "ls", "--no-such-flag").returncode == 2


@pytest.mark.smoke
def test_ls(live: DaemonProcess) -> None:
    proc = in_workspace(live.workspace, "ls")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["ID", "MESSAGES", "TOKENS", "COST", "UPDATED"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["demo"][1:5] == ["4", "150", "0.000450", "USD"]
    assert rows["crashed"][1] in ("2", "4")  # 4 once show --repair has repaired it

    data = in_workspace_json(live.workspace, "ls")
    assert data["format"] == 1 and data["total"] == 2
    by_id = {s["id"]: s for s in data["sessions"]}
    assert set(by_id) == {"demo", "crashed"}
    assert by_id["demo"]["messages"] == 4
    assert by_id["demo"]["usage"]["input_tokens"] == 120 and by_id["demo"]["usage"]["cost_micros"] == 450
    assert by_id["demo"]["workdir"] == "/home/me/project"
    assert by_id["demo"]["updated_at"].endswith("Z")
    assert [s["id"] for s in in_workspace_json(live.workspace, "ls", "--contains", "cras")["sessions"]] == ["crashed"]


def test_show_transcript(live: DaemonProcess) -> None:
    proc = in_workspace(live.workspace, "show", "demo")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "session demo" in out and "workdir /home/me/project" in out
    for fragment in ("#1 system", "be brief", "#2 user", "list the files", "#3 assistant", "#4 tool ← call_1 (bash)"):
        assert fragment in out
    assert 'bash({"cmd": "ls -la"})' in out and "[call_1]" in out
    assert "  README.md\n  setup.py" in out
    assert "tokens 120 in / 30 out" in out and "0.000450 USD" in out
    assert "SYNTHETIC" not in out


def test_show_is_read_only_then_repair(live: DaemonProcess) -> None:
    # Read-only by default: the interrupted calls are listed as open, nothing is written.
    before = {s["id"]: s for s in in_workspace_json(live.workspace, "ls")["sessions"]}["crashed"]
    data = in_workspace_json(live.workspace, "show", "crashed")
    assert data["open_calls"] == ["c1", "c2"] and data["repaired_now"] == []
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"]
    assert data["messages"][1]["tool_calls"][0] == {"id": "c1", "name": "bash", "arguments": {"cmd": "rm -r tmp"}}
    assert data["interrupted"] == ["c1", "c2"] and data["running"] == []
    text = in_workspace(live.workspace, "show", "crashed").stdout
    # No live run owns them: interrupted (the header lists each, and so does its call line).
    assert "tool call c1: interrupted (no result; the next Load repairs it)" in text
    assert text.count("interrupted (no result; the next Load repairs it)") == 2
    assert "[c1]  interrupted\n" in text and "[c2]  interrupted\n" in text
    assert "SYNTHETIC" not in text
    after = {s["id"]: s for s in in_workspace_json(live.workspace, "ls")["sessions"]}["crashed"]
    assert after == before, "show without --repair wrote to the session"

    # --repair loads like a resuming agent: both calls repaired once, then marked as synthetic.
    first = in_workspace_json(live.workspace, "show", "crashed", "--repair")
    second = in_workspace_json(live.workspace, "show", "crashed", "--repair")
    assert first["repaired_now"] == ["c1", "c2"] and second["repaired_now"] == []
    for shown in (second, in_workspace_json(live.workspace, "show", "crashed")):
        messages = shown["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
        assert [(m["tool_call_id"], m["synthetic"]) for m in messages[2:]] == [
            ("c1", "interrupted"),
            ("c2", "interrupted"),
        ]
        assert "synthetic" not in messages[0]
        assert shown["open_calls"] == []
        assert shown["session"]["workdir"] == "/home/me/project"  # the stored one, not the CLI's folder

    text = in_workspace(live.workspace, "show", "crashed").stdout
    assert text.count("SYNTHETIC (interrupted)") == 2
    assert "#3 tool ← c1 (bash)  SYNTHETIC (interrupted)" in text
    assert "not re-run" in text and "interrupted (no result" not in text


def test_show_lists_audit_events(live: DaemonProcess) -> None:
    with live.client() as client:
        client.record_event("demo", "permission_denial", {"tool": "bash", "reason": "denied by policy"})
    data = in_workspace_json(live.workspace, "show", "demo")
    assert data["audit_events"][-1]["type"] == "permission_denial"
    assert data["audit_events"][-1]["payload"] == {"tool": "bash", "reason": "denied by policy"}
    assert "permission_denial" in in_workspace(live.workspace, "show", "demo").stdout


def test_show_unknown_session(live: DaemonProcess) -> None:
    proc = in_workspace(live.workspace, "show", "nope")
    assert proc.returncode == 1
    assert "session 'nope' is not stored" in proc.stderr
    assert "nope" not in in_workspace(live.workspace, "ls").stdout  # looking did not create it


def test_stats(live: DaemonProcess) -> None:
    data = in_workspace_json(live.workspace, "stats")
    assert data["format"] == 1
    data = data["stats"]
    assert data["sessions"] == 2
    assert data["messages"] in (6, 8)
    assert data["schema_version"] == schema_version()
    assert data["database_bytes"] > 0 and data["wal_bytes"] >= 0
    assert live.proc is not None and data["pid"] == live.proc.pid
    proc = in_workspace(live.workspace, "stats")
    assert proc.returncode == 0
    values = dict(line.split(None, 1) for line in proc.stdout.splitlines() if not line.startswith(" ") and " " in line)
    assert values["sessions"] == "2" and values["schema_version"] == str(schema_version())
    assert list(values)[:6] == ["sessions", "messages", "events", "database_bytes", "wal_bytes", "schema_version"]


@pytest.mark.both_backends("doctor checks the configured PostgreSQL database, line by line")
def test_doctor_with_daemon_up(live: DaemonProcess) -> None:
    data = in_workspace_json(live.workspace, "doctor")
    checks = {c["check"]: c for c in data["checks"]}
    assert data["ok"] is True
    assert (
        checks["daemon"]["status"] == "ok" and f"pid {live.proc.pid if live.proc else 0}" in checks["daemon"]["detail"]
    )
    # The checks are of the database the daemon serves: on PostgreSQL, that database (not a SQLite file).
    assert checks["quick_check" if not on_postgres() else "database"]["status"] == "ok"
    assert checks["schema_version"]["detail"] == (
        f"{schema_version()} (this build's)" if on_postgres() else str(SCHEMA_VERSION)
    )
    assert checks["permissions"]["status"] == "ok"
    proc = in_workspace(live.workspace, "doctor")
    assert proc.returncode == 0
    assert "ok    daemon: pid" in proc.stdout
    assert ("ok    database:" if on_postgres() else "ok    quick_check: ok") in proc.stdout


# ---------------------------------------------------------------- daemon down


@pytest.fixture
def stopped(workspace: Path) -> Path:
    """A workspace whose daemon wrote sessions and stopped."""
    return stop_after_demo(workspace)


@pytest.mark.smoke
def test_online_commands_with_daemon_down(stopped: Path, tmp_path: Path) -> None:
    for args in (("ls",), ("show", "demo"), ("stats",), ("ls", "--json")):
        proc = in_workspace(stopped, *args, "--no-offline")
        assert proc.returncode == 1, args
        assert "no claw-sessiond answers on" in proc.stderr and "Try:" in proc.stderr
        # Without --no-offline: the read-only view under the workspace lock (tests/storage/sqlite/test_offline.py).
        proc = in_workspace(stopped, *args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "no daemon running; read-only view of" in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    assert in_workspace(empty, "ls").returncode == 1
    assert not (empty / ".claw").exists(), "an online command auto-started a daemon"


def test_doctor_refuses_a_held_lock(stopped: Path) -> None:
    """A process holds the daemon lock but does not answer: doctor must not open the database."""
    fd = os.open(stopped / ".claw" / "sessiond.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        proc = in_workspace(stopped, "doctor")
    finally:
        os.close(fd)
    assert proc.returncode == 1
    assert "FAIL  lock:" in proc.stdout and "holds the lock" in proc.stdout
    assert "quick_check" not in proc.stdout


def test_doctor_while_lock_is_held_by_doctor_a_daemon_cannot_start(stopped: Path) -> None:
    """The lock doctor takes is the daemon's: a daemon started meanwhile exits 1 instead of writing."""
    from claw_sessiond.daemon import LockHeldError, acquire_lock

    fd = acquire_lock(stopped / ".claw" / "sessiond.lock")  # what doctor does when the daemon is down
    try:
        daemon = DaemonProcess(stopped)
        proc = daemon.spawn()
        assert proc.wait(20) == 1
        assert "holds the lock" in daemon.log()
        with pytest.raises(LockHeldError):
            acquire_lock(stopped / ".claw" / "sessiond.lock")
    finally:
        os.close(fd)
        daemon.stop()


def test_doctor_without_a_claw_folder(tmp_path: Path) -> None:
    proc = in_workspace(tmp_path, "doctor")
    assert proc.returncode == 1
    assert "FAIL  workspace:" in proc.stdout
    assert not (tmp_path / ".claw").exists()


def test_docs_document_every_command() -> None:
    from tests.helpers.daemon import ROOT

    section = (ROOT / "docs" / "cli.md").read_text()
    for command in COMMANDS:
        assert f"$ claw-sessiond {command}" in section, command
    assert "**0** ok" in section and "**1** failure" in section and "**2** usage error" in section
    assert "--json" in section


def test_socket_option(spawn_daemon: Any, workspace: Path, tmp_path: Path) -> None:
    sock = tmp_path / "custom.sock"
    daemon: DaemonProcess = spawn_daemon("--socket", str(sock))
    with daemon.client() as client:
        populate_demo(client)
    proc = in_workspace(workspace, "ls", "--socket", str(sock))
    assert proc.returncode == 0 and "demo" in proc.stdout, proc.stderr
    # Not at the default socket, but named by .claw/endpoint.json: found without --socket too.
    found = in_workspace(workspace, "ls")
    assert found.returncode == 0 and "demo" in found.stdout, found.stderr
    data = in_workspace_json(workspace, "doctor", "--socket", str(sock))
    assert {c["check"]: c["status"] for c in data["checks"]}["daemon"] == "ok"
