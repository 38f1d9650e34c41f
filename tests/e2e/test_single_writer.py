"""One workspace, one writer (SPEC §1, §7): the workspace lock, not the socket, decides who serves.

A second daemon is refused every time, also when two start at the same
moment (exactly one wins), and the first keeps serving on its socket. After
SIGKILL of the holder the kernel drops the lock, so a new daemon starts at
once.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from claw_sessiond_client import Message
from tests.helpers.daemon import DaemonProcess, health_status
from tests.helpers.figures import record
from tests.helpers.inspect import stored
from tests.helpers.process import wait_exit
from tests.helpers.tiers import scale


def _serves(d: DaemonProcess, session: str, text: str) -> int:
    """Append through ``d``'s socket and read it back; return the new last position."""
    with d.client(retry_window_s=0) as c:
        pos = c.append(session, Message.user(text)).last_position
        assert c.load(session).messages[-1].content == text
    return pos


@pytest.mark.smoke
def test_second_daemon_is_refused_every_time_and_the_first_keeps_serving(workspace: Path) -> None:
    first = DaemonProcess(workspace).start()
    try:
        inode = first.socket_path.stat().st_ino
        rounds = scale(5, 20)
        for i in range(rounds):
            second = DaemonProcess(workspace)
            second.spawn()
            assert second.proc is not None
            code = wait_exit(second.proc, 30)
            second.stop()
            log = second.log()
            assert code == 1, f"round {i}: the second daemon must exit 1, got {code}:\n{log}"
            assert "sessiond.lock" in log and "another claw-sessiond" in log, log
            assert first.proc is not None and first.proc.poll() is None, "the first daemon died"
            assert first.socket_path.stat().st_ino == inode, "the socket was replaced"
            assert _serves(first, "sw", f"after refusal {i}") == i + 1
    finally:
        assert first.terminate() == 0
    assert len(stored(workspace).events("sw")) == rounds
    record("single_writer", second_daemons_refused=rounds)


@pytest.mark.slow
def test_two_daemons_started_at_once_exactly_one_wins(tmp_path: Path) -> None:
    rounds = scale(3, 10)
    for i in range(rounds):
        ws = tmp_path / f"ws{i}"
        ws.mkdir()
        a, b = DaemonProcess(ws), DaemonProcess(ws)
        a.spawn()
        b.spawn()  # the same instant as far as the lock is concerned: both are still importing
        try:
            assert a.proc is not None and b.proc is not None
            end = time.monotonic() + 30
            while time.monotonic() < end and a.proc.poll() is None and b.proc.poll() is None:
                time.sleep(0.05)
            loser, winner = (a, b) if a.proc.poll() is not None else (b, a)
            assert loser.proc is not None and winner.proc is not None
            assert wait_exit(loser.proc, 5) == 1, f"round {i}: the loser must exit 1:\n{loser.log()}"
            assert "sessiond.lock" in loser.log(), loser.log()
            winner.wait_ready(20)
            assert winner.proc.poll() is None, "both daemons exited"
            assert _serves(winner, "race", f"round {i}") == 1
            assert health_status(winner.address) == "SERVING"
        finally:
            a.stop()
            b.stop()
    record("single_writer", simultaneous_starts=rounds, exactly_one_won=rounds)


def test_a_new_daemon_starts_at_once_after_sigkill_of_the_holder(workspace: Path) -> None:
    rounds = scale(3, 10)
    worst = 0.0
    for i in range(rounds):
        d = DaemonProcess(workspace).start()
        assert _serves(d, "kill", f"before kill {i}") == i + 1
        d.kill()
        assert d.socket_path.exists(), "SIGKILL leaves the stale socket file behind (the new daemon must cope)"
        started = time.monotonic()
        nxt = DaemonProcess(workspace).start(timeout_s=15)
        worst = max(worst, time.monotonic() - started)
        try:
            with nxt.client() as c:
                assert [m.content for m in c.load("kill").messages] == [f"before kill {j}" for j in range(i + 1)]
        finally:
            assert nxt.terminate() == 0
    record("single_writer", restarts_after_sigkill=rounds, restart_to_ready_ms=round(worst * 1000))
