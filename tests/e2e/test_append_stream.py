"""AppendStream: pipelined appends with Append's semantics (order, all-or-nothing, idempotency, errors per append).

Tests that work on a session of their own (``sid``) share the file's daemon (``module_daemon``); those that
kill or stop a daemon start their own.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import grpc
import pytest

from claw_sessiond_client import AsyncSessionClient, Message, ToolCall
from claw_sessiond_client import errors as E
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess
from tests.helpers.tiers import scale


def _client(daemon: DaemonProcess) -> AsyncSessionClient:
    return AsyncSessionClient(address=daemon.address, autostart=False, timeout_s=30, retry_window_s=30)


@pytest.mark.smoke
async def test_concurrent_appends_get_one_total_order(module_daemon: DaemonProcess, sid: str) -> None:
    n = scale(200, 1000)
    async with _client(module_daemon) as client, client.append_stream() as stream:
        results = await asyncio.gather(*(stream.append(sid, Message.user(f"m{i}")) for i in range(n)))
        assert sorted(r.last_position for r in results) == list(range(1, n + 1))
        assert all(r.first_position == r.last_position and not r.replayed for r in results)
        # Requests are written in call order, so positions follow it.
        assert [r.last_position for r in results] == list(range(1, n + 1))
        loaded = await client.load(sid, workdir="/")
    assert [m.content for m in loaded.messages] == [f"m{i}" for i in range(n)]


async def test_a_failed_append_fails_alone_and_the_stream_goes_on(module_daemon: DaemonProcess, sid: str) -> None:
    async with _client(module_daemon) as client, client.append_stream() as stream:
        await stream.append(sid, Message.user("one"))
        with pytest.raises(E.SequenceConflictError) as conflict:
            await stream.append(sid, Message.user("stale"), expected_last_position=7)
        assert conflict.value.reason == E.Reason.SEQUENCE_CONFLICT
        with pytest.raises(E.InvalidRequestError):
            await stream.append("bad/id", Message.user("x"))
        # All or nothing: the user message before the unknown tool result is not stored either.
        with pytest.raises(E.ToolCallStateError):
            await stream.append(sid, [Message.user("before"), Message.tool("call_404", "result")])
        two = await stream.append(sid, Message.user("two"))
        assert two.last_position == 2
        loaded = await client.load(sid, workdir="/")
    assert [m.content for m in loaded.messages] == ["one", "two"]


async def test_a_retried_request_id_is_replayed_not_written_twice(module_daemon: DaemonProcess, sid: str) -> None:
    call = ToolCall("call_1", "bash", '{"cmd": "ls"}')
    sent = [Message.assistant(tool_calls=[call]), Message.tool("call_1", "README.md")]
    async with _client(module_daemon) as client, client.append_stream() as stream:
        first = await stream.append(sid, sent, request_id="req-1")
        again = await stream.append(sid, sent, request_id="req-1")
        assert (again.first_position, again.last_position, again.replayed) == (first.first_position, 2, True)
        unary = await client.append(sid, sent, request_id="req-1")
        assert unary.replayed and unary.last_position == 2
        with pytest.raises(E.InvalidRequestError):
            await stream.append(sid, Message.user("other content"), request_id="req-1")
        loaded = await client.load(sid, workdir="/")
    assert [m.role for m in loaded.messages] == ["assistant", "tool"]


async def test_replies_come_back_in_request_order_over_the_raw_rpc(module_daemon: DaemonProcess, sid: str) -> None:
    async with grpc.aio.insecure_channel(module_daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        user = pb.Message(role=pb.ROLE_USER, content="hi")
        batch = pb.AppendStreamRequest(
            appends=[
                pb.AppendRequest(session_id=sid, messages=[user], request_id="a"),
                pb.AppendRequest(session_id=sid, messages=[], request_id="b"),  # empty: INVALID_ARGUMENT
                pb.AppendRequest(session_id=sid, messages=[user, user], request_id="c"),
            ]
        )
        call = stub.AppendStream()
        await call.write(batch)
        await call.done_writing()
        replies = [r async for message in call for r in message.replies]
    assert len(replies) == 3
    assert replies[0].result.last_position == 1
    assert replies[1].HasField("error") and replies[1].error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert replies[1].error.reason == "EMPTY_BATCH"
    assert (replies[2].result.first_position, replies[2].result.last_position) == (2, 3)


async def test_appends_waiting_when_the_daemon_dies_are_resent_once(spawn_daemon: object) -> None:
    daemon: DaemonProcess = spawn_daemon()  # type: ignore[operator]
    n = scale(150, 600)
    async with _client(daemon) as client, client.append_stream() as stream:
        tasks = [asyncio.ensure_future(stream.append("s", Message.user(f"m{i}"))) for i in range(n)]
        await asyncio.sleep(0.05)  # some are committed, some in flight, some not sent yet
        daemon.kill()
        daemon.start()
        results = await asyncio.gather(*tasks)
        loaded = await client.load("s", workdir="/")
    counts = Counter(m.content for m in loaded.messages)
    assert set(counts) == {f"m{i}" for i in range(n)}, "an acknowledged append is missing"
    assert max(counts.values()) == 1, "an append was written twice"
    assert sorted(r.last_position for r in results) == list(range(1, n + 1))
    # Re-sent appends keep the order they were first sent in (one coroutine's call order).
    assert [m.content for m in loaded.messages] == [f"m{i}" for i in range(n)]


async def test_a_graceful_stop_ends_open_append_streams_instead_of_waiting_out_the_grace(spawn_daemon: object) -> None:
    """An AppendStream left open (a client between appends, or one that keeps sending) held a stopping daemon for
    its whole grace period, answering every append with SHUTTING_DOWN; clients retrying across a restart then
    spent that long without a daemon. The stop now answers what each stream has read and ends it."""
    daemon: DaemonProcess = spawn_daemon("--shutdown-grace-s", "120")  # type: ignore[operator]
    async with grpc.aio.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        call = stub.AppendStream()
        user = pb.Message(role=pb.ROLE_USER, content="one")
        await call.write(pb.AppendStreamRequest(appends=[pb.AppendRequest(session_id="s", messages=[user])]))
        first = await call.read()
        assert first.replies[0].HasField("result")  # the stream is open and served; now it idles, never finished
        began = time.monotonic()
        stopping = asyncio.get_running_loop().run_in_executor(None, daemon.terminate, 60.0)
        ended = await asyncio.wait_for(call.read(), 60)  # the daemon ends the call: it is not cut
        assert ended is grpc.aio.EOF and await call.code() == grpc.StatusCode.OK
        assert await stopping == 0
        stopped_s = time.monotonic() - began
    assert stopped_s < 60, f"the stop took {stopped_s:.1f}s: it waited for the open stream (grace 120 s)"
