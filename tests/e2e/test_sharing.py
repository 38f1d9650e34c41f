"""Several processes on one session: total order, optimistic concurrency, idempotent retries (SPEC §4)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from claw_sessiond_client import InvalidRequestError, Message, Reason, SequenceConflictError, SessionClient
from tests.helpers.daemon import DaemonProcess

_WRITER = """
import sys, time
from claw_sessiond_client import Message, SessionClient
address, session, name, seconds, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
c = SessionClient(address=address, autostart=False)
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end and n < limit:
    c.append(session, Message.user(f"{name}:{n}"))
    n += 1
print(n)
"""


@pytest.mark.smoke
def test_eight_processes_append_concurrently_without_loss_or_duplicates(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    # 3 s in both tiers: the eight writers interleave on the writer from their first appends on, and each
    # append is checked on its own (lost, stored twice, out of its writer's order), so a longer run repeats
    # the same interleavings (hundreds of appends a writer) without catching anything 3 s does not.
    seconds = 3
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, module_daemon.address, sid, f"w{i}", str(seconds), "100000"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(8)
    ]
    counts = {}
    for i, proc in enumerate(writers):
        out, _ = proc.communicate(timeout=seconds + 60)
        assert proc.returncode == 0
        counts[f"w{i}"] = int(out)
    messages = module_client.load(sid, str(module_daemon.workspace)).messages
    contents = [m.content for m in messages]
    assert len(contents) == sum(counts.values()), "lost or duplicated messages"
    assert len(set(contents)) == len(contents)
    positions = [m.position for m in messages]
    assert positions == list(range(1, len(positions) + 1)), "one total order, no gaps"
    for name, count in counts.items():
        mine = [int(text.split(":")[1]) for text in contents if text.startswith(f"{name}:")]
        assert mine == list(range(count)), f"{name}'s order was not kept"
    print(f"\nsharing: 8 processes, {sum(counts.values())} appends in {seconds}s, lost=0 duplicated=0")


def test_optimistic_concurrency_conflict_writes_nothing(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    client, workspace = module_client, module_daemon.workspace
    loaded = client.load(sid, str(workspace))
    assert loaded.session.last_position == 0
    first = client.append(sid, Message.user("a"), expected_last_position=-1)
    assert first.last_position == 1
    with pytest.raises(SequenceConflictError) as err:
        client.append(sid, Message.user("stale writer"), expected_last_position=-1)
    assert err.value.reason == Reason.SEQUENCE_CONFLICT and err.value.actual == 1
    client.append(sid, Message.user("b"), expected_last_position=1)
    with pytest.raises(SequenceConflictError):
        client.append(sid, Message.user("stale again"), expected_last_position=1)
    assert [m.content for m in client.load(sid, str(workspace)).messages] == ["a", "b"]


@pytest.mark.smoke
def test_same_request_id_returns_the_first_result_and_writes_once(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    client, workspace = module_client, module_daemon.workspace
    client.load(sid, str(workspace))
    first = client.append(sid, [Message.user("x"), Message.user("y")], request_id="req-1")
    again = client.append(sid, [Message.user("x"), Message.user("y")], request_id="req-1")
    assert not first.replayed and again.replayed
    assert (again.first_position, again.last_position, again.trace_id) == (
        first.first_position,
        first.last_position,
        first.trace_id,
    )
    with pytest.raises(InvalidRequestError) as err:
        client.append(sid, Message.user("other content"), request_id="req-1")
    assert err.value.reason == Reason.REQUEST_ID_REUSED
    u1 = client.record_usage(sid, input_tokens=10, request_id="u-1")
    u2 = client.record_usage(sid, input_tokens=10, request_id="u-1")
    assert u1 == u2 and u2.input_tokens == 10
    assert [m.content for m in client.load(sid, str(workspace)).messages] == ["x", "y"]


@pytest.mark.both_backends("request records kept in PostgreSQL replay after a restart")
def test_idempotent_retry_across_a_daemon_restart(spawn_daemon, workspace: Path) -> None:
    d = spawn_daemon()
    with d.client() as c:
        c.load("restart", str(workspace))
        first = c.append("restart", Message.user("once"), request_id="r-restart")
    d.kill()  # SIGKILL: no graceful shutdown, no checkpoint
    d2 = spawn_daemon()
    with d2.client() as c:
        retry = c.append("restart", Message.user("once"), request_id="r-restart")
        messages = c.load("restart", str(workspace)).messages
    assert retry.replayed and retry.first_position == first.first_position
    assert [m.content for m in messages] == ["once"]


def test_client_retry_survives_a_restart_in_the_middle(spawn_daemon, workspace: Path) -> None:
    """The client library retries UNAVAILABLE with the same request id while the daemon restarts.

    The client was served before the stop (a client that never reached a daemon fails at once
    instead: tests/e2e/test_client_errors.py), then appends while no daemon runs.
    """
    d = spawn_daemon()
    with d.client() as c:
        c.load("gap", str(workspace))
        c.append("gap", Message.user("before"))
    script = (
        "import sys, json\n"
        "from claw_sessiond_client import Message, SessionClient\n"
        "c = SessionClient(address=sys.argv[1], autostart=False, retry_window_s=30)\n"
        "c.stats()\n"
        "print('served', flush=True)\n"
        "sys.stdin.readline()\n"
        "r = c.append('gap', Message.user('during restart'))\n"
        "print(json.dumps([r.first_position, r.replayed]))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, d.address], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "served"
        d.terminate()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(0.3)  # the append is retrying while no daemon runs
        d2 = spawn_daemon()
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert json.loads(out) == [2, False]
    with d2.client() as c:
        assert [m.content for m in c.load("gap", str(workspace)).messages] == ["before", "during restart"]
