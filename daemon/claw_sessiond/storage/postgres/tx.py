"""The PostgreSQL transaction code of the writes: ``*_in_tx`` coroutines run in the caller's transaction.

The order rule (SPEC §8): the first statement of every write to a session
locks its row (``SELECT … FOR UPDATE``; a missing row is first created with
``INSERT … ON CONFLICT DO NOTHING`` when the write creates sessions), so
writes of one session commit in one total order whichever daemon sends
them, positions come from ``last_position`` under that lock (no sequences),
and a retry with the same request id, even on another daemon, waits for the
first and then replays its result (READ COMMITTED reads the committed
record after the lock is granted). Each function reads what a rule needs,
asks the rule (``rules.py``, ``events.py``) and writes; the decisions are
never made here. Timestamps are the database's transaction time
(:data:`NOW_SQL`), as RFC 3339 UTC text like the SQLite backend's.
"""

from __future__ import annotations

from typing import Any, Final

from ... import rules
from ...events import EVENT_SCHEMA_VERSION, encode_clear, encode_usage
from ...model import (
    AppendJob,
    AppendResult,
    ClearResult,
    EventResult,
    Usage,
    UsageDelta,
    UsageResult,
)
from ...rules import StoredRequest
from ..nul_text import db_text
from ..port import SESSION_COLS, SessionRow, new_incarnation, session_meta, session_row
from .calls_tx import PolicyOf, answer_in_tx, insert_calls_in_tx
from .port import NOW_SQL, PostgresPort
from .state_tx import apply_deltas_in_tx

__all__ = [
    "NOW_SQL",
    "SESSION_COLS",
    "SessionRow",
    "append_in_tx",
    "clear_in_tx",
    "delete_in_tx",
    "lock_session_in_tx",
    "new_incarnation",
    "open_call_count_in_tx",
    "record_event_in_tx",
    "session_meta",
    "session_row",
    "usage_in_tx",
]


async def lock_session_in_tx(
    conn: Any, session_id: str, *, create_workdir: str | None = None
) -> tuple[SessionRow | None, str]:
    """Lock the session's row (the first statement of every write) and read the transaction's time.

    With ``create_workdir`` (not None) a missing row is created first, so
    there is always a row to lock; a write that fails rolls the creation
    back with everything else. Returns the row (None if not stored and not
    created) and the time as text.
    """
    port = PostgresPort(conn)
    row, now = await port.session_row(session_id)
    if row is None and create_workdir is not None:
        row = await port.ensure_session(session_id, create_workdir, now)
    return row, now


async def _stored_request_in_tx(conn: Any, session_id: str, request_id: str) -> StoredRequest | None:
    """The record of an earlier request with this id on this session, or None (also for no id)."""
    if not request_id:
        return None
    found = await conn.fetchrow(
        "SELECT kind, fingerprint, result FROM requests WHERE session_id = $1 AND request_id = $2",
        session_id,
        request_id,
    )
    return None if found is None else StoredRequest(found[0], found[1], found[2])


async def _remember_in_tx(
    conn: Any,
    session_id: str,
    request_id: str,
    kind: str,
    fp: str,
    result: AppendResult | UsageResult | ClearResult | EventResult,
    now: str,
) -> None:
    if request_id:
        await conn.execute(
            "INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
            "VALUES ($1, $2, $3, $4, $5, $6)",
            session_id,
            request_id,
            kind,
            fp,
            rules.result_record(result),
            now,
        )


async def _insert_event_in_tx(
    conn: Any, session_id: str, position: int | None, event_type: str, trace_id: str, ts: str, payload: str
) -> int:
    return int(
        await conn.fetchval(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING event_id",
            session_id,
            position,
            event_type,
            trace_id,
            ts,
            EVENT_SCHEMA_VERSION,
            payload,
        )
    )


async def open_call_count_in_tx(conn: Any, session_id: str) -> int:
    return int(
        await conn.fetchval(
            "SELECT count(*) FROM tool_calls WHERE session_id = $1 AND result_position IS NULL", session_id
        )
    )


