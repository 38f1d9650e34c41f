"""Every ``--json`` document carries ``"format": 1``; failures are JSON error documents; closed pipes are quiet.

Real daemon, the real CLI in subprocesses, and real shell pipelines for the
closed-pipe cases (``| head -1``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.cli import claw
from tests.helpers.daemon import DaemonProcess


def document(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    data = json.loads(proc.stdout)
    assert isinstance(data, dict) and data["format"] == 1, proc.stdout
    assert next(iter(data)) == "format"  # first, so that `head -3` shows it
    return data


def populate(client: SessionClient, sid: str) -> None:
    """Sessions ``<sid>-demo``, ``-crashed``, ``-doomed`` and ``-emptied``."""
    client.append(f"{sid}-demo", [Message.user("hi"), Message.assistant(tool_calls=[ToolCall("c1", "bash", "{}")])])
    client.append(f"{sid}-demo", Message.tool("c1", "ok"))
    client.append(f"{sid}-crashed", [Message.user("go"), Message.assistant(tool_calls=[ToolCall("c9", "bash", "{}")])])
    client.append(f"{sid}-doomed", Message.user("bye"))
    client.append(f"{sid}-emptied", Message.user("bye"))


@pytest.mark.smoke
def test_every_command_s_json_has_format_1(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str, tmp_path: Path
) -> None:
    client = module_client
    populate(client, sid)
    ws = ["--workspace", str(module_daemon.workspace)]
    ok: dict[str, list[str]] = {
        "ls": ["ls"],
        "show": ["show", f"{sid}-demo"],
        "stats": ["stats"],
        "doctor": ["doctor"],
        "repair": ["repair", f"{sid}-crashed"],
        "clear": ["clear", f"{sid}-emptied"],
        "delete": ["delete", f"{sid}-doomed", "--yes"],
    }
    shapes = {
        "ls": {"sessions", "total"},
        "show": {"session", "messages", "open_calls", "running", "interrupted", "repaired_now", "audit_events"},
        "stats": {"stats"},
        "doctor": {"ok", "checks"},
        "repair": {"session_id", "repaired", "running"},
        "clear": {"session_id", "messages_cleared", "position"},
        "delete": {"session_id", "events_deleted"},
    }
    for name, args in ok.items():
        proc = claw(*args, *ws, "--json")
        assert proc.returncode == 0, (name, proc.stderr)
        data = document(proc)
        assert shapes[name] <= set(data), (name, data)
        assert "error" not in data
    export = tmp_path / "demo.jsonl"
    assert claw("export", f"{sid}-demo", "-o", str(export), *ws).returncode == 0
    client.delete(f"{sid}-demo")
    imported = document(claw("import", str(export), *ws, "--json"))
    assert [s["status"] for s in imported["sessions"]] == ["imported"]
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "old.json").write_text(json.dumps({"session_id": f"{sid}-old", "messages": ["hello"]}))
    lines = claw("migrate-legacy", str(legacy), *ws, "--json").stdout.splitlines()
    assert [json.loads(line)["format"] for line in lines] == [1]  # JSON Lines: one document per file


@pytest.mark.parametrize(
    ("args", "reason", "code"),
    [
        (["show", "nope"], "NOT_STORED", 1),
        (["repair", "nope"], "NOT_STORED", 1),
        (["delete", "nope", "--yes"], "NOT_STORED", 1),
        (["delete", "../x", "--yes"], "INVALID_SESSION_ID", 1),
        (["show", "../x"], "INVALID_SESSION_ID", 1),
        (["export", "nope"], "SESSION_NOT_FOUND", 1),
        (["import", "/nonexistent.jsonl"], "USAGE", 2),
        (["ls", "--limit", "0"], "USAGE", 2),
        (["show"], "USAGE", 2),
        (["no-such-command"], "USAGE", 2),
    ],
)
def test_failures_are_json_error_documents(
    module_daemon: DaemonProcess, args: list[str], reason: str, code: int
) -> None:
    proc = claw(*args, "--workspace", str(module_daemon.workspace), "--json")
    assert proc.returncode == code, proc.stderr
    data = document(proc)
    assert set(data) == {"format", "error"}
    assert data["error"]["reason"] == reason and data["error"]["code"] == code
    assert data["error"]["message"] and data["error"]["message"] in proc.stderr  # people still read stderr


def test_daemon_down_and_failed_checks(tmp_path: Path, module_daemon: DaemonProcess) -> None:
    """A folder with no daemon of its own: every command fails, a daemon serving another workspace or not."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in (["ls"], ["stats"], ["show", "x"], ["delete", "x", "--yes"], ["export"]):
        proc = claw("--json", *args, "--workspace", str(empty))
        assert proc.returncode == 1
        error = document(proc)["error"]
        assert error["reason"] == "DAEMON_UNAVAILABLE" and error["code"] == 1, (args, error)
    doctor = claw("doctor", "--workspace", str(empty), "--json")
    assert doctor.returncode == 1
    data = document(doctor)
    assert data["ok"] is False and data["error"]["reason"] == "CHECK_FAILED" and data["checks"]
    assert not (empty / ".claw").exists()


def _pipeline(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", f"set -o pipefail; {command}"], capture_output=True, text=True, timeout=60)


def test_a_closed_pipe_ends_quietly(module_daemon: DaemonProcess, module_client: SessionClient, sid: str) -> None:
    for i in range(300):  # enough output to outgrow the pipe's buffer after head has gone
        module_client.append(f"{sid}-{i:04d}", Message.user("x"))
    ws = str(module_daemon.workspace)
    py = sys.executable
    for args in ("doctor --json", "ls --all --json", "ls --all", "stats", f"show {sid}-0001 --json", "export"):
        proc = _pipeline(f"{py} -m claw_sessiond --workspace {ws} {args} | head -1")
        assert proc.stdout.strip(), args
        assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, (args, proc.stderr)
        assert "BrokenPipe" not in proc.stderr, (args, proc.stderr)
