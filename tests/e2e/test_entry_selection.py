"""Point and range reads of Load, and DeleteEntries, over the wire: a real daemon, the generated stub, both clients.

A checkpoint-like store: ROLE_OTHER entries keyed by client id. Load by client ids, by prefix,
before a position (paging backwards) returns the chosen entries in position order with
``complete`` false when a filter left entries out; filters that do not combine are refused with
INVALID_ARGUMENT and a reason; DeleteEntries removes entries in the middle (Watch and Export show
the edit event), replays a retry, and a refused one writes nothing.

That a read by client id does not walk a large session is measured where the work can be counted:
tests/storage/sqlite/test_window_cost.py (SQLite's instructions) and
tests/storage/postgres/test_point_read_cost.py (PostgreSQL's blocks touched).
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import grpc
import pytest

from claw_sessiond_client import AsyncSessionClient, Message, SessionClient
from claw_sessiond_client import _status as B
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from claw_sessiond_client.errors import (
    InvalidRequestError,
    PreconditionError,
    Reason,
    SequenceConflictError,
    SessionNotFoundError,
)
from tests.helpers.daemon import DaemonProcess


def _entry(client_id: str) -> Message:
    return Message.other("test.blob", client_id.encode(), client_id=client_id, metadata='{"k": 1}')


def _positions(client: SessionClient, sid: str, **filters: object) -> tuple[list[int], bool]:
    loaded = client.load(sid, no_repair=True, **filters)  # type: ignore[arg-type]
    return [m.position for m in loaded.messages], loaded.complete


def _error(exc: grpc.RpcError) -> tuple[str, str]:
    info = B._error_info(exc.trailing_metadata())  # type: ignore[attr-defined]
    return exc.code().name, info.reason if info else ""  # type: ignore[attr-defined]


@pytest.mark.smoke
def test_point_and_range_reads_choose_entries_by_client_id(module_client: SessionClient, sid: str) -> None:
    client = module_client
    client.append(sid, [_entry(i) for i in ("cp1", "cp1/t/0", "cp1/t/1", "cp2", "cp2/t/0", "cp3")])  # 1..6
    assert _positions(client, sid, client_ids=["cp3", "nope", "cp1"]) == ([1, 6], False)
    [got] = client.load(sid, no_repair=True, client_ids=["cp2"]).messages
    assert (got.position, got.client_id, got.item, got.metadata) == (4, "cp2", b"cp2", '{"k": 1}')
    assert _positions(client, sid, client_id_prefix="cp1/") == ([2, 3], False)
    assert _positions(client, sid, client_id_prefix="cp") == ([1, 2, 3, 4, 5, 6], True)
    assert _positions(client, sid, last=2, before_position=6) == ([4, 5], False)
    assert _positions(client, sid, after_position=1, before_position=4) == ([2, 3], False)
    loaded = client.load(sid, no_repair=True, last=2, before_position=4)
    assert (loaded.start_position, [m.position for m in loaded.messages]) == (2, [2, 3])


def test_filters_that_do_not_combine_are_refused_and_write_nothing(module_daemon: DaemonProcess, sid: str) -> None:
    with module_daemon.client() as client:
        client.append(sid, [_entry("a"), _entry("b")])
    bad = [
        pb.LoadRequest(session_id=sid, no_repair=True, client_ids=["a"], last=1),
        pb.LoadRequest(session_id=sid, no_repair=True, client_ids=["a"], client_id_prefix="a"),
        pb.LoadRequest(session_id=sid, no_repair=True, client_id_prefix="a", last=1),
        pb.LoadRequest(session_id=sid, no_repair=True, before_position=2, after_position=2),
        pb.LoadRequest(session_id=sid, no_repair=True, before_position=-1),
        pb.LoadRequest(session_id=sid, no_repair=True, client_ids=[""]),
        pb.LoadRequest(session_id=sid, no_repair=True, client_ids=["x" * 257]),
        pb.LoadRequest(session_id=sid, no_repair=True, client_id_prefix="x" * 257),
        pb.LoadRequest(session_id=sid, no_repair=True, client_ids=[str(i) for i in range(10_001)]),
        pb.DeleteEntriesRequest(session_id=sid),
        pb.DeleteEntriesRequest(session_id=sid, client_ids=["a"], from_position=1),
        pb.DeleteEntriesRequest(session_id=sid, from_position=2, to_position=1),
        pb.DeleteEntriesRequest(session_id=sid, to_position=1),
        pb.DeleteEntriesRequest(session_id=sid, client_ids=[""]),
    ]
    with grpc.insecure_channel(module_daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        for request in bad:
            call = stub.Load if isinstance(request, pb.LoadRequest) else stub.DeleteEntries
            with pytest.raises(grpc.RpcError) as caught:
                reply = call(request, timeout=10)
                list(reply) if isinstance(request, pb.LoadRequest) else reply
            code, reason = _error(caught.value)
            assert code == "INVALID_ARGUMENT" and reason in ("INVALID_MESSAGE", "FIELD_TOO_LARGE"), request
            assert caught.value.details(), request  # type: ignore[attr-defined]
    with module_daemon.client() as client:
        loaded = client.load(sid, no_repair=True)
        assert (loaded.session.last_position, [m.client_id for m in loaded.messages]) == (2, ["a", "b"])


def test_delete_entries_removes_in_the_middle_and_watch_and_export_show_it(
    module_client: SessionClient, sid: str
) -> None:
    client = module_client
    client.append(sid, [_entry(i) for i in ("c1", "c1/w/0", "c2", "c2/w/0", "c2/w/1", "c3")])  # 1..6
    done = client.delete_entries(sid, client_id_prefix="c2/", expected_last_position=6, request_id="del-1")
    assert (done.removed_positions, done.edit_position, done.replayed) == ([4, 5], 7, False)
    again = client.delete_entries(sid, client_id_prefix="c2/", expected_last_position=6, request_id="del-1")
    assert (again.removed_positions, again.edit_position, again.replayed) == ([4, 5], 7, True)
    done = client.delete_entries(sid, client_ids=["c1", "c1/w/0"])
    assert (done.removed_positions, done.edit_position) == ([1, 2], 8)
    assert _positions(client, sid) == ([3, 6], True)
    assert client.append(sid, _entry("c1")).first_position == 9  # positions are never reused
    # Watch shows each removal as an edit with no replacements.
    seen = []
    with contextlib.closing(client.watch(sid, after_position=6)) as events:
        for event in events:
            seen.append((event.position, event.edited, event.removed_positions))
            if event.position >= 9:
                break
    assert seen[:2] == [(7, True, (4, 5)), (8, True, (1, 2))]
    edits = [json.loads(line) for line in client.export(sid) if '"type": "edit"' in line or '"type":"edit"' in line]
    assert [(e["position"], e["payload"]["removed"]) for e in edits] == [(7, [4, 5]), (8, [1, 2])]


def test_refused_deletes_write_nothing(module_client: SessionClient, sid: str) -> None:
    client = module_client
    client.append(sid, [Message.user("q"), Message.assistant("", []), _entry("x")])
    with pytest.raises(SessionNotFoundError):
        client.delete_entries(f"{sid}-none", client_ids=["x"])
    assert client.load(f"{sid}-none", no_repair=True).session.last_position == 0
    with pytest.raises(SequenceConflictError):
        client.delete_entries(sid, client_ids=["x"], expected_last_position=2)
    with pytest.raises(InvalidRequestError) as caught:
        client.delete_entries(sid, client_ids=["x"], from_position=1)
    assert caught.value.reason == Reason.INVALID_MESSAGE
    assert client.load(sid, no_repair=True).session.last_position == 3


def test_a_split_call_is_refused_and_the_async_client_deletes_too(module_daemon: DaemonProcess, sid: str) -> None:
    async def run() -> None:
        c = AsyncSessionClient(address=module_daemon.address, autostart=False)
        try:
            from claw_sessiond_client import ToolCall

            call = ToolCall("t1", "bash", "{}")
            await c.append(sid, [Message.assistant("", [call]), Message.tool("t1", "out"), _entry("k")])
            with pytest.raises(PreconditionError) as caught:
                await c.delete_entries(sid, from_position=1, to_position=1)
            assert caught.value.reason == Reason.EDIT_SPLITS_CALL
            done = await c.delete_entries(sid, from_position=1, to_position=2)
            assert (done.removed_positions, done.edit_position) == ([1, 2], 4)
            loaded = await c.load(sid, no_repair=True, client_ids=["k"])
            assert [m.position for m in loaded.messages] == [3] and loaded.complete
        finally:
            await c.close()

    asyncio.run(run())
