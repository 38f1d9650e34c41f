"""Daemon logs: one line per event with its level, journald priorities, and no message content.

A real daemon stores messages, tool calls, results and audit events that carry
a canary secret, repairs an interrupted call, streams them to a watcher,
exports and re-imports them, refuses bad requests that carry the canary too,
and stops; its log must never contain the canary.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from pathlib import Path

import pytest

from claw_sessiond.logs import LineFormatter
from claw_sessiond_client import Message, SessiondError, ToolCall
from tests.helpers.daemon import DaemonProcess

CANARY = "sk-canary-7f3a9c1e5b2d4f60"
_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z "
# Journal lines carry a priority and no time (journald stamps them); other lines carry an RFC 3339 UTC time.
_LINE = re.compile(rf"^(<[2-7]>|{_TIME})(DEBUG|INFO|WARNING|ERROR|CRITICAL) claw_sessiond[.\w]* \S")


def _exercise(daemon: DaemonProcess, workspace: Path) -> None:
    with daemon.client() as client:
        client.append(
            "leaky",
            [
                Message.system(f"the api key is {CANARY}"),
                Message.user(f"use {CANARY}"),
                Message.assistant(
                    f"calling with {CANARY}",
                    tool_calls=[
                        ToolCall("c1", "bash", f'{{"cmd": "curl -H {CANARY}"}}'),
                        ToolCall("c2", "bash", f'{{"cmd": "echo {CANARY}"}}'),
                    ],
                ),
            ],
        )
        client.append("leaky", Message.tool("c1", f"output {CANARY}", name="bash"))
        client.record_event("leaky", "permission_denial", {"tool": "bash", "why": CANARY})
        client.record_usage("leaky", input_tokens=1, model=f"model-{CANARY}")
        result = client.load("leaky", str(workspace))  # repairs c2
        assert [r.tool_call_id for r in result.repairs] == ["c2"]
        client.list_sessions(CANARY)
        watched = client.watch("leaky")
        assert CANARY in next(watched).message.content  # type: ignore[union-attr]
        watched.close()
        lines = list(client.export("leaky"))
        assert any(CANARY in line for line in lines)
        client.import_lines(lines, mode="replace")
        # A late real result supersedes the repair (logged as event=repair_superseded, without content).
        client.append("leaky", Message.tool("c2", f"late {CANARY}"))
        bad = [
            lambda: client.append("leaky", Message.tool("nope", f"late {CANARY}")),  # unknown call
            lambda: client.append("leaky", Message.tool("c2", f"again {CANARY}")),  # already answered
            lambda: client.append("leaky", Message.assistant(tool_calls=[ToolCall("c9", "x", f"{CANARY} not json")])),
        ]
        for call in bad:
            with pytest.raises(SessiondError):
                call()
    assert daemon.terminate() == 0


@pytest.mark.parametrize("level", ["info", "debug"])
def test_log_has_no_message_content(spawn_daemon: object, workspace: Path, level: str) -> None:
    daemon: DaemonProcess = spawn_daemon("--log-level", level)  # type: ignore[operator]
    _exercise(daemon, workspace)
    log = daemon.log()
    assert "event=ready" in log and "event=stopped" in log and "event=repaired" in log  # the log is this daemon's
    assert CANARY not in log
    for line in log.splitlines():
        assert _LINE.match(line), f"not one event per line with a level: {line!r}"


@pytest.mark.smoke
def test_journal_priority_prefix(spawn_daemon: object, workspace: Path) -> None:
    """With $JOURNAL_STREAM naming stderr (as systemd does), lines carry <priority> prefixes."""
    daemon: DaemonProcess = spawn_daemon(start=False)  # type: ignore[operator]
    daemon.log_path.touch()
    st = os.stat(daemon.log_path)
    daemon.env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
    daemon.start()
    assert daemon.terminate() == 0
    lines = daemon.log().splitlines()
    assert any(line.startswith("<6>INFO claw_sessiond.server event=ready") for line in lines), lines
    assert all(line.startswith("<") for line in lines if _LINE.match(line)), lines


def test_journal_stream_of_another_file_is_ignored(spawn_daemon: object, workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.touch()
    st = os.stat(other)
    daemon: DaemonProcess = spawn_daemon(env={"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"})  # type: ignore[operator]
    assert daemon.terminate() == 0
    assert any(re.match(_TIME + "INFO claw_sessiond.server event=ready", line) for line in daemon.log().splitlines())


def test_traceback_stays_one_line() -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.LogRecord("claw_sessiond.service", logging.ERROR, __file__, 1, "event=x", (), sys.exc_info())
    text = LineFormatter(priority_prefix=True).format(record)
    assert "\n" not in text
    assert text.startswith("<3>ERROR claw_sessiond.service event=x\\nTraceback")
    assert "RuntimeError: boom" in text
