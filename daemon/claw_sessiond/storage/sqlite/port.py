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

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Concatenate, Final, ParamSpec, TypeVar

from ...entry_wire import encode_entry
from ...events import EVENT_SCHEMA_VERSION, message_from_payload
from ...history import OpenCall
from ...model import PreparedMessage, Repair, SessionSettings, StateDelta, Usage, UsageDelta, now_rfc3339
from ...policy import ToolPolicy, policy_from_json
from ...rules import StoredRequest
from ..port import SESSION_COLS, Port, SessionRow, new_incarnation, session_row
from ..steps import Steps, run_sync
from . import read_port as load_sql
from .read_port import OPEN_CALLS_SQL, open_call
from .state_tx import SETTINGS_COUNT, apply_deltas_in_tx, settings_of

__all__ = ["SQLitePort", "erase_search_index_in_tx", "write_tx"]

P = ParamSpec("P")
T = TypeVar("T")

_ROW_SQL: Final = f"SELECT {SESSION_COLS} FROM sessions WHERE session_id = ?"

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

    def insert_entry(
        self, session_id: str, position: int, prepared: PreparedMessage, trace_id: str, ts: str, payload: str
    ) -> None:
        """Beside the payload: the item (byte for byte) and client id where set, and the encoded reply form.

        The encoded form is made from the row as a Load reads it back (``message_from_payload`` of these
        very columns), so it is by construction what a Load would encode from the row (``entry_wire.py``).
        """
        msg = prepared.message
        fmt = msg.format or None
        item = msg.item if msg.format else None
        encoded = encode_entry(message_from_payload(position, prepared.event_type, trace_id, ts, payload, fmt, item))
        if not (fmt or msg.client_id):
            self._conn.execute(
                "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, encoded) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, position, prepared.event_type, trace_id, ts, EVENT_SCHEMA_VERSION, payload, encoded),
            )
            return
        self._conn.execute(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
            "client_id, encoded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                position,
                prepared.event_type,
                trace_id,
                ts,
                EVENT_SCHEMA_VERSION,
                payload,
                fmt,
                item,
                msg.client_id or None,
                encoded,
            ),
        )

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

    def apply_state_deltas(self, session_id: str, deltas: Sequence[StateDelta], trace_id: str, now: str) -> None:
        apply_deltas_in_tx(self._conn, session_id, deltas, trace_id, now)

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

    def delete_session(self, session_id: str) -> int:
        """Also takes the deleted messages' words out of the search index (:func:`erase_search_index_in_tx`)."""
        count = int(self._conn.execute("SELECT count(*) FROM events WHERE session_id = ?", (session_id,)).fetchone()[0])
        for table in _SESSION_TABLES:
            self._conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        if count:
            erase_search_index_in_tx(self._conn)
        return count

    # -- edit tail, create, fork, update, import, state

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


_: type[Port] = SQLitePort


def write_tx(
    sequence: Callable[Concatenate[Port, P], Steps[T]], *args: P.args, **kwargs: P.kwargs
) -> Callable[[sqlite3.Connection], T]:
    """The transaction function (connection -> result) running a write's ``sequence`` over a port of the
    writer's connection, in its transaction."""

    def run(conn: sqlite3.Connection) -> T:
        return run_sync(sequence(SQLitePort(conn), *args, **kwargs))

    return run


def erase_search_index_in_tx(conn: sqlite3.Connection) -> None:
    """Take deleted messages' words out of the search index's pages, not just mark them deleted.

    The delete trigger (schema v3) only adds FTS5 tombstones: the words stay in
    the older index segments until a merge reaches them. 'optimize' merges every
    segment into one now, so with ``secure_delete`` the freed pages are zeroed
    and the checkpoint that follows every erasure clears the WAL. It rewrites the
    whole index (measured: 0.2 s for 50 000 messages), in the erasing transaction.
    """
    conn.execute("INSERT INTO message_fts(message_fts) VALUES ('optimize')")
