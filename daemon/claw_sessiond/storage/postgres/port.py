"""The transaction port in PostgreSQL (``storage/port.py``): asynchronous (asyncpg), in the caller's transaction.

The order rule (SPEC §8): the first statement of every write to a session locks its row
(:meth:`PostgresPort.session_row`: ``SELECT … FOR UPDATE``; :meth:`PostgresPort.ensure_session`
first creates a missing row with ``INSERT … ON CONFLICT DO NOTHING``), so writes of one session
commit in one total order whichever daemon sends them, positions come from ``last_position``
under that lock (no sequences), and a retry with the same request id, even on another daemon,
waits for the first and then reads its committed record (READ COMMITTED). Timestamps are the
database's transaction time (:data:`NOW_SQL`), as RFC 3339 UTC text like the SQLite backend's.
Strings that may hold NUL are stored in their NUL-free form (``nul_text.db_text``).

Each verb is an ``async def`` with the parameters and answer of :class:`~claw_sessiond.storage.port.Port`'s;
``steps.run_async`` awaits them for a sequence, which is handed :meth:`PostgresPort.as_port`.

Must never: decide (ask a rule), begin, commit or roll back a transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, ParamSpec, TypeVar, cast

from ...events import EVENT_SCHEMA_VERSION, MESSAGE_EVENT_TYPES, message_from_payload
from ...export import ImportedEvent
from ...history import IndexedCall, OpenCall
from ...model import EntrySelection, Message, Repair, SessionSettings, Usage, UsageDelta
from ...policy import ToolPolicy, policy_from_json
from ...rules import StoredRequest
from ...state import EMPTY, ScopeState, labels_json
from ..nul_text import db_text, from_db_text
from ..port import (
    SESSION_COLS,
    SETTINGS_COLS,
    SETTINGS_COUNT,
    NewEntry,
    Port,
    SessionRow,
    new_incarnation,
    session_row,
    settings_of,
)
from . import entry_reads, row_copies
from . import read_port as snapshot_reads

__all__ = ["NOW_SQL", "SESSION_TABLES", "PostgresPort"]

P = ParamSpec("P")
T = TypeVar("T")

#: The transaction's time as RFC 3339 UTC text with microseconds (the database's clock: SPEC §8).
NOW_SQL: Final = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

_LOCK_SQL: Final = f"SELECT {SESSION_COLS}, {NOW_SQL} FROM sessions WHERE session_id = $1 FOR UPDATE"

#: The tail of a history read backwards (EditTail's walk).
_TAIL_SQL: Final = (
    "SELECT position, type, hidden_by IS NOT NULL, CASE WHEN type = 'edit' THEN payload END, "
    "octet_length(payload) + coalesce(octet_length(item), 0) FROM events "
    "WHERE session_id = $1 AND position > $2 AND position <= $3 ORDER BY position DESC LIMIT $4"
)
#: Event types a fork copies (the entries; never a clear or an edit).
_ENTRY_TYPES: Final = sorted(MESSAGE_EVENT_TYPES)
#: The visible entries of a session (a fork's source) in a range of positions.
_VISIBLE_ENTRIES: Final = (
    "session_id = $1 AND position > $2 AND position <= $3 AND type = ANY($4::text[]) AND hidden_by IS NULL"
)

#: Every table with rows of a session (a delete or a replacing import empties them all).
SESSION_TABLES: Final = ("events", "tool_calls", "requests", "usage_by_model", "session_labels", "sessions")


class PostgresPort:
    """The port over an asyncpg connection inside its transaction."""

    __slots__ = ("_conn",)

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def as_port(self) -> Port:
        """This port as a sequence sees it: each verb's answer, once ``run_async`` has awaited it."""
        return cast(Port, self)

    # -- core: the session row, request ids, events

    async def session_row(self, session_id: str) -> tuple[SessionRow | None, str]:
        found = await self._conn.fetchrow(_LOCK_SQL, session_id)
        if found is not None:
            return session_row(found), str(found[13])
        return None, str(await self._conn.fetchval(f"SELECT {NOW_SQL}"))

    async def ensure_session(self, session_id: str, workdir: str) -> tuple[SessionRow, str]:
        found = await self._conn.fetchrow(_LOCK_SQL, session_id)
        if found is None:
            await self._conn.execute(
                "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation) "
                f"VALUES ($1, $2, {NOW_SQL}, {NOW_SQL}, $3) ON CONFLICT (session_id) DO NOTHING",
                session_id,
                workdir,
                new_incarnation(),
            )
            found = await self._conn.fetchrow(_LOCK_SQL, session_id)
        row = session_row(found)
        assert row is not None  # created above, or by the writer the insert waited for
        return row, str(found[13])

    async def stored_request(self, session_id: str, request_id: str) -> StoredRequest | None:
        found = await self._conn.fetchrow(
            "SELECT kind, fingerprint, result FROM requests WHERE session_id = $1 AND request_id = $2",
            session_id,
            request_id,
        )
        return None if found is None else StoredRequest(found[0], found[1], found[2])

    async def remember(
        self, session_id: str, request_id: str, kind: str, fingerprint: str, record: str, now: str
    ) -> None:
        await self._conn.execute(
            "INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
            "VALUES ($1, $2, $3, $4, $5, $6)",
            session_id,
            request_id,
            kind,
            fingerprint,
            record,
            now,
        )

    async def insert_event(
        self, session_id: str, position: int | None, event_type: str, trace_id: str, ts: str, payload: str
    ) -> int:
        return int(
            await self._conn.fetchval(
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

    async def insert_entries(self, session_id: str, entries: Sequence[NewEntry], trace_id: str, ts: str) -> None:
        await self._conn.executemany(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
            "client_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            [
                (
                    session_id,
                    position,
                    prepared.event_type,
                    trace_id,
                    ts,
                    EVENT_SCHEMA_VERSION,
                    payload,
                    prepared.message.format or None,
                    prepared.message.item if prepared.message.format else None,
                    db_text(prepared.message.client_id) or None,
                )
                for position, prepared, payload in entries
            ],
        )

    async def advance_session(self, session_id: str, last_position: int, added: int, now: str, workdir: str) -> None:
        await self._conn.execute(
            "UPDATE sessions SET last_position = $1, message_count = message_count + $2, updated_at = $3, "
            "workdir = CASE WHEN $4 <> '' THEN $4 ELSE workdir END WHERE session_id = $5",
            last_position,
            added,
            now,
            workdir,
            session_id,
        )

    async def touch_session(self, session_id: str, now: str, workdir: str) -> None:
        await self._conn.execute(
            "UPDATE sessions SET updated_at = $1, workdir = CASE WHEN $2 <> '' THEN $2 ELSE workdir END "
            "WHERE session_id = $3",
            now,
            workdir,
            session_id,
        )

    async def open_call_count(self, session_id: str) -> int:
        return int(
            await self._conn.fetchval(
                "SELECT count(*) FROM tool_calls WHERE session_id = $1 AND result_position IS NULL", session_id
            )
        )

    # -- append, usage, clear, event, delete

    async def client_id_position(self, session_id: str, client_id: str, after: int) -> int | None:
        found = await self._conn.fetchval(
            "SELECT position FROM events WHERE session_id = $1 AND client_id = $2 AND position > $3 "
            "AND hidden_by IS NULL LIMIT 1",
            session_id,
            db_text(client_id),
            after,
        )
        return None if found is None else int(found)

    async def session_policy(self, session_id: str) -> ToolPolicy:
        return policy_from_json(
            await self._conn.fetchval("SELECT tool_policy FROM sessions WHERE session_id = $1", session_id)
        )

    async def call_result(self, session_id: str, call_id: str) -> tuple[bool, int | None]:
        found = await self._conn.fetchrow(
            "SELECT result_position FROM tool_calls WHERE session_id = $1 AND call_id = $2",
            session_id,
            db_text(call_id),
        )
        return (False, None) if found is None else (True, None if found[0] is None else int(found[0]))

    async def entry_type(self, session_id: str, position: int) -> str | None:
        found = await self._conn.fetchval(
            "SELECT type FROM events WHERE session_id = $1 AND position = $2", session_id, position
        )
        return None if found is None else str(found)

    async def answer_call(self, session_id: str, call_id: str, position: int) -> None:
        await self._conn.execute(
            "UPDATE tool_calls SET result_position = $1 WHERE session_id = $2 AND call_id = $3",
            position,
            session_id,
            db_text(call_id),
        )

    async def hide_entry(self, session_id: str, position: int, hidden_by: int) -> None:
        await self._conn.execute(
            "UPDATE events SET hidden_by = $1 WHERE session_id = $2 AND position = $3", hidden_by, session_id, position
        )

    async def insert_call(
        self,
        session_id: str,
        call_id: str,
        position: int,
        index: int,
        run_id: str,
        pending: bool,
        repair_mode: str,
    ) -> bool:
        inserted = await self._conn.fetchval(
            "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, run_id, pending, repair_mode) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING 1",
            session_id,
            db_text(call_id),
            position,
            index,
            run_id,
            bool(pending),
            repair_mode,
        )
        return inserted is not None

    async def set_usage(self, session_id: str, usage: Usage) -> None:
        await self._conn.execute(
            "UPDATE sessions SET input_tokens = $1, output_tokens = $2, cache_read_tokens = $3, "
            "cache_write_tokens = $4, cost_micros = $5, currency = $6 WHERE session_id = $7",
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.cost_micros,
            usage.currency,
            session_id,
        )

    async def add_model_usage(self, session_id: str, delta: UsageDelta, currency: str) -> None:
        # The columns of the row being updated are qualified: unqualified they would be ambiguous here.
        await self._conn.execute(
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
            currency,
        )

    async def clear_session(self, session_id: str, position: int, now: str, workdir: str) -> None:
        await self._conn.execute("DELETE FROM tool_calls WHERE session_id = $1", session_id)
        await self._conn.execute(
            "UPDATE sessions SET last_position = $1, clear_position = $1, message_count = 0, updated_at = $2, "
            "workdir = CASE WHEN $3 <> '' THEN $3 ELSE workdir END WHERE session_id = $4",
            position,
            now,
            workdir,
            session_id,
        )

    async def erase_history(self, session_id: str, fingerprint: str, kinds: Sequence[str]) -> int:
        """The bytes go with the next vacuum (logical erasure, docs/postgres.md)."""
        done = await self._conn.execute("DELETE FROM events WHERE session_id = $1 AND position IS NOT NULL", session_id)
        await self._conn.execute(
            "UPDATE requests SET fingerprint = $1 WHERE session_id = $2 AND kind = ANY($3::text[])",
            fingerprint,
            session_id,
            list(kinds),
        )
        return int(done.split()[-1])

    async def delete_session(self, session_id: str) -> int:
        count = int(await self._conn.fetchval("SELECT count(*) FROM events WHERE session_id = $1", session_id))
        for table in SESSION_TABLES:
            await self._conn.execute(f"DELETE FROM {table} WHERE session_id = $1", session_id)
        return count

    # -- edit tail, create, fork, update, import, state

    async def settings(self, session_id: str) -> SessionSettings | None:
        found = await self._conn.fetchrow(f"SELECT {SETTINGS_COLS} FROM sessions WHERE session_id = $1", session_id)
        return None if found is None else settings_of(found)

    async def claim_session(
        self, session_id: str, workdir: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> str | None:
        """``INSERT … ON CONFLICT DO NOTHING``: a concurrent creation of the id is waited for."""
        created: str | None = await self._conn.fetchval(
            "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation, state, tool_policy, "
            f"forked_from, forked_at_position) VALUES ($1, $2, {NOW_SQL}, {NOW_SQL}, $3, $4, $5, $6, $7) "
            "ON CONFLICT (session_id) DO NOTHING RETURNING created_at",
            session_id,
            workdir,
            new_incarnation(),
            state,
            tool_policy,
            forked_from,
            forked_at_position,
        )
        return created

    async def source_session(self, session_id: str) -> tuple[SessionRow, SessionSettings] | None:
        """``FOR SHARE``: no write to the source commits until this transaction ends."""
        found = await self._conn.fetchrow(
            f"SELECT {SESSION_COLS}, {SETTINGS_COLS} FROM sessions WHERE session_id = $1 FOR SHARE", session_id
        )
        row = session_row(found)
        return None if row is None else (row, settings_of(found[-SETTINGS_COUNT:]))

    async def set_session_state(self, session_id: str, state: str) -> None:
        await self._conn.execute("UPDATE sessions SET state = $1 WHERE session_id = $2", state, session_id)

    async def set_tool_policy(self, session_id: str, tool_policy: str) -> None:
        await self._conn.execute("UPDATE sessions SET tool_policy = $1 WHERE session_id = $2", tool_policy, session_id)

    async def set_settings(
        self, session_id: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> None:
        await self._conn.execute(
            "UPDATE sessions SET state = $1, tool_policy = $2, forked_from = $3, forked_at_position = $4 "
            "WHERE session_id = $5",
            state,
            tool_policy,
            forked_from,
            forked_at_position,
            session_id,
        )

    async def write_labels(self, session_id: str, labels: Mapping[str, str]) -> None:
        await self._conn.execute(
            "UPDATE sessions SET labels = $1 WHERE session_id = $2", labels_json(labels), session_id
        )
        await self._conn.execute("DELETE FROM session_labels WHERE session_id = $1", session_id)
        if labels:
            await self._conn.executemany(
                "INSERT INTO session_labels(session_id, key, value) VALUES ($1, $2, $3)",
                [(session_id, k, v) for k, v in labels.items()],
            )

    async def hold_scope_states(self, scopes: Sequence[str], now: str) -> Mapping[str, str]:
        """Each row made to exist, then all locked (``FOR UPDATE``) in sorted order: no two writers deadlock."""
        await self._conn.execute(
            "INSERT INTO scope_states(scope, state, updated_at) SELECT s, $2, $3 FROM unnest($1::text[]) AS s "
            "ORDER BY s ON CONFLICT (scope) DO NOTHING",
            list(scopes),
            EMPTY,
            now,
        )
        rows = await self._conn.fetch(
            "SELECT scope, state FROM scope_states WHERE scope = ANY($1::text[]) ORDER BY scope FOR UPDATE",
            list(scopes),
        )
        return {str(r[0]): str(r[1]) for r in rows}

    async def put_scope_states(self, states: Sequence[ScopeState]) -> None:
        await self._conn.execute(
            "INSERT INTO scope_states(scope, state, updated_at) "
            "SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) "
            "ON CONFLICT (scope) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
            [s.scope for s in states],
            [s.state for s in states],
            [s.updated_at for s in states],
        )

    async def tail_rows(
        self, session_id: str, floor: int, cursor: int, limit: int
    ) -> list[tuple[int, str, bool, str | None, int]]:
        return [
            (int(r[0]), str(r[1]), bool(r[2]), r[3], int(r[4] or 0))
            for r in await self._conn.fetch(_TAIL_SQL, session_id, floor, cursor, limit)
        ]

    async def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        return await entry_reads.select_positions(self._conn, session_id, selection, limit)

    async def messages_at(self, session_id: str, positions: Sequence[int]) -> list[Message]:
        found = await self._conn.fetch(
            "SELECT position, type, trace_id, ts, payload, format, item FROM events "
            "WHERE session_id = $1 AND position = ANY($2::bigint[]) ORDER BY position",
            session_id,
            list(positions),
        )
        return [message_from_payload(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6]) for r in found]

    async def pending_calls(self, session_id: str, call_ids: Sequence[str]) -> list[str]:
        rows = await self._conn.fetch(
            "SELECT call_id FROM tool_calls WHERE session_id = $1 AND pending AND result_position IS NULL "
            "AND call_id = ANY($2::text[])",
            session_id,
            [db_text(c) for c in call_ids],
        )
        return [from_db_text(r[0]) for r in rows]

    async def hide_entries(self, session_id: str, hidden: Sequence[tuple[int, int]]) -> None:
        if hidden:
            await self._conn.executemany(
                "UPDATE events SET hidden_by = $1 WHERE session_id = $2 AND position = $3",
                [(by, session_id, position) for position, by in hidden],
            )

    async def reopen_calls(self, session_id: str, answers: Sequence[tuple[str, int]]) -> None:
        if answers:
            await self._conn.executemany(
                "UPDATE tool_calls SET result_position = NULL WHERE session_id = $1 AND call_id = $2 "
                "AND result_position = $3",
                [(session_id, db_text(call_id), position) for call_id, position in answers],
            )

    async def unindex_calls(self, session_id: str, calls: Sequence[tuple[str, int]]) -> None:
        if calls:
            await self._conn.executemany(
                "DELETE FROM tool_calls WHERE session_id = $1 AND call_id = $2 AND assistant_position = $3",
                [(session_id, db_text(call_id), position) for call_id, position in calls],
            )

    async def copy_entries(self, source_id: str, session_id: str, after: int, upto: int) -> list[int]:
        bounds = (source_id, after, upto, _ENTRY_TYPES)
        await self._conn.execute(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
            "client_id) SELECT $5, row_number() OVER (ORDER BY position), type, trace_id, ts, schema_version, "
            f"payload, format, item, client_id FROM events WHERE {_VISIBLE_ENTRIES} ORDER BY position",
            *bounds,
            session_id,
        )
        rows = await self._conn.fetch(
            f"SELECT position FROM events WHERE {_VISIBLE_ENTRIES} ORDER BY position", *bounds
        )
        return [int(r[0]) for r in rows]

    async def payloads_containing(self, session_id: str, event_type: str, text: str) -> list[tuple[int, str]]:
        rows = await self._conn.fetch(
            "SELECT position, payload FROM events WHERE session_id = $1 AND position IS NOT NULL AND type = $2 "
            "AND strpos(payload, $3) > 0 ORDER BY position",
            session_id,
            event_type,
            text,
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    async def set_payloads(self, session_id: str, payloads: Sequence[tuple[int, str]]) -> None:
        if payloads:
            await self._conn.executemany(
                "UPDATE events SET payload = $1 WHERE session_id = $2 AND position = $3",
                [(payload, session_id, position) for position, payload in payloads],
            )

    async def indexed_calls(self, session_id: str, call_ids: Sequence[str]) -> list[IndexedCall]:
        return await row_copies.indexed_calls(self._conn, session_id, call_ids)

    async def index_calls(self, session_id: str, calls: Sequence[IndexedCall]) -> None:
        await row_copies.index_calls(self._conn, session_id, calls)

    async def incarnation(self, session_id: str) -> str | None:
        found = await self._conn.fetchval("SELECT incarnation FROM sessions WHERE session_id = $1", session_id)
        return None if found is None else str(found)

    async def events_of(self, session_id: str) -> list[tuple[int | None, str, str, str, str]]:
        return await row_copies.events_of(self._conn, session_id)

    async def insert_events(self, session_id: str, events: Sequence[ImportedEvent]) -> None:
        await row_copies.insert_events(self._conn, session_id, events)

    async def drop_derived_rows(self, session_id: str) -> None:
        for table in ("tool_calls", "usage_by_model", "sessions"):
            await self._conn.execute(f"DELETE FROM {table} WHERE session_id = $1", session_id)

    async def insert_session_row(self, row: SessionRow, incarnation: str) -> None:
        await row_copies.insert_session_row(self._conn, row, incarnation)

    async def insert_model_usage(self, session_id: str, by_model: Mapping[tuple[str, str], Usage]) -> None:
        await row_copies.insert_model_usage(self._conn, session_id, by_model)

    # -- load and repair

    async def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        return await snapshot_reads.session_and_settings(self._conn, session_id)

    async def open_calls(self, session_id: str) -> list[OpenCall]:
        return await snapshot_reads.open_calls(self._conn, session_id)

    async def owned_open_calls(self, session_id: str) -> list[OpenCall]:
        return await snapshot_reads.open_calls(self._conn, session_id, owned=True)

    async def still_open(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        rows = await self._conn.fetch(
            "SELECT call_id FROM tool_calls WHERE session_id = $1 AND result_position IS NULL "
            "AND call_id = ANY($2::text[])",
            session_id,
            [db_text(c) for c in call_ids],
        )
        return {from_db_text(r[0]) for r in rows}

    async def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        return await snapshot_reads.entries_at(self._conn, session_id, positions)

    async def write_repairs(
        self, session_id: str, repairs: Sequence[Repair], payloads: Sequence[str], trace_id: str, now: str
    ) -> None:
        await self._conn.executemany(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES ($1, $2, 'repair', $3, $4, $5, $6)",
            [
                (session_id, r.position, trace_id, now, EVENT_SCHEMA_VERSION, p)
                for r, p in zip(repairs, payloads, strict=True)
            ],
        )
        await self._conn.executemany(
            "UPDATE tool_calls SET result_position = $1 WHERE session_id = $2 AND call_id = $3",
            [(r.position, session_id, db_text(r.tool_call_id)) for r in repairs],
        )
