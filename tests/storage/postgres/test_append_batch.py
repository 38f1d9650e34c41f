"""Plain appends decided by Append's sequence and applied in one statement (``batch_tx.py``), on a real server.

The contract suite (``tests/storage/``) runs every append rule through it already; here: the upgrade
from version 4 (which added the server function ``append_batch``, no longer called), a refused
batch that falls back to savepoints, the request record's spelling, one bad append in a batch
failing alone, and two storages (two daemons) creating one new session.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
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


async def _waiting_on_a_lock(conn: asyncpg.Connection) -> None:
    """Wait (at most 10 s) until one of this process's storage connections waits for a lock."""
    end = time.monotonic() + 10
    while time.monotonic() < end:
        waiting = await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
            f"claw-sessiond {os.getpid()}",
        )
        if waiting:
            return
        await asyncio.sleep(0.01)
    pytest.fail("the batch did not wait for the session's row lock within 10 s")


async def test_a_record_committed_while_the_batch_waited_is_replayed_the_general_way(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another daemon writes the same request while holding the row lock; the batch waits for it.

    Under READ COMMITTED the batch's locking statement reads the requests as of its start
    (https://www.postgresql.org/docs/current/transaction-iso.html#XACT-READ-COMMITTED: only the
    locked row is read again), so it misses the record and plans to write the append again; the
    key of ``requests`` refuses that, everything rolls back, and the general way replays it.
    """
    config = _config(tmp_path)
    store = await open_storage(config)
    other = await asyncpg.connect(config.database_url)
    try:
        await append(store, "s", user("first"))
        late = job("s", user("late"), request_id="r1")
        entry = late.messages[0]
        first = AppendResult(2, 2, "2026-01-02T03:04:05.000006Z", "trace")
        async with other.transaction():  # what the other daemon's general way writes, the row locked first
            await other.execute(f"SELECT 1 FROM {schema.SCHEMA}.sessions WHERE session_id = 's' FOR UPDATE")
            await other.execute(
                f"INSERT INTO {schema.SCHEMA}.events(session_id, position, type, trace_id, ts, schema_version, "
                "payload) VALUES ('s', 2, $1, 'trace', $2, 1, $3)",
                entry.event_type,
                first.created_at,
                entry.payload,
            )
            await other.execute(
                f"INSERT INTO {schema.SCHEMA}.requests(session_id, request_id, kind, fingerprint, result, "
                "created_at) VALUES ('s', 'r1', 'append', $1, $2, $3)",
                late.fingerprint,
                rules.result_record(first),
                first.created_at,
            )
            await other.execute(
                f"UPDATE {schema.SCHEMA}.sessions SET last_position = 2, message_count = 2 WHERE session_id = 's'"
            )
            with caplog.at_level(logging.WARNING, logger="claw_sessiond.store"):
                pending = asyncio.ensure_future(store.append(late))
                await _waiting_on_a_lock(other)
        with caplog.at_level(logging.WARNING, logger="claw_sessiond.store"):
            again = await pending
        assert again.replayed and (again.first_position, again.last_position) == (2, 2)
        assert again.created_at == first.created_at
        assert await contents(store, "s") == ["first", "late"]
        assert "event=append_batch_refused" in caplog.text and "sqlstate=23505" in caplog.text
    finally:
        await other.close()
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
