"""Plain appends decided by ``writes.append`` in Python and applied by ``apply_appends`` (schema version 6),
on a real PostgreSQL server (``batch_tx.py``, ``batch_plan.py``, ``batch_sql.py``).

Here: the guard (a write by another writer between a queue's plan and its apply makes the queue decide
again, and nothing decided from the old row is written), the upgrade of a database that version 5's
``append_batch`` wrote, and the rows: the plain way stores what the general way stores.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import asyncpg
import pytest

from claw_sessiond.config import Config
from claw_sessiond.errors import SequenceConflictError
from claw_sessiond.events import EVENT_SCHEMA_VERSION
from claw_sessiond.storage import open_storage
from claw_sessiond.storage.postgres import schema
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import append, contents, job, user

S = schema.SCHEMA


def _config(tmp_path: Path, *, empty: bool = False) -> Config:
    (tmp_path / ".claw").mkdir(mode=0o700, exist_ok=True)
    url = (POSTGRES.empty_database_for if empty else POSTGRES.database_for)(str(tmp_path))
    return Config(workspace=tmp_path, database_url=url)


async def _waiting_on_a_lock(conn: asyncpg.Connection, query_part: str, timeout_s: float = 20.0) -> None:
    """Until a backend running a statement that contains ``query_part`` waits for a lock (bounded)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        waiting = await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0",
            query_part,
        )
        if waiting:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"no statement with {query_part!r} waited for a lock within {timeout_s} s")


async def test_a_write_between_the_plan_and_the_apply_makes_the_queue_decide_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = _config(tmp_path)
    store = await open_storage(config)
    other = await asyncpg.connect(config.database_url)
    try:
        await append(store, "s", user("first"))
        tx = other.transaction()
        await tx.start()  # another writer holds the row: the queue is decided from the row it knows, its apply waits
        await other.execute(f"SELECT 1 FROM {S}.sessions WHERE session_id = 's' FOR UPDATE")
        with caplog.at_level(logging.WARNING, logger="claw_sessiond.store"):
            pending = asyncio.gather(
                store.append(job("s", user("expects 1"), expected=1)),
                store.append(job("s", user("any"), request_id="r")),
                return_exceptions=True,
            )
            await _waiting_on_a_lock(other, "apply_appends")
            # ... and writes position 2 (as another daemon's append would) before it commits
            await other.execute(
                f"INSERT INTO {S}.events(session_id, position, type, trace_id, ts, schema_version, payload) "
                f"SELECT session_id, 2, type, 'other', ts, schema_version, payload FROM {S}.events "
                "WHERE session_id = 's' AND position = 1"
            )
            await other.execute(
                f"UPDATE {S}.sessions SET last_position = 2, message_count = message_count + 1 WHERE session_id = 's'"
            )
            await tx.commit()
            conflict, later = await asyncio.wait_for(pending, 30)
        assert isinstance(conflict, SequenceConflictError), conflict  # decided again from the new row
        assert (conflict.metadata["expected"], conflict.metadata["actual"]) == ("1", "2")
        assert not isinstance(later, BaseException) and (later.first_position, later.last_position) == (3, 3)
        assert await contents(store, "s") == ["first", "first", "any"]
        assert "event=append_batch" not in caplog.text  # not refused (a duplicate position), not the general way
        again = await append(store, "s", user("any"), request_id="r")
        assert again.replayed and again.last_position == 3
    finally:
        await other.close()
        await store.close()


