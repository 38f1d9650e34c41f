"""The settings the PostgreSQL backend relies on stay in force behind a real PgBouncer in session mode.

The database's own defaults are set against the daemon (``ALTER DATABASE ... SET synchronous_commit = off``,
``lock_timeout = 0``, ``search_path = public``, ``statement_timeout = 0``), and PgBouncer is configured
to drop those settings from the start-up packet (``ignore_startup_parameters``), the configuration in which
they used to vanish silently. Every connection of the storage's pool, after many uses, must still show the
values the daemon set (asyncpg's reset on release, ``RESET ALL``, would take them back to the database's).
A real PgBouncer (``tests/helpers/pgbouncer.py``) in front of the test
process's throwaway server. And the start-up check names a setting that is not the daemon's on the server
session.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest

from claw_sessiond.config import Config
from claw_sessiond.errors import StorageUnavailableError
from claw_sessiond.storage import open_storage
from claw_sessiond.storage.postgres.connect import PostgresSettings, server_settings_of
from claw_sessiond.storage.postgres.pooling import check_settings, set_statements
from claw_sessiond.storage.postgres.store import PostgresStorage
from tests.helpers.pgbouncer import throwaway_pgbouncer
from tests.helpers.postgres import SHARED as POSTGRES

_NAMES = ("search_path", "synchronous_commit", "lock_timeout", "statement_timeout")


async def test_settings_are_in_force_on_every_pooled_connection_behind_session_pooling(tmp_path: Path) -> None:
    (tmp_path / ".claw").mkdir(mode=0o700)
    url = POSTGRES.database_for(str(tmp_path))
    database = url.split("/")[-1].split("?")[0]
    server = POSTGRES.server()
    server.psql(
        f"ALTER DATABASE {database} SET synchronous_commit = off; ALTER DATABASE {database} SET lock_timeout = 0; "
        f"ALTER DATABASE {database} SET search_path = public; ALTER DATABASE {database} SET statement_timeout = 0"
    )
    with throwaway_pgbouncer(server, "session", ignore_startup_parameters=",".join(_NAMES)) as bouncer:
        cfg = Config(
            workspace=tmp_path,
            database_url=bouncer.url(database),
            pg_pool_min=3,
            pg_pool_max=3,
            pg_lock_timeout_ms=1234,
            pg_statement_timeout_ms=56789,
        )
        store = await open_storage(cfg)
        assert isinstance(store, PostgresStorage)
        try:
            seen: list[dict[str, str]] = []

            async def one() -> None:
                async with store.engine.pool.acquire() as conn:
                    rows = await conn.fetch(
                        "SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])", _NAMES
                    )
                    seen.append({r["name"]: r["setting"] for r in rows})
                    await asyncio.sleep(0.01)

            for _ in range(4):  # every connection of the pool, each used and released several times
                await asyncio.gather(*(one() for _ in range(6)))
            expected = {
                "search_path": "claw_sessiond",
                "synchronous_commit": "on",
                "lock_timeout": "1234",
                "statement_timeout": "56789",
            }
            assert seen and all(s == expected for s in seen), seen
        finally:
            await store.close()


async def test_a_setting_not_in_force_on_the_server_session_is_named(tmp_path: Path) -> None:
    url = POSTGRES.database_for(str(tmp_path))
    settings = server_settings_of(PostgresSettings(lock_timeout_ms=4321))
    conn = await asyncpg.connect(url)  # the settings never SET on it: what a resetting pooler would leave
    try:
        # Everything but lock_timeout SET (the timeouts of timeouts.py among them).
        await conn.execute(set_statements({k: v for k, v in settings.items() if k != "lock_timeout"}))
        with pytest.raises(StorageUnavailableError) as refused:
            await check_settings(conn, settings, "the-target")
        assert "the setting lock_timeout is '0' (from default)" in str(refused.value)
        assert "refusing to start" in str(refused.value)
        await conn.execute(set_statements(settings))
        await check_settings(conn, settings, "the-target")  # all SET: accepted
    finally:
        await conn.close()
