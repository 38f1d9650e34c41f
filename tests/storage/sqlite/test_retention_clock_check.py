"""Retention's start-up clock check (``retention.ClockCheck``) with a wall clock that steps.

A daemon whose clock is 31 days ahead sees a session written a second
before it started as 31 days old. The check compares the cutoff's clock
with the newest stored change read at start-up: more than
``CLOCK_AHEAD_BOUND_S`` ahead, the sweep erases nothing and says why once;
when the wall clock is stepped back (NTP), the next sweep runs again and
says so. The one fake is the wall clock given to ``SteadyClock`` (as in
tests/e2e/test_retention_clock.py: a real step needs root and would disturb
the machine); the store is a real SQLite file.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from claw_sessiond import retention
from claw_sessiond.clock import SteadyClock, rfc3339
from claw_sessiond.config import Config
from claw_sessiond.storage import open_storage
from tests.helpers.data import old_lines
from tests.storage._support import import_lines


async def test_a_clock_a_month_ahead_refuses_until_it_is_stepped_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ".claw").mkdir(mode=0o700)
    store = await open_storage(Config(workspace=tmp_path))
    try:
        real = dt.datetime.now(dt.UTC)
        await import_lines(store, old_lines("written", "a second before the start", at=rfc3339(real)))
        await import_lines(store, old_lines("expired", "from 2020"))
        check = await retention.clock_check(store)
        assert check.newest is not None and abs((check.newest - real).total_seconds()) < 1

        wall = [real + dt.timedelta(days=31)]  # the daemon starts with its clock a month ahead
        clock = SteadyClock(wall=lambda: wall[0])
        caplog.set_level("INFO", logger="claw_sessiond.retention")
        for _ in range(3):
            assert await retention.sweep(store, 30.0, clock, check) == 0
        assert sorted(await store.session_ids()) == ["expired", "written"]
        refused = [r.getMessage() for r in caplog.records if "retention_refused" in r.getMessage()]
        assert len(refused) == 1 and "reason=clock_ahead_of_store" in refused[0], refused

        wall[0] = dt.datetime.now(dt.UTC)  # NTP steps it back: the steady clock follows a backward step
        assert await retention.sweep(store, 30.0, clock, check) == 1
        assert await store.session_ids() == ["written"]
        assert any("event=retention_resumed" in r.getMessage() for r in caplog.records)
    finally:
        await store.close()


async def test_an_empty_store_at_start_has_no_check(tmp_path: Path) -> None:
    (tmp_path / ".claw").mkdir(mode=0o700)
    store = await open_storage(Config(workspace=tmp_path))
    try:
        check = await retention.clock_check(store)
        assert check.newest is None
        await import_lines(store, old_lines("expired", "from 2020"))  # imported after start: judged by its time
        assert await retention.sweep(store, 30.0, None, check) == 1
    finally:
        await store.close()
