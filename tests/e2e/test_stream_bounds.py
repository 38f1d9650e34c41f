"""Stalled readers hold a bounded amount; free-form strings are capped; paged Load keeps its order.

A client that opens Load, Export or Watch on a big session and never reads
must not make the daemon hold the session (or more) per stream: the daemon
reads storage page by page and only after the previous page went to the
transport, so each stalled stream holds about one page plus what gRPC
buffers before its flow control stops the handler (measured here as
daemon RSS growth, psutil). The oversized-string checks cover the request
fields that had no cap.
"""

from __future__ import annotations

import json
import string
import time
from pathlib import Path
from typing import Any

import grpc
import psutil
import pytest

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess
from tests.helpers.inspect import stored
from tests.helpers.tiers import scale

MIB = 1024 * 1024
#: Documented bound (README, "Bounds"): a stalled stream holds at most about this much.
PER_STREAM_BOUND = 16 * MIB
#: Allocator and gRPC slack not tied to one stream.
SLACK = 48 * MIB


def _stub(address: str) -> tuple[grpc.Channel, Any]:
    # A channel of its own per stream (no shared subchannel): each stalled
    # stream gets its own HTTP/2 connection window, the harshest case.
    channel = grpc.insecure_channel(
        address, options=[("grpc.use_local_subchannel_pool", 1), ("grpc.max_receive_message_length", 64 * MIB)]
    )
    return channel, pb_grpc.SessionServiceStub(channel)


def _fill(daemon: DaemonProcess, session_id: str, messages: int, size: int) -> None:
    """A session of ``messages`` messages of about ``size`` bytes each (Appends of one message)."""
    channel, stub = _stub(daemon.address)
    try:
        body = "x" * size
        for i in range(messages):
            stub.Append(
                pb.AppendRequest(
                    session_id=session_id,
                    messages=[pb.Message(role=pb.ROLE_USER, content=f"{i}:{body}")],
                ),
                timeout=30,
            )
    finally:
        channel.close()


def _rss(pid: int) -> int:
    return int(psutil.Process(pid).memory_info().rss)


def _settled_rss(pid: int, seconds: float) -> int:
    """RSS after the daemon stopped growing (or after ``seconds``), the highest value seen."""
    end = time.monotonic() + seconds
    high = _rss(pid)
    last_change = time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.2)
        now = _rss(pid)
        if now > high + MIB:
            high, last_change = now, time.monotonic()
        elif time.monotonic() - last_change > 2.0:
            break
    return max(high, _rss(pid))


def test_stalled_load_export_watch_hold_a_bounded_amount(spawn_daemon: Any, workspace: Path) -> None:
    daemon: DaemonProcess = spawn_daemon()
    assert daemon.proc is not None
    # ~30 MB: 32 messages of ~0.9 MB (under the 1 MiB message limit).
    count, size = scale(32, 64), 900_000
    _fill(daemon, "big", count, size)
    session_bytes = count * size
    per_kind = scale(2, 4)
    opened: list[tuple[grpc.Channel, Any]] = []
    base = _settled_rss(daemon.proc.pid, 3)
    try:
        for _ in range(per_kind):
            for kind in ("load", "export", "watch"):
                channel, stub = _stub(daemon.address)
                if kind == "load":
                    call = stub.Load(pb.LoadRequest(session_id="big", workdir=str(workspace)), timeout=60)
                elif kind == "export":
                    call = stub.Export(pb.ExportRequest(session_id="big"), timeout=60)
                else:
                    call = stub.Watch(pb.WatchRequest(session_id="big"), timeout=60)
                opened.append((channel, call))  # never read
        time.sleep(1.0)
        grown = _settled_rss(daemon.proc.pid, 15) - base
        streams = len(opened)
        bound = streams * PER_STREAM_BOUND + SLACK
        print(
            f"\nstalled streams: {streams} on a {session_bytes / MIB:.0f} MiB session; "
            f"daemon RSS grew {grown / MIB:.1f} MiB (bound {bound / MIB:.0f} MiB)"
        )
        assert grown < bound, (
            f"{streams} stalled streams made the daemon grow by {grown / MIB:.1f} MiB "
            f"(bound {bound / MIB:.0f} MiB; the session is {session_bytes / MIB:.0f} MiB)"
        )
        # The daemon still serves everyone else meanwhile.
        channel, stub = _stub(daemon.address)
        with channel:
            stats = stub.GetStats(pb.GetStatsRequest(), timeout=10)
            assert stats.events == count
    finally:
        for channel, call in opened:
            call.cancel()
            channel.close()


