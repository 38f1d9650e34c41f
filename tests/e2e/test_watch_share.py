"""Watch keeps up and cannot be hogged: batched replies, lagged streams freeing their slot, a per-peer share.

Real daemon subprocesses on real sockets (and a real TCP port for the
per-peer share), raw gRPC stubs where the test must see the messages
themselves, the Python client where it must see events. Correctness only:
how fast a watcher keeps up is measured in ``bench/`` (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from claw_sessiond.watch import WATCH_BATCH_EVENTS, WATCH_MESSAGE_BYTES
from claw_sessiond_client import Message, Reason, ResourceLimitError, WatchLaggedError
from claw_sessiond_client import _status as B
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess, free_port
from tests.helpers.process import wait_for
from tests.helpers.tiers import scale

#: 16 messages of 64 KiB: one MiB per Append (more than the flow-control window after a few).
BIG_BATCH = [Message.user("x" * (64 * 1024)) for _ in range(16)]

WRITER = r"""
import sys
from claw_sessiond_client import Message, SessionClient
address, session, name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
client = SessionClient(address=address, autostart=False)
for i in range(n):
    client.append(session, [Message.user(f"{name}:{i}:{k}") for k in range(4)])
"""


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes started by a test; each is stopped by its pid at teardown, and its pipes closed."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for p in started:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
        p.wait(10)
        for pipe in (p.stdin, p.stdout):
            if pipe is not None:
                pipe.close()


def _active(d: DaemonProcess) -> int:
    with d.client() as c:
        return int(c.stats()["active_watchers"])


def _lag(d: DaemonProcess, session: str, lags: int = 1) -> tuple[grpc.Channel, Any]:
    """A raw Watch of ``session`` that reads its first event, then nothing while 8 MiB are appended
    (returns once the daemon has logged ``lags`` lagged watchers)."""
    channel = grpc.insecure_channel(d.address)
    call = pb_grpc.SessionServiceStub(channel).Watch(pb.WatchRequest(session_id=session, batch=True))
    assert next(call).events[0].position == 1
    with d.client() as c:
        for _ in range(8):
            c.append(session, BIG_BATCH)
    wait_for(lambda: d.log().count("event=watch_lagged") >= lags, 20, "the stalled watcher to be declared lagged")
    return channel, call


def test_a_watcher_receives_every_event_once_in_order_while_eight_writers_append(
    module_daemon: DaemonProcess, sid: str, procs: Any
) -> None:
    daemon = module_daemon
    per_writer = scale(100, 500)
    total = 8 * per_writer * 4
    with daemon.client() as watcher, daemon.client() as c:
        c.append(sid, Message.user("seed"))
        stream = watcher.watch(sid, after_position=1)
        writers = [
            subprocess.Popen([sys.executable, "-c", WRITER, daemon.address, sid, f"w{i}", str(per_writer)])
            for i in range(8)
        ]
        procs.extend(writers)
        events = []
        deadline = time.monotonic() + 180
        for event in stream:
            events.append(event)
            if len(events) == total:
                break
            assert time.monotonic() < deadline, f"the watcher has {len(events)} of {total} events"
        stream.close()
        for p in writers:
            assert p.wait(60) == 0
        assert [e.position for e in events] == list(range(2, total + 2))  # no gap, no duplicate
        contents = [e.message.content for e in events if e.message is not None]
        assert len(contents) == total == len(set(contents))
        for i in range(8):  # each writer's own order, and each append's four messages adjacent
            assert [x for x in contents if x.startswith(f"w{i}:")] == [
                f"w{i}:{n}:{k}" for n in range(per_writer) for k in range(4)
            ]
        loaded = c.load(sid, "/tmp").messages
        assert [m.content for m in loaded[1:]] == contents


def test_catch_up_on_ten_thousand_entries_comes_in_batches_every_event_once(
    module_daemon: DaemonProcess, sid: str
) -> None:
    daemon = module_daemon
    total = 10_000
    with daemon.client() as c:
        for i in range(0, total, 1000):
            c.append(sid, [Message.user(f"m{i + j}") for j in range(1000)])
        channel = grpc.insecure_channel(daemon.address)
        try:
            call = pb_grpc.SessionServiceStub(channel).Watch(pb.WatchRequest(session_id=sid, batch=True))
            positions: list[int] = []
            messages = 0
            for reply in call:
                messages += 1
                assert reply.events and not reply.HasField("message")  # a batch: the events inside
                assert len(reply.events) <= WATCH_BATCH_EVENTS and reply.ByteSize() <= WATCH_MESSAGE_BYTES + 64
                for event in reply.events:
                    assert event.message.content == f"m{event.position - 1}" and event.incarnation
                    positions.append(event.position)
                if len(positions) >= total:
                    break
            call.cancel()
            assert positions == list(range(1, total + 1))
            assert messages <= total // 64, f"{messages} messages for {total} events: not batched"

            # A client that does not ask for batches still gets one event per message.
            old = pb_grpc.SessionServiceStub(channel).Watch(pb.WatchRequest(session_id=sid, after_position=9990))
            singles = [next(old) for _ in range(10)]
            old.cancel()
            assert [r.position for r in singles] == list(range(9991, 10_001))
            assert all(not r.events and r.message.content == f"m{r.position - 1}" for r in singles)
        finally:
            channel.close()


@pytest.mark.smoke
def test_watch_all_in_batches_delivers_every_event_once(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        for s in ("a", "b", "c"):
            c.append(s, [Message.user(f"{s}{i}") for i in range(300)])
        channel = grpc.insecure_channel(daemon.address)
        try:
            call = pb_grpc.SessionServiceStub(channel).WatchAll(pb.WatchAllRequest(last=900, batch=True))
            start = next(call)
            assert start.started and not start.events
            got: list[pb.WatchAllResponse] = []
            messages = 0
            for reply in call:
                messages += 1
                got.extend(reply.events)
                if len(got) >= 900:
                    break
            call.cancel()
            assert [e.event_id for e in got] == sorted({e.event_id for e in got})
            assert [(e.session_id, e.message.content) for e in got] == [
                (s, f"{s}{i}") for s in ("a", "b", "c") for i in range(300)
            ]
            assert messages < 900 // 64
        finally:
            channel.close()
        # The client's follow-all unpacks them.
        follow = c.watch_all(last=900)
        assert [next(follow).message.content for _ in range(3)] == ["a0", "a1", "a2"]  # type: ignore[union-attr]
        follow.close()


def test_a_lagged_stream_frees_its_slot_while_its_connection_stays_open(spawn_daemon: Any) -> None:
    d: DaemonProcess = spawn_daemon("--max-watchers", "1", "--watch-stall-s", "1")
    with d.client() as c:
        c.append("lag", Message.user("first"))
        channel, stalled = _lag(d, "lag")
        try:
            # The stalled stream's client still holds its connection and has read nothing more;
            # its slot is free, so another Watch (the only one --max-watchers allows) is served.
            wait_for(lambda: _active(d) == 0, 10, "the lagged stream's slot to be released")
            other = d.client()
            follow = other.watch("lag")
            assert next(follow).position == 1
            assert _active(d) == 1
            follow.close()
            other.close()

            # The stalled client, reading again, gets the events in its window, then WATCH_LAGGED.
            received = [1]
            with pytest.raises(grpc.RpcError) as ended:
                for reply in stalled:
                    received.extend(e.position for e in reply.events)
            err = B.error_from_rpc(ended.value)
            assert isinstance(err, WatchLaggedError) and err.reason == Reason.WATCH_LAGGED
            assert received == list(range(1, len(received) + 1))
            assert received[-1] >= int(err.metadata["position"])
        finally:
            channel.close()


def test_at_most_max_watchers_lagged_streams_drain_beyond_their_slots(spawn_daemon: Any) -> None:
    d: DaemonProcess = spawn_daemon("--max-watchers", "1", "--watch-stall-s", "1")
    with d.client() as c:
        c.append("a", Message.user("first"))
        c.append("b", Message.user("first"))
    first, _ = _lag(d, "a")
    second: grpc.Channel | None = None
    try:
        wait_for(lambda: _active(d) == 0, 10, "the first lagged stream's slot to be released")
        # One lagged stream is draining (the bound is --max-watchers = 1): the next one keeps its slot.
        second, _ = _lag(d, "b", lags=2)
        time.sleep(1)  # a few sweeps of the stall sweeper
        assert _active(d) == 1
        with d.client() as c, pytest.raises(ResourceLimitError) as refused:
            next(iter(c.watch("a")))
        assert refused.value.reason == Reason.TOO_MANY_STREAMS
        # Its client goes away: the slot is free again.
        second.close()
        wait_for(lambda: _active(d) == 0, 10, "the second stream's slot to be released when its client left")
    finally:
        first.close()
        if second is not None:
            second.close()


def test_cancelling_a_lagged_watch_logs_no_error(spawn_daemon: Any) -> None:
    d: DaemonProcess = spawn_daemon("--watch-stall-s", "1")
    with d.client() as c:
        c.append("gone", Message.user("first"))
    channel, stalled = _lag(d, "gone")
    stalled.cancel()  # an ordinary client cancel, while the lag status waits behind unread events
    channel.close()
    wait_for(lambda: _active(d) == 0, 10, "the watch to close")
    with d.client() as c:  # the daemon serves on, and the session can be watched again
        c.append("gone", Message.user("after"))
        follow = c.watch("gone", after_position=len(BIG_BATCH) * 8 + 1)
        assert next(follow).message.content == "after"  # type: ignore[union-attr]
        follow.close()
    log = d.log()
    assert "Traceback" not in log, log[-3000:]
    assert not [line for line in log.splitlines() if " ERROR " in line or "level=ERROR" in line], log[-3000:]


def _tcp_stub(address: str, token: str, cert: Path) -> tuple[grpc.Channel, Any, tuple[tuple[str, str], ...]]:
    """A stub on its own TCP connection (no subchannel shared with other channels), over the port's TLS."""
    credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
    options = [("grpc.use_local_subchannel_pool", 1), ("grpc.ssl_target_name_override", "claw-sessiond")]
    channel = grpc.secure_channel(address, credentials, options=options)
    return channel, pb_grpc.SessionServiceStub(channel), (("authorization", f"Bearer {token}"),)


