"""Export / import (SPEC §5): the versioned JSON Lines format, round trips across workspaces, conflict modes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond.export import ExportHeader, parse_session, session_lines
from claw_sessiond.model import Event
from claw_sessiond_client import (
    InvalidRequestError,
    Message,
    PreconditionError,
    Reason,
    SessionClient,
    SessionNotFoundError,
    ToolCall,
    ToolCallStateError,
)


def fill(c: SessionClient, sid: str, wd: str) -> None:
    """A session with every event type, a clear, a repair and an open tool call."""
    c.load(sid, wd)
    c.append(sid, [Message.system("be brief"), Message.user("before clear")])
    c.clear(sid)
    c.append(sid, [Message.user("list files"), Message.assistant("", [ToolCall("c1", "bash", '{"cmd": "ls"}')])])
    c.append(sid, Message.tool("c1", "a.txt\nb.txt", "bash"))
    c.append(sid, Message.assistant("", [ToolCall("c2", "write_file", '{"path": "x"}')]))
    c.load(sid, wd)  # repairs c2
    c.append(sid, Message.assistant("", [ToolCall("c3", "read_file", '{"path": "ü"}')]))  # left open
    c.record_usage(sid, input_tokens=10, output_tokens=3, cost_micros=7, currency="USD", model="m1")
    c.record_usage(sid, input_tokens=5, cache_read_tokens=2, cost_micros=11, currency="USD", model="m2")
    c.record_event(sid, "permission_denial", {"tool": "bash", "reason": "policy"})
    c.record_event(sid, "error", {"message": "model API 500"})


@pytest.mark.smoke
def test_round_trip_is_byte_identical_across_workspaces(spawn_daemon, tmp_path: Path) -> None:
    ws1, ws2 = tmp_path / "one", tmp_path / "two"
    ws1.mkdir(), ws2.mkdir()
    d1, d2 = spawn_daemon(workspace_path=ws1), spawn_daemon(workspace_path=ws2)
    with d1.client() as c1, d2.client() as c2:
        fill(c1, "s", str(ws1))
        first = list(c1.export("s"))
        header = json.loads(first[0])
        assert header["format"] == "claw-sessiond-export" and header["version"] == 1
        assert header["session_id"] == "s" and header["events"] == len(first) - 1
        assert [json.loads(x)["event_id"] for x in first[1:]] == list(range(1, len(first)))
        assert c2.import_lines(first)[0].events_imported == len(first) - 1
        second = list(c2.export("s"))
        assert "\n".join(second).encode() == "\n".join(first).encode()
        # The projection, usage and tool-call index were rebuilt from the events.
        a, b = c1.load("s", str(ws1)), c2.load("s", str(ws1))
        assert [(m.role, m.content, m.position, m.tool_call_id, m.synthetic_reason) for m in a.messages] == [
            (m.role, m.content, m.position, m.tool_call_id, m.synthetic_reason) for m in b.messages
        ]
        assert a.session.last_position == b.session.last_position and a.session.usage == b.session.usage
        assert a.session.created_at == b.session.created_at
        assert a.session.message_count == b.session.message_count == 7
        assert c1.usage("s") == c2.usage("s")
        # c3 was open in the export and is repaired by ws2's Load, just as in ws1.
        assert [r.tool_call_id for r in b.repairs] == ["c3"]
        with pytest.raises(ToolCallStateError) as info:
            c2.append("s", Message.tool("c1", "again"))
        assert info.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
        with pytest.raises(ToolCallStateError) as info:
            c2.append("s", Message.tool("nope", "x"))
        assert info.value.reason == Reason.UNKNOWN_TOOL_CALL


def test_export_all_and_import_all(spawn_daemon, tmp_path: Path) -> None:
    ws1, ws2 = tmp_path / "one", tmp_path / "two"
    ws1.mkdir(), ws2.mkdir()
    d1, d2 = spawn_daemon(workspace_path=ws1), spawn_daemon(workspace_path=ws2)
    with d1.client() as c1, d2.client() as c2:
        for sid in ("a", "b", "c"):
            c1.append(sid, Message.user(f"hello {sid}"))
        lines = list(c1.export())
        headers = [json.loads(x) for x in lines if '"format"' in x]
        assert [h["session_id"] for h in headers] == ["a", "b", "c"]
        results = c2.import_lines(lines)
        assert [(r.session_id, r.events_imported) for r in results] == [("a", 1), ("b", 1), ("c", 1)]
        assert list(c2.export()) == lines
        with pytest.raises(SessionNotFoundError):
            list(c2.export("missing"))


def test_refuse_replace_merge(spawn_daemon, tmp_path: Path) -> None:
    ws1, ws2 = tmp_path / "one", tmp_path / "two"
    ws1.mkdir(), ws2.mkdir()
    d1, d2 = spawn_daemon(workspace_path=ws1), spawn_daemon(workspace_path=ws2)
    with d1.client() as c1, d2.client() as c2:
        c1.append("s", [Message.user("one"), Message.assistant("two")])
        old = list(c1.export("s"))
        c2.import_lines(old)
        with pytest.raises(PreconditionError) as info:
            c2.import_lines(old)
        assert info.value.reason == Reason.SESSION_EXISTS
        # merge of what is already there adds nothing
        assert c2.import_lines(old, mode="merge")[0].events_imported == 0
        # merge of a longer export adds only the new events, after the existing history
        c1.append("s", Message.user("three"))
        c1.record_usage("s", input_tokens=4, model="m")
        newer = list(c1.export("s"))
        assert c2.import_lines(newer, mode="merge")[0].events_imported == 2
        assert [m.content for m in c2.load("s", str(ws2)).messages] == ["one", "two", "three"]
        assert c2.usage("s").total.input_tokens == 4
        # events the target has and the source lacks are kept by merge
        c2.append("s", Message.user("local only"))
        assert c2.import_lines(newer, mode="merge")[0].events_imported == 0
        assert [m.content for m in c2.load("s", str(ws2)).messages][-1] == "local only"
        # replace erases the target's version first
        assert c2.import_lines(old, mode="replace")[0].events_imported == 2
        assert list(c2.export("s")) == old
        with pytest.raises(InvalidRequestError):
            c2.import_lines(old, mode="overwrite")


def _expect_invalid(c: SessionClient, lines: list[str], mode: str = "refuse") -> InvalidRequestError:
    with pytest.raises(InvalidRequestError) as info:
        c.import_lines(lines, mode=mode)
    return info.value


def _edit(line: str, **changes: Any) -> str:
    obj = json.loads(line)
    obj.update(changes)
    return json.dumps(obj)


def test_import_is_all_or_nothing(spawn_daemon, tmp_path: Path) -> None:
    ws1, ws2 = tmp_path / "one", tmp_path / "two"
    ws1.mkdir(), ws2.mkdir()
    d1, d2 = spawn_daemon(workspace_path=ws1), spawn_daemon(workspace_path=ws2)
    with d1.client() as c1, d2.client() as c2:
        c1.append("s", [Message.user("q"), Message.assistant("", [ToolCall("k", "bash", "{}")])])
        c1.append("s", Message.tool("k", "done"))
        good = list(c1.export("s"))
        cases = {
            "truncated": good[:-1],
            "bad json": [*good[:2], good[2][:-5]],
            "unknown call": [*good[:3], _edit(good[3], payload={"role": "tool", "tool_call_id": "zz"})],
            "wrong type": [*good[:1], _edit(good[1], type="teleport"), *good[2:]],
            "path-like id": [_edit(good[0], session_id="../x"), *good[1:]],
            "newer format": [_edit(good[0], version=2), *good[1:]],
            "bad ts": [*good[:1], _edit(good[1], ts="yesterday"), *good[2:]],
            "position goes back": [*good[:2], _edit(good[2], position=1), *good[3:]],
        }
        for name, lines in cases.items():
            err = _expect_invalid(c2, lines)
            assert err.reason in (Reason.INVALID_IMPORT, Reason.INVALID_SESSION_ID), name
            assert c2.list_sessions() == [], name
        # a broken replace leaves the existing session untouched
        c2.import_lines(good)
        _expect_invalid(c2, cases["unknown call"], mode="replace")
        assert list(c2.export("s")) == good


def test_cli_export_import(spawn_daemon, tmp_path: Path) -> None:
    ws1, ws2 = tmp_path / "one", tmp_path / "two"
    ws1.mkdir(), ws2.mkdir()
    d1, d2 = spawn_daemon(workspace_path=ws1), spawn_daemon(workspace_path=ws2)
    with d1.client() as c1:
        c1.append("cli", [Message.user("via the command line")])
        expected = list(c1.export("cli"))
    out = tmp_path / "cli.jsonl"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "claw_sessiond", *args], capture_output=True, text=True, timeout=60
        )

    r = cli("export", "cli", "--socket", str(d1.socket_path), "--output", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_text().splitlines() == expected
    assert out.stat().st_mode & 0o777 == 0o600  # transcripts may hold secrets
    r = cli("import", str(out), "--socket", str(d2.socket_path), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "format": 1,
        "sessions": [{"session_id": "cli", "events_imported": 1, "status": "imported", "lines": [1, 2]}],
    }
    r = cli("import", str(out), "--socket", str(d2.socket_path))
    assert r.returncode == 1 and "already exists" in r.stderr
    r = cli("export", "nope", "--socket", str(d2.socket_path))
    assert r.returncode == 1 and "not stored" in r.stderr
    r = cli("import", str(tmp_path / "missing.jsonl"), "--socket", str(d2.socket_path))
    assert r.returncode == 2


@pytest.mark.parametrize("command", ["export", "import", "delete", "migrate-legacy"])
def test_history_commands_have_help(command: str) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", command, "--help"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and "--workspace" in r.stdout and "--socket" in r.stdout
    top = subprocess.run([sys.executable, "-m", "claw_sessiond", "--help"], capture_output=True, text=True, timeout=60)
    assert command in top.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", command, "--no-such-flag"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2


_TS = "2026-01-02T03:04:05.000006Z"


@given(st.lists(st.tuples(st.sampled_from(["user", "system", "assistant"]), st.text(max_size=40)), max_size=8))
def test_lines_round_trip_through_the_parser(messages: list[tuple[str, str]]) -> None:
    types = {"user": "user_message", "system": "system_message", "assistant": "assistant_message"}
    events = [
        Event(0, "s", i, types[role], "t", _TS, 1, {"role": role, "content": text})
        for i, (role, text) in enumerate(messages, 1)
    ]
    lines = session_lines(ExportHeader("s", "/w", _TS, _TS, len(events)), events)
    parsed = parse_session(lines)
    again = [
        Event(0, "s", e.position, e.type, e.trace_id, e.ts, e.schema_version, json.loads(e.payload))
        for e in parsed.events
    ]
    assert session_lines(parsed.header, again) == lines


async def test_async_client_export_and_import(spawn_daemon, tmp_path: Path) -> None:
    from claw_sessiond_client import AsyncSessionClient

    ws1, ws2 = tmp_path / "one", tmp_path / "two"
    ws1.mkdir(), ws2.mkdir()
    d1, d2 = spawn_daemon(workspace_path=ws1), spawn_daemon(workspace_path=ws2)
    async with AsyncSessionClient(address=d1.address, autostart=False) as a1:
        await a1.append("aio", [Message.user("async"), Message.assistant("yes")])
        lines = [line async for line in a1.export("aio")]
        with pytest.raises(SessionNotFoundError):
            _ = [line async for line in a1.export("missing")]
    async with AsyncSessionClient(address=d2.address, autostart=False) as a2:
        results = await a2.import_lines(lines)
        assert [(r.session_id, r.events_imported) for r in results] == [("aio", 2)]
        with pytest.raises(PreconditionError):
            await a2.import_lines(lines)
        assert [line async for line in a2.export()] == lines
