"""Retention across daemons on one PostgreSQL database: one sweeper at a time, the cutoff from the database.

Two storages on one database stand for two daemons.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from claw_sessiond import retention
from claw_sessiond.clock import SteadyClock
from claw_sessiond.config import Config
from claw_sessiond.storage import Storage, open_storage
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import append, import_lines, user

OLD = "2020-01-01T00:00:00.000000Z"
#: A daemon whose clock is far off (in 2100): the cutoff it computes must not be used.
WRONG_CLOCK = SteadyClock(wall=lambda: dt.datetime(2100, 1, 1, tzinfo=dt.UTC))


async def _two_daemons(tmp_path: Path) -> tuple[Storage, Storage]:
    (tmp_path / ".claw").mkdir(mode=0o700, exist_ok=True)
    config = Config(workspace=tmp_path, database_url=POSTGRES.database_for(str(tmp_path)))
    return await open_storage(config), await open_storage(config)


async def _import_old(store: Storage, sid: str) -> None:
    header = {"format": "claw-sessiond-export", "version": 1, "workdir": "/w", "created_at": OLD, "updated_at": OLD}
    event = {"event_id": 1, "position": 1, "type": "user_message", "ts": OLD, "trace_id": "t", "schema_version": 1}
    await import_lines(
        store,
        [
            json.dumps({**header, "session_id": sid, "events": 1}),
            json.dumps({**event, "session_id": sid, "payload": {"role": "user", "content": "old"}}),
        ],
    )


async def test_one_daemon_sweeps_at_a_time_and_the_other_skips_its_round(tmp_path: Path) -> None:
    a, b = await _two_daemons(tmp_path)
    try:
        await _import_old(a, "old")
        async with retention.turn(a, 86400.0, WRONG_CLOCK) as mine:
            assert mine is not None
            async with retention.turn(b, 86400.0, WRONG_CLOCK) as theirs:
                assert theirs is None, "the other daemon holds the turn"
            assert await retention.sweep(b, 1.0) == 0, "b skips its round while a sweeps"
            assert await b.session_ids() == ["old"]
        assert await retention.sweep(b, 1.0) == 1, "the turn is free again once a's sweep ended"
        assert await a.session_ids() == []
    finally:
        await a.close()
        await b.close()


async def test_the_cutoff_comes_from_the_database_not_the_daemon(tmp_path: Path) -> None:
    a, b = await _two_daemons(tmp_path)
    try:
        written = await append(a, "s", user("now"))  # its time is the database's transaction time
        async with retention.turn(b, 3600.0, WRONG_CLOCK) as cutoff:
            assert cutoff is not None and cutoff != WRONG_CLOCK.cutoff(3600.0)
            at = dt.datetime.fromisoformat(written.created_at.replace("Z", "+00:00"))
            gap = (at - dt.datetime.fromisoformat(cutoff.replace("Z", "+00:00"))).total_seconds()
            assert 3600.0 - 30 < gap < 3600.0 + 30
        assert await retention.sweep(b, 1.0, WRONG_CLOCK) == 0, "written now: no expiry whatever the daemon's clock"
        assert await a.session_ids() == ["s"]
    finally:
        await a.close()
        await b.close()
