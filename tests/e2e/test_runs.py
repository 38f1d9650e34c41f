"""Run ownership across real processes: in-flight tool calls, dead owners, exclusive runs.

Every owner is a separate Python process using the sync client's ``attach``;
the daemon is a real subprocess on a real Unix socket. Owners die for real
(``kill -9``), and every process started here is stopped by pid. A stopped
owner keeps its run: ``test_runs_liveness.py``.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond_client import (
    Message,
    PreconditionError,
    Reason,
    SequenceConflictError,
    SessionClient,
    ToolCallStateError,
)
from tests.helpers.daemon import ROOT, DaemonProcess, run_python

LEASE_S = 2
#: Scheduling slack on a shared 2-core machine on top of the documented bound.
SLACK_S = 1.5

OWNER = r"""
import json, os, sys
from claw_sessiond_client import Message, SessionClient, ToolCall
address, session = sys.argv[1], sys.argv[2]
client = SessionClient(address=address, autostart=False)
with client.attach(session, label="owner") as run:
    client.append(session, [
        Message.user("list the files"),
        Message.assistant(tool_calls=[ToolCall("call_1", "bash", '{"cmd": "ls"}')]),
    ], run_id=run.run_id)
    print(json.dumps({"run_id": run.run_id, "pid": os.getpid(), "lease": run.lease_seconds}), flush=True)
    command = sys.stdin.readline().strip()
    if command == "answer":
        r = client.append(session, Message.tool("call_1", "README.md"), run_id=run.run_id)
        print(json.dumps({"answered": r.last_position}), flush=True)
        sys.stdin.readline()
print(json.dumps({"released": True}), flush=True)
"""

LOAD = r"""
import json, sys
from claw_sessiond_client import SessionClient
client = SessionClient(address=sys.argv[1], autostart=False)
r = client.load(sys.argv[2], "/tmp")
print(json.dumps({
    "in_flight": [[c.tool_call_id, c.run_id, c.owner_pid] for c in r.in_flight],
    "repairs": [r.tool_call_id for r in r.repairs],
    "messages": [[m.role, m.tool_call_id, m.synthetic_reason] for m in r.messages],
}))
"""

CONTENDER = r"""
import json, os, sys, time
from claw_sessiond_client import Message, PreconditionError, SessionClient
address, session, go = sys.argv[1], sys.argv[2], sys.argv[3]
client = SessionClient(address=address, autostart=False)
client.stats()  # connected before the race, so the race is about Attach alone
deadline = time.monotonic() + 30
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.002)
try:
    with client.attach(session, label="contender") as run:
        print(json.dumps({"won": run.run_id, "pid": os.getpid()}), flush=True)
        sys.stdin.readline()
except PreconditionError as exc:
    print(json.dumps({"refused": str(exc.reason), "metadata": exc.metadata, "pid": os.getpid()}), flush=True)
    r = client.append(session, Message.user(f"non-owner {os.getpid()}"))  # appends keep working
    print(json.dumps({"appended": r.last_position}), flush=True)