def test_one_peer_gets_its_share_of_watch_streams_and_another_peer_still_gets_one(spawn_daemon: Any) -> None:
    port = free_port()
    d: DaemonProcess = spawn_daemon("--tcp", f"127.0.0.1:{port}", "--max-watchers", "6", "--max-watchers-per-peer", "3")
    token = (Path(d.workspace) / ".claw" / "tcp-token").read_text().strip()
    address = f"127.0.0.1:{port}"
    with d.client() as c:
        c.append("w", Message.user("hello"))
    greedy, stub, auth = _tcp_stub(address, token, Path(d.workspace) / ".claw" / "tcp-cert.pem")
    polite, stub2, _ = _tcp_stub(address, token, Path(d.workspace) / ".claw" / "tcp-cert.pem")
    calls: list[Any] = []
    try:
        for _ in range(3):
            calls.append(stub.Watch(pb.WatchRequest(session_id="w", batch=True), metadata=auth))
            assert next(calls[-1]).events[0].position == 1
        refused = stub.Watch(pb.WatchRequest(session_id="w", batch=True), metadata=auth)
        with pytest.raises(grpc.RpcError) as info:
            next(refused)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        err = B.error_from_rpc(info.value)
        assert isinstance(err, ResourceLimitError) and err.reason == Reason.TOO_MANY_STREAMS
        assert err.metadata == {"limit": "3", "scope": "peer"}
        assert "--max-watchers-per-peer" in err.message
        assert _active(d) == 3  # the refused one holds nothing

        # Another connection is another peer: it is served, and so is the owner's Unix socket.
        calls.append(stub2.Watch(pb.WatchRequest(session_id="w", batch=True), metadata=auth))
        assert next(calls[-1]).events[0].position == 1
        with d.client() as c:
            follow = c.watch("w")
            assert next(follow).position == 1
            follow.close()

        # The greedy peer closes one: its share has room again.
        calls.pop(0).cancel()
        wait_for(lambda: _active(d) == 3, 10, "the cancelled watch to close")
        calls.append(stub.Watch(pb.WatchRequest(session_id="w", batch=True), metadata=auth))
        assert next(calls[-1]).events[0].position == 1
    finally:
        for call in calls:
            call.cancel()
        greedy.close()
        polite.close()


