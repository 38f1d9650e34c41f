"""The transaction port in SQLite (``storage/port.py``): synchronous, on the writer thread, in its transaction.

Only the writer opens transactions (``BEGIN IMMEDIATE``, which already serializes every
write), so a port is made per transaction around the writer's ``sqlite3.Connection`` and
each verb is one or two statements, answered at once: ``steps.run_sync`` drives a sequence
over it. The SQL is this backend's; which verb to call, and what the answers mean, is the
sequence's.

Must never: decide (ask a rule), open, commit or roll back a transaction, or be used off the
writer thread.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Final, ParamSpec, TypeVar

from ...events import EVENT_SCHEMA_VERSION, MESSAGE_EVENT_TYPES, message_from_payload
from ...export import ImportedEvent
from ...history import IndexedCall, OpenCall
from ...model import EntrySelection, Message, Repair, SessionSettings, Usage, UsageDelta, now_rfc3339
from ...policy import ToolPolicy, policy_from_json
from ...rules import StoredRequest
from ...state import ScopeState, labels_json
from ..port import (
    SESSION_COLS,
    SETTINGS_COLS,
    SETTINGS_COUNT,
    NewEntry,
    Port,
    SessionRow,
    entry_columns,
    new_incarnation,
    session_row,
    settings_of,
    usage_values,
)
from . import read_port as load_sql
from .entry_reads import select_on_writer
from .read_port import OPEN_CALLS_SQL, open_call

__all__ = ["SQLitePort", "erase_search_index_in_tx"]

P = ParamSpec("P")
T = TypeVar("T")

_ROW_SQL: Final = f"SELECT {SESSION_COLS} FROM sessions WHERE session_id = ?"

#: Keys looked up per statement (well under SQLite's 32766 parameters).
_KEYS_PER_QUERY: Final = 500
#: History entries inserted per statement (11 parameters a row: well under SQLite's 32766). One statement
#: for many rows, because the search index's trigger makes every statement write its pending terms out.
_ENTRIES_PER_INSERT: Final = 500
_ENTRY_COLUMNS: Final = 11


@functools.lru_cache(maxsize=16)
def _insert_entries_sql(rows: int) -> str:
    """The INSERT of ``rows`` history entries (the same text for the same count: sqlite3 caches it)."""
    values = ", ".join(["(" + ", ".join("?" * _ENTRY_COLUMNS) + ")"] * rows)
    return (
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
        f"client_id, encoded) VALUES {values}"
    )


#: The tail of a history read backwards (EditTail's walk, through ``events_position``).
_TAIL_SQL: Final = (
    "SELECT position, type, hidden_by IS NOT NULL, CASE WHEN type = 'edit' THEN payload END, "
    "length(CAST(payload AS BLOB)) + coalesce(length(item), 0) FROM events "
    "WHERE session_id = ? AND position > ? AND position <= ? ORDER BY position DESC LIMIT ?"
)
#: Event types a fork copies (the entries; never a clear or an edit).
_ENTRY_TYPES: Final = tuple(sorted(MESSAGE_EVENT_TYPES))
#: The visible entries of a session (a fork's source) in a range of positions.
_VISIBLE_ENTRIES: Final = (
    f"session_id = ? AND position > ? AND position <= ? AND type IN ({', '.join('?' * len(_ENTRY_TYPES))}) "
    "AND hidden_by IS NULL"
)

#: Every table with rows of a session, the sessions row last.
_SESSION_TABLES: Final = ("events", "tool_calls", "requests", "usage_by_model", "session_labels", "sessions")


class SQLitePort:
    """The port over the writer's connection, for one transaction."""

    __slots__ = ("_conn", "_now")

    def __init__(self, conn: sqlite3.Connection, now: str = "") -> None:
        self._conn = conn
        self._now = now or now_rfc3339()  # the write's time: one for all its statements

    # -- core: the session row, request ids, events

    def session_row(self, session_id: str) -> tuple[SessionRow | None, str]:
        return session_row(self._conn.execute(_ROW_SQL, (session_id,)).fetchone()), self._now

    def ensure_session(self, session_id: str, workdir: str) -> tuple[SessionRow, str]:
        row = session_row(self._conn.execute(_ROW_SQL, (session_id,)).fetchone())
        if row is not None:
            return row, self._now
        self._conn.execute(
            "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation) VALUES (?, ?, ?, ?, ?)",
            (session_id, workdir, self._now, self._now, new_incarnation()),
        )
        return SessionRow(session_id, workdir, self._now, self._now, 0, 0, 0, Usage()), self._now

    def stored_request(self, session_id: str, request_id: str) -> StoredRequest | None:
        found = self._conn.execute(
            "SELECT kind, fingerprint, result FROM requests WHERE session_id = ? AND request_id = ?",
            (session_id, request_id),
        ).fetchone()
        return None if found is None else StoredRequest(found[0], found[1], found[2])

    def remember(self, session_id: str, request_id: str, kind: str, fingerprint: str, record: str, now: str) -> None:
        self._conn.execute(
            "INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, request_id, kind, fingerprint, record, now),
        )

    def insert_event(
        self, session_id: str, position: int | None, event_type: str, trace_id: str, ts: str, payload: str
    ) -> int:
        cur = self._conn.execute(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session_id, position, event_type, trace_id, ts, EVENT_SCHEMA_VERSION, payload),
        )
        return int(cur.lastrowid or 0)

    def insert_entries(self, session_id: str, entries: Sequence[NewEntry], trace_id: str, ts: str) -> None:
        """Beside each payload: the item (byte for byte) and client id where set, and the encoded reply form
        (``entry_columns``); up to :data:`_ENTRIES_PER_INSERT` rows a statement."""
        values: list[Any] = []
        for entry in entries:
            position, prepared, payload = entry
            fmt, item, encoded = entry_columns(entry, trace_id, ts)
            values += (
                session_id,
                position,
                prepared.event_type,
                trace_id,
                ts,
                EVENT_SCHEMA_VERSION,
                payload,
                fmt,
                item,
                prepared.message.client_id or None,
                encoded,
            )
        if len(entries) <= _ENTRIES_PER_INSERT:  # nearly every Append: one statement, its text cached
            self._conn.execute(_insert_entries_sql(len(entries)), values)
            return
        step = _ENTRIES_PER_INSERT * _ENTRY_COLUMNS
        for start in range(0, len(values), step):
            chunk = values[start : start + step]
            self._conn.execute(_insert_entries_sql(len(chunk) // _ENTRY_COLUMNS), chunk)

    def advance_session(self, session_id: str, last_position: int, added: int, now: str, workdir: str) -> None:
        self._conn.execute(
            "UPDATE sessions SET last_position = ?, message_count = message_count + ?, updated_at = ?, "
            "workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
            (last_position, added, now, workdir, workdir, session_id),
        )

    def touch_session(self, session_id: str, now: str, workdir: str) -> None:
        self._conn.execute(
            "UPDATE sessions SET updated_at = ?, workdir = CASE WHEN ? != '' THEN ? ELSE workdir END "
            "WHERE session_id = ?",
            (now, workdir, workdir, session_id),
        )

    def open_call_count(self, session_id: str) -> int:
        # Counts entries of the partial index ``tool_calls_open``: at most the limit plus one append.
        return int(
            self._conn.execute(
                "SELECT count(*) FROM tool_calls INDEXED BY tool_calls_open "
                "WHERE session_id = ? AND result_position IS NULL",
                (session_id,),
            ).fetchone()[0]
        )

    # -- append, usage, clear, event, delete

    def client_id_position(self, session_id: str, client_id: str, after: int) -> int | None:
        found = self._conn.execute(
            "SELECT position FROM events WHERE session_id = ? AND client_id = ? AND position > ? "
            "AND hidden_by IS NULL LIMIT 1",
            (session_id, client_id, after),
        ).fetchone()
        return None if found is None else int(found[0])

    def session_policy(self, session_id: str) -> ToolPolicy:
        found = self._conn.execute("SELECT tool_policy FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        return policy_from_json(found[0] if found else None)

    def call_result(self, session_id: str, call_id: str) -> tuple[bool, int | None]:
        found = self._conn.execute(
            "SELECT result_position FROM tool_calls WHERE session_id = ? AND call_id = ?", (session_id, call_id)
        ).fetchone()
        return (False, None) if found is None else (True, None if found[0] is None else int(found[0]))

    def entry_type(self, session_id: str, position: int) -> str | None:
        found = self._conn.execute(
            "SELECT type FROM events WHERE session_id = ? AND position = ?", (session_id, position)
        ).fetchone()
        return None if found is None else str(found[0])

    def answer_call(self, session_id: str, call_id: str, position: int) -> None:
        self._conn.execute(
            "UPDATE tool_calls SET result_position = ? WHERE session_id = ? AND call_id = ?",
            (position, session_id, call_id),
        )

    def hide_entry(self, session_id: str, position: int, hidden_by: int) -> None:
        self._conn.execute(
            "UPDATE events SET hidden_by = ? WHERE session_id = ? AND position = ?", (hidden_by, session_id, position)
        )

    def insert_call(
        self,
        session_id: str,
        call_id: str,
        position: int,
        index: int,
        run_id: str,
        pending: bool,
        repair_mode: str,
    ) -> bool:
        cur = self._conn.execute(
            "INSERT OR IGNORE INTO tool_calls(session_id, call_id, assistant_position, call_index, run_id, "
            "pending, repair_mode) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session_id, call_id, position, index, run_id, int(pending), repair_mode),
        )
        return cur.rowcount != 0

    def set_usage(self, session_id: str, usage: Usage) -> None:
        self._conn.execute(
            "UPDATE sessions SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, "
            "cost_micros = ?, currency = ? WHERE session_id = ?",
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                usage.cost_micros,
                usage.currency,
                session_id,
            ),
        )

    def add_model_usage(self, session_id: str, delta: UsageDelta, currency: str) -> None:
        self._conn.execute(
            "INSERT INTO usage_by_model(session_id, model, pricing_version, input_tokens, output_tokens, "
            "cache_read_tokens, cache_write_tokens, cost_micros, currency) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(session_id, model, pricing_version) DO UPDATE SET "
            "input_tokens = input_tokens + excluded.input_tokens, "
            "output_tokens = output_tokens + excluded.output_tokens, "
            "cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens, "
            "cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens, "
            "cost_micros = cost_micros + excluded.cost_micros, "
            "currency = CASE WHEN currency = '' THEN excluded.currency ELSE currency END",
            (
                session_id,
                delta.model,
                delta.pricing_version,
                delta.input_tokens,
                delta.output_tokens,
                delta.cache_read_tokens,
                delta.cache_write_tokens,
                delta.cost_micros,
                currency,
            ),
        )

    def clear_session(self, session_id: str, position: int, now: str, workdir: str) -> None:
        self._conn.execute("DELETE FROM tool_calls WHERE session_id = ?", (session_id,))
        self._conn.execute(
            "UPDATE sessions SET last_position = ?, clear_position = ?, message_count = 0, updated_at = ?, "
            "workdir = CASE WHEN ? != '' THEN ? ELSE workdir END WHERE session_id = ?",
            (position, position, now, workdir, workdir, session_id),
        )

    def erase_history(self, session_id: str, fingerprint: str, kinds: Sequence[str]) -> int:
        """Also takes the erased messages' words out of the search index (:func:`erase_search_index_in_tx`)."""
        # Through ``events_position``: every history event of the session, and no usage, state or audit event.
        erased = self._conn.execute(
            "DELETE FROM events WHERE session_id = ? AND position IS NOT NULL", (session_id,)
        ).rowcount
        self._conn.execute(
            f"UPDATE requests SET fingerprint = ? WHERE session_id = ? AND kind IN ({','.join('?' * len(kinds))})",
            (fingerprint, session_id, *kinds),
        )
        if erased:
            erase_search_index_in_tx(self._conn)
        return int(erased)

    def delete_session(self, session_id: str) -> int:
        """Also takes the deleted messages' words out of the search index (:func:`erase_search_index_in_tx`)."""
        count = int(self._conn.execute("SELECT count(*) FROM events WHERE session_id = ?", (session_id,)).fetchone()[0])
        for table in _SESSION_TABLES:
            self._conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        if count:
            erase_search_index_in_tx(self._conn)
        return count

    # -- edit tail, create, fork, update, import, state

    def settings(self, session_id: str) -> SessionSettings | None:
        found = self._conn.execute(
            f"SELECT {SETTINGS_COLS} FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        return None if found is None else settings_of(found)

    def claim_session(
        self, session_id: str, workdir: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> str | None:
        now = self._now
        cur = self._conn.execute(
            "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation, state, tool_policy, "
            "forked_from, forked_at_position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO NOTHING",
            (session_id, workdir, now, now, new_incarnation(), state, tool_policy, forked_from, forked_at_position),
        )
        return now if cur.rowcount == 1 else None

    def source_session(self, session_id: str) -> tuple[SessionRow, SessionSettings] | None:
        found = self._conn.execute(
            f"SELECT {SESSION_COLS}, {SETTINGS_COLS} FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        row = session_row(found)
        return None if row is None else (row, settings_of(found[-SETTINGS_COUNT:]))

    def set_session_state(self, session_id: str, state: str) -> None:
        self._conn.execute("UPDATE sessions SET state = ? WHERE session_id = ?", (state, session_id))

    def set_tool_policy(self, session_id: str, tool_policy: str) -> None:
        self._conn.execute("UPDATE sessions SET tool_policy = ? WHERE session_id = ?", (tool_policy, session_id))

    def set_settings(
        self, session_id: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> None:
        self._conn.execute(
            "UPDATE sessions SET state = ?, tool_policy = ?, forked_from = ?, forked_at_position = ? "
            "WHERE session_id = ?",
            (state, tool_policy, forked_from, forked_at_position, session_id),
        )

    def write_labels(self, session_id: str, labels: Mapping[str, str]) -> None:
        """At most ``state.MAX_LABELS`` rows."""
        self._conn.execute("UPDATE sessions SET labels = ? WHERE session_id = ?", (labels_json(labels), session_id))
        self._conn.execute("DELETE FROM session_labels WHERE session_id = ?", (session_id,))
        self._conn.executemany(
            "INSERT INTO session_labels(session_id, key, value) VALUES (?, ?, ?)",
            [(session_id, k, v) for k, v in labels.items()],
        )

    def hold_scope_states(self, scopes: Sequence[str], now: str) -> Mapping[str, str]:
        """The single writer holds them already (at most ``state.MAX_STATE_DELTAS`` scopes: one statement)."""
        rows = self._conn.execute(
            f"SELECT scope, state FROM scope_states WHERE scope IN ({','.join('?' * len(scopes))})", tuple(scopes)
        ).fetchall()
        return {str(r[0]): str(r[1]) for r in rows}

    def put_scope_states(self, states: Sequence[ScopeState]) -> None:
        self._conn.executemany(
            "INSERT INTO scope_states(scope, state, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(scope) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
            [(s.scope, s.state, s.updated_at) for s in states],
        )

    def tail_rows(
        self, session_id: str, floor: int, cursor: int, limit: int
    ) -> list[tuple[int, str, bool, str | None, int]]:
        return [
            (int(r[0]), str(r[1]), bool(r[2]), r[3], int(r[4] or 0))
            for r in self._conn.execute(_TAIL_SQL, (session_id, floor, cursor, limit))
        ]

    def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        return select_on_writer(self._conn, session_id, selection, limit)

    def messages_at(self, session_id: str, positions: Sequence[int]) -> list[Message]:
        found: list[Any] = []
        for part in _chunks(positions):
            found += self._conn.execute(
                "SELECT position, type, trace_id, ts, payload, format, item FROM events "
                f"WHERE session_id = ? AND position IN ({','.join('?' * len(part))})",
                (session_id, *part),
            ).fetchall()
        found.sort(key=lambda r: r[0])
        return [message_from_payload(*r) for r in found]

    def pending_calls(self, session_id: str, call_ids: Sequence[str]) -> list[str]:
        out: list[str] = []
        for part in _chunks(call_ids):
            out += [
                str(r[0])
                for r in self._conn.execute(
                    "SELECT call_id FROM tool_calls WHERE session_id = ? AND pending = 1 AND result_position IS NULL "
                    f"AND call_id IN ({','.join('?' * len(part))})",
                    (session_id, *part),
                )
            ]
        return out

    def hide_entries(self, session_id: str, hidden: Sequence[tuple[int, int]]) -> None:
        self._conn.executemany(
            "UPDATE events SET hidden_by = ? WHERE session_id = ? AND position = ?",
            [(by, session_id, position) for position, by in hidden],
        )

    def reopen_calls(self, session_id: str, answers: Sequence[tuple[str, int]]) -> None:
        self._conn.executemany(
            "UPDATE tool_calls SET result_position = NULL WHERE session_id = ? AND call_id = ? AND result_position = ?",
            [(session_id, call_id, position) for call_id, position in answers],
        )

    def unindex_calls(self, session_id: str, calls: Sequence[tuple[str, int]]) -> None:
        self._conn.executemany(
            "DELETE FROM tool_calls WHERE session_id = ? AND call_id = ? AND assistant_position = ?",
            [(session_id, call_id, position) for call_id, position in calls],
        )

    def copy_entries(self, source_id: str, session_id: str, after: int, upto: int) -> list[int]:
        """Through ``events_position``: O(entries copied)."""
        bounds = (source_id, after, upto, *_ENTRY_TYPES)
        self._conn.execute(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
            "client_id) SELECT ?, row_number() OVER (ORDER BY position), type, trace_id, ts, schema_version, "
            f"payload, format, item, client_id FROM events WHERE {_VISIBLE_ENTRIES} ORDER BY position",
            (session_id, *bounds),
        )
        return [
            int(r[0])
            for r in self._conn.execute(
                f"SELECT position FROM events WHERE {_VISIBLE_ENTRIES} ORDER BY position", bounds
            )
        ]

    def payloads_containing(self, session_id: str, event_type: str, text: str) -> list[tuple[int, str]]:
        return [
            (int(r[0]), str(r[1]))
            for r in self._conn.execute(
                "SELECT position, payload FROM events WHERE session_id = ? AND position IS NOT NULL AND type = ? "
                "AND instr(payload, ?) > 0 ORDER BY position",
                (session_id, event_type, text),
            )
        ]

    def set_payloads(self, session_id: str, payloads: Sequence[tuple[int, str]]) -> None:
        """The encoded reply form goes with the old payload (a Load encodes the new one)."""
        self._conn.executemany(
            "UPDATE events SET payload = ?, encoded = NULL WHERE session_id = ? AND position = ?",
            [(payload, session_id, position) for position, payload in payloads],
        )

    def indexed_calls(self, session_id: str, call_ids: Sequence[str]) -> list[IndexedCall]:
        out: list[IndexedCall] = []
        for part in _chunks(call_ids):
            out += [
                IndexedCall(str(r[0]), int(r[1]), int(r[2]), r[3], bool(r[4]), str(r[5]), r[6])
                for r in self._conn.execute(
                    "SELECT call_id, assistant_position, call_index, result_position, pending, repair_mode, "
                    "synthetic_position FROM tool_calls WHERE session_id = ? "
                    f"AND call_id IN ({','.join('?' * len(part))})",
                    (session_id, *part),
                )
            ]
        return out

    def index_calls(self, session_id: str, calls: Sequence[IndexedCall]) -> None:
        self._conn.executemany(
            "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, result_position, run_id, "
            "pending, repair_mode, synthetic_position) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?)",
            [
                (
                    session_id,
                    c.call_id,
                    c.assistant_position,
                    c.call_index,
                    c.result_position,
                    int(c.pending),
                    c.repair_mode,
                    c.synthetic_position,
                )
                for c in calls
            ],
        )

    def incarnation(self, session_id: str) -> str | None:
        found = self._conn.execute("SELECT incarnation FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        return None if found is None else str(found[0])

    def events_of(self, session_id: str) -> list[tuple[int | None, str, str, str, str]]:
        return [
            (r[0], str(r[1]), str(r[2]), str(r[3]), str(r[4]))
            for r in self._conn.execute(
                "SELECT position, type, ts, trace_id, payload FROM events WHERE session_id = ? ORDER BY event_id",
                (session_id,),
            )
        ]

    def insert_events(self, session_id: str, events: Sequence[ImportedEvent]) -> None:
        self._conn.executemany(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
            "client_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    e.client_id,
                )
                for e in events
            ],
        )

    def drop_derived_rows(self, session_id: str) -> None:
        for table in ("tool_calls", "usage_by_model", "sessions"):
            self._conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))

    def insert_session_row(self, row: SessionRow, incarnation: str) -> None:
        self._conn.execute(
            f"INSERT INTO sessions({SESSION_COLS}, incarnation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.session_id,
                row.workdir,
                row.created_at,
                row.updated_at,
                row.last_position,
                row.clear_position,
                row.message_count,
                *usage_values(row.usage),
                incarnation,
            ),
        )

    def insert_model_usage(self, session_id: str, by_model: Mapping[tuple[str, str], Usage]) -> None:
        self._conn.executemany(
            "INSERT INTO usage_by_model(session_id, model, pricing_version, input_tokens, output_tokens, "
            "cache_read_tokens, cache_write_tokens, cost_micros, currency) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(session_id, model, version, *usage_values(u)) for (model, version), u in by_model.items()],
        )

    # -- load and repair

    def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        values = self._conn.execute(load_sql.SESSION_AND_SETTINGS_SQL, (session_id,)).fetchone()
        return (None, None) if values is None else (session_row(values), settings_of(values[-SETTINGS_COUNT:]))

    def open_calls(self, session_id: str) -> list[OpenCall]:
        return [open_call(r) for r in self._conn.execute(OPEN_CALLS_SQL, (session_id,))]

    def owned_open_calls(self, session_id: str) -> list[OpenCall]:
        return [open_call(r) for r in self._conn.execute(load_sql.OWNED_OPEN_CALLS_SQL, (session_id,))]

    def still_open(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        return {str(r[0]) for r in self._each(load_sql.STILL_OPEN_SQL, session_id, call_ids)}

    def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        return [load_sql.entry(r) for r in self._each(load_sql.ENTRIES_AT_SQL, session_id, positions)]

    def write_repairs(
        self, session_id: str, repairs: Sequence[Repair], payloads: Sequence[str], trace_id: str, now: str
    ) -> None:
        self._conn.executemany(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES (?, ?, 'repair', ?, ?, ?, ?)",
            (
                (session_id, r.position, trace_id, now, EVENT_SCHEMA_VERSION, p)
                for r, p in zip(repairs, payloads, strict=True)
            ),
        )
        self._conn.executemany(
            "UPDATE tool_calls SET result_position = ? WHERE session_id = ? AND call_id = ?",
            ((r.position, session_id, r.tool_call_id) for r in repairs),
        )

    def _each(self, sql: str, session_id: str, ids: Sequence[Any]) -> list[Any]:
        """``sql`` (one ``{ids}`` list after the session id) over ``ids``, in slices of ``load_sql.IDS_PER_QUERY``."""
        out: list[Any] = []
        for part in load_sql.slices(ids):
            out.extend(self._conn.execute(sql.format(ids=",".join("?" * len(part))), (session_id, *part)))
        return out


def _chunks(values: Sequence[Any]) -> list[Sequence[Any]]:
    """``values`` in parts of at most :data:`_KEYS_PER_QUERY` (for ``IN (...)`` lists)."""
    return [values[i : i + _KEYS_PER_QUERY] for i in range(0, len(values), _KEYS_PER_QUERY)]


_: type[Port] = SQLitePort


def erase_search_index_in_tx(conn: sqlite3.Connection) -> None:
    """Take deleted messages' words out of the search index's pages, not just mark them deleted.

    The delete trigger (schema v3) only adds FTS5 tombstones: the words stay in
    the older index segments until a merge reaches them. 'optimize' merges every
    segment into one now, so with ``secure_delete`` the freed pages are zeroed
    and the checkpoint that follows every erasure clears the WAL. It rewrites the
    whole index (measured: 0.2 s for 50 000 messages), in the erasing transaction.
    """
    conn.execute("INSERT INTO message_fts(message_fts) VALUES ('optimize')")
