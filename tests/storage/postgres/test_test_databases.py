"""The suite's own PostgreSQL databases (``tests/helpers/postgres.py``): each test's database is a copy of one
migrated once per worker, with an id of its own; a test of the migrations gets an empty one."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from claw_sessiond.storage.postgres.schema import SCHEMA, SCHEMA_VERSION
from tests.helpers.postgres import SHARED as POSTGRES
from tests.helpers.postgres import require_server, throwaway_postgres


async def _version_and_id(url: str) -> tuple[int, str]:
    conn = await asyncpg.connect(url)
    try:
        version = await conn.fetchval(f"SELECT max(version) FROM {SCHEMA}.schema_migrations")
        database_id = await conn.fetchval(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'database_id'")
        return int(version), str(database_id)
    finally:
        await conn.close()


async def test_each_database_is_a_migrated_copy_with_an_id_of_its_own(tmp_path: Path) -> None:
    a, b = POSTGRES.database_for(str(tmp_path / "a")), POSTGRES.database_for(str(tmp_path / "b"))
    assert a != b and POSTGRES.database_for(str(tmp_path / "a")) == a  # the same folder: the same database
    (version_a, id_a), (version_b, id_b) = await _version_and_id(a), await _version_and_id(b)
    assert version_a == version_b == SCHEMA_VERSION
    assert id_a != id_b and len(id_a) == 32


async def test_a_test_of_the_migrations_gets_an_empty_database(tmp_path: Path) -> None:
    empty = POSTGRES.empty_database_for(str(tmp_path / "empty"))
    conn = await asyncpg.connect(empty)
    try:
        assert await conn.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = $1", SCHEMA) == 0
    finally:
        await conn.close()
    migrated = POSTGRES.database_for(str(tmp_path / "migrated"))
    with pytest.raises(ValueError, match="has a database already, migrated"):
        POSTGRES.empty_database_for(str(tmp_path / "migrated"))
    assert migrated != empty


def test_a_stopped_throwaway_server_leaves_nothing_behind() -> None:
    """Its folder goes at the end, databases and all (their folders removed several at once)."""
    with throwaway_postgres(require_server()) as server:
        for name in ("first", "second", "third"):
            server.create_database(name)
        root = server.data_dir.parent
        assert len([p for p in (root / "data" / "base").iterdir() if p.is_dir()]) >= 6  # template0/1, postgres
    assert not root.exists()
