"""The seed's test list (section 六), restated in SPEC §2-3, against a real daemon."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from claw_sessiond_client import (
    InvalidRequestError,
    Message,
    Reason,
    SessionClient,
    ToolCall,
    ToolCallStateError,
)
from tests.helpers.daemon import DaemonProcess, run_python
from tests.helpers.inspect import stored


@pytest.mark.both_backends("a restarted daemon reconnects to its database and finds what it stored")
def test_history_usage_and_created_at_survive_a_restart(spawn_daemon, workspace: Path) -> None:
    first = spawn_daemon()
    with first.client() as c:
        c.load("s", str(workspace))
        c.append("s", [Message.user("hello"), Message.assistant("hi there")])
        c.record_usage("s", input_tokens=11, output_tokens=7, cost_micros=2500, currency="USD", model="m1")
        before = c.load("s", str(workspace))
    assert first.terminate() == 0
    second = spawn_daemon()
    with second.client() as c:
        after = c.load("s", str(workspace))
    assert [(m.role, m.content) for m in after.messages] == [("user", "hello"), ("assistant", "hi there")]
    assert after.session.usage.input_tokens == 11 and after.session.usage.output_tokens == 7
    assert after.session.usage.cost_micros == 2500 and after.session.usage.currency == "USD"
    assert after.session.created_at == before.session.created_at is not None


@pytest.mark.smoke
def test_first_load_writes_nothing(module_client: SessionClient, module_daemon: DaemonProcess, sid: str) -> None:
    workspace = module_daemon.workspace
    sessions, events = stored(workspace).sessions(), stored(workspace).events()  # what earlier tests stored
    result = module_client.load(sid, str(workspace))
    assert result.messages == [] and not result.session.stored and result.session.last_position == 0
    assert result.session.workdir == str(workspace)
    assert stored(workspace).sessions() == sessions
    assert stored(workspace).events() == events


@pytest.mark.smoke
def test_tool_calls_round_trip_with_json_arguments(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client = module_client
    workspace = module_daemon.workspace
    args = '{"cmd":  "ls -la",\n "env": {"A": [1, 2.5, null, true]}, "ü": "\\u00fc"}'
    client.load(sid, str(workspace))
    client.append(
        sid,
        [
            Message.user("go"),
            Message.assistant("running", [ToolCall("call_1", "bash", args), ToolCall("call_2", "noop", "[]")]),
            Message.tool("call_1", "total 0", name="bash"),
            Message.tool("call_2", "ok"),
        ],
    )
    got = client.load(sid, str(workspace)).messages
    assistant = got[1]
    assert [c.id for c in assistant.tool_calls] == ["call_1", "call_2"]
    assert assistant.tool_calls[0].name == "bash"
    assert assistant.tool_calls[0].arguments == args  # exactly as given: spacing, escapes, key order
    assert assistant.tool_calls[1].args == []
    assert [(m.role, m.tool_call_id, m.name) for m in got[2:]] == [("tool", "call_1", "bash"), ("tool", "call_2", "")]


def test_clear_empties_history_and_keeps_usage(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client = module_client
    workspace = module_daemon.workspace
    client.load(sid, str(workspace))
    client.append(sid, [Message.user("a"), Message.assistant("b")])
    client.record_usage(sid, input_tokens=5, output_tokens=3)
    cleared = client.clear(sid)
    after = client.load(sid, str(workspace))
    assert after.messages == [] and after.session.message_count == 0
    assert after.session.usage.input_tokens == 5 and after.session.usage.output_tokens == 3
    assert after.session.last_position == cleared.position == 3
    client.append(sid, Message.user("again"))
    assert [m.content for m in client.load(sid, str(workspace)).messages] == ["again"]


def test_workdir_of_the_caller_replaces_the_stored_one(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str, tmp_path: Path
) -> None:
    client = module_client

    def workdirs() -> list[str]:
        return [s.workdir for s in stored(module_daemon.workspace).sessions() if s.session_id == sid]

    old, new = tmp_path / "old", tmp_path / "new"
    client.load(sid, str(old))
    client.append(sid, Message.user("x"))
    assert workdirs() == [str(old)]
    moved = client.load(sid, str(new))
    assert moved.session.workdir == str(new)
    assert workdirs() == [str(old)], "Load alone must not write"
    client.append(sid, Message.user("y"))
    assert workdirs() == [str(new)]


@pytest.mark.parametrize(
    "session_id",
    ["", "../../etc/passwd", "a/b", "a\\b", "..", "nul\x00here", "tab\there", "x" * 257, " padded "],
)
def test_invalid_session_ids_are_refused(
    module_client: SessionClient, module_daemon: DaemonProcess, session_id: str
) -> None:
    """Through the daemon (the rule itself: tests/unit/test_validate_requests.py); nothing is stored."""
    with pytest.raises(InvalidRequestError) as err:
        module_client.load(session_id, str(module_daemon.workspace))
    assert err.value.reason == Reason.INVALID_SESSION_ID and "session id" in err.value.message
    with pytest.raises(InvalidRequestError):
        module_client.append(session_id, Message.user("x"))
    assert all(s.session_id != session_id for s in stored(module_daemon.workspace).sessions())


def test_empty_or_relative_workdir_is_refused(module_client: SessionClient, sid: str) -> None:
    client = module_client
    from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

    for workdir in ("", "relative/dir"):
        with pytest.raises(InvalidRequestError) as err:
            client._call(lambda wd=workdir: list(client._stub.Load(pb.LoadRequest(session_id=sid, workdir=wd))))
        assert err.value.reason == Reason.INVALID_WORKDIR


def test_repair_inserts_only_the_missing_result_of_two(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client = module_client
    workspace = module_daemon.workspace
    client.load(sid, str(workspace))
    client.append(
        sid,
        [
            Message.user("do two things"),
            Message.assistant("", [ToolCall("call-1", "bash", "{}"), ToolCall("call-2", "bash", "{}")]),
            Message.tool("call-1", "done one"),
        ],
    )
    result = client.load(sid, str(workspace))
    assert [(r.tool_call_id, r.assistant_position) for r in result.repairs] == [("call-2", 2)]
    tools = [m for m in result.messages if m.role == "tool"]
    assert (tools[0].tool_call_id, tools[0].content, tools[0].synthetic) == ("call-1", "done one", False)
    assert tools[1].tool_call_id == "call-2" and tools[1].synthetic_reason == "interrupted"
    assert "not re-run" in tools[1].content.lower() and "interrupted" in tools[1].content.lower()


def test_repair_goes_before_a_later_user_message_in_call_order(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client = module_client
    workspace = module_daemon.workspace
    client.load(sid, str(workspace))
    client.append(
        sid,
        [
            Message.user("q"),
            Message.assistant("", [ToolCall("call-1", "a", "{}"), ToolCall("call-2", "b", "{}")]),
            Message.user("next question"),
        ],
    )
    result = client.load(sid, str(workspace))
    shape = [(m.role, m.tool_call_id, m.synthetic) for m in result.messages]
    assert shape == [
        ("user", "", False),
        ("assistant", "", False),
        ("tool", "call-1", True),
        ("tool", "call-2", True),
        ("user", "", False),
    ]
    assert [r.tool_call_id for r in result.repairs] == ["call-1", "call-2"]


def test_paired_history_is_untouched(module_client: SessionClient, module_daemon: DaemonProcess, sid: str) -> None:
    client, workspace = module_client, module_daemon.workspace
    client.load(sid, str(workspace))
    client.append(sid, [Message.assistant("", [ToolCall("c", "x", "{}")]), Message.tool("c", "r")])
    first = client.load(sid, str(workspace))
    events_before = len(stored(workspace).events())
    second = client.load(sid, str(workspace))
    assert first.repairs == second.repairs == []
    assert second.session.updated_at == first.session.updated_at
    assert len(stored(workspace).events()) == events_before


def test_repairs_once_across_repeated_loads_and_restarts(spawn_daemon, workspace: Path) -> None:
    d = spawn_daemon()
    with d.client() as c:
        c.load("once", str(workspace))
        c.append("once", Message.assistant("", [ToolCall("c1", "x", "{}")]))
        assert len(c.load("once", str(workspace)).repairs) == 1
        again = c.load("once", str(workspace))
        assert again.repairs == []
        updated = again.session.updated_at
    d.terminate()
    d2 = spawn_daemon()
    with d2.client() as c:
        third = c.load("once", str(workspace))
    assert third.repairs == [] and third.session.updated_at == updated
    assert sum(1 for m in third.messages if m.synthetic) == 1


def test_live_result_after_repair_supersedes_it(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client = module_client
    workspace = module_daemon.workspace
    # It used to be refused, which left a history saying the tool had not run when it had.
    client.load(sid, str(workspace))
    client.append(sid, Message.assistant("", [ToolCall("c1", "x", "{}")]))
    repaired = client.load(sid, str(workspace)).repairs[0].position
    client.append(sid, Message.tool("c1", "real result, late"))
    tools = [m for m in client.load(sid, str(workspace)).messages if m.role == "tool"]
    assert [(t.content, t.synthetic, t.supersedes) for t in tools] == [("real result, late", False, repaired)]
    with pytest.raises(ToolCallStateError) as err:
        client.append(sid, Message.tool("c1", "a second result"))
    assert err.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED


_KILLED_CLIENT = """
import os, signal, sys
from claw_sessiond_client import Message, SessionClient, ToolCall
c = SessionClient(address=sys.argv[1], autostart=False)
c.load(sys.argv[3], sys.argv[2])
c.append(sys.argv[3], [Message.user("build it"),
                   Message.assistant("", [ToolCall("call-a", "bash", '{"cmd": "make"}'),
                                          ToolCall("call-b", "bash", '{"cmd": "make test"}')])])
