"""EditTail and Clear(erase) over the wire: a real daemon, the generated stub, both clients, the CLI.

Every refusal has its code and reason and leaves the database exactly as it was; a retry replays;
Watch, WatchAll and ``follow`` send the edit (the positions it removed) before its replacements,
and a watcher that applies what it receives, from the start or resumed anywhere, ends with what
Load returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from typing import Any

import grpc
import pytest

from claw_sessiond_client import AsyncSessionClient, Message, SessionClient, ToolCall, ToolPolicy
from claw_sessiond_client import _status as B
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from claw_sessiond_client.errors import (
    InvalidRequestError,
    PreconditionError,
    Reason,
    SequenceConflictError,
    SessiondError,
    ToolCallStateError,
)
from tests.helpers import inspect
from tests.helpers.daemon import DaemonProcess


def _user(text: str) -> pb.Message:
    return pb.Message(role=pb.ROLE_USER, content=text)


def _error(exc: grpc.RpcError) -> tuple[str, str]:
    info = B._error_info(exc.trailing_metadata())  # type: ignore[attr-defined]
    return exc.code().name, info.reason if info else ""  # type: ignore[attr-defined]


def _visible(c: SessionClient, session_id: str) -> list[tuple[int, str]]:
    return [(m.position, m.content) for m in c.load(session_id, "/tmp", repair=False).messages]


@pytest.mark.smoke
def test_an_edit_replaces_the_tail_and_returns_what_it_removed(module_client: SessionClient, sid: str) -> None:
    client = module_client
    call = ToolCall("c1", "bash", '{"cmd": "ls"}')
    client.append(sid, [Message.user("list files"), Message.assistant("", [call]), Message.tool("c1", "a b")])
    done = client.edit_tail(sid, remove_last=1, replacements=[Message.tool("c1", "a b c")], expected_last_position=3)
    [removed] = done.removed
    assert (removed.position, removed.role, removed.content, removed.tool_call_id) == (3, "tool", "a b", "c1")
    assert removed.created_at is not None and removed.trace_id
    assert (done.edit_position, done.first_position, done.last_position, done.replayed) == (4, 5, 5, False)
    loaded = client.load(sid, "/tmp")
    assert [(m.position, m.content) for m in loaded.messages] == [(1, "list files"), (2, ""), (5, "a b c")]
    assert (loaded.session.message_count, loaded.session.last_position) == (3, 5)
    assert [(s.id, s.message_count) for s in client.list_sessions(sid)] == [(sid, 3)]
    # Everything after a position, with nothing in its place.
    gone = client.edit_tail(sid, after_position=1)
    assert [m.position for m in gone.removed] == [2, 5] and gone.first_position == 0
    assert _visible(client, sid) == [(1, "list files")]


def test_bad_edits_are_refused_with_their_reason_and_write_nothing(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    daemon, client = module_daemon, module_client
    client.append(sid, [Message.user("a"), Message.user("b")])
    client.edit_tail(sid, remove_last=1, request_id="used")
    store = inspect.stored(daemon)
    before = store.snapshot()
    cases: list[tuple[dict[str, Any], tuple[str, str]]] = [
        ({"remove_last": 1, "after_position": 1}, ("INVALID_ARGUMENT", "INVALID_MESSAGE")),
        ({"remove_last": -1}, ("INVALID_ARGUMENT", "INVALID_MESSAGE")),
        ({"after_position": -3}, ("INVALID_ARGUMENT", "INVALID_MESSAGE")),
        ({"replacements": []}, ("INVALID_ARGUMENT", "EMPTY_BATCH")),
        ({"remove_last": 2}, ("INVALID_ARGUMENT", "INVALID_MESSAGE")),  # one visible entry
        ({"after_position": 9}, ("INVALID_ARGUMENT", "INVALID_MESSAGE")),  # beyond the last position
        ({"remove_last": 1, "expected_last_position": 2}, ("ABORTED", "SEQUENCE_CONFLICT")),
        ({"remove_last": 1, "expected_last_position": -2}, ("INVALID_ARGUMENT", "INVALID_MESSAGE")),
        ({"remove_last": 1, "request_id": "used"}, ("INVALID_ARGUMENT", "REQUEST_ID_REUSED")),
        ({"session_id": "../x", "remove_last": 1}, ("INVALID_ARGUMENT", "INVALID_SESSION_ID")),
        ({"remove_last": 1, "run_id": "no-such-run"}, ("FAILED_PRECONDITION", "UNKNOWN_RUN")),
        ({"replacements": [pb.Message(role=pb.ROLE_TOOL, content="x")]}, ("INVALID_ARGUMENT", "INVALID_MESSAGE")),
        (
            {"remove_last": 1, "replacements": [pb.Message(role=pb.ROLE_TOOL, tool_call_id="nope", content="x")]},
            ("FAILED_PRECONDITION", "UNKNOWN_TOOL_CALL"),
        ),
    ]
    with grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        for fields, expected in cases:
            request = pb.EditTailRequest(**{"session_id": sid, "replacements": [_user("x")], **fields})
            with pytest.raises(grpc.RpcError) as caught:
                stub.EditTail(request, timeout=10)
            assert _error(caught.value) == expected, fields
            assert caught.value.details(), fields  # type: ignore[attr-defined]
        with pytest.raises(grpc.RpcError) as named:
            stub.EditTail(pb.EditTailRequest(session_id=sid, replacements=[_user("ok"), pb.Message(role=9)]))
        assert "replacements[1]" in named.value.details()  # type: ignore[attr-defined]
    assert store.snapshot() == before
    with pytest.raises(SequenceConflictError) as conflict:
        client.edit_tail(sid, remove_last=1, expected_last_position=1)
    assert (conflict.value.reason, conflict.value.metadata.get("actual")) == (Reason.SEQUENCE_CONFLICT, "3")
    with pytest.raises(InvalidRequestError):
        client.edit_tail(sid)  # nothing to do
    assert store.snapshot() == before


def test_a_retried_edit_replays_once_written(module_client: SessionClient, sid: str) -> None:
    client = module_client
    client.append(sid, [Message.user("a"), Message.user("b")])
    first = client.edit_tail(sid, remove_last=1, replacements=Message.user("c"), request_id="edit-1")
    again = client.edit_tail(sid, remove_last=1, replacements=Message.user("c"), request_id="edit-1")
    assert not first.replayed and again.replayed and again.removed == []
    assert (again.edit_position, again.first_position, again.last_position) == (3, 4, 4)
    assert _visible(client, sid) == [(1, "a"), (4, "c")]
    with pytest.raises(InvalidRequestError) as reused:
        client.edit_tail(sid, remove_last=2, request_id="edit-1")
    assert reused.value.reason == Reason.REQUEST_ID_REUSED


def _apply(view: dict[int, str], replies: list[pb.WatchResponse]) -> dict[int, str]:
    """What a follower knows after applying Watch replies: messages in, edits and clears out."""
    for r in replies:
        if r.HasField("edit"):
            for p in r.edit.removed_positions:
                view.pop(p, None)
        elif r.cleared:
            view.clear()
        else:
            view[r.position] = r.message.content
    return view


def _watch_until(daemon: DaemonProcess, session_id: str, after: int, last: int) -> list[pb.WatchResponse]:
    """The replies of a Watch of ``session_id`` after a position, up to the one at ``last``."""
    replies: list[pb.WatchResponse] = []
    if after >= last:
        return replies
    with grpc.insecure_channel(daemon.address) as channel:
        call = pb_grpc.SessionServiceStub(channel).Watch(
            pb.WatchRequest(session_id=session_id, after_position=after), timeout=10
        )
        for reply in call:
            replies.append(reply)
            if reply.position >= last:
                call.cancel()
                break
    return replies


def test_watch_sends_the_edit_before_its_replacements_and_any_resumed_watch_agrees_with_load(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    daemon, client = module_daemon, module_client
    client.append(sid, [Message.user(t) for t in "abcd"])
    client.edit_tail(sid, remove_last=2, replacements=[Message.user("x")])  # edit at 5, x at 6
    client.append(sid, Message.user("e"))
    client.edit_tail(sid, remove_last=3)  # edit at 8: removes b, x, e (stepping over the first edit)
    client.append(sid, Message.user("f"))
    client.clear(sid, erase=False)  # 10
    client.append(sid, [Message.user("g"), Message.user("h")])
    client.edit_tail(sid, remove_last=1, replacements=[Message.user("i")])
    every = _watch_until(daemon, sid, 0, 14)
    assert [(r.position, list(r.edit.removed_positions)) for r in every if r.HasField("edit")] == [
        (5, [3, 4]),
        (8, [2, 6, 7]),
        (13, [12]),
    ]
    assert [r.position for r in every][4:6] == [5, 6]  # the edit, then its replacement
    want = dict(_visible(client, sid))
    assert want == {11: "g", 14: "i"}
    for after in range(len(every) + 1):  # a watcher that saw the first `after` events, then resumed
        seen = _apply({}, every[:after])
        resumed = _watch_until(daemon, sid, every[after - 1].position if after else 0, 14)
        assert _apply(seen, resumed) == want, f"resumed after {after} events"


def test_watch_all_and_the_async_client_see_edits_and_erasing_clears(module_daemon: DaemonProcess, sid: str) -> None:
    daemon, erased = module_daemon, f"{sid}-e"

    async def run() -> None:
        c = AsyncSessionClient(address=daemon.address, autostart=False)
        try:
            await c.append(sid, [Message.user("a"), Message.user("b")])
            done = await c.edit_tail(sid, remove_last=1, replacements=Message.user("c"))
            assert [m.content for m in done.removed] == ["b"]
            await c.append(erased, Message.user("to be erased"))
            cleared = await c.clear(erased, erase=True)
            assert (cleared.events_erased, cleared.position, cleared.erasure_pending) == (1, 2, False)
        finally:
            await c.close()

    asyncio.run(run())
    with daemon.client() as c:
        events = []
        with contextlib.closing(c.watch_all(last=4)) as stream:  # the store's last four: this test's
            for event in stream:
                events.append(event)
                if len(events) == 4:
                    break
        assert [(e.session_id, e.position, e.edited, e.removed_positions, e.cleared, e.erased) for e in events] == [
            (sid, 2, False, (), False, False),
            (sid, 3, True, (2,), False, False),
            (sid, 4, False, (), False, False),
            (erased, 2, False, (), True, True),
        ]
        assert events[2].message is not None and events[2].message.content == "c"
        with contextlib.closing(c.watch(erased)) as watch:
            watched = next(watch)  # the erased history is never sent again
        assert (watched.position, watched.cleared, watched.erased, watched.message) == (2, True, True, None)


def test_follow_prints_edits_and_erasing_clears(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    daemon, client = module_daemon, module_client
    client.append(sid, [Message.user("a"), Message.user("b")])
    client.edit_tail(sid, remove_last=1, replacements=Message.user("c"))
    client.clear(sid, erase=True)
    client.append(sid, Message.user("after"))
    client.edit_tail(sid, remove_last=1)
    args = [sys.executable, "-m", "claw_sessiond", "follow", sid, "--from-start", "--socket", str(daemon.socket_path)]
    lines = _first_lines(args, 3)
    assert lines[0].startswith("#5 -- history cleared and erased --")
    assert lines[2] == "#7 -- edited: removed #6 --"
    as_json = [json.loads(line) for line in _first_lines([*args, "--json"], 3)]
    assert (as_json[0]["cleared"], as_json[0]["erased"]) == (True, True)
    assert as_json[2]["edit"] == {"removed_positions": [6]} and not as_json[2]["cleared"]


def _first_lines(args: list[str], n: int) -> list[str]:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        while len(lines) < n:
            line = proc.stdout.readline()
            assert line, f"follow ended early: {proc.stderr.read() if proc.stderr else ''}"
            if not line.startswith(" "):  # a message's continuation lines are indented
                lines.append(line.rstrip("\n"))
        return lines
    finally:
        proc.kill()
        proc.communicate(timeout=10)


def test_an_exported_session_with_edits_imports_unchanged(module_client: SessionClient, sid: str) -> None:
    client = module_client
    call = ToolCall("c1", "bash", "{}")
    client.append(sid, [Message.user("go"), Message.assistant("", [call]), Message.tool("c1", "first")])
    client.edit_tail(sid, remove_last=1, replacements=Message.tool("c1", "second"))
    client.record_usage(sid, input_tokens=5)
    lines = list(client.export(sid))
    assert [json.loads(line)["type"] for line in lines[1:]] == [
        "user_message",
        "assistant_message",
        "tool_result",
        "edit",
        "tool_result",
        "usage",
    ]
    moved_to = f"{sid}-t"
    moved = [line.replace(f'"session_id":"{sid}"', f'"session_id":"{moved_to}"') for line in lines]
    [report] = client.import_lines(moved)
    assert report.events_imported == 6
    assert _visible(client, moved_to) == _visible(client, sid) == [(1, "go"), (2, ""), (5, "second")]
    assert client.load(moved_to, "/tmp").session.message_count == 3
    back = [line.replace(f'"session_id":"{moved_to}"', f'"session_id":"{sid}"') for line in client.export(moved_to)]
    assert back[1:] == lines[1:]


def test_an_edit_that_would_cut_a_pending_call_is_refused_unless_discarded(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    daemon, client = module_daemon, module_client
    approval = ToolCall("approve-1", "deploy", '{"env": "prod"}', pending=True)
    client.append(sid, [Message.user("deploy"), Message.assistant("", [approval])])
    store = inspect.stored(daemon)
    before = store.snapshot()
    for how in ({"remove_last": 1}, {"remove_last": 2}, {"after_position": 1}):
        with pytest.raises(PreconditionError) as caught:
            client.edit_tail(sid, replacements=[Message.assistant("never mind")], **how)  # type: ignore[arg-type]
        assert caught.value.reason == Reason.EDIT_SPLITS_CALL, how
        assert caught.value.metadata["tool_call_ids"] == "approve-1"
    assert store.snapshot() == before
    # Over the wire: FAILED_PRECONDITION with the reason.
    with grpc.insecure_channel(daemon.address) as channel:
        with pytest.raises(grpc.RpcError) as raw:
            pb_grpc.SessionServiceStub(channel).EditTail(pb.EditTailRequest(session_id=sid, remove_last=1))
        assert _error(raw.value) == ("FAILED_PRECONDITION", "EDIT_SPLITS_CALL")
    assert store.snapshot() == before
    # The pending call survives Loads (never repaired), so the refusal holds until it is answered ...
    assert client.load(sid, "/tmp").repairs == []
    client.append(sid, Message.tool("approve-1", "approved and deployed"))
    done = client.edit_tail(sid, remove_last=1)  # removing its result reopens it, pending again
    assert [m.content for m in done.removed] == ["approved and deployed"]
    assert client.load(sid, "/tmp").repairs == []
    with pytest.raises(PreconditionError):
        client.edit_tail(sid, remove_last=1)
    # ... or the caller discards it on purpose.
    dropped = client.edit_tail(sid, remove_last=1, discard_pending=True, replacements=Message.assistant("cancelled"))
    assert [c.id for m in dropped.removed for c in m.tool_calls] == ["approve-1"]
    with pytest.raises(ToolCallStateError):  # its late result has no call to answer any more
        client.append(sid, Message.tool("approve-1", "too late"))
    assert [m.content for m in client.load(sid, "/tmp").messages] == ["deploy", "cancelled"]


def test_the_replacements_follow_the_edits_tool_policy(module_client: SessionClient, sid: str) -> None:
    client = module_client
    client.append(sid, [Message.user("go"), Message.user("oops")])
    with pytest.raises(ToolCallStateError):  # an orphan result is refused by default ...
        client.edit_tail(sid, remove_last=1, replacements=[Message.tool("nowhere", "r")])
    done = client.edit_tail(  # ... and stored, flagged, when the edit's policy allows it
        sid,
        remove_last=1,
        replacements=[Message.tool("nowhere", "r")],
        tool_policy=ToolPolicy(allow_orphan_results=True),
    )
    assert [m.content for m in done.removed] == ["oops"]
    [_go, orphan] = client.load(sid, "/tmp").messages
    assert orphan.orphan and orphan.tool_call_id == "nowhere"


def test_removed_entries_come_back_whole_and_free_their_client_ids(module_client: SessionClient, sid: str) -> None:
    client = module_client
    item = b'{"type": "reasoning", "encrypted_content": "\\u00e9\\u0000"}' + bytes(range(256))
    client.append(
        sid, [Message.user("think", client_id="u-1"), Message.other("openai.responses", item, client_id="r-1")]
    )
    done = client.edit_tail(sid, remove_last=1)
    [removed] = done.removed
    assert (removed.role, removed.format, removed.item, removed.client_id) == ("other", "openai.responses", item, "r-1")
    # Its client id is free again (unique among the visible entries only); a visible one is not.
    client.append(sid, Message.other("openai.responses", b"{}", client_id="r-1"))
    with pytest.raises(SessiondError) as taken:
        client.edit_tail(sid, remove_last=1, replacements=[Message.user("again", client_id="u-1")])
    assert taken.value.reason == Reason.CLIENT_ID_EXISTS
    assert [m.client_id for m in client.load(sid, "/tmp").messages] == ["u-1", "r-1"]