async def append_in_tx(conn: Any, job: AppendJob, max_open_calls: int = 0) -> AppendResult:
    """Append ``job`` in the caller's transaction (``max_open_calls``: 0 for no limit)."""
    row, now = await lock_session_in_tx(conn, job.session_id)
    stored = await _stored_request_in_tx(conn, job.session_id, job.request_id)
    record = rules.replay_record(job.request_id, "append", job.fingerprint, stored)
    if record is not None:
        return rules.append_from_record(record)
    rules.check_expected(job.expected_last_position, row.last_position if row else 0)
    if row is None:
        row, now = await lock_session_in_tx(conn, job.session_id, create_workdir=job.workdir)
        assert row is not None
        # Another daemon may have created it first (the INSERT waited for its commit): ask again.
        stored = await _stored_request_in_tx(conn, job.session_id, job.request_id)
        record = rules.replay_record(job.request_id, "append", job.fingerprint, stored)
        if record is not None:
            return rules.append_from_record(record)
        rules.check_expected(job.expected_last_position, row.last_position)
    position = row.last_position
    first = position + 1
    usage = row.usage
    policy = PolicyOf(conn, job)
    if rules.has_unparsed_calls(job.messages):
        rules.check_unparsed_calls(job.messages, (await policy.get()).allow_unparsed_calls)
    hidden = 0  # synthetic repairs superseded by this append's results
    for prepared in job.messages:
        position += 1
        msg = prepared.message
        if msg.client_id:
            taken = await conn.fetchval(
                "SELECT position FROM events WHERE session_id = $1 AND client_id = $2 AND position > $3 "
                "AND hidden_by IS NULL LIMIT 1",
                job.session_id,
                db_text(msg.client_id),
                row.clear_position,
            )
            rules.check_client_id_free(msg.client_id, None if taken is None else int(taken))
        payload = prepared.payload
        if msg.role == "tool":
            payload, hid = await answer_in_tx(conn, job.session_id, prepared, position, policy)
            hidden += hid
        if msg.tool_calls:
            await insert_calls_in_tx(conn, job.session_id, prepared, position, job.run_id)
        await conn.execute(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
            "client_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            job.session_id,
            position,
            prepared.event_type,
            job.trace_id,
            now,
            EVENT_SCHEMA_VERSION,
            payload,
            msg.format or None,
            msg.item if msg.format else None,
            db_text(msg.client_id) or None,
        )
        if msg.usage is not None:
            usage = await add_usage_in_tx(conn, job.session_id, usage, msg.usage, now, job.trace_id)
    if max_open_calls and rules.makes_calls(job.messages):
        rules.check_open_calls(await open_call_count_in_tx(conn, job.session_id), max_open_calls, job.session_id)
    if job.state_deltas:  # in this transaction: a refused delta refuses the whole append
        await apply_deltas_in_tx(conn, job.session_id, job.state_deltas, job.trace_id, now)
    await conn.execute(
        "UPDATE sessions SET last_position = $1, message_count = message_count + $2, updated_at = $3, "
        "workdir = CASE WHEN $4 <> '' THEN $4 ELSE workdir END WHERE session_id = $5",
        position,
        len(job.messages) - hidden,
        now,
        job.workdir,
        job.session_id,
    )
    result = AppendResult(first, position, now, job.trace_id)
    await _remember_in_tx(conn, job.session_id, job.request_id, "append", job.fingerprint, result, now)
    return result


async def usage_in_tx(
    conn: Any, session_id: str, delta: UsageDelta, request_id: str, fp: str, workdir: str, trace_id: str
) -> UsageResult:
    row, now = await lock_session_in_tx(conn, session_id, create_workdir=workdir)
    assert row is not None
    record = rules.replay_record(request_id, "usage", fp, await _stored_request_in_tx(conn, session_id, request_id))
    if record is not None:
        return rules.usage_from_record(record)
    new = await add_usage_in_tx(conn, session_id, row.usage, delta, now, trace_id)
    await conn.execute(
        "UPDATE sessions SET updated_at = $1, workdir = CASE WHEN $2 <> '' THEN $2 ELSE workdir END "
        "WHERE session_id = $3",
        now,
        workdir,
        session_id,
    )
    result = UsageResult(new, trace_id)
    await _remember_in_tx(conn, session_id, request_id, "usage", fp, result, now)
    return result