def test_the_per_peer_share_must_be_positive(spawn_daemon: Any) -> None:
    d: DaemonProcess = spawn_daemon("--max-watchers-per-peer", "0", start=False)
    proc = d.spawn()
    assert proc.wait(30) != 0
    text = d.log()
    assert "max_watchers_per_peer" in text and "must be positive" in text
    assert "Traceback" not in text


#: A client process that opens two Watches and a follow-all, then one Watch more, reports, and
#: holds its streams until its stdin closes.
GREEDY = r"""
import json, sys
from claw_sessiond_client import ResourceLimitError, SessionClient
address, session = sys.argv[1], sys.argv[2]
client = SessionClient(address=address, autostart=False)
streams = [client.watch(session), client.watch(session), client.watch_all(last=1)]
for s in streams:
    next(s)
try:
    next(client.watch(session))
    print(json.dumps({"refused": None}), flush=True)
except ResourceLimitError as err:
    print(json.dumps({"refused": str(err.reason), "metadata": dict(err.metadata), "message": err.message}), flush=True)
sys.stdin.read()
"""

#: A client process that opens one Watch, reads its first event and says so.
ONE = r"""
import sys
from claw_sessiond_client import SessionClient
client = SessionClient(address=sys.argv[1], autostart=False)
print(next(client.watch(sys.argv[2])).position, flush=True)
"""


