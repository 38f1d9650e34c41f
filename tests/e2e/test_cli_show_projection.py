"""``show`` prints the daemon's projection (the Load reply), online and in the read-only view.

A tool result stored after a later user message is shown right after its
call, as Load returns it, not in position order; the call it answers is not
listed as open. Real daemon, the real CLI in subprocesses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.daemon import DaemonProcess


def show(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "show", "late", "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.smoke
def test_show_orders_messages_as_load_does(daemon: DaemonProcess, client: SessionClient) -> None:
    client.append("late", [Message.user("run it"), Message.assistant(tool_calls=[ToolCall("t1", "bash", "{}")])])
    client.append("late", Message.user("are you done?"))  # position 3, stored before the result
    client.append("late", Message.tool("t1", "done", name="bash"))  # position 4, answers the call at 2
    loaded = [m.position for m in client.load("late", repair=False).messages]
    assert loaded == [1, 2, 4, 3]

    online = show(daemon.workspace, "--json")
    assert online.returncode == 0, online.stderr
    data = json.loads(online.stdout)
    assert [m["position"] for m in data["messages"]] == loaded
    assert data["open_calls"] == [] and data["interrupted"] == []
    text = show(daemon.workspace).stdout
    assert text.index("#4 tool ← t1 (bash)") < text.index("#3 user")
    assert "interrupted" not in text

    daemon.stop()
    offline = show(daemon.workspace, "--json")
    assert offline.returncode == 0, offline.stderr
    assert "read-only view" in offline.stderr
    assert [m["position"] for m in json.loads(offline.stdout)["messages"]] == loaded
