"""Retention does not trust the wall clock: a session written since the daemon started is never erased by it.

The real path to an old stored time on a session in use: the session is
written (Append) since start, then its stored times become old because its
content was replaced by an import of old data (``updated_at`` 2020). To the
retention sweep that looks exactly like a wall clock that stepped years
forward. An import-only old session next to it is erased as before, which
shows the sweep did run. Every write RPC counts as written since start (the
service notes the session before it submits the write): Append, RecordUsage,
CreateSession, ForkSession, UpdateSession, RecordEvent, Clear and EditTail
each spare a session whose content is then replaced by old data.

A daemon started while its clock is a month ahead sees the sessions written a
second before it as a month old. Retention checks the start-up clock against
the newest stored change (``retention.ClockCheck``): more than a day ahead, it
refuses to sweep, logs why once, and erases nothing. The store here holds
sessions stored 31 days and a second before the real clock, which is what a
daemon whose clock is 31 days ahead sees; a later daemon started after a fresh
write sweeps them as usual (the check is what held them).
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

from claw_sessiond.clock import SteadyClock, rfc3339
from claw_sessiond_client import Message, SessionClient
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import old_lines


def ids(c: SessionClient) -> list[str]:
    return sorted(s.id for s in c.list_sessions())


@pytest.mark.smoke
def test_session_written_since_start_survives_old_stored_times(spawn_daemon, workspace: Path) -> None:
    d: DaemonProcess = spawn_daemon("--retention-days", "30", "--retention-interval-s", "0.1")
    with d.client() as c:
        c.append("in-use", Message.user("written by a live agent"))
        c.import_lines(old_lines("in-use", "restored from an old backup"), mode="replace")
        c.append("in-use-2", Message.user("also live"))
        c.record_usage("by-usage", input_tokens=1)
        writes = {
            "by-create": lambda sid: c.create_session(sid),
            "by-fork": lambda sid: c.fork_session("in-use-2", sid),
            "by-update": lambda sid: c.update_session(sid, set_labels={"k": "v"}),
            "by-event": lambda sid: c.record_event(sid, "error", {"message": "x"}),
            "by-clear": lambda sid: c.clear(sid),
            "by-edit": lambda sid: c.edit_tail(sid, remove_last=1),
        }
        for sid, write in writes.items():
            if sid in ("by-update", "by-event", "by-clear", "by-edit"):
                now = rfc3339(dt.datetime.now(dt.UTC))  # stored now: the sweep leaves it until it is written
                c.import_lines(old_lines(sid, "stored before, not written by this daemon", at=now))
            write(sid)
        for sid in ("by-usage", *writes):
            c.import_lines(old_lines(sid, "restored from an old backup"), mode="replace")
        assert next(s.updated_at for s in c.list_sessions() if s.id == "in-use").year == 2020
        c.import_lines(old_lines("old-only", "never written since start"))
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and "old-only" in ids(c):
            time.sleep(0.05)
        spared = sorted(["in-use", "in-use-2", "by-usage", *writes])
        assert ids(c) == spared, d.log()
        time.sleep(0.5)  # several more sweeps
        assert ids(c) == spared
        assert all(s.updated_at.year == 2020 for s in c.list_sessions() if s.id.startswith("by-"))
        assert [m.content for m in c.load("in-use", str(workspace)).messages] == ["restored from an old backup"]
        assert c.stats()["retention_sessions_deleted"] == 1
    assert d.terminate() == 0
    log = d.log()
    assert "event=retention_deleted session=old-only" in log
    assert "event=retention_deleted session=in-use" not in log


def test_steady_clock_ignores_a_forward_step_and_follows_a_backward_one() -> None:
    # The one fake here: a wall clock that steps (a real step needs root and would disturb the machine).
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    wall = [start]
    mono = [100.0]
    clock = SteadyClock(wall=lambda: wall[0], monotonic=lambda: mono[0])
    mono[0] += 60
    wall[0] = start + dt.timedelta(days=365, seconds=60)  # stepped a year forward
    assert clock.now() == start + dt.timedelta(seconds=60)
    assert clock.cutoff(30 * 86400) == "2025-12-02T00:01:00.000000Z"
    wall[0] = start - dt.timedelta(days=1)  # stepped back a day
    assert clock.now() == start - dt.timedelta(days=1)


def test_a_clock_a_month_ahead_of_the_store_refuses_to_sweep(spawn_daemon, workspace: Path) -> None:
    written = rfc3339(dt.datetime.now(dt.UTC) - dt.timedelta(days=31, seconds=1))
    first: DaemonProcess = spawn_daemon()
    with first.client() as c:
        for sid in ("written-1", "written-2"):
            c.import_lines(old_lines(sid, f"{sid}, a second before the restart", at=written))
    assert first.terminate() == 0

    ahead: DaemonProcess = spawn_daemon("--retention-days", "30", "--retention-interval-s", "0.1")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and "event=retention_refused" not in ahead.log():
        time.sleep(0.05)
    assert "event=retention_refused reason=clock_ahead_of_store" in ahead.log(), ahead.log()
    time.sleep(0.5)  # several more sweeps
    with ahead.client() as c:
        assert ids(c) == ["written-1", "written-2"], ahead.log()
        assert c.stats()["retention_sessions_deleted"] == 0
        c.append("fresh", Message.user("written under the daemon's own clock"))  # no evidence for it
        time.sleep(0.3)
        assert ids(c) == ["fresh", "written-1", "written-2"], ahead.log()
    assert ahead.terminate() == 0
    log = ahead.log()
    assert log.count("event=retention_refused") == 1, "the refusal is logged once, not at every sweep"
    assert "event=retention_deleted" not in log

    # The next daemon starts after a fresh write: its clock agrees with the store, and it sweeps.
    sane: DaemonProcess = spawn_daemon("--retention-days", "30", "--retention-interval-s", "0.1")
    with sane.client() as c:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and ids(c) != ["fresh"]:
            time.sleep(0.05)
        assert ids(c) == ["fresh"], sane.log()
    assert sane.terminate() == 0
    assert "event=retention_refused" not in sane.log()
