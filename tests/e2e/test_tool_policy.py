"""The tool-call policy end to end (issue 14): a real daemon on a real socket, real client processes.

Pending calls (awaiting a person's approval) survive their owner's death and anyone's Load, and take
their real result later; a late real result supersedes a synthetic repair (Load shows it alone, Export
and Watch show both); repair modes drop and off; orphan results and unparsed calls when the policy
allows them; arguments as given; the client's checks; the CLI's view.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import grpc
import pytest

from claw_sessiond_client import (
    AsyncSessionClient,
    InvalidRequestError,
    Message,
    Reason,
    SessionClient,
    ToolCall,
    ToolCallStateError,
    ToolPolicy,
)
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.cli import on_daemon
from tests.helpers.daemon import DaemonProcess, run_python

#: An agent that asks for approval before running a tool, then dies waiting (killed by the test).
APPROVER = r"""
import json, os, sys
from claw_sessiond_client import Message, SessionClient, ToolCall
address, session = sys.argv[1], sys.argv[2]
client = SessionClient(address=address, autostart=False)
with client.attach(session, label="agent") as run:
    client.append(session, [
        Message.user("deploy to prod"),
        Message.assistant(tool_calls=[ToolCall("approve_1", "deploy", '{"env": "prod"}', pending=True)]),
        Message.assistant(tool_calls=[ToolCall("call_2", "bash", '{"cmd": "ls"}')]),
    ], run_id=run.run_id)
    print(json.dumps({"run_id": run.run_id, "pid": os.getpid()}), flush=True)
    sys.stdin.readline()  # waits for the approval until killed
