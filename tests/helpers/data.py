"""Test data: sessions written through a real client, export lines from long ago, legacy files, deep JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.daemon import ROOT, DaemonProcess

#: Session files of the seed harnesses (``migrate-legacy`` input), good and broken.
LEGACY_FILES = ROOT / "tests" / "fixtures" / "legacy"
#: A stored time in 2020: old enough for any retention setting.
OLD = "2020-01-01T00:00:00.000000Z"


def populate_turns(client: SessionClient, sessions: int = 3, turns: int = 5, prefix: str = "s") -> int:
    """Write a few realistic turns (user, assistant with a call, its result) per session; return messages."""
    written = 0
    for s in range(sessions):
        sid = f"{prefix}{s}"
        for t in range(turns):
            call = ToolCall(f"call-{s}-{t}", "bash", f'{{"cmd": "echo {t}"}}')
            client.append(sid, [Message.user(f"turn {t} of {sid}"), Message.assistant("ok", [call])])
            client.append(sid, Message.tool(call.id, f"output {t}"))
            written += 3
        client.record_usage(sid, input_tokens=10 * (s + 1), output_tokens=s + 1)
    return written


def populate_demo(client: SessionClient) -> None:
    """The CLI's demo workspace: "demo" (a call and its result, usage) and "crashed" (two interrupted calls)."""
    client.append(
        "demo",
        [
            Message.system("be brief"),
            Message.user("list the files"),
            Message.assistant("sure", tool_calls=[ToolCall("call_1", "bash", '{"cmd": "ls -la"}')]),
        ],
        workdir="/home/me/project",
    )
    client.append("demo", Message.tool("call_1", "README.md\nsetup.py", name="bash"))
    client.record_usage("demo", input_tokens=120, output_tokens=30, cost_micros=450, currency="USD", model="gpt-4.1")
    # The run "dies" after storing the calls: two interrupted calls, repaired at the next Load.
    client.append(
        "crashed",
        [
            Message.user("clean up"),
            Message.assistant(
                tool_calls=[
                    ToolCall("c1", "bash", '{"cmd": "rm -r tmp"}'),
                    ToolCall("c2", "write_file", '{"path": "notes.txt"}'),
                ]
            ),
        ],
        workdir="/home/me/project",
    )


def old_lines(sid: str, text: str, at: str = OLD) -> list[str]:
    """Export lines of a session whose events and last change are from 2020, or ``at`` (how retention tests get
    "old" data)."""
    header = {
        "format": "claw-sessiond-export",
        "version": 1,
        "session_id": sid,
        "workdir": "/w",
        "created_at": at,
        "updated_at": at,
        "events": 1,
    }
    event = {
        "event_id": 1,
        "session_id": sid,
        "position": 1,
        "type": "user_message",
        "ts": at,
        "trace_id": "t",
        "schema_version": 1,
        "payload": {"role": "user", "content": text},
    }
    return [json.dumps(header), json.dumps(event)]


def exports(daemon: DaemonProcess) -> dict[str, list[str]]:
    """Every stored session's export lines, by session id (asked of the daemon)."""
    with daemon.client() as c:
        return {s.id: list(c.export(s.id)) for s in c.list_sessions()}


def stop_after_demo(workspace: Path) -> Path:
    """Write :func:`populate_demo` with a real daemon (the crashed session loaded once), stop it; the workspace."""
    daemon = DaemonProcess(workspace).start()
    try:
        with daemon.client() as client:
            populate_demo(client)
            client.load("crashed", "/home/me/project")
    finally:
        assert daemon.terminate() == 0
    return workspace


def depth_of(value: Any) -> int:
    """Reference depth of a parsed value (the test's own definition: ``{}`` and ``[]`` are 1)."""
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def nested_object(depth: int) -> str:
    """A JSON object ``depth`` levels deep: ``{"a":[[...]]}``, the object being level 1."""
    return '{"a":' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def nested_array(depth: int) -> str:
    """A JSON array ``depth`` levels deep: ``[[...]]``."""
    return "[" * depth + "]" * depth
