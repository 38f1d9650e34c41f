"""On-demand start without systemd: the client starts a daemon when nothing answers.

Several agent processes that start at the same moment in an empty workspace
each spawn a daemon; the workspace lock lets exactly one win, the others exit
1, and every client ends up connected to the winner. When no daemon can come
up, the client says why, quickly. Daemons started by clients run in their own
session; the tests find them by the pid in ``.claw/sessiond.lock`` and stop
them by that pid.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from claw_sessiond_client import DaemonUnavailableError, SessionClient
from tests.helpers.daemon import health_status
from tests.helpers.process import daemons_for, stop_pid
from tests.helpers.tiers import scale

CLIENT = r"""
import asyncio, sys
from claw_sessiond_client import AsyncSessionClient, Message, SessionClient

workspace, index = sys.argv[1], int(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()  # all processes call at the same moment: when the test has seen every one ready
if index % 2:
    with SessionClient(workspace) as client:
        client.append(f"agent-{index}", Message.user(f"hello from {index}"))
        print(client.stats()["pid"])
else:
    async def main() -> None:
        async with AsyncSessionClient(workspace) as client:
            await client.append(f"agent-{index}", Message.user(f"hello from {index}"))
            print((await client.stats())["pid"])
    asyncio.run(main())
"""


def _live_pids(workspace: Path) -> list[int]:
    pids = []
    for proc in daemons_for(workspace):
        with contextlib.suppress(psutil.NoSuchProcess):
            if proc.status() != psutil.STATUS_ZOMBIE:
                pids.append(proc.pid)
    return pids


@pytest.fixture
def autostarted(workspace: Path) -> Iterator[Path]:
    """The workspace; at teardown, every daemon serving it is stopped by its pid."""
    yield workspace
    for proc in daemons_for(workspace):
        stop_pid(proc.pid)


@pytest.mark.both_backends("a daemon a client starts takes its database from CLAW_DATABASE_URL")
@pytest.mark.smoke
def test_simultaneous_clients_start_exactly_one_daemon(autostarted: Path) -> None:
    workspace = autostarted
    n = scale(6, 12)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CLIENT, str(workspace), str(i)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    try:
        # Released together once every one has started (instead of at a fixed time two seconds ahead).
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == "ready\n", p.communicate(timeout=90)
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outputs = [p.communicate(timeout=90) for p in procs]
    finally:  # on a failure above, no client is left waiting to start a daemon after the test
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    failures = [(p.returncode, err) for p, (_, err) in zip(procs, outputs, strict=True) if p.returncode != 0]
    assert not failures, failures
    pids = {int(out.strip()) for out, _ in outputs}
    assert len(pids) == 1, f"clients talked to several daemons: {pids}"
    (pid,) = pids
    # A losing daemon may still be starting (importing) after every client is done: it exits 1 as
    # soon as it reaches the lock. Exactly one daemon keeps running.
    end = time.monotonic() + 30
    while (alive := _live_pids(workspace)) != [pid]:
        assert time.monotonic() < end, f"daemons still running: {alive}, winner {pid}"
        time.sleep(0.1)
    assert (workspace / ".claw" / "sessiond.lock").read_text().strip() == str(pid)
    with SessionClient(workspace, autostart=False) as client:
        assert {s.id for s in client.list_sessions()} == {f"agent-{i}" for i in range(n)}
    log = (workspace / ".claw" / "sessiond.log").read_text()
    assert log.count("event=ready") == 1
    # Every client that spawned a losing daemon saw it refuse politely (exit 1, lock held), not crash.
    assert "Traceback" not in log


def test_autostart_then_restart_after_the_daemon_dies(autostarted: Path) -> None:
    workspace = autostarted
    with SessionClient(workspace) as client:
        client.load("s", str(workspace))
        first = int(client.stats()["pid"])
        os.kill(first, signal.SIGKILL)
        while psutil.pid_exists(first) and psutil.Process(first).status() != psutil.STATUS_ZOMBIE:
            time.sleep(0.02)
        client.load("s", str(workspace))  # nothing answers: a new daemon is started
        second = int(client.stats()["pid"])
    assert second != first
    assert health_status(f"unix:{workspace}/.claw/sessiond.sock") == "SERVING"


def test_autostart_false_never_starts_a_daemon(workspace: Path) -> None:
    started = time.monotonic()
    with SessionClient(workspace, autostart=False, retry_window_s=0) as client, pytest.raises(DaemonUnavailableError):
        client.load("s", str(workspace))
    assert time.monotonic() - started < 5
    assert not (workspace / ".claw").exists()
    assert daemons_for(workspace) == []


@pytest.mark.sqlite_only("a corrupt sessions.db file is what stops the daemon")
@pytest.mark.parametrize("client_kind", ["sync", "async"])
def test_clear_error_when_the_daemon_cannot_start(autostarted: Path, client_kind: str) -> None:
    """A corrupt database stops the spawned daemon: the client says so without waiting the full timeout."""
    workspace = autostarted
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    (claw / "sessions.db").write_bytes(b"not a database" * 100)
    started = time.monotonic()
    code = f"""
import asyncio, sys
from claw_sessiond_client import AsyncSessionClient, DaemonUnavailableError, SessionClient
try:
    if {client_kind!r} == "sync":
        with SessionClient(sys.argv[1]) as c:
            c.load("s", sys.argv[1])
    else:
        async def main():
            async with AsyncSessionClient(sys.argv[1]) as c:
                await c.load("s", sys.argv[1])
        asyncio.run(main())
except DaemonUnavailableError as exc:
    print(exc)
    sys.exit(3)
"""
    proc = subprocess.run([sys.executable, "-c", code, str(workspace)], capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    assert proc.returncode == 3, proc.stderr
    message = proc.stdout
    assert "daemon exited with 1" in message
    assert "not an SQLite database" in message and str(claw / "sessions.db") in message
    assert "sessiond.log" in message
    assert elapsed < 10, f"the client took {elapsed:.1f}s to give up on a daemon that had already exited"
    assert daemons_for(workspace) == []
