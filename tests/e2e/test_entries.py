"""Entries stored verbatim through the real daemon (issue 14): items, client ids, metadata, usage, role other.

Every reader a caller has is checked to give the item back byte for byte:
Load (sync and asyncio clients), Watch, WatchAll, Export, and Import of what
Export wrote; bad input is refused with INVALID_ARGUMENT naming the field (or
ALREADY_EXISTS for a client id) and writes nothing.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import grpc
import pytest

from claw_sessiond_client import (
    AlreadyExistsError,
    AsyncSessionClient,
    EntryUsage,
    InvalidRequestError,
    Message,
    ModelUsage,
    Reason,
    SessionClient,
    ToolCall,
    Usage,
)
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.cli import claw
from tests.helpers.daemon import DaemonProcess

#: A Responses reasoning item as a framework stores it, then bytes no JSON or UTF-8 could carry.
REASONING = b'{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAAB...","summary":[]}'
BINARY = bytes(range(256)) * 3


def entries() -> list[Message]:
    return [
        Message.user("hello", format="openai.responses", item=b'{"role":"user","content":"hello"}', client_id="m-1"),
        Message.other("openai.responses", REASONING, client_id="m-2", metadata='{"kept":  "exactly" ,"n":1}'),
        Message(
            "assistant",
            "",
            (ToolCall("call_1", "bash", '{"cmd": "ls"}'),),
            format="openai.responses",
            item=b'{"type":"function_call","call_id":"call_1"}',
            usage=EntryUsage(120, 30, 100, 0, 4_500, "USD", "gpt-x", "2026-06"),
        ),
        Message("tool", "a.txt", tool_call_id="call_1", client_id="m-4"),
        Message.other("x.bin", BINARY),
    ]


def shape(messages: list[Message]) -> list[tuple[object, ...]]:
    return [(m.role, m.content, m.format, m.item, m.client_id, m.metadata, m.usage) for m in messages]


@pytest.mark.smoke
def test_items_come_back_byte_for_byte_from_every_reader(module_daemon: DaemonProcess, sid: str) -> None:
    sent, workspace = entries(), module_daemon.workspace
    with module_daemon.client() as c:
        c.append(sid, sent)
        loaded = c.load(sid, str(workspace))
        assert shape(loaded.messages) == shape(sent)
        assert [m.position for m in loaded.messages] == [1, 2, 3, 4, 5]
        assert loaded.complete and loaded.start_position == 1

        watched = []
        for event in c.watch(sid):
            watched.append(event.message)
            if len(watched) == 5:
                break
        assert shape(watched) == shape(sent)  # type: ignore[arg-type]

        followed = []
        for follow in c.watch_all(last=5):  # the store's last five: this test's, just appended
            followed.append(follow)
            if len(followed) == 5:
                break
        assert {f.session_id for f in followed} == {sid}
        assert shape([f.message for f in followed]) == shape(sent)  # type: ignore[misc]

        lines = list(c.export(sid))
        items = [json.loads(line) for line in lines[1:]]
        with_item = [e for e in items if "item_b64" in e]
        assert [base64.b64decode(e["item_b64"]) for e in with_item] == [m.item for m in sent if m.item]
        assert [e["format"] for e in with_item] == [m.format for m in sent if m.item]
        assert [e["type"] for e in items] == [
            "user_message",
            "other_entry",
            "assistant_message",
            "usage",
            "tool_result",
            "other_entry",
        ]
        copied = f"{sid}-copy"
        copy = [line.replace(f'"session_id":"{sid}"', f'"session_id":"{copied}"') for line in lines]
        c.import_lines(copy)
        assert shape(c.load(copied, str(workspace)).messages) == shape(sent)
        assert [line.replace(f'"session_id":"{copied}"', f'"session_id":"{sid}"') for line in c.export(copied)] == lines


async def test_the_asyncio_client_carries_the_same_fields(module_daemon: DaemonProcess, sid: str) -> None:
    sent, workspace = entries(), module_daemon.workspace
    async with AsyncSessionClient(address=module_daemon.address, autostart=False) as c:
        await c.append(sid, sent)
        loaded = await c.load(sid, str(workspace))
        assert shape(loaded.messages) == shape(sent)
        tail = await c.load(sid, str(workspace), last=2)
        assert shape(tail.messages) == shape(sent[-2:]) and not tail.complete and tail.start_position == 4


def test_entry_usage_reaches_the_totals_the_models_and_the_report(module_daemon: DaemonProcess, sid: str) -> None:
    with module_daemon.client() as c:
        c.append(sid, entries())
        c.append(sid, Message("assistant", "b", usage=EntryUsage(1, 1, model="m2")))
        report = c.usage(sid)
        assert report.total == Usage(121, 31, 100, 0, 4_500, "USD")
        assert report.by_model == [
            ModelUsage("gpt-x", "2026-06", Usage(120, 30, 100, 0, 4_500, "USD")),
            ModelUsage("m2", "", Usage(1, 1, 0, 0, 0, "")),
        ]
        rows = c.usage_report(by_session=True).rows  # the whole store's: this test's sessions are its own
        assert {(r.model, r.session_id): r.usage.input_tokens for r in rows if r.session_id == sid} == {
            ("gpt-x", sid): 120,
            ("m2", sid): 1,
        }
        assert c.load(sid).session.usage == report.total


def test_other_entries_are_not_searched_and_do_not_pair(module_daemon: DaemonProcess, sid: str) -> None:
    with module_daemon.client() as c:
        c.append(
            sid,
            [
                Message.other("openai.responses", b'{"type":"web_search_call"}', content="zebra in the other entry"),
                Message.user("zebra asked by the user"),
            ],
        )
        assert [(h.position, h.role) for h in c.search("zebra").hits if h.session_id == sid] == [(2, "user")]
        c.append(
            sid,
            [
                Message.assistant("", [ToolCall("c1", "bash", "{}")]),
                Message.other("openai.responses", b'{"type":"reasoning"}'),
                Message.tool("c1", "ran"),
            ],
        )
        loaded = c.load(sid)
        assert [(m.position, m.role) for m in loaded.messages][2:] == [(3, "assistant"), (5, "tool"), (4, "other")]
        assert loaded.repairs == []


def test_a_client_id_is_unique_in_the_visible_history(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    with daemon.client() as c:
        c.append(sid, Message("user", "first", client_id="id-1"))
        for batch in (
            [Message("user", "again", client_id="id-1")],
            [Message.user("fine"), Message("user", "again", client_id="id-1")],
            [Message("user", "x", client_id="id-2"), Message("user", "y", client_id="id-2")],
        ):
            with pytest.raises(AlreadyExistsError) as caught:
                c.append(sid, batch)
            assert caught.value.reason == Reason.CLIENT_ID_EXISTS
        assert [m.content for m in c.load(sid).messages] == ["first"]
        c.clear(sid)
        c.append(sid, Message("user", "after the clear", client_id="id-1"))
        assert [m.client_id for m in c.load(sid).messages] == ["id-1"]


def test_a_retry_with_the_same_request_id_replays_and_other_content_is_refused(
    module_daemon: DaemonProcess, sid: str
) -> None:
    daemon = module_daemon
    with daemon.client() as c:
        first = c.append(sid, entries(), request_id="req-1")
        again = c.append(sid, entries(), request_id="req-1")
        assert again.replayed and again.last_position == first.last_position
        assert c.usage(sid).total.input_tokens == 120  # the entry usage was added once
        changed = entries()
        changed[1] = Message.other("openai.responses", REASONING + b" ", client_id="m-2")
        with pytest.raises(InvalidRequestError) as caught:
            c.append(sid, changed, request_id="req-1")
        assert caught.value.reason == Reason.REQUEST_ID_REUSED


BAD: list[tuple[str, Message, str]] = [
    ("format", Message.other("Open.AI", b"x"), "format"),
    ("format", Message.other("-starts-with-dash", b"x"), "format"),
    ("format", Message.other("x" * 65, b"x"), "format"),
    ("item", Message.user("q", item=b"bytes"), "needs a format"),
    ("format", Message.user("q", format="openai.responses"), "item is empty"),
    ("other", Message("other", "no item"), "needs an item"),
    ("other", Message("other", tool_call_id="c", format="x", item=b"1"), "never paired"),
    ("metadata", Message.user("q", metadata="[1, 2]"), "metadata must be a JSON object"),
    ("metadata", Message.user("q", metadata="{not json"), "metadata is not valid JSON"),
    ("client_id", Message.user("q", client_id="x" * 257), "client_id is longer than 256 bytes"),
    ("usage", Message.user("q", usage=EntryUsage(cost_micros=5)), "usage: currency is required"),
    ("usage", Message.user("q", usage=EntryUsage(input_tokens=-1)), "usage: input_tokens must not be negative"),
]


def test_bad_entries_are_refused_naming_the_field(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    with daemon.client() as c:
        c.append(sid, Message.user("kept"))
        for field, message, says in BAD:
            with pytest.raises(InvalidRequestError) as caught:
                c.append(sid, [Message.user("not written"), message])
            assert says in str(caught.value) and "messages[1]" in str(caught.value), field
        assert [m.content for m in c.load(sid).messages] == ["kept"]
        assert c.usage(sid).total == Usage()


def test_an_entry_over_the_entry_limit_is_refused(spawn_daemon, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    d = spawn_daemon("--max-entry-bytes", str(2 << 20), "--max-request-bytes", str(8 << 20))
    with d.client() as c:
        c.append("big", Message.other("x", os.urandom(2 << 20)))  # exactly the limit
        with pytest.raises(InvalidRequestError) as caught:
            c.append("big", Message.other("x", os.urandom((2 << 20) + 1)))
        assert caught.value.reason == Reason.FIELD_TOO_LARGE and "--max-entry-bytes" in str(caught.value)
        assert len(c.load("big").messages) == 1


def test_the_wire_refuses_two_load_bounds(module_daemon: DaemonProcess, sid: str) -> None:
    daemon, workspace = module_daemon, module_daemon.workspace
    with grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            list(stub.Load(pb.LoadRequest(session_id=sid, workdir=str(workspace), last=2, after_position=1)))
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "at most one of last, after_position and after_time" in (caught.value.details() or "")
    with SessionClient(address=daemon.address, autostart=False) as c:
        with pytest.raises(InvalidRequestError):
            c.load(sid, str(workspace), last=2, after_position=1)
        with pytest.raises(InvalidRequestError):
            c.load(sid, str(workspace), last=0)


def test_show_tells_an_entry_s_item_and_id(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.append("shown", entries())
    ws = ["--workspace", str(daemon.workspace)]
    text = claw("show", "shown", *ws).stdout
    assert f"[openai.responses item, {len(REASONING)} bytes]" in text and "id m-2" in text
    document = json.loads(claw("show", "shown", "--json", *ws).stdout)
    other = document["messages"][1]
    assert (other["role"], other["format"], base64.b64decode(other["item_b64"])) == (
        "other",
        "openai.responses",
        REASONING,
    )
    assert other["metadata"] == '{"kept":  "exactly" ,"n":1}' and other["client_id"] == "m-2"
    assert document["messages"][2]["usage"]["input_tokens"] == 120
    assert daemon.terminate() == 0  # the read-only view (no daemon) shows the same
    offline = json.loads(claw("show", "shown", "--json", *ws).stdout)
    assert [m.get("item_b64") for m in offline["messages"]] == [m.get("item_b64") for m in document["messages"]]
    assert offline["messages"][2]["usage"] == document["messages"][2]["usage"]
