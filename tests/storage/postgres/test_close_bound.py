"""A PostgreSQL storage's close is bounded: a connection that is never given back does not hold a daemon's stop.

Pool.close() waits for every connection to come back. A daemon stops its servers first (handlers finished or
cancelled), so what could still hold one is a write that was never acknowledged; after ``CLOSE_BOUND_S`` the
pool's connections are cut (CI once saw a daemon on PostgreSQL take over 20 s to stop on SIGTERM).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from claw_sessiond.config import Config
from claw_sessiond.storage import open_storage
from claw_sessiond.storage.postgres.store import CLOSE_BOUND_S, PostgresStorage
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import append, user


async def test_a_connection_never_given_back_is_cut_after_the_bound(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ".claw").mkdir(mode=0o700)
    store = await open_storage(Config(workspace=tmp_path, database_url=POSTGRES.database_for(str(tmp_path))))
    assert isinstance(store, PostgresStorage)
    await append(store, "s", user("x"))
    held = await store.engine.pool.acquire()  # a connection whose holder never gives it back
    # Without the server's idle-in-transaction timeout (timeouts.py), which would end this session first.
    await held.execute("SET idle_in_transaction_session_timeout = 0")
    await held.execute("BEGIN")
    backend = int(await held.fetchval("SELECT pg_backend_pid()"))
    alive = f"SELECT count(*) FROM pg_stat_activity WHERE pid = {backend}"
    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="claw_sessiond.store"):
        await store.close()
    took = time.monotonic() - began
    assert CLOSE_BOUND_S <= took < CLOSE_BOUND_S + 10, took
    assert "event=storage_close_cut" in caplog.text
    for _ in range(100):  # the server ends the held connection's session once it is cut
        if POSTGRES.server().psql(alive) == "0":
            break
        time.sleep(0.1)
    assert POSTGRES.server().psql(alive) == "0"
