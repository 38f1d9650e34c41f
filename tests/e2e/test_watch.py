"""Watch across real processes: completeness and order under concurrent writers, stalled and lagged watchers.

Writers are separate processes; watchers are real clients on the daemon's
Unix socket. Daemon memory is measured from outside (psutil RSS of the daemon
process). Every process started here is stopped by pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import psutil
import pytest

from claw_sessiond_client import (
    AsyncSessionClient,
    Message,
    Reason,
    SessionClient,
    SessionNotFoundError,
    ToolCall,
    WatchEvent,
    WatchLaggedError,
)
from claw_sessiond_client import _status as B
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess, free_port
from tests.helpers.process import wait_for
from tests.helpers.tiers import scale

MIB = 1024 * 1024
#: 16 messages of 64 KiB: one MiB per Append.
BIG_BATCH = [Message.user("x" * (64 * 1024)) for _ in range(16)]

WRITER = r"""
import sys
from claw_sessiond_client import Message, SessionClient
address, session, name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
client = SessionClient(address=address, autostart=False)
for i in range(n):
    client.append(session, [Message.user(f"{name}:{i}:a"), Message.user(f"{name}:{i}:b")])
"""


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Client processes started by a test; each is stopped by its pid at teardown."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for p in started:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
            os.kill(p.pid, signal.SIGKILL)
        p.wait(10)


class Collector:
    """Consumes ``client.watch(...)`` on a thread until ``want`` events arrived (bounded in time)."""

    def __init__(self, client: SessionClient, session: str, want: int, after_position: int = 0) -> None:
        self.client = client
        self.events: list[WatchEvent] = []
        self.error: BaseException | None = None
        self._want = want
        self._iter = client.watch(session, after_position)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for event in self._iter:
                self.events.append(event)
                if len(self.events) >= self._want:
                    break
        except BaseException as exc:  # reported by join()
            self.error = exc
        finally:
            self._iter.close()

    def wait_for(self, count: int, timeout_s: float) -> None:
        end = time.monotonic() + timeout_s
        while len(self.events) < count and time.monotonic() < end and self._thread.is_alive():
            time.sleep(0.02)
        assert len(self.events) >= count, f"got {len(self.events)} of {count} events; error: {self.error!r}"

    def join(self, timeout_s: float) -> list[WatchEvent]:
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            self.client.close()  # ends the stream, so the thread ends too
            self._thread.join(10)
            pytest.fail(f"watch got {len(self.events)} of {self._want} events in {timeout_s}s")
        if self.error is not None:
            raise self.error
        return self.events


@pytest.mark.both_backends("on PostgreSQL a Watch is fed by the database's change feed")
def test_watch_from_zero_sees_every_commit_of_four_writers_once_in_order(
    daemon: DaemonProcess, client: SessionClient, procs: Any
) -> None:
    client.append("w", [Message.user("before-1"), Message.user("before-2"), Message.user("before-3")])
    per_writer = scale(40, 400)
    total = 3 + 4 * per_writer * 2
    watcher = daemon.client()
    collector = Collector(watcher, "w", total)
    wait_for(lambda: client.stats()["active_watchers"] == 1, 10, "the watcher to open")
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, daemon.address, "w", f"p{i}", str(per_writer)])
        for i in range(4)
    ]
    procs.extend(writers)
    for p in writers:
        assert p.wait(60) == 0
    events = collector.join(30)
    watcher.close()

    assert [e.position for e in events] == list(range(1, total + 1))  # commit order, no gap, no duplicate
    contents = [e.message.content for e in events if e.message is not None]
    assert contents[:3] == ["before-1", "before-2", "before-3"]
    assert len(set(contents)) == total
    for i in range(4):  # each writer's own order is kept, and its pairs are adjacent (one Append = one commit)
        mine = [c for c in contents if c.startswith(f"p{i}:")]
        assert mine == [f"p{i}:{n}:{half}" for n in range(per_writer) for half in ("a", "b")]
        for n in range(per_writer):
            a = contents.index(f"p{i}:{n}:a")
            assert contents[a + 1] == f"p{i}:{n}:b"
    stored = {m.position: m.content for m in client.load("w", "/tmp").messages}
    assert stored == {e.position: e.message.content for e in events if e.message is not None}


def test_stalled_watcher_blocks_no_append_and_daemon_memory_stays_bounded(
    daemon: DaemonProcess, client: SessionClient
) -> None:
    # A daemon of its own: the test bounds the daemon's memory, which other tests' sessions would change.
    rss = psutil.Process(daemon.proc.pid if daemon.proc else 0).memory_info
    warm = 8
    t0 = time.monotonic()
    for _ in range(warm):  # SQLite's page cache and the allocator reach their working size
        client.append("big", BIG_BATCH)
    warm_s = (time.monotonic() - t0) / warm

    watcher = daemon.client()
    stream = watcher.watch("big")
    first = next(stream)  # the stream is open; from here on nobody reads it
    wait_for(lambda: client.stats()["active_watchers"] == 1, 10, "the watcher to open")
    time.sleep(0.5)
    before = rss().rss

    # MiB pushed past the stalled watcher: a daemon that kept what went past it would grow by all of it, so
    # 64 MiB (four times the 16 MiB bound) fails that; more only repeats the same blocked sends (was 192).
    pushed = scale(48, 64)
    t0 = time.monotonic()
    for _ in range(pushed):
        client.append("big", BIG_BATCH)
    push_s = (time.monotonic() - t0) / pushed
    after = rss().rss
    growth = after - before
    print(
        f"stalled watcher: pushed {pushed} MiB; daemon RSS {before / MIB:.1f} -> {after / MIB:.1f} MiB "
        f"(+{growth / MIB:.1f} MiB); append {warm_s * 1000:.1f} ms before, {push_s * 1000:.1f} ms with the stall"
    )
    assert client.stats()["active_watchers"] == 1  # bounded by backpressure, not by dropping the watcher
    assert growth < 16 * MIB, f"daemon RSS grew {growth / MIB:.1f} MiB while {pushed} MiB went past a stalled watcher"
    assert push_s < 10 * warm_s + 0.1, "appends slowed down behind a stalled watcher"

    # The watcher reads again: everything, once, in order.
    total = (warm + pushed) * len(BIG_BATCH)
    positions = [first.position] + [next(stream).position for _ in range(total - 1)]
    assert positions == list(range(1, total + 1))
    stream.close()
    watcher.close()


def test_lagged_watcher_is_told_and_the_client_resumes_from_its_position(spawn_daemon: Any) -> None:
    d: DaemonProcess = spawn_daemon("--watch-stall-s", "1")
    with d.client() as c:
        c.append("lag", Message.user("first"))
        channel = grpc.insecure_channel(d.address)
        raw = pb_grpc.SessionServiceStub(channel).Watch(pb.WatchRequest(session_id="lag"))
        assert next(raw).position == 1
        resumer = d.client()
        stream = resumer.watch("lag")
        assert next(stream).position == 1
        pushed = 8  # MiB: more than the ~4 MiB flow-control window, so both sends block
        for _ in range(pushed):
            c.append("lag", BIG_BATCH)
        total = 1 + pushed * len(BIG_BATCH)
        wait_for(lambda: d.log().count("event=watch_lagged") >= 2, 10, "both watchers to be declared lagged")

        received = [1]
        with pytest.raises(grpc.RpcError) as ended:
            for reply in raw:
                received.append(reply.position)
        err = B.error_from_rpc(ended.value)
        assert isinstance(err, WatchLaggedError) and err.reason == Reason.WATCH_LAGGED
        assert ended.value.code() == grpc.StatusCode.ABORTED
        assert received == list(range(1, len(received) + 1))
        assert len(received) < total  # cut short: the rest is for the resumed watch
        assert received[-1] >= int(err.metadata["position"])
        channel.close()

        # The client iterator resumes after the lag by itself: every event once, then new ones.
        positions = [1] + [next(stream).position for _ in range(total - 1)]
        assert positions == list(range(1, total + 1))
        c.append("lag", Message.user("after the lag"))
        event = next(stream)
        assert event.position == total + 1 and event.message is not None
        assert event.message.content == "after the lag"
        stream.close()
        resumer.close()


@pytest.mark.smoke
async def test_async_watch_sees_repairs_and_clears_after_a_position(daemon: DaemonProcess) -> None:
    # A daemon of its own: the test counts the daemon's active watchers, which another test's would change.
    c = AsyncSessionClient(address=daemon.address, autostart=False)
    try:
        await c.append("s", [Message.user("go"), Message.assistant(tool_calls=[ToolCall("call_1", "bash", "{}")])])
        events: list[WatchEvent] = []

        async def follow() -> None:
            async with contextlib.aclosing(c.watch("s", after_position=1)) as stream:
                async for event in stream:
                    events.append(event)
                    if len(events) == 4:
                        return

        task = asyncio.create_task(follow())
        for _ in range(200):
            if (await c.stats())["active_watchers"] == 1:
                break
            await asyncio.sleep(0.02)
        loaded = await c.load("s", "/tmp")  # no live owner: call_1 is repaired (position 3)
        assert [r.tool_call_id for r in loaded.repairs] == ["call_1"]
        await c.clear("s")  # position 4
        async with c.attach("s", label="async") as run:
            assert run.alive
            await c.append("s", Message.user("owned"), run_id=run.run_id)  # position 5
        assert not run.alive
        await asyncio.wait_for(task, 10)
        summary = [
            (
                e.position,
                e.cleared,
                e.message.role if e.message else None,
                e.message.synthetic_reason if e.message else "",
            )
            for e in events
        ]
        assert summary == [
            (2, False, "assistant", ""),
            (3, False, "tool", "interrupted"),
            (4, True, None, ""),
            (5, False, "user", ""),
        ]
        for _ in range(200):
            if (await c.stats())["active_watchers"] == 0:
                break
            await asyncio.sleep(0.02)
        assert (await c.stats())["active_watchers"] == 0
    finally:
        await c.close()


def test_watch_resumes_after_the_daemon_restarts(spawn_daemon: Any) -> None:
    first: DaemonProcess = spawn_daemon()
    with first.client() as c:
        c.append("r", [Message.user("1"), Message.user("2"), Message.user("3")])
    watcher = first.client(retry_window_s=20)
    collector = Collector(watcher, "r", 6)
    collector.wait_for(3, 10)
    assert first.terminate() == 0  # graceful stop ends the stream with UNAVAILABLE (shutting down)
    second: DaemonProcess = spawn_daemon()
    with second.client() as c:
        c.append("r", [Message.user("4"), Message.user("5"), Message.user("6")])
    events = collector.join(20)
    watcher.close()
    assert [e.position for e in events] == [1, 2, 3, 4, 5, 6]
    assert [e.message.content for e in events if e.message] == ["1", "2", "3", "4", "5", "6"]


def test_deleting_a_watched_session_ends_its_watch(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    client = module_client
    client.append(sid, [Message.user("1"), Message.user("2")])
    watcher = module_daemon.client()
    collector = Collector(watcher, sid, 3)
    collector.wait_for(2, 10)
    assert client.delete(sid) == 2
    with pytest.raises(SessionNotFoundError):
        collector.join(10)  # positions restart after a delete: following on would skip events
    watcher.close()
    assert [e.position for e in collector.events] == [1, 2]


def test_replacing_a_watched_session_by_import_ends_its_watch(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    client = module_client
    client.append(sid, [Message.user("a"), Message.user("b"), Message.user("c")])
    lines = list(client.export(sid))
    client.append(sid, Message.user("d"))
    watcher = module_daemon.client()
    collector = Collector(watcher, sid, 5)
    collector.wait_for(4, 10)
    client.import_lines(lines, mode="replace")  # positions go back to 1..3: the watch must not go on
    with pytest.raises(SessionNotFoundError):
        collector.join(10)
    watcher.close()
    assert [e.position for e in collector.events] == [1, 2, 3, 4]


STALLED_READER = r"""
import sys, time
from claw_sessiond_client import SessionClient
client = SessionClient(address=sys.argv[1], autostart=False)
stream = client.watch(sys.argv[2])
print(next(stream).position, flush=True)
time.sleep(120)
"""


def test_watcher_of_a_stopped_process_is_dropped_within_the_lease(spawn_daemon: Any, procs: Any) -> None:
    # Over --tcp, keepalive pings are the last resort (a vanished host leaves a half-open connection).
    port = free_port()
    d: DaemonProcess = spawn_daemon("--lease-s", "2", "--tcp", f"127.0.0.1:{port}")
    token = (d.workspace / ".claw" / "tcp-token").read_text().strip()
    with d.client() as c:
        c.append("z", Message.user("1"))
        p = subprocess.Popen(
            [sys.executable, "-c", STALLED_READER, f"127.0.0.1:{port}", "z"],
            stdout=subprocess.PIPE,
            env={**os.environ, "CLAW_TOKEN": token, "CLAW_TLS_CERT": str(d.workspace / ".claw" / "tcp-cert.pem")},
        )
        procs.append(p)
        assert p.stdout is not None and p.stdout.readline().strip() == b"1"
        assert c.stats()["active_watchers"] == 1
        os.kill(p.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        wait_for(lambda: c.stats()["active_watchers"] == 0, 2 + 3, "keepalive to drop the stopped watcher")
        print(f"stopped watcher dropped after {time.monotonic() - t0:.2f}s")
        c.append("z", Message.user("2"))  # writers are unaffected either way
    os.kill(p.pid, signal.SIGCONT)
    p.stdout.close()


def test_watcher_of_a_stopped_process_on_the_unix_socket_stays_until_it_exits(spawn_daemon: Any, procs: Any) -> None:
    # The Unix socket sends no pings: a stopped process is not a dead one; its exit closes the socket at once.
    d: DaemonProcess = spawn_daemon("--lease-s", "1")
    with d.client() as c:
        c.append("z", Message.user("1"))
        p = subprocess.Popen([sys.executable, "-c", STALLED_READER, d.address, "z"], stdout=subprocess.PIPE)
        procs.append(p)
        assert p.stdout is not None and p.stdout.readline().strip() == b"1"
        os.kill(p.pid, signal.SIGSTOP)
        time.sleep(3)
        assert c.stats()["active_watchers"] == 1
        os.kill(p.pid, signal.SIGKILL)
        p.wait(10)
        wait_for(lambda: c.stats()["active_watchers"] == 0, 3, "the killed watcher's stream to end")
    p.stdout.close()