"""

LOAD = r"""
import json, sys
from claw_sessiond_client import SessionClient
r = SessionClient(address=sys.argv[1], autostart=False).load(sys.argv[2], "/tmp")
print(json.dumps({
    "in_flight": [[c.tool_call_id, c.run_id, c.owner_pid] for c in r.in_flight],
    "repairs": [x.tool_call_id for x in r.repairs],
    "calls": [[t.id, t.pending] for m in r.messages for t in m.tool_calls],
}))
"""


def test_a_pending_call_survives_its_owner_s_death_and_another_process_s_load(daemon: DaemonProcess) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", APPROVER, daemon.address, "deploy"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as owner:  # closes its pipes on the way out
        try:
            assert owner.stdout is not None
            info = json.loads(owner.stdout.readline())
            live = json.loads(run_python(LOAD, daemon.address, "deploy"))
            assert live["in_flight"] == [
                ["approve_1", info["run_id"], info["pid"]],
                ["call_2", info["run_id"], info["pid"]],
            ]
        finally:
            owner.kill()  # kill -9 while the call waits for approval
            owner.wait(10)
    with daemon.client() as c:
        deadline = time.monotonic() + 10  # the kernel closes the dead owner's socket: its run ends at once
        while c.stats()["active_runs"] and time.monotonic() < deadline:
            time.sleep(0.02)
        after = json.loads(run_python(LOAD, daemon.address, "deploy"))
        assert after["repairs"] == ["call_2"]  # the ordinary call was interrupted
        assert after["in_flight"] == [["approve_1", "", 0]]  # the pending one still waits
        assert after["calls"] == [["approve_1", True], ["call_2", False]]
        again = json.loads(run_python(LOAD, daemon.address, "deploy"))
        assert again["repairs"] == [] and again["in_flight"] == [["approve_1", "", 0]]
        # The person approves; the tool runs; its real result is stored and paired.
        c.append("deploy", Message.tool("approve_1", "deployed v42"))
        final = c.load("deploy", "/tmp")
        assert final.repairs == [] and final.in_flight == []
        assert [(m.role, m.tool_call_id, m.content, m.synthetic) for m in final.messages] == [
            ("user", "", "deploy to prod", False),
            ("assistant", "", "", False),
            ("tool", "approve_1", "deployed v42", False),
            ("assistant", "", "", False),
            ("tool", "call_2", final.messages[4].content, True),
        ]


def test_a_cancelled_result_closes_a_pending_call(module_client: SessionClient, sid: str) -> None:
    client = module_client
    client.append(sid, Message.assistant(tool_calls=[ToolCall("p", "rm", '{"path": "/"}', pending=True)]))
    assert [f.tool_call_id for f in client.load(sid).in_flight] == ["p"]
    client.append(sid, Message.tool("p", "refused by the user", cancelled=True))
    loaded = client.load(sid)
    assert loaded.in_flight == [] and loaded.repairs == []
    assert [(m.role, m.cancelled) for m in loaded.messages] == [("assistant", False), ("tool", True)]


@pytest.mark.smoke
def test_a_late_real_result_supersedes_the_synthetic_one(module_client: SessionClient, sid: str) -> None:
    client = module_client
    client.append(sid, [Message.user("q"), Message.assistant(tool_calls=[ToolCall("c1", "bash", "{}")])])
    repaired = client.load(sid)
    assert [r.position for r in repaired.repairs] == [3]
    watched = client.watch(sid)
    client.append(sid, Message.tool("c1", "the tool did finish"))
    loaded = client.load(sid)
    assert [(m.position, m.role, m.synthetic, m.supersedes) for m in loaded.messages] == [
        (1, "user", False, 0),
        (2, "assistant", False, 0),
        (4, "tool", False, 3),
    ]
    assert loaded.session.message_count == 3
    exported = [json.loads(line) for line in client.export(sid)][1:]
    assert [(e["position"], e["type"], e["payload"].get("supersedes")) for e in exported] == [
        (1, "user_message", None),
        (2, "assistant_message", None),
        (3, "repair", None),
        (4, "tool_result", 3),
    ]
    events = []
    for event in watched:  # Watch follows the log: the repair, then the result that superseded it
        events.append((event.position, event.message.synthetic, event.message.supersedes))
        if event.position == 4:
            break
    assert events[2:] == [(3, True, 0), (4, False, 3)]
    with pytest.raises(ToolCallStateError) as caught:
        client.append(sid, Message.tool("c1", "again"))
    assert caught.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED


def test_drop_and_off(module_client: SessionClient, sid: str) -> None:
    client = module_client
    client.append(sid, Message.user("q"))
    client.append(sid, Message.assistant(tool_calls=[ToolCall("d", "bash", "{}")]), tool_policy=ToolPolicy("drop"))
    client.append(
        sid, Message.assistant("checking", [ToolCall("d2", "bash", "{}")]), tool_policy=ToolPolicy(repair="drop")
    )
    client.append(sid, Message.assistant(tool_calls=[ToolCall("o", "bash", "{}")]), tool_policy=ToolPolicy("off"))
    before = list(client.export(sid))
    for _ in range(2):
        loaded = client.load(sid)
        assert loaded.repairs == [] and loaded.in_flight == []
        assert [(m.position, m.content, [t.id for t in m.tool_calls]) for m in loaded.messages] == [
            (1, "q", []),
            (3, "checking", []),
            (4, "", ["o"]),
        ]
        assert loaded.session.message_count == 3
    assert list(client.export(sid)) == before  # drop and off wrote nothing


def test_orphans_and_unparsed_calls_need_the_policy(module_client: SessionClient, sid: str) -> None:
    client = module_client
    with pytest.raises(ToolCallStateError) as unknown:
        client.append(sid, Message.tool("elsewhere", "r"))
    assert unknown.value.reason == Reason.UNKNOWN_TOOL_CALL
    free = ToolCall("c", "apply_patch", "*** Begin Patch")
    with pytest.raises(InvalidRequestError) as not_json:
        client.append(sid, Message.assistant(tool_calls=[free]))
    assert not_json.value.reason == Reason.ARGUMENTS_NOT_JSON
    with pytest.raises(InvalidRequestError) as no_id:
        client.append(sid, Message.assistant(tool_calls=[ToolCall("", "x", "{}")]))
    assert no_id.value.reason == Reason.INVALID_MESSAGE
    assert not client.load(sid).session.stored  # each refusal wrote nothing
    allow = ToolPolicy(allow_orphan_results=True, allow_unparsed_calls=True)
    client.append(
        sid,
        [Message.tool("elsewhere", "r"), Message.assistant(tool_calls=[free, ToolCall("", "x")])],
        tool_policy=allow,
    )
    client.append(sid, Message.tool("c", "patched"))
    loaded = client.load(sid)
    assert loaded.repairs == []  # the id-less call is never repaired; c is answered
    assert [(m.role, m.orphan) for m in loaded.messages] == [("tool", True), ("assistant", False), ("tool", False)]
    calls = loaded.messages[1].tool_calls
    assert [(t.id, t.arguments, t.arguments_not_json) for t in calls] == [
        ("c", "*** Begin Patch", True),
        ("", "{}", False),
    ]
    with pytest.raises(ValueError):
        calls[0].args  # noqa: B018 - not JSON: parsing it fails


def test_arguments_come_back_byte_for_byte(module_client: SessionClient, sid: str) -> None:
    client = module_client
    text = '{"b": 1,   "a": [1.0, 2E3],\n "s": "\\u00e9\\n"}'
    client.append(sid, Message.assistant(tool_calls=[ToolCall("c", "bash", text)]))
    assert client.load(sid).messages[0].tool_calls[0].arguments == text
    assert json.loads(list(client.export(sid))[1])["payload"]["tool_calls"][0]["arguments"] == text


async def test_the_async_client_and_append_stream_take_a_policy(module_daemon: DaemonProcess, sid: str) -> None:
    async with AsyncSessionClient(address=module_daemon.address, autostart=False) as c:
        await c.append(sid, Message.tool("x", "orphan"), tool_policy=ToolPolicy(allow_orphan_results=True))
        async with c.append_stream() as stream:
            await stream.append(
                sid,
                Message.assistant(tool_calls=[ToolCall("k", "n", "not json", pending=True)]),
                tool_policy=ToolPolicy(allow_unparsed_calls=True),
            )
        loaded = await c.load(sid, "/tmp")
        assert [m.orphan for m in loaded.messages] == [True, False]
        call = loaded.messages[1].tool_calls[0]
        assert (call.pending, call.arguments_not_json) == (True, True)
        assert [f.tool_call_id for f in loaded.in_flight] == ["k"]
        looked = await c.load(sid, "/tmp", no_repair=True)
        assert looked.repairs == []


def test_bad_policies_are_refused_before_or_by_the_daemon(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client = module_client
    daemon = module_daemon
    with pytest.raises(InvalidRequestError):
        client.append(sid, Message.user("u"), tool_policy=ToolPolicy("later"))
    with pytest.raises(TypeError, match="tool_policy"):
        client.append(sid, Message.user("u"), tool_policy={"repair": "drop"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pending"):
        ToolCall("c", "x", pending="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cancelled"):
        client.append(sid, Message("tool", "r", tool_call_id="c", cancelled=1))  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError) as cancelled_user:
        client.append(sid, Message("user", "u", cancelled=True))
    assert cancelled_user.value.reason == Reason.INVALID_MESSAGE
    with grpc.insecure_channel(daemon.address) as channel:  # an enum value the daemon does not know
        stub = pb_grpc.SessionServiceStub(channel)
        request = pb.AppendRequest(
            session_id=sid,
            messages=[pb.Message(role=pb.ROLE_USER, content="u")],
            tool_policy=pb.ToolPolicy(repair=7),  # type: ignore[arg-type]
        )
        with pytest.raises(grpc.RpcError) as caught:
            stub.Append(request, timeout=10)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert not client.load(sid).session.stored


def test_show_prints_pending_and_unparsed_calls(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    module_client.append(
        sid,
        Message.assistant(tool_calls=[ToolCall("p", "deploy", "{}", pending=True), ToolCall("f", "patch", "raw text")]),
        tool_policy=ToolPolicy(allow_unparsed_calls=True, repair="off"),
    )
    shown = on_daemon(module_daemon, "show", sid, "--json")
    assert shown.returncode == 0, shown.stderr
    calls = json.loads(shown.stdout)["messages"][0]["tool_calls"]
    assert calls == [
        {"id": "p", "name": "deploy", "arguments": {}, "pending": True},
        {"id": "f", "name": "patch", "arguments": "raw text", "arguments_not_json": True},
    ]
    text = on_daemon(module_daemon, "show", sid)
    assert text.returncode == 0 and "pending (awaits approval" in text.stdout
