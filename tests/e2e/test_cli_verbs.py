"""``repair``, ``clear``, ``delete`` (with its confirmation) and options before or after the subcommand.

Real daemon, the real CLI in subprocesses; the confirmation runs on a real
pseudo-terminal that answers the question.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.cli import claw, on_pty
from tests.helpers.daemon import DaemonProcess


def crashed(client: SessionClient, sid: str) -> None:
    client.append(
        sid,
        [
            Message.user("clean up"),
            Message.assistant(tool_calls=[ToolCall("c1", "bash", "{}"), ToolCall("c2", "bash", "{}")]),
        ],
        workdir="/home/me/project",
    )


def answer_on_terminal(workspace: Path, answer: bytes, *args: str) -> tuple[int, str]:
    """Run the CLI on a pty; when it asks, type ``answer``; return (exit code, everything it printed)."""
    run = on_pty("--workspace", str(workspace), *args, cwd=workspace, answer=(b"[y/N]", answer))
    return run.code, run.text()


def test_repair_is_its_own_verb_and_show_repair_still_works(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    ws, client, name, other = str(module_daemon.workspace), module_client, f"{sid}-crashed", f"{sid}-other"
    crashed(client, name)
    crashed(client, other)
    shown = claw("show", name, "--workspace", ws)
    assert shown.stdout.count("interrupted") >= 2
    proc = claw("repair", name, "--workspace", ws)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "repaired c1: synthetic 'interrupted' result at #3",
        "repaired c2: synthetic 'interrupted' result at #4",
    ]
    again = claw("repair", name, "--workspace", ws)
    assert again.returncode == 0 and again.stdout == f"nothing to repair in {name}\n"
    data = json.loads(claw("--json", "repair", name, "--workspace", ws).stdout)
    assert data == {"format": 1, "session_id": name, "repaired": [], "running": []}
    assert {s.id: s.workdir for s in client.list_sessions(sid)}[name] == "/home/me/project"  # not moved

    alias = claw("show", other, "--repair", "--json", "--workspace", ws)
    assert alias.returncode == 0
    assert alias.stderr == "claw-sessiond: 'show --repair' is deprecated: use 'claw-sessiond repair SESSION'\n"
    assert json.loads(alias.stdout)["repaired_now"] == ["c1", "c2"]

    missing = claw("repair", f"{sid}-nope", "--workspace", ws)
    assert missing.returncode == 1 and f"session '{sid}-nope' is not stored" in missing.stderr
    assert {s.id for s in client.list_sessions(sid)} == {other, name}  # looking did not create it


@pytest.mark.smoke
def test_clear_keeps_usage_and_says_so(module_daemon: DaemonProcess, module_client: SessionClient, sid: str) -> None:
    ws, client, talk = str(module_daemon.workspace), module_client, f"{sid}-talk"
    client.append(talk, [Message.user("hi"), Message.assistant("hello")])
    client.record_usage(talk, input_tokens=10, output_tokens=5)
    proc = claw("clear", talk, "--workspace", ws)
    assert proc.returncode == 0, proc.stderr
    assert (
        proc.stdout == f"cleared {talk}: 2 messages out of its history\nusage totals kept; export still has the past\n"
    )
    loaded = client.load(talk, "/w", repair=False)
    assert loaded.messages == [] and loaded.session.usage.input_tokens == 10
    client.append(talk, Message.user("again"))
    data = json.loads(claw("clear", talk, "--json", "--workspace", ws).stdout)
    assert data["format"] == 1 and data["messages_cleared"] == 1 and data["session_id"] == talk

    bad = claw("clear", "../x", "--workspace", ws)
    assert bad.returncode == 1 and "../x" not in {s.id for s in client.list_sessions("x", 10_000)}


def test_delete_asks_refuses_without_a_terminal_and_takes_yes(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    ws, client = module_daemon.workspace, module_client
    a, b, c, d = (f"{sid}-{letter}" for letter in "abcd")
    for name in (a, b, c, d):
        client.append(name, [Message.user("one"), Message.user("two"), Message.user("three")])

    refused = claw("delete", a, "--workspace", str(ws))  # stdin is not a terminal here
    assert refused.returncode == 2
    assert "without confirmation" in refused.stderr and f"delete --yes {a}" in refused.stderr
    as_json = claw("delete", a, "--workspace", str(ws), "--json")
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["error"] == {
        "message": f"not deleting '{a}' without confirmation: no terminal to ask on",
        "reason": "CONFIRMATION_REQUIRED",
        "code": 2,
    }
    assert {s.id for s in client.list_sessions(sid)} == {a, b, c, d}  # nothing deleted

    code, text = answer_on_terminal(ws, b"n\n", "delete", a)
    # declining is what was asked for: exit 0, no "error:"
    assert code == 0 and f"delete session {a} (3 messages)? [y/N]" in text and f"not deleted: {a}" in text
    assert "error" not in text
    code, text = answer_on_terminal(ws, b"\n", "delete", a)  # the default is no
    assert code == 0 and "error" not in text
    assert a in {s.id for s in client.list_sessions(sid)}
    code, text = answer_on_terminal(ws, b"y\n", "delete", a)
    assert code == 0 and f"deleted {a}: 3 events" in text

    assert claw("delete", b, "--yes", "--workspace", str(ws)).returncode == 0
    assert claw("delete", c, "-y", "--workspace", str(ws)).returncode == 0
    assert claw("--workspace", str(ws), "delete", "--yes", d).returncode == 0
    assert client.list_sessions(sid) == []
    again = claw("delete", b, "--yes", "--workspace", str(ws))
    assert again.returncode == 1 and "not stored" in again.stderr


def test_global_options_before_or_after_the_subcommand(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    daemon, here = module_daemon, f"{sid}-here"
    module_client.append(here, Message.user("hi"))  # the most recently updated session: first in ls
    ws = str(daemon.workspace)
    elsewhere = daemon.workspace.parent  # run from another folder: only the option can name the workspace
    after = claw("ls", "--workspace", ws, "--json", cwd=elsewhere)
    before = claw("--workspace", ws, "--json", "ls", cwd=elsewhere)
    mixed = claw("--workspace", ws, "ls", "--json", cwd=elsewhere)
    assert after.returncode == before.returncode == mixed.returncode == 0, (after.stderr, before.stderr)
    assert json.loads(after.stdout)["sessions"][0]["id"] == here
    assert json.loads(before.stdout) == json.loads(after.stdout) == json.loads(mixed.stdout)
    sock = str(daemon.socket_path)
    assert here in claw("--socket", sock, "ls", cwd=elsewhere).stdout
    assert here in claw("ls", "--socket", sock, cwd=elsewhere).stdout
    # After the subcommand wins over before it (the later one, as with any repeated option).
    assert claw("--workspace", "/nonexistent", "ls", "--workspace", ws, cwd=elsewhere).returncode == 0


def test_docs_show_the_new_verbs() -> None:
    from tests.helpers.daemon import ROOT

    page = (ROOT / "docs" / "cli.md").read_text()
    for fragment in (
        "$ claw-sessiond repair ",
        "$ claw-sessiond clear ",
        "$ claw-sessiond delete scratch --yes",
        "--tail",
        "--since",
        "claw-sessiond completion bash",
        '"format": 1',
    ):
        assert fragment in page, fragment
