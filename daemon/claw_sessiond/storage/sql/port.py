"""The transaction port (``storage/port.py``) written once for both SQL backends.

:class:`SqlPort` has every verb of :class:`~claw_sessiond.storage.port.Port` as an ``async def`` over a
:class:`~.dialect.Conn`, its statements in the neutral form of ``dialect.py``. PostgreSQL's port
(``postgres/port.py``) awaits them on asyncpg inside the caller's transaction; SQLite's
(``sqlite/port.py``) runs them on the writer's connection, where no statement ever waits, so
``steps.run_sync`` finishes each verb's coroutine at once. Each backend overrides only the verbs that
truly differ: the session row's lock and creation and the write's time (the database's clock, or
the writer's), the scope states' locks, SQLite's stored reply form and search index.

Strings a column keeps that may hold NUL (call ids, client ids, model names) pass through
:attr:`~.dialect.Dialect.text` (PostgreSQL's NUL-free form; SQLite keeps them as they are).

Must never: decide (ask a rule), open, commit or roll back a transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast

from ...events import EVENT_SCHEMA_VERSION, MESSAGE_EVENT_TYPES, message_from_payload
from ...history import IndexedCall, OpenCall
from ...model import EntrySelection, Message, Repair, SessionSettings, Usage, UsageDelta
from ...policy import ToolPolicy
from ...rules import StoredRequest
from ...state import ScopeState, labels_json
from ..port import SESSION_COLS, SETTINGS_COLS, SETTINGS_COUNT, NewEntry, Port, SessionRow, session_row, settings_of
from ..port import usage_values as _usage
from . import read_port as snapshot
from .dialect import Conn, Dialect, changed
from .entry_select import select_positions

if TYPE_CHECKING:
    from ...export import ImportedEvent

__all__ = ["SESSION_TABLES", "SqlPort"]

#: Every table with rows of a session (a delete empties them all), the sessions row last.
SESSION_TABLES: Final = ("events", "tool_calls", "requests", "usage_by_model", "session_labels", "sessions")
#: The visible entries of a fork's source in a range of positions (the entries' types: never a clear or an edit).
_VISIBLE_ENTRIES: Final = (
    "session_id = $1 AND position > $2 AND position <= $3 AND hidden_by IS NULL AND type IN ("
    + ", ".join(f"'{t}'" for t in sorted(MESSAGE_EVENT_TYPES))
    + ")"
)
_INDEXED_CALL_COLS: Final = (
    "call_id, assistant_position, call_index, result_position, pending, repair_mode, synthetic_position"
)
_EVENT_COLS: Final = "session_id, position, type, trace_id, ts, schema_version, payload, format, item, client_id"
_USAGE_COLS: Final = (
    "session_id, model, pricing_version, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
    "cost_micros, currency"
)
#: An entry's row (the hot path: one constant text, so that its rendering is found with no string built).
_INSERT_ENTRY: Final = f"INSERT INTO events({_EVENT_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"


class SqlPort:
    """The port over a connection inside its transaction; :data:`DIALECT` is the backend's."""

    __slots__ = ("_conn", "_q")

    DIALECT: ClassVar[Dialect]

    def __init__(self, conn: Conn) -> None:
        self._conn = conn
        self._q = self.DIALECT.sql

    def as_port(self) -> Port:
        """This port as a sequence sees it: each verb's answer, once its driver has run it (a cast)."""
        return cast(Port, self)

    # -- core: the session row, request ids, events (the row, its creation and the time: each backend's)

    async def session_row(self, session_id: str) -> tuple[SessionRow | None, str]:
        raise NotImplementedError

    async def ensure_session(self, session_id: str, workdir: str) -> tuple[SessionRow, str]:
        raise NotImplementedError

    async def stored_request(self, session_id: str, request_id: str) -> StoredRequest | None:
        sql = self._q["SELECT kind, fingerprint, result FROM requests WHERE session_id = $1 AND request_id = $2"]
        found = await self._conn.fetchrow(sql, session_id, request_id)
        return None if found is None else StoredRequest(found[0], found[1], found[2])

    async def remember(
        self, session_id: str, request_id: str, kind: str, fingerprint: str, record: str, now: str
    ) -> None:
        sql = self._q[
            "INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
            "VALUES ($1, $2, $3, $4, $5, $6)"
        ]
        await self._conn.execute(sql, session_id, request_id, kind, fingerprint, record, now)

    async def insert_event(
        self, session_id: str, position: int | None, event_type: str, trace_id: str, ts: str, payload: str
    ) -> int:
        sql = self._q[
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING event_id"
        ]
        version = EVENT_SCHEMA_VERSION
        return int(await self._conn.fetchval(sql, session_id, position, event_type, trace_id, ts, version, payload))

    async def insert_entries(self, session_id: str, entries: Sequence[NewEntry], trace_id: str, ts: str) -> None:
        """Beside each payload: the item (byte for byte) and client id where set; one batch for all."""
        text = self.DIALECT.text
        await self._conn.executemany(
            self._q[_INSERT_ENTRY],
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
                    text(prepared.message.client_id) or None,
                )
                for position, prepared, payload in entries
            ],
        )

    async def advance_session(self, session_id: str, last_position: int, added: int, now: str, workdir: str) -> None:
        sql = self._q[
            "UPDATE sessions SET last_position = $1, message_count = message_count + $2, updated_at = $3, "
            "workdir = CASE WHEN $4 <> '' THEN $4 ELSE workdir END WHERE session_id = $5"
        ]
        await self._conn.execute(sql, last_position, added, now, workdir, session_id)

    async def touch_session(self, session_id: str, now: str, workdir: str) -> None:
        sql = self._q[
            "UPDATE sessions SET updated_at = $1, workdir = CASE WHEN $2 <> '' THEN $2 ELSE workdir END "
            "WHERE session_id = $3"
        ]
        await self._conn.execute(sql, now, workdir, session_id)

    async def open_call_count(self, session_id: str) -> int:
        # Through the index of open calls: at most the limit plus one append.
        sql = "SELECT count(*) FROM tool_calls{open_calls_index} WHERE session_id = $1 AND result_position IS NULL"
        return int(await self._conn.fetchval(self._q[sql], session_id))

    # -- append, usage, clear, event, delete

    async def client_id_position(self, session_id: str, client_id: str, after: int) -> int | None:
        sql = self._q[
            "SELECT position FROM events WHERE session_id = $1 AND client_id = $2 AND position > $3 "
            "AND hidden_by IS NULL LIMIT 1"
        ]
        found = await self._conn.fetchval(sql, session_id, self.DIALECT.text(client_id), after)
        return None if found is None else int(found)

    async def session_policy(self, session_id: str) -> ToolPolicy:
        return await snapshot.session_policy(self._conn, self._q, session_id)

    async def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        return await select_positions(self.DIALECT, self._conn, session_id, selection, limit)

    async def call_result(self, session_id: str, call_id: str) -> tuple[bool, int | None]:
        sql = self._q["SELECT result_position FROM tool_calls WHERE session_id = $1 AND call_id = $2"]
        found = await self._conn.fetchrow(sql, session_id, self.DIALECT.text(call_id))
        return (False, None) if found is None else (True, None if found[0] is None else int(found[0]))

    async def entry_type(self, session_id: str, position: int) -> str | None:
        found = await self._conn.fetchval(
            self._q["SELECT type FROM events WHERE session_id = $1 AND position = $2"], session_id, position
        )
        return None if found is None else str(found)

    async def answer_call(self, session_id: str, call_id: str, position: int) -> None:
        sql = self._q["UPDATE tool_calls SET result_position = $1 WHERE session_id = $2 AND call_id = $3"]
        await self._conn.execute(sql, position, session_id, self.DIALECT.text(call_id))

    async def hide_entry(self, session_id: str, position: int, hidden_by: int) -> None:
        sql = self._q["UPDATE events SET hidden_by = $1 WHERE session_id = $2 AND position = $3"]
        await self._conn.execute(sql, hidden_by, session_id, position)

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
        sql = self._q[
            "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, run_id, pending, "
            "repair_mode) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING 1"
        ]
        inserted = await self._conn.fetchval(
            sql, session_id, self.DIALECT.text(call_id), position, index, run_id, bool(pending), repair_mode
        )
        return inserted is not None

    async def set_usage(self, session_id: str, usage: Usage) -> None:
        sql = self._q[
            "UPDATE sessions SET input_tokens = $1, output_tokens = $2, cache_read_tokens = $3, "
            "cache_write_tokens = $4, cost_micros = $5, currency = $6 WHERE session_id = $7"
        ]
        await self._conn.execute(sql, *_usage(usage), session_id)

    async def add_model_usage(self, session_id: str, delta: UsageDelta, currency: str) -> None:
        # The columns of the row being updated are qualified: unqualified they would be ambiguous on PostgreSQL.
        sql = self._q[
            f"INSERT INTO usage_by_model AS u ({_USAGE_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
            "ON CONFLICT (session_id, model, pricing_version) DO UPDATE SET "
            "input_tokens = u.input_tokens + excluded.input_tokens, "
            "output_tokens = u.output_tokens + excluded.output_tokens, "
            "cache_read_tokens = u.cache_read_tokens + excluded.cache_read_tokens, "
            "cache_write_tokens = u.cache_write_tokens + excluded.cache_write_tokens, "
            "cost_micros = u.cost_micros + excluded.cost_micros, "
            "currency = CASE WHEN u.currency = '' THEN excluded.currency ELSE u.currency END"
        ]
        await self._conn.execute(
            sql,
            session_id,
            self.DIALECT.text(delta.model),
            self.DIALECT.text(delta.pricing_version),
            delta.input_tokens,
            delta.output_tokens,
            delta.cache_read_tokens,
            delta.cache_write_tokens,
            delta.cost_micros,
            currency,
        )

    async def clear_session(self, session_id: str, position: int, now: str, workdir: str) -> None:
        await self._conn.execute(self._q["DELETE FROM tool_calls WHERE session_id = $1"], session_id)
        sql = self._q[
            "UPDATE sessions SET last_position = $1, clear_position = $1, message_count = 0, updated_at = $2, "
            "workdir = CASE WHEN $3 <> '' THEN $3 ELSE workdir END WHERE session_id = $4"
        ]
        await self._conn.execute(sql, position, now, workdir, session_id)

    async def erase_history(self, session_id: str, fingerprint: str, kinds: Sequence[str]) -> int:
        # Through ``events_position``: every history event of the session, and no usage, state or audit event.
        done = await self._conn.execute(
            self._q["DELETE FROM events WHERE session_id = $1 AND position IS NOT NULL"], session_id
        )
        sql = "UPDATE requests SET fingerprint = $1 WHERE session_id = $2 AND kind = ANY($3::text[])"
        await self.DIALECT.each(self._conn, sql, kinds, fingerprint, session_id)
        return changed(done)

    async def delete_session(self, session_id: str) -> int:
        count = int(await self._conn.fetchval(self._q["SELECT count(*) FROM events WHERE session_id = $1"], session_id))
        for table in SESSION_TABLES:
            await self._conn.execute(self._q[f"DELETE FROM {table} WHERE session_id = $1"], session_id)
        return count

    async def prune_requests(self, cutoff_rfc3339: str, limit: int) -> int:
        """``{skip_locked}`` (PostgreSQL): a record another daemon's prune holds is left to it."""
        sql = self._q[
            "DELETE FROM requests WHERE (session_id, request_id) IN (SELECT session_id, request_id FROM requests "
            "WHERE created_at < $1 ORDER BY created_at LIMIT $2{skip_locked})"
        ]
        return changed(await self._conn.execute(sql, cutoff_rfc3339, limit))

    # -- edit tail, create, fork, update, import, state

    async def settings(self, session_id: str) -> SessionSettings | None:
        sql = self._q[f"SELECT {SETTINGS_COLS} FROM sessions WHERE session_id = $1"]
        found = await self._conn.fetchrow(sql, session_id)
        return None if found is None else settings_of(found)

    async def claim_session(
        self, session_id: str, workdir: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> str | None:
        raise NotImplementedError

    async def source_session(self, session_id: str) -> tuple[SessionRow, SessionSettings] | None:
        """``{for_share}`` (PostgreSQL: ``FOR SHARE``): no write to the source commits until this transaction ends."""
        sql = self._q[f"SELECT {SESSION_COLS}, {SETTINGS_COLS} FROM sessions WHERE session_id = $1{{for_share}}"]
        found = await self._conn.fetchrow(sql, session_id)
        row = session_row(found)
        return None if row is None else (row, settings_of(found[-SETTINGS_COUNT:]))

    async def set_session_state(self, session_id: str, state: str) -> None:
        await self._conn.execute(self._q["UPDATE sessions SET state = $1 WHERE session_id = $2"], state, session_id)

    async def set_tool_policy(self, session_id: str, tool_policy: str) -> None:
        sql = self._q["UPDATE sessions SET tool_policy = $1 WHERE session_id = $2"]
        await self._conn.execute(sql, tool_policy, session_id)

    async def set_settings(
        self, session_id: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> None:
        sql = self._q[
            "UPDATE sessions SET state = $1, tool_policy = $2, forked_from = $3, forked_at_position = $4 "
            "WHERE session_id = $5"
        ]
        await self._conn.execute(sql, state, tool_policy, forked_from, forked_at_position, session_id)

    async def write_labels(self, session_id: str, labels: Mapping[str, str]) -> None:
        """At most ``state.MAX_LABELS`` rows."""
        sql = self._q["UPDATE sessions SET labels = $1 WHERE session_id = $2"]
        await self._conn.execute(sql, labels_json(labels), session_id)
        await self._conn.execute(self._q["DELETE FROM session_labels WHERE session_id = $1"], session_id)
        await self._many(
            "INSERT INTO session_labels(session_id, key, value) VALUES ($1, $2, $3)",
            [(session_id, k, v) for k, v in labels.items()],
        )

    async def hold_scope_states(self, scopes: Sequence[str], now: str) -> Mapping[str, str]:
        """At most ``state.MAX_STATE_DELTAS`` scopes: one statement; ``{for_update}`` after the backend has made
        each row exist (PostgreSQL), in sorted order, so that no two writers deadlock."""
        sql = "SELECT scope, state FROM scope_states WHERE scope = ANY($1::text[]) ORDER BY scope{for_update}"
        return {str(r[0]): str(r[1]) for r in await self.DIALECT.each(self._conn, sql, scopes)}

    async def put_scope_states(self, states: Sequence[ScopeState]) -> None:
        await self._many(
            "INSERT INTO scope_states(scope, state, updated_at) VALUES ($1, $2, $3) "
            "ON CONFLICT (scope) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
            [(s.scope, s.state, s.updated_at) for s in states],
        )

    async def tail_rows(
        self, session_id: str, floor: int, cursor: int, limit: int
    ) -> list[tuple[int, str, bool, str | None, int]]:
        sql = (
            "SELECT position, type, hidden_by IS NOT NULL, CASE WHEN type = 'edit' THEN payload END, {event_bytes} "
            "FROM events WHERE session_id = $1 AND position > $2 AND position <= $3 ORDER BY position DESC LIMIT $4"
        )
        rows = await self._conn.fetch(self._q[sql], session_id, floor, cursor, limit)
        return [(int(r[0]), str(r[1]), bool(r[2]), r[3], int(r[4] or 0)) for r in rows]

    async def messages_at(self, session_id: str, positions: Sequence[int]) -> list[Message]:
        sql = (
            "SELECT position, type, trace_id, ts, payload, format, item FROM events "
            "WHERE session_id = $1 AND position = ANY($2::bigint[])"
        )
        found = sorted(await self.DIALECT.each(self._conn, sql, positions, session_id), key=lambda r: r[0])
        return [message_from_payload(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6]) for r in found]

    async def pending_calls(self, session_id: str, call_ids: Sequence[str]) -> list[str]:
        sql = (
            "SELECT call_id FROM tool_calls WHERE session_id = $1 AND pending AND result_position IS NULL "
            "AND call_id = ANY($2::text[])"
        )
        return [self.DIALECT.from_text(r[0]) for r in await self._calls(sql, session_id, call_ids)]

    async def hide_entries(self, session_id: str, hidden: Sequence[tuple[int, int]]) -> None:
        await self._many(
            "UPDATE events SET hidden_by = $1 WHERE session_id = $2 AND position = $3",
            [(by, session_id, position) for position, by in hidden],
        )

    async def reopen_calls(self, session_id: str, answers: Sequence[tuple[str, int]]) -> None:
        await self._many(
            "UPDATE tool_calls SET result_position = NULL WHERE session_id = $1 AND call_id = $2 "
            "AND result_position = $3",
            [(session_id, self.DIALECT.text(call_id), position) for call_id, position in answers],
        )

    async def unindex_calls(self, session_id: str, calls: Sequence[tuple[str, int]]) -> None:
        await self._many(
            "DELETE FROM tool_calls WHERE session_id = $1 AND call_id = $2 AND assistant_position = $3",
            [(session_id, self.DIALECT.text(call_id), position) for call_id, position in calls],
        )

    async def copy_entries(self, source_id: str, session_id: str, after: int, upto: int) -> list[int]:
        """Through ``events_position``: O(entries copied)."""
        sql = self._q[
            f"INSERT INTO events({_EVENT_COLS}) SELECT $4, row_number() OVER (ORDER BY position), type, "
            "trace_id, ts, schema_version, payload, format, item, client_id FROM events "
            f"WHERE {_VISIBLE_ENTRIES} ORDER BY position"
        ]
        await self._conn.execute(sql, source_id, after, upto, session_id)
        sql = self._q[f"SELECT position FROM events WHERE {_VISIBLE_ENTRIES} ORDER BY position"]
        return [int(r[0]) for r in await self._conn.fetch(sql, source_id, after, upto)]

    async def payloads_containing(self, session_id: str, event_type: str, text: str) -> list[tuple[int, str]]:
        sql = (
            "SELECT position, payload FROM events WHERE session_id = $1 AND position IS NOT NULL AND type = $2 "
            "AND {strpos}(payload, $3) > 0 ORDER BY position"
        )
        return [(int(r[0]), str(r[1])) for r in await self._conn.fetch(self._q[sql], session_id, event_type, text)]

    async def set_payloads(self, session_id: str, payloads: Sequence[tuple[int, str]]) -> None:
        """The encoded reply form, where the backend keeps one, goes with the old payload (a Load encodes the new)."""
        await self._many(
            "UPDATE events SET payload = $1{drop_encoded} WHERE session_id = $2 AND position = $3",
            [(payload, session_id, position) for position, payload in payloads],
        )

    async def indexed_calls(self, session_id: str, call_ids: Sequence[str]) -> list[IndexedCall]:
        sql = f"SELECT {_INDEXED_CALL_COLS} FROM tool_calls WHERE session_id = $1 AND call_id = ANY($2::text[])"
        from_text = self.DIALECT.from_text
        return [
            IndexedCall(from_text(r[0]), int(r[1]), int(r[2]), _int(r[3]), bool(r[4]), str(r[5]), _int(r[6]))
            for r in await self._calls(sql, session_id, call_ids)
        ]

    async def index_calls(self, session_id: str, calls: Sequence[IndexedCall]) -> None:
        text = self.DIALECT.text
        await self._many(
            f"INSERT INTO tool_calls(session_id, run_id, {_INDEXED_CALL_COLS}) "
            "VALUES ($1, '', $2, $3, $4, $5, $6, $7, $8)",
            [
                (
                    session_id,
                    text(c.call_id),
                    c.assistant_position,
                    c.call_index,
                    c.result_position,
                    bool(c.pending),
                    c.repair_mode,
                    c.synthetic_position,
                )
                for c in calls
            ],
        )

    async def incarnation(self, session_id: str) -> str | None:
        return await snapshot.incarnation(self._conn, self._q, session_id)

    async def events_of(self, session_id: str) -> list[tuple[int | None, str, str, str, str]]:
        sql = "SELECT position, type, ts, trace_id, payload FROM events WHERE session_id = $1 ORDER BY event_id"
        rows = await self._conn.fetch(self._q[sql], session_id)
        return [(_int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]

    async def insert_events(self, session_id: str, events: Sequence[ImportedEvent]) -> None:
        text = self.DIALECT.text
        await self._many(
            f"INSERT INTO events({_EVENT_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            [
                (
                    session_id,
                    e.position,
                    e.type,
                    e.trace_id,
                    e.ts,
                    e.schema_version,
                    e.payload,
                    e.format,
                    e.item,
                    None if e.client_id is None else text(e.client_id),
                )
                for e in events
            ],
        )

    async def drop_derived_rows(self, session_id: str) -> None:
        for table in ("tool_calls", "usage_by_model", "sessions"):
            await self._conn.execute(self._q[f"DELETE FROM {table} WHERE session_id = $1"], session_id)

    async def insert_session_row(self, row: SessionRow, incarnation: str) -> None:
        sql = self._q[
            f"INSERT INTO sessions({SESSION_COLS}, incarnation) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
        ]
        await self._conn.execute(
            sql,
            row.session_id,
            row.workdir,
            row.created_at,
            row.updated_at,
            row.last_position,
            row.clear_position,
            row.message_count,
            *_usage(row.usage),
            incarnation,
        )

    async def insert_model_usage(self, session_id: str, by_model: Mapping[tuple[str, str], Usage]) -> None:
        text = self.DIALECT.text
        await self._many(
            f"INSERT INTO usage_by_model({_USAGE_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            [(session_id, text(model), text(version), *_usage(u)) for (model, version), u in by_model.items()],
        )

    # -- load and repair

    async def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        return await snapshot.session_and_settings(self._conn, self._q, session_id)

    async def open_calls(self, session_id: str) -> list[OpenCall]:
        return await snapshot.open_calls(self._conn, self.DIALECT, session_id, on_loop=False)

    async def owned_open_calls(self, session_id: str) -> list[OpenCall]:
        return await snapshot.open_calls(self._conn, self.DIALECT, session_id, owned=True, on_loop=False)

    async def still_open(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        sql = (
            "SELECT call_id FROM tool_calls WHERE session_id = $1 AND result_position IS NULL "
            "AND call_id = ANY($2::text[])"
        )
        return {self.DIALECT.from_text(r[0]) for r in await self._calls(sql, session_id, call_ids)}

    async def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        return await snapshot.entries_at(self._conn, self.DIALECT, session_id, positions)

    async def write_repairs(
        self, session_id: str, repairs: Sequence[Repair], payloads: Sequence[str], trace_id: str, now: str
    ) -> None:
        await self._many(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES ($1, $2, 'repair', $3, $4, $5, $6)",
            [
                (session_id, r.position, trace_id, now, EVENT_SCHEMA_VERSION, p)
                for r, p in zip(repairs, payloads, strict=True)
            ],
        )
        text = self.DIALECT.text
        await self._many(
            "UPDATE tool_calls SET result_position = $1 WHERE session_id = $2 AND call_id = $3",
            [(r.position, session_id, text(r.tool_call_id)) for r in repairs],
        )

    async def _many(self, neutral: str, rows: Sequence[Sequence[Any]]) -> None:
        """``neutral`` once per row (nothing for none)."""
        if rows:
            await self._conn.executemany(self._q[neutral], rows)

    async def _calls(self, neutral: str, session_id: str, call_ids: Sequence[str]) -> list[Any]:
        """The rows of ``neutral`` (the session, then a list of call ids) for ``call_ids``, as stored."""
        text = self.DIALECT.text
        return await self.DIALECT.each(self._conn, neutral, [text(c) for c in call_ids], session_id)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