async def test_a_version_5_database_written_by_append_batch_is_upgraded_and_appends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, empty=True)
    conn = await asyncpg.connect(config.database_url)
    try:
        with monkeypatch.context() as patch:  # the schema the previous claw-sessiond wrote
            patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:5])
            patch.setattr(schema, "SCHEMA_VERSION", 5)
            assert len(await schema.migrate(conn)) == 5
        old = job("s", user("a"), user("b"), request_id="r1", workdir="/w", trace_id="t1")
        await conn.execute(f"SET search_path = {S}")
        rows = await conn.fetch(  # the call the previous version made for a queue of one plain append
            "SELECT outcome, first_position, last_position, at FROM append_batch("
            + ", ".join(f"${n}" for n in range(1, 17))
            + ")",
            "s",
            "claw_sessiond_changes",
            "",
            EVENT_SCHEMA_VERSION,
            [old.request_id],
            [old.fingerprint],
            [old.expected_last_position],
            [old.workdir],
            [old.trace_id],
            [json.dumps(old.trace_id)],
            "incarnation-1",
            [len(old.messages)],
            [p.event_type for p in old.messages],
            [p.payload for p in old.messages],
            [None for _ in old.messages],
            [None for _ in old.messages],
        )
        assert [tuple(r)[:3] for r in rows] == [("ok", 1, 2)]
        first_at = rows[0]["at"]
    finally:
        await conn.close()
    store = await open_storage(config)
    try:
        assert store.applied_migrations == [schema.MIGRATIONS[5].name]
        assert (await store.figures()).schema_version == schema.SCHEMA_VERSION == 6
        again = await append(store, "s", user("a"), user("b"), request_id="r1", workdir="/w", trace_id="t1")
        assert again.replayed and (again.first_position, again.last_position, again.created_at) == (1, 2, first_at)
        new = await append(store, "s", user("c"), request_id="r2", expected=2)
        assert (new.first_position, new.last_position, new.replayed) == (3, 3, False)
        assert await contents(store, "s") == ["a", "b", "c"]
    finally:
        await store.close()
    conn = await asyncpg.connect(config.database_url)
    try:
        functions = await conn.fetch(
            "SELECT p.proname FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace "
            "WHERE n.nspname = $1 ORDER BY p.proname",
            S,
        )
        assert [f[0] for f in functions] == ["apply_appends"]  # version 5's append_batch is gone
    finally:
        await conn.close()


_EVENT_COLS = "position, type, trace_id, schema_version, payload, format, item, client_id, hidden_by"
_SESSION_COLS = "workdir, last_position, clear_position, message_count, created_at = updated_at"


async def _rows(conn: asyncpg.Connection, session_id: str) -> tuple[object, ...]:
    events = await conn.fetch(
        f"SELECT {_EVENT_COLS} FROM {S}.events WHERE session_id = $1 ORDER BY event_id", session_id
    )
    session = await conn.fetch(f"SELECT {_SESSION_COLS} FROM {S}.sessions WHERE session_id = $1", session_id)
    requests = await conn.fetch(
        f"SELECT request_id, kind, length(fingerprint), result::jsonb - 'at', created_at = (result::jsonb ->> 'at') "
        f"FROM {S}.requests WHERE session_id = $1 ORDER BY request_id",
        session_id,
    )
    return [tuple(r) for r in events], [tuple(r) for r in session], [tuple(r) for r in requests]


async def test_the_plain_way_stores_the_rows_the_general_way_stores(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = _config(tmp_path)
    store = await open_storage(config)
    conn = await asyncpg.connect(config.database_url)
    try:

        async def write(sid: str) -> None:
            await asyncio.gather(
                store.append(job(sid, user("a \x00 é"), user("b"), request_id="r1", workdir="/w", trace_id="t1")),
                store.append(job(sid, user("c"), expected=2, trace_id="t2")),
                store.append(job(sid, user("d"), request_id="r2", workdir="/v", trace_id="t3")),
            )

        await write("plain")
        await conn.execute(f"DROP FUNCTION {S}.apply_appends")  # the same queue, the general way
        with caplog.at_level(logging.WARNING, logger="claw_sessiond.store"):
            await write("general")
        assert "event=append_batch_refused" in caplog.text
        plain, general = await _rows(conn, "plain"), await _rows(conn, "general")
        assert plain == general
        assert len(plain[0]) == 4 and plain[1][0][:4] == ("/v", 4, 0, 4) and len(plain[2]) == 2
    finally:
        await conn.close()
        await store.close()
