"""What the CLI says, as a person meets it: singular and plural, and plain text with ``NO_COLOR`` or ``TERM=dumb``.

The real CLI against one module daemon, in a pipe and on a real pseudo-terminal.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claw_sessiond_client import Message, SessionClient
from tests.helpers.cli import claw, on_pty
from tests.helpers.daemon import DaemonProcess

ESC = "\x1b["


def on_terminal(daemon: DaemonProcess, *args: str, env: dict[str, str]) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "TERM", "PAGER")}
    run = on_pty(
        *args,
        "--workspace",
        str(daemon.workspace),
        cwd=Path(daemon.workspace),
        env={**environment, "PAGER": "cat", **env},
        size=(40, 100),
    )
    assert run.code == 0, run.text()
    return run.text()


@pytest.mark.smoke
def test_counts_are_singular_or_plural(module_daemon: DaemonProcess, module_client: SessionClient, sid: str) -> None:
    module_client.append(sid, [Message.user("one"), Message.assistant("two")])
    ws = str(module_daemon.workspace)
    shown = claw("show", sid, "--tail", "1", "--workspace", ws)
    assert "(1 earlier message not shown)" in shown.stdout, shown.stdout
    listed = claw("ls", "--limit", "1", "--contains", sid, "--workspace", ws)
    assert "showing" not in listed.stderr  # one of one: nothing more to say
    single = sid + "-single"
    module_client.append(single, Message.user("alone"))
    cleared = claw("clear", single, "--workspace", ws)
    assert cleared.returncode == 0 and f"cleared {single}: 1 message out of its history" in cleared.stdout
    both = claw("ls", "--limit", "1", "--contains", sid, "--workspace", ws)
    assert both.stderr.strip() == "showing 1 of 2 sessions (--all for every one, --limit N)"
    asked = on_pty("delete", sid, "--workspace", ws, cwd=Path(ws), answer=(b"[y/N]", b"n\n"))
    assert f"delete session {sid} (2 messages)? [y/N]" in asked.text() and asked.code == 0


def test_no_color_and_dumb_terminals_get_plain_text(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    module_client.append(sid, [Message.user("find the needle"), Message.assistant("a needle it is")])
    styled = on_terminal(module_daemon, "show", sid, env={"TERM": "xterm-256color"})
    assert ESC in styled and f"session {sid}" in styled  # a terminal gets bold and colours
    hits = on_terminal(module_daemon, "search", "needle", "--session", sid, env={"TERM": "xterm-256color"})
    assert f"{ESC}1mneedle{ESC}0m" in hits
    for env in ({"TERM": "xterm-256color", "NO_COLOR": "1"}, {"TERM": "dumb"}):
        plain = on_terminal(module_daemon, "show", sid, env=env)
        assert ESC not in plain and f"session {sid}" in plain and "a needle it is" in plain, env
        found = on_terminal(module_daemon, "search", "needle", "--session", sid, env=env)
        assert ESC not in found and "[needle]" in found, env
