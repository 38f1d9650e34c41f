"""``claw-sessiond follow`` (Watch and WatchAll): real daemon, the CLI as a subprocess, Ctrl-C as SIGINT.

One session (``--json``, ``-n``, ``--from-start``, clears, terminal-safe
text), every session (lines prefixed with the session id, event-id order
across sessions), a quiet exit 0 on Ctrl-C, and a stalled WatchAll reader
cut off with WATCH_LAGGED instead of holding memory.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any

import grpc
import pytest

from claw_sessiond_client import Message
from claw_sessiond_client import _status as B
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from claw_sessiond_client.errors import Reason, WatchLaggedError
from tests.helpers.daemon import DaemonProcess
from tests.helpers.process import wait_for

BIG_BATCH = [Message.user("x" * 60_000) for _ in range(16)]  # ~1 MiB per append


class Follower:
    """A ``claw-sessiond follow`` subprocess whose stdout lines are read on a thread."""

    def __init__(self, daemon: DaemonProcess, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "claw_sessiond", "follow", "--socket", str(daemon.socket_path), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=daemon.workspace,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                self.lines.put(line.rstrip("\n"))
        except ValueError:  # the test closed the pipe (teardown) while this thread was still reading it
            pass
        self.lines.put(None)

    def next(self, timeout_s: float = 15) -> str:
        line = self.lines.get(timeout=timeout_s)
        assert line is not None, f"follow ended: {self.stop()}"
        return line

    def take(self, n: int, timeout_s: float = 15) -> list[str]:
        return [self.next(timeout_s) for _ in range(n)]

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C: SIGINT, then the exit code and stderr."""
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=15)
        return self.proc.returncode, err

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.terminate()
        _, err = self.proc.communicate(timeout=15)
        return self.proc.returncode, err


@pytest.mark.smoke
def test_follow_one_session_json_lines_and_ctrl_c_exits_0(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    with daemon.client() as c:
        c.append(sid, [Message.user("one"), Message.user("two"), Message.user("three")])
        f = Follower(daemon, sid, "-n", "1", "--json")
        try:
            first = json.loads(f.next())
            assert first == {
                "format": 1,
                "session_id": sid,
                "position": 3,
                "cleared": False,
                "message": {"role": "user", "content": "three", "created_at": first["message"]["created_at"]},
            }
            c.append(sid, Message.user("four"))
            c.append(f"{sid}-other", Message.user("not followed"))
            c.clear(sid)
            c.append(sid, Message.user("after the clear"))
            got = [json.loads(line) for line in f.take(3)]
            assert [(g["position"], g["cleared"]) for g in got] == [(4, False), (5, True), (6, False)]
            assert got[0]["message"]["content"] == "four" and "message" not in got[1]
        finally:
            code, err = f.interrupt()
        assert code == 0 and err == ""

        whole = Follower(daemon, sid, "--from-start")
        try:
            lines = whole.take(2)
            assert lines == ["#1 user", "  one"]
        finally:
            code, err = whole.interrupt()
        assert code == 0 and err == ""


def test_follow_all_sessions_prefixes_ids_and_is_terminal_safe(module_daemon: DaemonProcess, sid: str) -> None:
    daemon, old, a, b = module_daemon, f"{sid}-old", f"{sid}-a", f"{sid}-b"
    with daemon.client() as c:
        wait_for(lambda: c.stats()["active_watchers"] == 0, 20, "the followers of earlier tests to be gone")
        c.append(old, Message.user("before"))
        f = Follower(daemon, "-n", "1")  # the store's last event: the one just appended
        try:
            assert f.take(2) == [f"{old} #1 user", "  before"]
            c.append(a, Message.user("hello \x1b]0;pwned\x07 there"))
            c.append(b, [Message.user("multi\nline"), Message.assistant("ok")])
            c.append(a, Message.user("again"))
            lines = f.take(9)
            assert lines == [
                f"{a} #1 user",
                "  hello \\x1b]0;pwned\\x07 there",
                f"{b} #1 user",
                "  multi",
                "  line",
                f"{b} #2 assistant",
                "  ok",
                f"{a} #2 user",
                "  again",
            ]
        finally:
            code, err = f.interrupt()
        assert code == 0 and err == ""

        wait_for(lambda: c.stats()["active_watchers"] == 0, 20, "the first follower to be gone")
        j = Follower(daemon, "--json")
        try:
            # A follow without -n starts at what is stored when it connects: wait until it has.
            wait_for(lambda: c.stats()["active_watchers"] == 1, 20, "the follower to connect")
            c.append(b, Message.user("late"))
            event = json.loads(j.next())
            assert event["format"] == 1 and event["session_id"] == b and event["position"] == 3
            assert event["event_id"] > 0 and event["message"]["content"] == "late"
        finally:
            code, _ = j.interrupt()
        assert code == 0


def test_follow_usage_errors_exit_2(module_daemon: DaemonProcess) -> None:
    daemon = module_daemon

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "claw_sessiond", "follow", "--socket", str(daemon.socket_path), *args],
            capture_output=True,
            text=True,
            timeout=30,
        )

    assert run("--from-start").returncode == 2  # needs a session
    assert run("-n", "5000").returncode == 2
    assert run("s", "--from-start", "-n", "2").returncode == 2
    bad = run("../x")
    assert bad.returncode == 2 and "session id" in bad.stderr