"""


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    """Client processes started by a test; each is stopped by its pid at teardown."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for p in started:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
            os.kill(p.pid, signal.SIGKILL)
        p.wait(10)
        for stream in (p.stdin, p.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def live(spawn_daemon: Any) -> DaemonProcess:
    """A daemon with a short lease, so dead-owner detection fits in a short test."""
    d: DaemonProcess = spawn_daemon("--lease-s", str(LEASE_S))
    return d


def start(procs: list[subprocess.Popen[str]], code: str, *args: str) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    procs.append(p)
    return p


def read_json(p: subprocess.Popen[str], timeout_s: float = 20.0) -> dict[str, Any]:
    """The next JSON line the process prints (fails the test if it exits or hangs)."""
    assert p.stdout is not None
    os.set_blocking(p.stdout.fileno(), True)
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        ready, _, _ = select.select([p.stdout], [], [], 0.1)
        if ready:
            line = p.stdout.readline()
            if not line:
                pytest.fail(f"process {p.pid} exited ({p.wait(5)}) without output")
            return dict(json.loads(line))
    pytest.fail(f"process {p.pid} printed nothing in {timeout_s}s")


def send(p: subprocess.Popen[str], line: str) -> None:
    assert p.stdin is not None
    p.stdin.write(line + "\n")
    p.stdin.flush()


def load_elsewhere(d: DaemonProcess, session: str) -> dict[str, Any]:
    """Load from a separate process."""
    return dict(json.loads(run_python(LOAD, d.address, session)))


def wait_for_repair(c: SessionClient, session: str, limit_s: float) -> tuple[float, Any]:
    """Load every 50 ms until a Load repairs; return (seconds waited, that Load's result)."""
    t0 = time.monotonic()
    while True:
        r = c.load(session, "/tmp")
        elapsed = time.monotonic() - t0
        if r.repairs:
            return elapsed, r
        if elapsed > limit_s:
            pytest.fail(f"not repaired after {elapsed:.2f}s; in flight: {r.in_flight}")
        time.sleep(0.05)


def test_live_owner_call_is_in_flight_not_repaired_and_owner_answers(daemon: DaemonProcess, procs: Any) -> None:
    live = daemon
    owner = start(procs, OWNER, live.address, "s")
    info = read_json(owner)
    assert info["lease"] == 0  # the Unix socket sends no keepalive pings: no lease to answer

    seen = load_elsewhere(live, "s")
    assert seen["repairs"] == []
    assert seen["in_flight"] == [["call_1", info["run_id"], info["pid"]]]
    assert [m[0] for m in seen["messages"]] == ["user", "assistant"]

    send(owner, "answer")
    assert read_json(owner)["answered"] == 3  # the owner's real result is accepted
    after = load_elsewhere(live, "s")
    assert after["repairs"] == [] and after["in_flight"] == []
    assert after["messages"][-1] == ["tool", "call_1", ""]  # the real result, not a synthetic one
    send(owner, "")
    assert read_json(owner) == {"released": True}
    assert owner.wait(10) == 0


@pytest.mark.both_backends("runs live in PostgreSQL's run registry (leases) on that backend")
@pytest.mark.smoke
def test_owner_killed_with_sigkill_its_call_is_repaired_at_next_load(live: DaemonProcess, procs: Any) -> None:
    owner = start(procs, OWNER, live.address, "s")
    info = read_json(owner)
    with live.client() as c:
        assert c.stats()["active_runs"] == 1
        assert [f.run_id for f in c.load("s", "/tmp").in_flight] == [info["run_id"]]
        owner.kill()
        owner.wait(10)
        # The kernel closes a dead process's socket at once; the lease bounds the rest.
        elapsed, r = wait_for_repair(c, "s", LEASE_S + SLACK_S)
        assert [x.tool_call_id for x in r.repairs] == ["call_1"]
        assert r.in_flight == []
        assert [(m.role, m.synthetic_reason) for m in r.messages] == [
            ("user", ""),
            ("assistant", ""),
            ("tool", "interrupted"),
        ]
        assert c.stats()["active_runs"] == 0
        # A result arriving late (the old run's tool did finish) supersedes the repair; a second one is refused.
        c.append("s", Message.tool("call_1", "late"))
        assert [(m.content, m.supersedes) for m in c.load("s", "/tmp").messages if m.role == "tool"] == [
            ("late", r.repairs[0].position)
        ]
        with pytest.raises(ToolCallStateError) as late:
            c.append("s", Message.tool("call_1", "too late"))
        assert late.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
        # The dead run's id is no longer accepted.
        with pytest.raises(PreconditionError) as gone:
            c.append("s", Message.user("x"), run_id=info["run_id"])
        assert gone.value.reason == Reason.UNKNOWN_RUN
    print(f"kill -9 owner: repaired {elapsed:.3f}s after the kill")


def test_owner_that_releases_without_answering_leaves_a_repairable_call(live: DaemonProcess, procs: Any) -> None:
    owner = start(procs, OWNER, live.address, "s")
    read_json(owner)
    send(owner, "release")  # leaves the with-block: the client cancels its Attach stream
    assert read_json(owner) == {"released": True}
    assert owner.wait(10) == 0
    with live.client() as c:
        _, r = wait_for_repair(c, "s", LEASE_S + SLACK_S)
        assert [x.tool_call_id for x in r.repairs] == ["call_1"]


def test_processes_racing_to_own_a_session_exactly_one_wins(daemon: DaemonProcess, procs: Any, tmp_path: Path) -> None:
    live = daemon
    go = tmp_path / "go"
    contenders = [start(procs, CONTENDER, live.address, "s", str(go)) for _ in range(4)]
    time.sleep(1.0)  # let every contender connect
    go.touch()
    replies = [read_json(p) for p in contenders]
    winners = [r for r in replies if "won" in r]
    losers = [r for r in replies if "refused" in r]
    assert len(winners) == 1, replies
    assert len(losers) == 3
    winner = winners[0]
    for loser in losers:
        assert loser["refused"] == "RUN_ALREADY_OWNED"
        assert loser["metadata"] == {"run_id": winner["won"], "pid": str(winner["pid"])}
    winner_proc = next(p for p in contenders if p.pid == winner["pid"])
    for p in contenders:
        if p is not winner_proc:
            assert "appended" in read_json(p)
            assert p.wait(10) == 0

    with live.client() as c:
        # Non-owner writes follow the optimistic-concurrency rules as before.
        last = c.load("s", "/tmp").session.last_position
        assert last == 3
        with pytest.raises(SequenceConflictError):
            c.append("s", Message.user("stale"), expected_last_position=last - 1)
        c.append("s", Message.user("fresh"), expected_last_position=last)
        # The run id is bound to its session.
        with pytest.raises(PreconditionError) as other:
            c.append("other", Message.user("x"), run_id=winner["won"])
        assert other.value.reason == Reason.UNKNOWN_RUN
        # Still owned: a new attach is refused until the winner lets go, then succeeds.
        with pytest.raises(PreconditionError), c.attach("s"):
            pass
        send(winner_proc, "")
        assert winner_proc.wait(10) == 0
        deadline = time.monotonic() + LEASE_S + SLACK_S
        while True:
            try:
                with c.attach("s") as run:
                    assert run.alive and run.run_id != winner["won"]
                    assert c.stats()["active_runs"] == 1
                break
            except PreconditionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        assert not run.alive


def test_docs_live_runs_example_runs_as_pasted(workspace: Path) -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split("## Live runs and Watch", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "the docs/api.md section has a python example"
    lock = workspace / ".claw" / "sessiond.lock"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", blocks[0]], cwd=workspace, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines() == ["call_1", "1 assistant", "2 tool"]
    finally:
        # The example auto-started a daemon for the workspace: stop it by the pid in its lock file.
        pid_text = lock.read_text().strip() if lock.exists() else ""
        if pid_text.isdigit():
            os.kill(int(pid_text), signal.SIGTERM)
            end = time.monotonic() + 15
            while time.monotonic() < end:
                try:
                    os.kill(int(pid_text), 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