async def add_usage_in_tx(conn: Any, session_id: str, old: Usage, delta: UsageDelta, now: str, trace_id: str) -> Usage:
    """Add ``delta`` to the session's totals (``old``: its totals now) and its model's, and log a usage event
    (RecordUsage, and an Append whose entries carry usage).

    Raises:
        PreconditionError, InvalidRequestError: as ``rules.add_usage``.
    """
    new = rules.add_usage(old, delta, session_id)
    await conn.execute(
        "UPDATE sessions SET input_tokens = $1, output_tokens = $2, cache_read_tokens = $3, cache_write_tokens = $4, "
        "cost_micros = $5, currency = $6 WHERE session_id = $7",
        new.input_tokens,
        new.output_tokens,
        new.cache_read_tokens,
        new.cache_write_tokens,
        new.cost_micros,
        new.currency,
        session_id,
    )
    # The columns of the row being updated are qualified: unqualified they would be ambiguous here.
    await conn.execute(
        "INSERT INTO usage_by_model AS u (session_id, model, pricing_version, input_tokens, output_tokens, "
        "cache_read_tokens, cache_write_tokens, cost_micros, currency) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
        "ON CONFLICT (session_id, model, pricing_version) DO UPDATE SET "
        "input_tokens = u.input_tokens + excluded.input_tokens, "
        "output_tokens = u.output_tokens + excluded.output_tokens, "
        "cache_read_tokens = u.cache_read_tokens + excluded.cache_read_tokens, "
        "cache_write_tokens = u.cache_write_tokens + excluded.cache_write_tokens, "
        "cost_micros = u.cost_micros + excluded.cost_micros, "
        "currency = CASE WHEN u.currency = '' THEN excluded.currency ELSE u.currency END",
        session_id,
        db_text(delta.model),
        db_text(delta.pricing_version),
        delta.input_tokens,
        delta.output_tokens,
        delta.cache_read_tokens,
        delta.cache_write_tokens,
        delta.cost_micros,
        rules.charged_currency(delta),
    )
    await _insert_event_in_tx(conn, session_id, None, "usage", trace_id, now, encode_usage(delta))
    return new


async def clear_in_tx(
    conn: Any,
    session_id: str,
    request_id: str,
    fp: str,
    expected: int,
    workdir: str,
    trace_id: str,
    erased: int | None = None,
) -> ClearResult:
    """Write a clear (``erased``: the events an erasing clear removed just before, in this transaction)."""
    row, now = await lock_session_in_tx(conn, session_id)
    record = rules.replay_record(request_id, "clear", fp, await _stored_request_in_tx(conn, session_id, request_id))
    if record is not None:
        return rules.clear_from_record(record)
    rules.check_expected(expected, row.last_position if row else 0)
    if row is None:
        row, now = await lock_session_in_tx(conn, session_id, create_workdir=workdir)
        assert row is not None
    position = row.last_position + 1
    await _insert_event_in_tx(conn, session_id, position, "clear", trace_id, now, encode_clear(erased))
    await conn.execute("DELETE FROM tool_calls WHERE session_id = $1", session_id)
    await conn.execute(
        "UPDATE sessions SET last_position = $1, clear_position = $1, message_count = 0, updated_at = $2, "
        "workdir = CASE WHEN $3 <> '' THEN $3 ELSE workdir END WHERE session_id = $4",
        position,
        now,
        workdir,
        session_id,
    )
    result = ClearResult(position, trace_id, events_erased=erased or 0)
    await _remember_in_tx(conn, session_id, request_id, "clear", fp, result, now)
    return result


async def record_event_in_tx(
    conn: Any, session_id: str, event_type: str, payload: str, request_id: str, fp: str, trace_id: str
) -> EventResult:
    _row, now = await lock_session_in_tx(conn, session_id, create_workdir="")
    record = rules.replay_record(request_id, "event", fp, await _stored_request_in_tx(conn, session_id, request_id))
    if record is not None:
        return rules.event_from_record(record)
    event_id = await _insert_event_in_tx(conn, session_id, None, event_type, trace_id, now, payload)
    await conn.execute("UPDATE sessions SET updated_at = $1 WHERE session_id = $2", now, session_id)
    result = EventResult(event_id, trace_id)
    await _remember_in_tx(conn, session_id, request_id, "event", fp, result, now)
    return result


#: Every table with rows of a session (a delete or a replacing import empties them all).
SESSION_TABLES: Final = ("events", "tool_calls", "requests", "usage_by_model", "session_labels", "sessions")


async def delete_in_tx(conn: Any, session_id: str) -> int:
    """Delete every row of the session (its row locked first); returns how many events it had."""
    await lock_session_in_tx(conn, session_id)
    count = int(await conn.fetchval("SELECT count(*) FROM events WHERE session_id = $1", session_id))
    for table in SESSION_TABLES:
        await conn.execute(f"DELETE FROM {table} WHERE session_id = $1", session_id)
    return count
