"""The event log (SPEC §5): every event type is recorded with every field and shows up in export."""

from __future__ import annotations

import datetime as dt
import json
import re

import grpc
import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess

TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
KEYS = ["event_id", "session_id", "position", "type", "ts", "trace_id", "schema_version", "payload"]


def events(c: SessionClient, sid: str) -> list[dict[str, object]]:
    lines = list(c.export(sid))
    assert json.loads(lines[0])["events"] == len(lines) - 1
    return [json.loads(x) for x in lines[1:]]


@pytest.mark.smoke
def test_every_event_type_is_recorded_with_every_field(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client, workspace = module_client, module_daemon.workspace
    started = dt.datetime.now(dt.UTC)
    client.load(sid, str(workspace))
    client.append(sid, [Message.system("sys"), Message.user("u1")])
    client.append(sid, Message.assistant("", [ToolCall("c1", "bash", '{"cmd":"ls"}'), ToolCall("c2", "cat", "{}")]))
    client.append(sid, Message.tool("c1", "out", "bash"))
    client.record_usage(
        sid, input_tokens=3, output_tokens=4, cost_micros=5, currency="EUR", model="m", pricing_version="p1"
    )
    client.record_event(sid, "permission_denial", {"tool": "cat", "reason": "denied by policy"})
    client.record_event(sid, "error", {"message": "upstream 503"})
    client.load(sid, str(workspace))  # c2 is interrupted: repaired
    client.clear(sid)
    client.append(sid, Message.user("after clear"))

    evs = events(client, sid)
    assert [e["type"] for e in evs] == [
        "system_message",
        "user_message",
        "assistant_message",
        "tool_result",
        "usage",
        "permission_denial",
        "error",
        "repair",
        "clear",
        "user_message",
    ]
    for i, e in enumerate(evs, 1):
        assert list(e) == KEYS
        assert e["event_id"] == i and e["session_id"] == sid and e["schema_version"] == 1
        assert isinstance(e["ts"], str) and TS.match(e["ts"])
        assert started - dt.timedelta(seconds=1) <= dt.datetime.fromisoformat(e["ts"]) <= dt.datetime.now(dt.UTC)
        assert isinstance(e["trace_id"], str) and len(e["trace_id"]) >= 16
        assert isinstance(e["payload"], dict)
    assert [e["position"] for e in evs] == [1, 2, 3, 4, None, None, None, 5, 6, 7]
    assert evs[4]["payload"] == {
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "cost_micros": 5,
        "currency": "EUR",
        "input_tokens": 3,
        "model": "m",
        "output_tokens": 4,
        "pricing_version": "p1",
    }
    assert evs[5]["payload"] == {"tool": "cat", "reason": "denied by policy"}
    assert evs[7]["payload"]["tool_call_id"] == "c2" and evs[7]["payload"]["synthetic"] == "interrupted"
    assert evs[2]["payload"]["tool_calls"][1] == {"id": "c2", "name": "cat", "arguments": "{}"}
    # Load's projection starts after the last clear; audit events are never messages.
    loaded = client.load(sid, str(workspace))
    assert [(m.role, m.content, m.position) for m in loaded.messages] == [("user", "after clear", 7)]
    assert loaded.session.last_position == 7 and loaded.session.usage.cost_micros == 5


def test_audit_events_are_not_messages(module_client: SessionClient, module_daemon: DaemonProcess, sid: str) -> None:
    client, workspace = module_client, module_daemon.workspace
    client.append(sid, Message.user("hi"))
    client.record_event(sid, "permission_denial", {"tool": "rm"})
    client.record_event(sid, "error", {"e": 1})
    assert [m.content for m in client.load(sid, str(workspace)).messages] == ["hi"]
    assert [e["type"] for e in events(client, sid)] == ["user_message", "permission_denial", "error"]


def test_trace_id_comes_from_traceparent_metadata(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    daemon, client, workspace = module_daemon, module_client, module_daemon.workspace
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    traceparent = f"00-{trace}-00f067aa0ba902b7-01"
    with grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        md = (("traceparent", traceparent),)
        reply = stub.Append(
            pb.AppendRequest(session_id=sid, messages=[pb.Message(role=pb.ROLE_USER, content="x")]), metadata=md
        )
        assert reply.trace_id == trace
        stub.RecordUsage(pb.RecordUsageRequest(session_id=sid, input_tokens=1), metadata=md)
        stub.RecordEvent(
            pb.RecordEventRequest(session_id=sid, kind=pb.EVENT_KIND_ERROR, payload='{"a":1}'), metadata=md
        )
        stub.Clear(pb.ClearRequest(session_id=sid), metadata=md)
        # an explicit trace id in the request wins over the metadata
        stub.Append(
            pb.AppendRequest(session_id=sid, messages=[pb.Message(role=pb.ROLE_USER, content="y")], trace_id="mine"),
            metadata=md,
        )
        # a malformed traceparent is ignored: a fresh id is generated
        bad = stub.Append(
            pb.AppendRequest(session_id=sid, messages=[pb.Message(role=pb.ROLE_USER, content="z")]),
            metadata=(("traceparent", "garbage"),),
        )
    assert [e["trace_id"] for e in events(client, sid)] == [trace, trace, trace, trace, "mine", bad.trace_id]
    assert bad.trace_id not in (trace, "mine") and len(bad.trace_id) == 32
    assert [m.trace_id for m in client.load(sid, str(workspace)).messages] == ["mine", bad.trace_id]