@pytest.mark.both_backends("a stalled Load must not hold one of the pool's PostgreSQL connections")
def test_a_stalled_load_does_not_hold_a_read_connection(spawn_daemon: Any, workspace: Path) -> None:
    """Three stalled Loads (more than the two read connections) leave other reads unhindered."""
    daemon: DaemonProcess = spawn_daemon()
    _fill(daemon, "big", 24, 900_000)
    opened = []
    try:
        for _ in range(3):
            channel, stub = _stub(daemon.address)
            opened.append((channel, stub.Load(pb.LoadRequest(session_id="big", workdir=str(workspace)), timeout=60)))
        time.sleep(1.0)
        channel, stub = _stub(daemon.address)
        with channel:
            started = time.monotonic()
            for i in range(20):
                chunks = list(stub.Load(pb.LoadRequest(session_id=f"small-{i}", workdir=str(workspace)), timeout=10))
                assert chunks[-1].done
            assert time.monotonic() - started < 10
    finally:
        for channel, call in opened:
            call.cancel()
            channel.close()


@pytest.mark.smoke
@pytest.mark.parametrize(
    ("rpc", "field"),
    [("Attach", "label"), ("ListSessions", "id_contains"), ("Append", "run_id")],
)
def test_oversized_free_form_strings_are_refused(module_daemon: DaemonProcess, sid: str, rpc: str, field: str) -> None:
    channel, stub = _stub(module_daemon.address)
    big = "l" * (64 * 1024)
    with channel:
        with pytest.raises(grpc.RpcError) as err:
            if rpc == "Attach":
                call = stub.Attach(pb.AttachRequest(session_id=sid, pid=1, label=big), timeout=10)
                next(iter(call))
            elif rpc == "ListSessions":
                stub.ListSessions(pb.ListSessionsRequest(id_contains=big), timeout=10)
            else:
                stub.Append(
                    pb.AppendRequest(
                        session_id=sid, run_id=big, messages=[pb.Message(role=pb.ROLE_USER, content="hi")]
                    ),
                    timeout=10,
                )
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value
        assert field in (err.value.details() or "")
        # At the cap it is accepted (Attach label of 256 bytes).
        if rpc == "Attach":
            call = stub.Attach(pb.AttachRequest(session_id=sid, pid=1, label="l" * 256), timeout=10)
            assert next(iter(call)).run_id
            call.cancel()


def _turns(n: int) -> list[pb.Message]:
    """n turns: user, assistant with two calls, the result of the first call only."""
    out: list[pb.Message] = []
    for i in range(n):
        out.append(pb.Message(role=pb.ROLE_USER, content=f"u{i}"))
        out.append(
            pb.Message(
                role=pb.ROLE_ASSISTANT,
                content=f"a{i}",
                tool_calls=[
                    pb.ToolCall(id=f"c{i}-1", name="read", arguments="{}"),
                    pb.ToolCall(id=f"c{i}-2", name="bash", arguments='{"cmd":"ls"}'),
                ],
            )
        )
        out.append(pb.Message(role=pb.ROLE_TOOL, tool_call_id=f"c{i}-1", content=f"r{i}"))
    return out


def test_paged_load_keeps_conversation_order_and_repairs_once(module_daemon: DaemonProcess, sid: str) -> None:
    """A history of many pages: each assistant is followed by its results, repairs placed right after it."""
    # 1,201 messages stored and 399 repairs: a Load of several pages of 512, repairs placed on every page,
    # the far result stored on the last page and placed on the first. A longer history only adds pages of the
    # same kind (the full tier ran 2,000 turns, with a raised open-call limit), so both tiers run this size.
    turns = 400
    channel, stub = _stub(module_daemon.address)
    with channel:
        messages = _turns(turns)
        for i in range(0, len(messages), 300):
            stub.Append(pb.AppendRequest(session_id=sid, messages=messages[i : i + 300]), timeout=30)
        # A late result of an early call, stored after later turns (a "far" result).
        stub.Append(
            pb.AppendRequest(
                session_id=sid, messages=[pb.Message(role=pb.ROLE_TOOL, tool_call_id="c0-2", content="late")]
            ),
            timeout=30,
        )

        def load() -> tuple[list[pb.LoadResponse], list[pb.Message]]:
            chunks = list(stub.Load(pb.LoadRequest(session_id=sid, workdir=str(module_daemon.workspace)), timeout=60))
            assert chunks[-1].done
            return chunks, [m for c in chunks for m in c.messages]

        chunks, got = load()
        assert len(chunks[0].repairs) == turns - 1  # every second call but c0-2 was interrupted
        expected: list[tuple[int, str]] = []
        for i in range(turns):
            expected += [(pb.ROLE_USER, f"u{i}"), (pb.ROLE_ASSISTANT, f"a{i}"), (pb.ROLE_TOOL, f"c{i}-1")]
            expected.append((pb.ROLE_TOOL, f"c{i}-2"))
        shape = [(m.role, m.content if m.role != pb.ROLE_TOOL else m.tool_call_id) for m in got]
        assert shape == expected
        assert got[3].content == "late"
        assert all(m.synthetic.reason == pb.SYNTHETIC_REASON_INTERRUPTED for m in got[7::4])
        positions = [m.position for m in got]
        assert len(set(positions)) == len(positions)
        # Loading again repairs nothing and returns the same history.
        chunks2, got2 = load()
        assert not chunks2[0].repairs
        assert [(m.position, m.content, m.tool_call_id) for m in got2] == [
            (m.position, m.content, m.tool_call_id) for m in got
        ]