c.append(sys.argv[3], Message.tool("call-a", "built"))
print("stored", flush=True)
os.kill(os.getpid(), signal.SIGKILL)   # dies mid-tool: call-b never gets its result
"""


@pytest.mark.smoke
def test_repairs_history_left_by_a_client_killed_mid_tool(module_daemon: DaemonProcess, sid: str) -> None:
    import subprocess

    daemon, workspace = module_daemon, module_daemon.workspace
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_CLIENT, daemon.address, str(workspace), sid], capture_output=True, text=True
    )
    assert proc.returncode == -9 and "stored" in proc.stdout
    out = run_python(
        "import sys, json\n"
        "from claw_sessiond_client import SessionClient\n"
        "c = SessionClient(address=sys.argv[1], autostart=False)\n"
        "r = c.load(sys.argv[3], sys.argv[2])\n"
        "print(json.dumps([[m.role, m.tool_call_id, m.synthetic_reason] for m in r.messages]))\n"
        "print(json.dumps([x.tool_call_id for x in r.repairs]))\n",
        daemon.address,
        str(workspace),
        sid,
    )
    messages, repairs = (json.loads(line) for line in out.splitlines())
    assert messages == [
        ["user", "", ""],
        ["assistant", "", ""],
        ["tool", "call-a", ""],
        ["tool", "call-b", "interrupted"],
    ]
    assert repairs == ["call-b"]


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        ([Message("robot", "x")], Reason.INVALID_MESSAGE),
        ([Message.assistant("", [ToolCall("c", "bash", "{not json")])], Reason.ARGUMENTS_NOT_JSON),
        ([Message.assistant("", [ToolCall("c", "bash", "NaN")])], Reason.ARGUMENTS_NOT_JSON),
        ([Message.assistant("", [ToolCall("c", "a", "{}"), ToolCall("c", "b", "{}")])], Reason.DUPLICATE_TOOL_CALL_ID),
        ([Message.tool("", "no id")], Reason.INVALID_MESSAGE),
        ([Message("user", "x", tool_call_id="c")], Reason.INVALID_MESSAGE),
        ([Message("user", "x", (ToolCall("c", "a", "{}"),))], Reason.INVALID_MESSAGE),
        ([], Reason.EMPTY_BATCH),
        ([Message.user("x" * (1024 * 1024 + 1))], Reason.FIELD_TOO_LARGE),
        ([Message.user("x")] * 10_001, Reason.FIELD_TOO_LARGE),
    ],
)
def test_invalid_appends_are_refused_and_write_nothing(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str, messages: list[Message], reason: Reason
) -> None:
    client, workspace = module_client, module_daemon.workspace
    client.load(sid, str(workspace))
    client.append(sid, Message.user("existing"))
    before = [(e.event_id, e.payload) for e in stored(workspace).events()]
    if messages and messages[0].role == "robot":
        # The client refuses an unknown role itself; send the raw enum value to test the daemon.
        from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

        request = pb.AppendRequest(session_id=sid, messages=[pb.Message(role=9, content="x")])
        with pytest.raises(InvalidRequestError) as err:
            client._call(lambda: client._stub.Append(request))
    else:
        with pytest.raises(InvalidRequestError) as err:
            client.append(sid, messages)
    assert err.value.reason == reason and err.value.message
    assert [(e.event_id, e.payload) for e in stored(workspace).events()] == before


def test_tool_result_for_unknown_call_is_refused(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client = module_client
    workspace = module_daemon.workspace
    client.load(sid, str(workspace))
    client.append(sid, Message.user("x"))
    with pytest.raises(ToolCallStateError) as err:
        client.append(sid, Message.tool("nope", "result"))
    assert err.value.reason == Reason.UNKNOWN_TOOL_CALL
    client.append(sid, Message.assistant("", [ToolCall("dup", "a", "{}")]))
    with pytest.raises(InvalidRequestError) as dup:
        client.append(sid, Message.assistant("", [ToolCall("dup", "a", "{}")]))
    assert dup.value.reason == Reason.DUPLICATE_TOOL_CALL_ID


def test_bad_request_in_a_batch_does_not_fail_its_neighbours(module_daemon: DaemonProcess, sid: str) -> None:
    """Concurrent requests share a commit; a bad one is rolled back alone."""
    import asyncio

    from claw_sessiond_client import AsyncSessionClient

    daemon, workspace = module_daemon, module_daemon.workspace

    async def go() -> list[object]:
        async with AsyncSessionClient(address=daemon.address, autostart=False) as c:
            await c.load(sid, str(workspace))
            calls = []
            for i in range(60):
                if i % 3 == 0:
                    calls.append(c.append(sid, Message.tool(f"missing-{i}", "x")))
                else:
                    calls.append(c.append(sid, Message.user(f"m{i}")))
            return await asyncio.gather(*calls, return_exceptions=True)

    results = asyncio.run(go())
    bad = [r for i, r in enumerate(results) if i % 3 == 0]
    good = [r for i, r in enumerate(results) if i % 3 != 0]
    assert all(isinstance(r, ToolCallStateError) for r in bad)
    assert not any(isinstance(r, BaseException) for r in good)
    with daemon.client() as c:
        contents = [m.content for m in c.load(sid, str(workspace)).messages]
    assert sorted(contents) == sorted(f"m{i}" for i in range(60) if i % 3 != 0)
    assert len(set(contents)) == len(contents)
