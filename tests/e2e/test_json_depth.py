"""JSON nesting: whatever the daemon accepts exports, shows and imports again; deeper JSON is refused.

The limit is ``bounds.MAX_JSON_DEPTH`` (64 levels of arrays/objects) for every
JSON the daemon accepts: RecordEvent payloads, tool-call arguments, and the
lines of an import (an event line is one level deeper than its payload).
Before it, payloads nested ~500-990 levels were stored and then Export of
that session, a full export (backup) and ``show`` failed with INTERNAL.

A real daemon (the depth scan alone is in tests/unit/test_json_depth_scan.py):
64 levels round-trip through Export, the CLI's ``show`` and ``export``/``import``
into a second workspace, byte for byte; 65 and more are refused with
INVALID_ARGUMENT and write nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from claw_sessiond.bounds import MAX_JSON_DEPTH, MAX_STORED_PAYLOAD_BYTES
from claw_sessiond_client import Message
from claw_sessiond_client import _status as B
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from tests.helpers.cli import in_workspace
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import depth_of, nested_array, nested_object
from tests.helpers.inspect import stored

SERVICE = "/claw.sessiond.v1.SessionService/"
C = grpc.StatusCode
OPTIONS = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]


# ---------------------------------------------------------------- a real daemon


@pytest.fixture(scope="module")
def depth_daemon(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("depth")).start()
    yield d
    d.stop()


def call(address: str, method: str, request: Any) -> tuple[grpc.StatusCode, str, str | None, list[bytes]]:
    """(code, details, ErrorInfo reason, raw replies) of a raw call."""
    replies: list[bytes] = []
    with grpc.insecure_channel(address, options=OPTIONS) as channel:
        try:
            if method in ("Export", "Load"):
                replies.extend(channel.unary_stream(SERVICE + method)(request.SerializeToString(), timeout=30))
            else:
                replies.append(channel.unary_unary(SERVICE + method)(request.SerializeToString(), timeout=30))
        except grpc.RpcError as exc:
            info = B._error_info(exc.trailing_metadata())  # type: ignore[attr-defined]
            return exc.code(), exc.details() or "", info.reason if info else None, replies  # type: ignore[attr-defined]
    return C.OK, "", None, replies


def export_lines(address: str, session_id: str = "") -> list[str]:
    code, details, _, replies = call(address, "Export", pb.ExportRequest(session_id=session_id))
    assert code == C.OK, f"export of {session_id or 'everything'}: {code.name} {details}"
    return [pb.ExportResponse.FromString(r).line for r in replies]


def store_deep_session(address: str, session_id: str, depth: int) -> tuple[str, str]:
    """A session with a payload and tool arguments nested ``depth`` levels; returns (payload, arguments)."""
    payload, arguments = nested_object(depth), json.dumps({"args": json.loads(nested_array(depth - 1))})
    event = pb.RecordEventRequest(session_id=session_id, kind=pb.EVENT_KIND_ERROR, payload=payload)
    append = pb.AppendRequest(
        session_id=session_id,
        messages=[
            pb.Message(role=pb.ROLE_USER, content="go deep"),
            pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[pb.ToolCall(id="deep-1", name="bash", arguments=arguments)]),
            pb.Message(role=pb.ROLE_TOOL, content="ok", tool_call_id="deep-1"),
        ],
    )
    for method, request in (("RecordEvent", event), ("Append", append)):
        code, details, _, _ = call(address, method, request)
        assert code == C.OK, f"{method} at depth {depth}: {code.name} {details}"
    return payload, arguments


def test_the_deepest_allowed_json_exports_shows_and_imports_again(depth_daemon: DaemonProcess, tmp_path: Path) -> None:
    payload, arguments = store_deep_session(depth_daemon.address, "deep-64", MAX_JSON_DEPTH)
    assert depth_of(json.loads(payload)) == depth_of(json.loads(arguments)) == MAX_JSON_DEPTH

    # Export of the session and of everything (the backup) work; the event line is one level deeper.
    lines = export_lines(depth_daemon.address, "deep-64")
    assert max(depth_of(json.loads(line)) for line in lines) == MAX_JSON_DEPTH + 1
    everything = export_lines(depth_daemon.address)
    assert all(line in everything for line in lines)

    # show (text and --json) reads it back through Export.
    shown = in_workspace(depth_daemon.workspace, "show", "deep-64")
    assert shown.returncode == 0, shown.stderr
    shown_json = in_workspace(depth_daemon.workspace, "show", "deep-64", "--json")
    assert shown_json.returncode == 0, shown_json.stderr
    data = json.loads(shown_json.stdout)
    assert data["messages"][1]["tool_calls"][0]["arguments"] == json.loads(arguments)
    assert data["audit_events"][0]["payload"] == json.loads(payload)

    # A full backup with the CLI, restored into a second workspace, exports the same bytes.
    backup = tmp_path / "backup.jsonl"
    done = in_workspace(depth_daemon.workspace, "export", "-o", str(backup))
    assert done.returncode == 0, done.stderr
    other = DaemonProcess(tmp_path / "restored")
    other.workspace.mkdir()
    other.start()
    try:
        restored = in_workspace(other.workspace, "import", str(backup))
        assert restored.returncode == 0, restored.stderr
        assert export_lines(other.address, "deep-64") == lines
        code, details, _, replies = call(other.address, "Load", pb.LoadRequest(session_id="deep-64", workdir="/tmp"))
        assert code == C.OK, details
        loaded = [m for r in replies for m in pb.LoadResponse.FromString(r).messages]
        assert loaded[1].tool_calls[0].arguments == arguments  # exactly as given
    finally:
        other.stop()


def test_import_takes_a_line_at_the_limit_and_refuses_one_level_more(depth_daemon: DaemonProcess) -> None:
    store_deep_session(depth_daemon.address, "deep-src", MAX_JSON_DEPTH)
    lines = [json.loads(line) for line in export_lines(depth_daemon.address, "deep-src")]
    for obj in lines:
        obj["session_id"] = "deep-imported"
    ok = pb.ImportRequest(lines=[json.dumps(o) for o in lines])
    code, details, _, _ = call(depth_daemon.address, "Import", ok)
    assert code == C.OK, details

    audit = next(o for o in lines[1:] if o["type"] == "error")
    audit["payload"] = json.loads(nested_object(MAX_JSON_DEPTH + 1))
    for obj in lines:
        obj["session_id"] = "deep-imported-2"
    store = stored(depth_daemon)
    before = store.snapshot()
    code, details, reason, _ = call(
        depth_daemon.address, "Import", pb.ImportRequest(lines=[json.dumps(o) for o in lines])
    )
    assert (code, reason) == (C.INVALID_ARGUMENT, "INVALID_IMPORT"), (code, details)
    assert "deeper than 65" in details
    assert store.snapshot() == before


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 500, 900, 990, 5000])
@pytest.mark.parametrize("where", ["event_payload", "tool_arguments", "import_line", "imported_arguments"])
def test_json_deeper_than_the_limit_is_refused_and_writes_nothing(
    depth_daemon: DaemonProcess, depth: int, where: str
) -> None:
    sid = f"too-deep-{where}-{depth}"
    request: Any
    if where == "event_payload":
        method, reason = "RecordEvent", "INVALID_EVENT"
        request = pb.RecordEventRequest(session_id=sid, kind=pb.EVENT_KIND_ERROR, payload=nested_object(depth))
    elif where == "tool_arguments":
        method, reason = "Append", "ARGUMENTS_NOT_JSON"
        call_ = pb.ToolCall(id="c", name="bash", arguments=nested_array(depth))
        request = pb.AppendRequest(session_id=sid, messages=[pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[call_])])
    else:
        method, reason = "Import", "INVALID_IMPORT"
        ts = "2026-01-02T03:04:05.000006Z"
        header = {"format": "claw-sessiond-export", "version": 1, "session_id": sid, "workdir": "", "created_at": ts}
        header |= {"updated_at": ts, "events": 1}
        inner = nested_object(depth - 1) if where == "import_line" else "{}"
        arguments = nested_array(depth) if where == "imported_arguments" else "{}"
        payload = {"role": "assistant", "tool_calls": [{"id": "c", "name": "bash", "arguments": arguments}]}
        event = {"event_id": 1, "session_id": sid, "position": 1, "type": "assistant_message", "ts": ts}
        event |= {"trace_id": "t", "schema_version": 1, "payload": payload}
        line = json.dumps(event)
        if where == "import_line":  # one more payload key: the payload is `depth` deep, the line one more
            line = line[:-2] + ',"deep":' + inner + "}}"
        request = pb.ImportRequest(lines=[json.dumps(header), line])
    store = stored(depth_daemon)
    before = store.snapshot()
    code, details, got_reason, _ = call(depth_daemon.address, method, request)
    assert code == C.INVALID_ARGUMENT, f"{where} at depth {depth}: {code.name} {details}"
    assert got_reason == reason and "deeper than" in details, details
    assert store.snapshot() == before
    assert export_lines(depth_daemon.address)  # a full export still works


# ---------------------------------------------------------------- the stored form must fit one export line


@pytest.mark.smoke
def test_a_message_whose_json_form_would_not_fit_an_export_line_is_refused(depth_daemon: DaemonProcess) -> None:
    """1 MiB of control characters passed max_message_bytes but is 6 MiB as JSON: Export then failed in every
    client with the default 4 MiB receive limit (the project's own included). Now refused; just under fits."""
    store = stored(depth_daemon)
    before = store.snapshot()
    too_big = pb.AppendRequest(session_id="ctl", messages=[pb.Message(role=pb.ROLE_USER, content="\x01" * (1 << 20))])
    code, details, reason, _ = call(depth_daemon.address, "Append", too_big)
    assert (code, reason) == (C.INVALID_ARGUMENT, "FIELD_TOO_LARGE"), (code, details)
    assert "export line" in details
    assert store.snapshot() == before

    fits = MAX_STORED_PAYLOAD_BYTES // 6 - 100
    with depth_daemon.client() as c:
        c.append("ctl-fits", Message.user("\x01" * fits))
        lines = list(c.export("ctl-fits"))  # the project's client, default channel options
        assert len(lines) == 2 and len(lines[1].encode()) < 4 * 1024 * 1024
        assert c.load("ctl-fits", "/tmp").messages[0].content == "\x01" * fits
        # A full backup through the client works too.
        assert any('"session_id":"ctl-fits"' in line for line in c.export())


def test_an_import_line_whose_payload_would_not_fit_an_export_line_is_refused(depth_daemon: DaemonProcess) -> None:
    ts = "2026-01-02T03:04:05.000006Z"
    header = {"format": "claw-sessiond-export", "version": 1, "session_id": "imp-big", "workdir": "", "created_at": ts}
    header |= {"updated_at": ts, "events": 1}
    event = {"event_id": 1, "session_id": "imp-big", "position": 1, "type": "user_message", "ts": ts}
    event |= {"trace_id": "t", "schema_version": 1, "payload": {"role": "user", "content": "x" * (5 << 20)}}
    store = stored(depth_daemon)
    before = store.snapshot()
    request = pb.ImportRequest(lines=[json.dumps(header), json.dumps(event)])
    code, details, reason, _ = call(depth_daemon.address, "Import", request)
    assert (code, reason) == (C.INVALID_ARGUMENT, "INVALID_IMPORT"), (code, details)
    assert store.snapshot() == before
