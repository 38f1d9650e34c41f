"""Fairness limits: the Watch stream cap and fan-out budget, the open-call limit, chunked repair.

Real daemon subprocesses and real clients. The latency side (ordinary
requests beside heavy ones) is in ``test_interference.py``; this file checks
that the limits refuse what they should, write nothing when they do, and
that the fan-out budget and the chunked repair keep Watch and repair
semantics: every event once, in order; every interrupted call repaired once,
right after its assistant message, in call order.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from claw_sessiond.watch import WAKE_BURST, WAKE_SLICE, WATCH_BATCH
from claw_sessiond_client import (
    AsyncSessionClient,
    InvalidRequestError,
    Message,
    PreconditionError,
    Reason,
    ResourceLimitError,
    SessionClient,
    ToolCall,
)
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess
from tests.helpers.tiers import scale


def _assistant(prefix: str, n: int) -> Message:
    return Message.assistant("calls", [ToolCall(f"{prefix}-{i}", "bash", '{"cmd": "true"}') for i in range(n)])


def _last_position(client: SessionClient, session_id: str) -> int:
    (row,) = [s for s in client.list_sessions(session_id) if s.id == session_id]
    return row.last_position


def _wait_watchers(client: SessionClient, n: int) -> None:
    deadline = time.monotonic() + 30
    while client.stats()["active_watchers"] != n:
        assert time.monotonic() < deadline, f"expected {n} open watchers, have {client.stats()['active_watchers']}"
        time.sleep(0.05)


# ---------------------------------------------------------------- Watch


@pytest.mark.smoke
def test_one_watch_beyond_the_cap_is_refused_with_too_many_streams(spawn_daemon: Any) -> None:
    daemon: DaemonProcess = spawn_daemon("--max-watchers", "3")
    channel = grpc.insecure_channel(daemon.address)
    stub = pb_grpc.SessionServiceStub(channel)
    calls = [stub.Watch(pb.WatchRequest(session_id="w")) for _ in range(3)]
    with daemon.client() as client:
        try:
            _wait_watchers(client, 3)
            with pytest.raises(ResourceLimitError) as refused:
                next(iter(client.watch("w")))
            assert refused.value.reason == Reason.TOO_MANY_STREAMS
            assert refused.value.metadata["limit"] == "3"
            extra = stub.Watch(pb.WatchRequest(session_id="other"))
            with pytest.raises(grpc.RpcError) as raw:
                next(extra)
            assert raw.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            calls.pop().cancel()  # a slot frees up: the next Watch is served
            _wait_watchers(client, 2)
            client.append("w", Message.user("hello"))
            event = next(iter(client.watch("w")))
            assert event.position == 1
        finally:
            for call in calls:
                call.cancel()
            channel.close()


async def test_fan_out_under_a_budget_delivers_every_event_once_in_order(spawn_daemon: Any) -> None:
    # 30 watchers x 100 events = 3,000 watch messages at 1,000/s: the budget, not the
    # machine, sets the pace, and watchers coalesce the commits that land meanwhile.
    # The watchers are clients that take one event per message (no `batch`), so every
    # event is a message the budget pays for.
    watchers, events, per_s = 30, scale(100, 200), 1000
    daemon: DaemonProcess = spawn_daemon("--watch-sends-per-s", str(per_s))
    async with (
        AsyncSessionClient(address=daemon.address, autostart=False) as client,
        grpc.aio.insecure_channel(daemon.address) as channel,
    ):
        await client.append("fan", Message.user("start"))
        stub = pb_grpc.SessionServiceStub(channel)

        async def follow() -> list[int]:
            seen: list[int] = []
            async for reply in stub.Watch(pb.WatchRequest(session_id="fan", after_position=1)):
                assert reply.HasField("message") and not reply.events
                seen.append(reply.position)
                if reply.position == events + 1:
                    return seen
            return seen

        started = time.monotonic()
        tasks = [asyncio.create_task(follow()) for _ in range(watchers)]
        for i in range(events):
            await client.append("fan", Message.user(f"m{i}"))
        results = await asyncio.wait_for(asyncio.gather(*tasks), timeout=120)
        elapsed = time.monotonic() - started
    for seen in results:
        assert seen == list(range(2, events + 2))
    # Every message is paid at `per_s`, except the bucket's burst and what the last slice of
    # woken watchers sent (paid after sending): at most WAKE_SLICE turns of WATCH_BATCH events.
    unpaid = WAKE_BURST + WAKE_SLICE * WATCH_BATCH
    assert elapsed >= 0.8 * (watchers * events - unpaid) / per_s, f"{elapsed:.2f}s: the budget was not applied"


# ---------------------------------------------------------------- open tool calls


def test_an_append_beyond_the_open_call_limit_is_refused_and_writes_nothing(spawn_daemon: Any) -> None:
    daemon: DaemonProcess = spawn_daemon("--max-open-tool-calls", "5")
    with daemon.client() as client:
        client.append("s", [Message.user("go"), _assistant("a", 3)])
        with pytest.raises(PreconditionError) as refused:
            client.append("s", _assistant("b", 3))
        assert refused.value.reason == Reason.TOO_MANY_OPEN_CALLS
        assert refused.value.metadata == {"open_calls": "6", "limit": "5"}
        assert _last_position(client, "s") == 2
        # Results in the same append count: 3 open - 2 answered + 4 new = 5.
        client.append("s", [Message.tool("a-0", "ok"), Message.tool("a-1", "ok"), _assistant("c", 4)])
        assert _last_position(client, "s") == 5
        # Messages without calls are never refused by the limit, and a Load's repair frees it.
        client.append("s", Message.user("more"))
        loaded = client.load("s")
        assert len(loaded.repairs) == 5
        client.append("s", _assistant("d", 5))


def test_an_import_beyond_the_open_call_limit_is_refused(spawn_daemon: Any, tmp_path: Path) -> None:
    source: DaemonProcess = spawn_daemon()
    with source.client() as client:
        client.append("many", [Message.user("go"), _assistant("a", 7)])
        lines = list(client.export("many"))
    other = tmp_path / "other"
    other.mkdir()
    target: DaemonProcess = spawn_daemon("--max-open-tool-calls", "5", workspace_path=other)
    with target.client() as client:
        with pytest.raises(InvalidRequestError) as refused:
            client.import_lines(lines)
        assert refused.value.reason == Reason.INVALID_IMPORT
        assert "unanswered tool calls" in refused.value.message
        assert client.list_sessions("many") == []


# ---------------------------------------------------------------- chunked repair


def test_a_repair_larger_than_a_chunk_is_complete_placed_and_done_once(spawn_daemon: Any) -> None:
    # 499 open calls: several writer chunks (128 calls each), while another client appends.
    daemon: DaemonProcess = spawn_daemon()
    with daemon.client() as client:
        client.append("big", [Message.user("one"), _assistant("a", 300), Message.user("two")])
        client.append("big", [_assistant("b", 200), Message.tool("b-5", "real result")])
        client.append("big", Message.user("three"))
        stop = threading.Event()
        written: list[int] = []

        def writer() -> None:
            with daemon.client() as other:
                for i in range(200):
                    if stop.is_set():
                        break
                    written.append(other.append("big", Message.user(f"beside {i}")).last_position)

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            loaded = client.load("big")
        finally:
            stop.set()
            thread.join(60)
        assert len(loaded.repairs) == 499
        assert len({r.position for r in loaded.repairs}) == 499
        again = client.load("big")
        assert again.repairs == []
        history = again.messages
        roles = [m.role for m in history]
        a = roles.index("assistant")
        assert [m.tool_call_id for m in history[a + 1 : a + 301]] == [f"a-{i}" for i in range(300)]
        assert all(m.synthetic for m in history[a + 1 : a + 301])
        assert history[a + 301].content == "two"
        b = roles.index("assistant", a + 1)
        results = history[b + 1 : b + 201]
        assert results[0].tool_call_id == "b-5" and not results[0].synthetic
        assert [m.tool_call_id for m in results[1:]] == [f"b-{i}" for i in range(200) if i != 5]
        assert history[b + 201].content == "three"
        # Every call answered exactly once; the concurrent appends all landed.
        answered = [m.tool_call_id for m in history if m.role == "tool"]
        assert len(answered) == len(set(answered)) == 500
        assert [m.content for m in history if m.content.startswith("beside")] == [
            f"beside {i}" for i in range(len(written))
        ]