def test_paged_export_round_trips_byte_identical(
    module_daemon: DaemonProcess, sid: str, spawn_daemon: Any, tmp_path: Path
) -> None:
    """An export of several pages (events of every kind) imports and exports again to the same bytes."""
    events = 1_300  # > 2 pages of 512 and a partial third: every page boundary there is (the full tier ran 5,000)
    channel, stub = _stub(module_daemon.address)
    with channel:
        msgs = [pb.Message(role=pb.ROLE_USER, content=f"m{i}") for i in range(events)]
        for i in range(0, events, 400):
            stub.Append(pb.AppendRequest(session_id=sid, messages=msgs[i : i + 400]), timeout=30)
            stub.RecordUsage(pb.RecordUsageRequest(session_id=sid, input_tokens=i + 1), timeout=30)
        stub.Clear(pb.ClearRequest(session_id=sid), timeout=30)
        first = [r.line for r in stub.Export(pb.ExportRequest(session_id=sid), timeout=60)]
    header = json.loads(first[0])
    assert header["events"] == len(first) - 1 > 2 * 512
    assert [json.loads(line)["event_id"] for line in first[1:]] == list(range(1, len(first)))
    two: DaemonProcess = spawn_daemon(workspace_path=_mkdir(tmp_path / "two"))  # a store without the session
    channel, stub = _stub(two.address)
    with channel:
        stub.Import(pb.ImportRequest(lines=first), timeout=60)
        again = [r.line for r in stub.Export(pb.ExportRequest(session_id=sid), timeout=60)]
    assert again == first


def test_chunked_list_sessions_matches_one_query(spawn_daemon: Any, workspace: Path) -> None:
    """ListSessions walks the sessions in chunks; the answer is the one the single query gave."""
    daemon: DaemonProcess = spawn_daemon()
    n = 2_600  # > 2 chunks of 1000 and a partial third, limits inside, across and past them (the full tier ran 12,000)
    channel, stub = _stub(daemon.address)
    with channel:

        def appends() -> Any:
            for start in range(0, n, 500):
                yield pb.AppendStreamRequest(
                    appends=[
                        pb.AppendRequest(
                            session_id=f"{'odd' if i % 2 else 'even'}_{i:05d}",
                            messages=[pb.Message(role=pb.ROLE_USER, content="x")],
                        )
                        for i in range(start, min(n, start + 500))
                    ]
                )

        for reply in stub.AppendStream(appends(), timeout=120):
            assert all(not r.HasField("error") for r in reply.replies)
        sessions = stored(workspace).sessions()
        for contains, limit in (("", 100), ("odd", 10_000), ("d_0", 37), ("nomatch", 10_000), ("_", 1500)):
            got = [s.id for s in stub.ListSessions(pb.ListSessionsRequest(id_contains=contains, limit=limit)).sessions]
            # The single query: ids that contain the text (ASCII letters in either case, as SQL LIKE
            # matches), the latest change first, then by id; the first ``limit`` of them.
            matching = sorted(
                (s for s in sessions if _fold(contains) in _fold(s.session_id)), key=lambda s: s.session_id
            )
            matching.sort(key=lambda s: s.updated_at, reverse=True)  # stable: ids stay in order within a time
            want = [s.session_id for s in matching[:limit]]
            assert got == want, (contains, limit, len(got), len(want))


def _fold(text: str) -> str:
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path
