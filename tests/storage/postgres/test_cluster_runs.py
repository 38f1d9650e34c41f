"""Runs across two storages on one PostgreSQL database (two daemons in one process), and the upgrade that
brought their tables (schema version 1 → 2, and on to the latest).

Each storage registers as a daemon of its own (its lease, its lock); only the database tells one
about the other's runs.
"""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from claw_sessiond.config import Config
from claw_sessiond.errors import AlreadyExistsError, PreconditionError, Reason
from claw_sessiond.model import Message
from claw_sessiond.storage import Storage, open_storage
from claw_sessiond.storage.postgres import schema
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import append, assistant, attach, result, usage, user


def _config(tmp_path: Path, *, empty: bool = False) -> Config:
    """A database of the test's own: migrated, or ``empty`` for a test that writes an older version's schema."""
    (tmp_path / ".claw").mkdir(mode=0o700, exist_ok=True)
    url = (POSTGRES.empty_database_for if empty else POSTGRES.database_for)(str(tmp_path))
    return Config(workspace=tmp_path, database_url=url, lease_s=60)


async def test_a_run_on_one_daemon_is_in_flight_for_the_other_until_its_lease_goes(tmp_path: Path) -> None:
    config = _config(tmp_path)
    a: Storage = await open_storage(config)
    b: Storage = await open_storage(config)
    try:
        run = await attach(a, "s", 4242, "owner")
        await append(a, "s", user("go"), assistant("c1"), run_id=run.run_id)
        loaded = await b.load("s", "/w", "t")
        assert loaded.repairs == [] and [c.tool_call_id for c in loaded.in_flight] == ["c1"]
        assert b.runs.pid_of(run.run_id) == 4242 and b.runs.host_of(run.run_id)
        with pytest.raises(PreconditionError) as owned:
            await attach(b, "s", 1, "second")
        assert owned.value.reason == Reason.RUN_ALREADY_OWNED and owned.value.metadata["pid"] == "4242"

        # A's lease runs out on the database's clock: B repairs, and A's late result is refused.
        conn = await asyncpg.connect(config.database_url)
        try:
            await conn.execute(
                f"UPDATE {schema.SCHEMA}.daemons SET heartbeat_at = now() - interval '1 hour' "
                f"WHERE daemon_no = (SELECT daemon_no FROM {schema.SCHEMA}.runs WHERE run_id = $1)",
                run.run_id,
            )
        finally:
            await conn.close()
        assert [r.tool_call_id for r in (await b.load("s", "/w", "t")).repairs] == ["c1"]
        before = (await b.figures()).events
        with pytest.raises(PreconditionError) as fenced:
            await append(a, "s", result("c1", "late"), run_id=run.run_id)
        assert fenced.value.reason == Reason.UNKNOWN_RUN and fenced.value.metadata["cause"] == "lease_lost"
        assert (await b.figures()).events == before  # nothing written
        taken = await attach(b, "s", 2, "next")  # the dead run no longer owns the session
        assert taken.session_id == "s"
    finally:
        await a.close()
        await b.close()


async def test_a_version_1_database_is_upgraded_and_keeps_its_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, empty=True)
    conn = await asyncpg.connect(config.database_url)
    try:
        with monkeypatch.context() as patch:  # what an older claw-sessiond wrote
            patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
            patch.setattr(schema, "SCHEMA_VERSION", 1)
            assert len(await schema.migrate(conn)) == 1
        await conn.execute(
            f"INSERT INTO {schema.SCHEMA}.sessions(session_id, workdir, created_at, updated_at, incarnation) "
            "VALUES ('old', '/w', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'i1')"
        )
    finally:
        await conn.close()
    store = await open_storage(config)
    try:
        assert store.applied_migrations == [m.name for m in schema.MIGRATIONS[1:]]
        assert (await store.figures()).schema_version == schema.SCHEMA_VERSION
        loaded = await store.load("old", "/w", "t")
        assert loaded.session.created_at.startswith("2026-01-01")
        run = await attach(store, "old", 7, "owner")
        await append(store, "old", user("go"), assistant("c1"), run_id=run.run_id)
        assert [c.tool_call_id for c in (await store.load("old", "/w", "t")).in_flight] == ["c1"]
        await append(store, "old", user("after the upgrade \x00"))  # v3: a message holding NUL is stored
    finally:
        await store.close()


async def test_a_version_3_database_keeps_its_ids_holding_u0001(tmp_path: Path) -> None:
    """Version 4 stores ids and names escaped (``nul_text.db_text``: NUL as U+0001 U+0001, U+0001 as U+0001
    U+0002); a version 3 database stored U+0001 as itself, and the upgrade escapes what it holds."""
    config = _config(tmp_path)
    store = await open_storage(config)
    try:
        tagged = Message("user", "tagged", client_id="k\x01")
        await append(store, "old", tagged, assistant("c\x01", "c"))
        await usage(store, "old", input_tokens=5, model="m\x01", pricing_version="p\x01")
    finally:
        await store.close()
    conn = await asyncpg.connect(config.database_url)
    try:  # as version 3 stored them, and its version
        for table, column in (("events", "client_id"), ("tool_calls", "call_id"), ("usage_by_model", "model")):
            await conn.execute(
                f"UPDATE {schema.SCHEMA}.{table} SET {column} = replace({column}, chr(1) || chr(2), chr(1))"
            )
        await conn.execute(
            f"UPDATE {schema.SCHEMA}.usage_by_model SET pricing_version = replace(pricing_version, chr(1) || chr(2), "
            "chr(1))"
        )
        assert await conn.fetchval(f"SELECT count(*) FROM {schema.SCHEMA}.tool_calls WHERE call_id = 'c' || chr(1)")
        await conn.execute(f"DELETE FROM {schema.SCHEMA}.schema_migrations WHERE version >= 4")
        await conn.execute(f"DROP FUNCTION {schema.SCHEMA}.append_batch")  # version 5's
    finally:
        await conn.close()
    store = await open_storage(config)
    try:
        assert store.applied_migrations == [m.name for m in schema.MIGRATIONS[3:]]
        loaded = await store.load("old", "/w", "t")
        assert sorted(r.tool_call_id for r in loaded.repairs) == ["c", "c\x01"]
        with pytest.raises(AlreadyExistsError):  # the client id is found taken
            await append(store, "old", Message("user", "again", client_id="k\x01"), expected=4)
        _totals, by_model = await store.usage_by_model("old")
        assert [(m.model, m.pricing_version, m.usage.input_tokens) for m in by_model] == [("m\x01", "p\x01", 5)]
    finally:
        await store.close()
