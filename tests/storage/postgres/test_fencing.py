"""Fencing at commit on PostgreSQL: a write made for a run commits only while the run's daemon holds its lease.

A real server and real storages (daemons in this process). The lease is made to run out on the
database's clock (``heartbeat_at`` set back, as a daemon stopped for an hour would leave it), and
the session's row lock is held from a connection of the test, so writes queue and the storage's
group commit puts them in one transaction. The fence is the last statement before COMMIT: an
EditTail's replacements (which no earlier statement checks) naming the lost run are refused and
written by no one, and the other writes of their group commit without them. A takeover (Attach on
another storage) waits for the session's row lock.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from claw_sessiond.config import Config
from claw_sessiond.errors import PreconditionError, Reason, StorageUnavailableError
from claw_sessiond.model import EditResult
from claw_sessiond.storage import Storage, open_storage
from claw_sessiond.storage.postgres import schema
from claw_sessiond.storage.postgres.connect import PostgresSettings, open_connection, server_settings_of
from claw_sessiond.storage.postgres.pooling import check_settings
from claw_sessiond.storage.postgres.timeouts import (
    LOCK_TIMEOUT_MS,
    fence_margin_ms,
    idle_in_transaction_ms,
)
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import append, assistant, attach, contents, edit, user


def _config(tmp_path: Path) -> Config:
    (tmp_path / ".claw").mkdir(mode=0o700, exist_ok=True)
    return Config(workspace=tmp_path, database_url=POSTGRES.database_for(str(tmp_path)), lease_s=60)


async def _edit(storage: Storage, session_id: str, text: str, run_id: str) -> EditResult:
    """An EditTail that only appends ``text``, for the run ``run_id``."""
    return await edit(storage, session_id, user(text), run_id=run_id)


async def _expire(conn: Any, run_id: str) -> None:
    """The lease of ``run_id``'s daemon runs out on the database's clock."""
    await conn.execute(
        f"UPDATE {schema.SCHEMA}.daemons SET heartbeat_at = now() - interval '1 hour' "
        f"WHERE daemon_no = (SELECT daemon_no FROM {schema.SCHEMA}.runs WHERE run_id = $1)",
        run_id,
    )


async def _waiting_on_a_lock(conn: Any, count: int) -> None:
    """Wait (at most 10 s) until ``count`` of this process's storage connections wait for a lock."""
    end = time.monotonic() + 10
    while time.monotonic() < end:
        waiting = await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
            f"claw-sessiond {os.getpid()}",
        )
        if waiting >= count:
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"fewer than {count} writes waited for the session's row lock within 10 s")


def test_the_fence_leaves_room_for_the_idle_timeout() -> None:
    for lease_s in (1, 2, 10, 60, 3600):
        assert idle_in_transaction_ms(lease_s) < fence_margin_ms(lease_s) < lease_s * 1000
        assert idle_in_transaction_ms(lease_s) < LOCK_TIMEOUT_MS  # a waiting write outlasts a stopped one


async def test_the_timeouts_are_read_back_and_a_dropped_one_is_named(tmp_path: Path) -> None:
    url = POSTGRES.database_for(str(tmp_path))
    wanted = server_settings_of(PostgresSettings(lease_s=2))
    assert wanted["idle_in_transaction_session_timeout"] == "500"
    conn = await open_connection(url, wanted, 10.0)  # as the daemon connects
    try:
        await check_settings(conn, wanted, "test")
    finally:
        await conn.close()
    # As a pooler that resets session settings would leave the session: the others SET, the timeouts not.
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f"SET search_path = {wanted['search_path']}; SET synchronous_commit = on")
        with pytest.raises(StorageUnavailableError) as info:
            await check_settings(conn, wanted, "test")
    finally:
        await conn.close()
    assert "the setting idle_in_transaction_session_timeout is '0'" in info.value.message, info.value.message


async def test_a_group_commits_without_the_writes_of_a_run_that_lost_its_lease(tmp_path: Path) -> None:
    config = _config(tmp_path)
    a = await open_storage(config)
    conn = await asyncpg.connect(config.database_url)
    try:
        run = await attach(a, "s", 4242, "owner")
        await append(a, "s", user("go"), run_id=run.run_id)
        await _expire(conn, run.run_id)
        holder = conn.transaction()
        await holder.start()
        await conn.execute(f"SELECT 1 FROM {schema.SCHEMA}.sessions WHERE session_id = 's' FOR UPDATE")
        first = asyncio.ensure_future(append(a, "s", user("first")))  # holds the queue while the lock is held
        await _waiting_on_a_lock(conn, 1)
        other = asyncio.ensure_future(append(a, "s", assistant("c1")))  # no run: not fenced
        fenced = asyncio.ensure_future(_edit(a, "s", "late", run.run_id))  # the same group as `other`
        await asyncio.sleep(0.05)  # both queued behind `first`
        await holder.rollback()
        assert (await first).first_position == 2
        assert (await other).first_position == 3
        with pytest.raises(PreconditionError) as refused:
            await fenced
        assert refused.value.reason == Reason.UNKNOWN_RUN and refused.value.metadata["cause"] == "lease_lost"
        assert await contents(a, "s") == ["go", "first", ""]  # "late" is written by no one
        with pytest.raises(PreconditionError):  # alone, in its own transaction, the same
            await _edit(a, "s", "late again", run.run_id)
        assert await contents(a, "s") == ["go", "first", ""]
    finally:
        await conn.close()
        await a.close()


async def test_a_takeover_waits_for_the_sessions_row_lock(tmp_path: Path) -> None:
    config = _config(tmp_path)
    a = await open_storage(config)
    b = await open_storage(config)
    conn = await asyncpg.connect(config.database_url)
    try:
        run = await attach(a, "s", 4242, "owner")
        await append(a, "s", user("go"), run_id=run.run_id)
        await _expire(conn, run.run_id)
        holder = conn.transaction()  # as the open write of a stopped daemon
        await holder.start()
        await conn.execute(f"SELECT 1 FROM {schema.SCHEMA}.sessions WHERE session_id = 's' FOR UPDATE")
        takeover = asyncio.ensure_future(attach(b, "s", 7, "takeover"))
        await _waiting_on_a_lock(conn, 1)
        assert not takeover.done()
        await holder.rollback()
        assert (await takeover).session_id == "s"
    finally:
        await conn.close()
        await a.close()
        await b.close()