def test_a_stalled_follow_all_reader_is_cut_off_not_buffered(spawn_daemon: Any) -> None:
    d: DaemonProcess = spawn_daemon("--watch-stall-s", "1")
    with d.client() as c:
        c.append("lag", Message.user("first"))
        channel = grpc.insecure_channel(d.address)
        raw = pb_grpc.SessionServiceStub(channel).WatchAll(pb.WatchAllRequest(last=1))
        assert next(raw).started  # the start marker
        first = next(raw)
        assert first.session_id == "lag" and first.position == 1
        pushed = 8  # MiB: more than the ~4 MiB flow-control window, so the daemon's send blocks
        for _ in range(pushed):
            c.append("lag", BIG_BATCH)
        wait_for(lambda: d.log().count("event=watch_lagged") >= 1, 15, "the follower to be declared lagged")
        received = [first.event_id]
        with pytest.raises(grpc.RpcError) as ended:
            for reply in raw:
                received.append(reply.event_id)
        err = B.error_from_rpc(ended.value)
        assert isinstance(err, WatchLaggedError) and err.reason == Reason.WATCH_LAGGED
        assert received == sorted(received) and len(received) < 1 + pushed * len(BIG_BATCH)
        channel.close()
        wait_for(lambda: c.stats()["active_watchers"] == 0, 10, "the watcher to be released")

        # The client's watch_all with last=N starts with the last N history events, in order.
        with d.client() as w:
            stream = w.watch_all(last=3)
            got = [next(stream) for _ in range(3)]
            assert [(e.session_id, e.position) for e in got] == [("lag", 127), ("lag", 128), ("lag", 129)]
            stream.close()


def test_follow_all_resumes_from_its_start_even_before_any_event(spawn_daemon: Any) -> None:
    first: DaemonProcess = spawn_daemon()
    # On the wire: a fresh stream first says where it starts (0 on an empty database).
    with grpc.insecure_channel(first.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        call = stub.WatchAll(pb.WatchAllRequest())
        marker = next(call)
        assert marker.started and marker.event_id == 0 and not marker.session_id
        call.cancel()
    with first.client() as c:
        c.append("early", Message.user("committed before the resume"))
    with grpc.insecure_channel(first.address) as channel:
        call = pb_grpc.SessionServiceStub(channel).WatchAll(pb.WatchAllRequest(after_event_id=0, resume=True))
        event = next(call)
        assert not event.started and event.session_id == "early" and event.message.content.startswith("committed")
        call.cancel()

    # The client keeps the start across a daemon restart: what was committed meanwhile arrives.
    follower = first.client(retry_window_s=30)
    stream = follower.watch_all()
    got: queue.Queue[Any] = queue.Queue()

    def pump() -> None:
        try:
            for e in stream:
                got.put(e)
        except BaseException as exc:  # the generator was closed, or the window ran out
            got.put(exc)

    threading.Thread(target=pump, daemon=True).start()
    time.sleep(1.0)  # connected, start marker received, nothing to send yet
    assert first.terminate() == 0
    second: DaemonProcess = spawn_daemon()
    with second.client() as c:
        c.append("during", Message.user("written while the follower was reconnecting"))
        c.append("after", Message.user("and one more"))
    events = [got.get(timeout=20) for _ in range(2)]
    assert [(e.session_id, e.position) for e in events] == [("during", 1), ("after", 1)], events
    follower.close()
