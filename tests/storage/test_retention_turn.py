"""The retention sweep's turn and cutoff (``retention.turn``, ``retention.sweep``): every backend.

A sweep runs inside its turn; the cutoff it gets is the retention window before the clock the store's
times come from (SQLite: the daemon's steady clock; PostgreSQL, a ``SweepTurns`` store: the database's).
A session written just now is the window younger than the cutoff, within the test's slack. What the
daemon wrote since it started (``retention.WrittenSessions``) is spared whatever its stored time says.
"""

from __future__ import annotations

import datetime as dt
import json
import time

from claw_sessiond import retention
from claw_sessiond.clock import SteadyClock
from claw_sessiond.storage import Storage
from tests.storage._support import append, import_lines, user

OLD = "2020-01-01T00:00:00.000000Z"
#: How far the cutoff may be from "the write's time minus the window" (a loaded machine, two clocks).
SLACK_S = 30.0


def _parse(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


async def _import_old(storage: Storage, sid: str) -> None:
    header = {"format": "claw-sessiond-export", "version": 1, "workdir": "/w", "created_at": OLD, "updated_at": OLD}
    event = {"event_id": 1, "position": 1, "type": "user_message", "ts": OLD, "trace_id": "t", "schema_version": 1}
    await import_lines(
        storage,
        [
            json.dumps({**header, "session_id": sid, "events": 1}),
            json.dumps({**event, "session_id": sid, "payload": {"role": "user", "content": "old"}}),
        ],
    )


async def test_the_turn_yields_the_window_before_the_stores_clock(storage: Storage) -> None:
    written = await append(storage, "s", user("now"))
    window = 7 * 86400.0
    async with retention.turn(storage, window, SteadyClock()) as cutoff:
        assert cutoff is not None, "a store with one daemon always gives it the turn"
        gap = (_parse(written.created_at) - _parse(cutoff)).total_seconds()
        assert abs(gap - window) < SLACK_S, (written.created_at, cutoff)
    async with retention.turn(storage, window, SteadyClock()) as again:
        assert again is not None, "the turn is given back when the sweep ends"


async def test_a_sweep_erases_the_expired_sessions_in_its_turn(storage: Storage) -> None:
    await _import_old(storage, "old")
    await append(storage, "fresh", user("recent"))
    assert await retention.sweep(storage, 30.0) == 1
    assert await storage.session_ids() == ["fresh"]


async def test_a_sweep_spares_what_the_daemon_wrote_since_start_whatever_its_stored_time(storage: Storage) -> None:
    """Sessions stored in 2020, one of them noted as written since start (its stored time stays old: what a
    wall clock set years back would write). The sweep spares the noted one until it is forgotten."""
    for sid in ("old", "noted"):
        await _import_old(storage, sid)
    written = retention.WrittenSessions()
    written.note("noted")
    assert await retention.sweep(storage, 30.0, written=written) == 1
    assert await storage.session_ids() == ["noted"]
    assert await retention.sweep(storage, 30.0, written=written) == 0, "spared again while noted"
    assert written.forget_before(time.monotonic() + 1) == 1
    assert await retention.sweep(storage, 30.0, written=written) == 1
    assert await storage.session_ids() == []


async def test_a_clock_far_ahead_of_the_newest_stored_change_refuses_to_sweep(storage: Storage) -> None:
    """Sessions stored 31 days and a second before the store's clock: what a daemon started with its clock
    a month ahead sees. The start-up check refuses the sweep; without it the same sweep erases them."""
    header = {"format": "claw-sessiond-export", "version": 1, "workdir": "/w"}
    async with retention.turn(storage, 0.0, SteadyClock()) as now:
        assert now is not None
    at = (_parse(now) - dt.timedelta(days=31, seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    event = {"event_id": 1, "position": 1, "type": "user_message", "ts": at, "trace_id": "t", "schema_version": 1}
    await import_lines(
        storage,
        [
            json.dumps({**header, "session_id": "written", "events": 1, "created_at": at, "updated_at": at}),
            json.dumps({**event, "session_id": "written", "payload": {"role": "user", "content": "recent"}}),
        ],
    )
    check = await retention.clock_check(storage)
    assert await retention.sweep(storage, 30.0, check=check) == 0
    assert check.refusing
    assert await storage.session_ids() == ["written"]
    assert await retention.sweep(storage, 30.0) == 1, "the check, not the cutoff, held the session"
