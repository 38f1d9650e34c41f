"""Plain appends through the server-side ``append_batch`` (schema version 5), on a real PostgreSQL server.

The contract suite (``tests/storage/``) runs every append rule through it already; here: the upgrade
from version 4, the refused call that falls back to savepoints, the request record's spelling,
one bad append in a batch failing alone, and two storages (two daemons) creating one new session.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import asyncpg
import pytest

from claw_sessiond import rules
from claw_sessiond.config import Config
from claw_sessiond.errors import InvalidRequestError, Reason, SequenceConflictError
from claw_sessiond.model import AppendResult
from claw_sessiond.storage import Storage, open_storage
from claw_sessiond.storage.postgres import schema
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import append, assistant, contents, job, user


def _config(tmp_path: Path, *, empty: bool = False) -> Config:
    """A database of the test's own: migrated, or ``empty`` for a test that writes an older version's schema."""
    (tmp_path / ".claw").mkdir(mode=0o700, exist_ok=True)
    url = (POSTGRES.empty_database_for if empty else POSTGRES.database_for)(str(tmp_path))
    return Config(workspace=tmp_path, database_url=url)


async def _sql(config: Config, query: str, *args: object) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(config.database_url)
    try:
        return list(await conn.fetch(query, *args))
    finally:
        await conn.close()


async def test_a_version_4_database_is_upgraded_and_replays_its_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, empty=True)
    with monkeypatch.context() as patch:  # what the previous claw-sessiond wrote (no append_batch)
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:4])
        patch.setattr(schema, "SCHEMA_VERSION", 4)
        old = await open_storage(config)
        try:
            assert (await old.figures()).schema_version == 4
            first = await append(old, "s", user("a"), user("b"), request_id="r1", workdir="/w")
            await append(old, "s", assistant("c1"))  # not plain: the general way on every version
        finally:
            await old.close()
    assert (first.first_position, first.last_position) == (1, 2)
    store = await open_storage(config)
    try:
        assert store.applied_migrations == [schema.MIGRATIONS[4].name]
        assert (await store.figures()).schema_version == 5
        again = await append(store, "s", user("a"), user("b"), request_id="r1", workdir="/w")
        assert again.replayed and (again.first_position, again.last_position) == (1, 2)
        assert again.created_at == first.created_at
        new = await append(store, "s", user("c"), request_id="r2")
        assert (new.first_position, new.last_position, new.replayed) == (4, 4, False)
        assert await contents(store, "s") == ["a", "b", "", "c"]
    finally:
        await store.close()


async def test_the_request_record_is_spelled_as_the_rules_spell_it(tmp_path: Path) -> None:
    config = _config(tmp_path)
    store = await open_storage(config)
    try:
        done = await append(store, "s", user("a"), user("b"), request_id="r1", trace_id='t "quoted" é')
    finally:
        await store.close()
    rows = await _sql(config, f"SELECT kind, result FROM {schema.SCHEMA}.requests WHERE request_id = 'r1'")
    want = AppendResult(done.first_position, done.last_position, done.created_at, 't "quoted" é')
    assert [(r["kind"], r["result"]) for r in rows] == [("append", rules.result_record(want))]


async def _batch_with_bad_appends(store: Storage) -> None:
    """Appends submitted together (one batch): the bad ones fail alone and write nothing."""
    await append(store, "s", user("first"), request_id="r0")
    jobs = [job("s", user(f"m{i}")) for i in range(20)]
    jobs[5] = job("s", user("conflict"), expected=999)
    jobs[8] = job("s", user("other content"), request_id="r0")
    jobs[9] = job("s", user("first"), request_id="r0")
    jobs[12] = jobs[13] = job("s", user("same"), request_id="r12")
    results = await asyncio.gather(*[store.append(j) for j in jobs], return_exceptions=True)
    assert isinstance(results[5], SequenceConflictError), results[5]
    assert isinstance(results[8], InvalidRequestError) and results[8].reason == Reason.REQUEST_ID_REUSED
    assert getattr(results[9], "replayed", None) is True and getattr(results[9], "last_position", 0) == 1
    assert getattr(results[13], "replayed", None) is True
    assert getattr(results[12], "last_position", 0) == getattr(results[13], "last_position", -1)
    written = [f"m{i}" if i != 12 else "same" for i in range(20) if i not in (5, 8, 9, 13)]
    assert await contents(store, "s") == ["first", *written]
    positions = [getattr(r, "last_position", 0) for i, r in enumerate(results) if i not in (5, 8, 9, 13)]
    assert positions == list(range(2, 2 + len(written)))


async def test_one_bad_append_in_a_batch_fails_alone(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = await open_storage(_config(tmp_path))
    try:
        with caplog.at_level(logging.WARNING, logger="claw_sessiond.store"):
            await _batch_with_bad_appends(store)
        assert "event=append_batch" not in caplog.text  # neither refused nor disagreeing: append_batch wrote them
    finally:
        await store.close()


async def test_a_refused_call_runs_the_batch_again_in_savepoints(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = _config(tmp_path)
    store = await open_storage(config)
    try:
        await _sql(config, f"DROP FUNCTION {schema.SCHEMA}.append_batch")  # every call now fails on the server
        with caplog.at_level(logging.WARNING, logger="claw_sessiond.store"):
            await _batch_with_bad_appends(store)
        assert "event=append_batch_refused" in caplog.text and "sqlstate=42883" in caplog.text
    finally:
        await store.close()


async def test_two_daemons_creating_one_session_at_once(tmp_path: Path) -> None:
    config = _config(tmp_path)
    a = await open_storage(config)
    b = await open_storage(config)
    try:
        for round_ in range(5):
            sid = f"new-{round_}"
            results = await asyncio.gather(
                a.append(job(sid, user("a"), expected=-1)),
                b.append(job(sid, user("b"), expected=-1)),
                return_exceptions=True,
            )
            conflicts = [r for r in results if isinstance(r, SequenceConflictError)]
            assert len(conflicts) == 1, results  # expected -1 (a new session) holds for one of them only
            assert len(await contents(a, sid)) == 1
            sid = f"same-{round_}"
            same = await asyncio.gather(
                a.append(job(sid, user("x"), request_id="r")), b.append(job(sid, user("x"), request_id="r"))
            )
            assert sorted(r.replayed for r in same) == [False, True]
            assert await contents(b, sid) == ["x"]
    finally:
        await a.close()
        await b.close()