def _raw_watch(channel: grpc.Channel, pid: int = 0) -> Any:
    """A Watch of session ``w`` on a raw stub, declaring ``pid`` (0: none); its first reply is read."""
    call = pb_grpc.SessionServiceStub(channel).Watch(pb.WatchRequest(session_id="w", batch=True, pid=pid))
    assert next(call).events[0].position == 1
    return call


def _refused_by_share(channel: grpc.Channel, pid: int = 0) -> None:
    call = pb_grpc.SessionServiceStub(channel).Watch(pb.WatchRequest(session_id="w", batch=True, pid=pid))
    with pytest.raises(grpc.RpcError) as info:
        next(call)
    err = B.error_from_rpc(info.value)
    assert isinstance(err, ResourceLimitError) and err.reason == Reason.TOO_MANY_STREAMS
    assert err.metadata == {"limit": "3", "scope": "peer"}


def test_on_the_unix_socket_each_client_process_gets_its_share_and_unverified_callers_share_one(
    spawn_daemon: Any, procs: Any
) -> None:
    d: DaemonProcess = spawn_daemon("--max-watchers", "6", "--max-watchers-per-peer", "3")
    with d.client() as c:
        c.append("w", Message.user("hello"))
    # One client process opens its share (two Watches and a follow-all: both count alike);
    # its fourth stream is refused with scope=peer.
    greedy = subprocess.Popen(
        [sys.executable, "-c", GREEDY, d.address, "w"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    procs.append(greedy)
    assert greedy.stdout is not None and greedy.stdin is not None
    report = json.loads(greedy.stdout.readline())
    assert report["refused"] == str(Reason.TOO_MANY_STREAMS), report
    assert report["metadata"] == {"limit": "3", "scope": "peer"}
    assert "--max-watchers-per-peer" in report["message"]
    assert _active(d) == 3
    # Another client process is another peer: it is served while the first holds its share.
    one = subprocess.run([sys.executable, "-c", ONE, d.address, "w"], capture_output=True, timeout=60)
    assert one.returncode == 0 and one.stdout.strip() == b"1", one.stderr.decode()[-2000:]
    greedy.stdin.close()
    assert greedy.wait(30) == 0
    wait_for(lambda: _active(d) == 0, 10, "the greedy process's streams to close")

    # Callers the kernel does not confirm share one peer: no pid (grpcurl, a raw stub), pid 1
    # (a process holding no connection to the socket), the pid of a live process of the same
    # user that holds none either.
    bystander = subprocess.Popen(["sleep", "300"])
    procs.append(bystander)
    channel = grpc.insecure_channel(d.address)
    calls: list[Any] = []
    try:
        calls += [_raw_watch(channel), _raw_watch(channel, pid=1), _raw_watch(channel, pid=bystander.pid)]
        _refused_by_share(channel)
        _refused_by_share(channel, pid=1)
        _refused_by_share(channel, pid=bystander.pid)
        assert _active(d) == 3
        # A client process that names itself is still served beside them.
        one = subprocess.run([sys.executable, "-c", ONE, d.address, "w"], capture_output=True, timeout=60)
        assert one.returncode == 0 and one.stdout.strip() == b"1", one.stderr.decode()[-2000:]
        # So is this process, declaring its own pid (it holds the channel's connection).
        calls.append(_raw_watch(channel, pid=os.getpid()))
        # An out-of-range pid is a clear INVALID_ARGUMENT, not a stream.
        bad = pb_grpc.SessionServiceStub(channel).Watch(pb.WatchRequest(session_id="w", pid=-5))
        with pytest.raises(grpc.RpcError) as info:
            next(bad)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "pid" in str(info.value.details())
        bad_all = pb_grpc.SessionServiceStub(channel).WatchAll(pb.WatchAllRequest(pid=-5))
        with pytest.raises(grpc.RpcError) as info:
            next(bad_all)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        for call in calls:
            call.cancel()
        channel.close()
