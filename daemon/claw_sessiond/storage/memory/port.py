"""The transaction port over the reference backend's tables (``storage/port.py``'s :class:`Port`).

Synchronous, like SQLite's: each verb has run when the sequence yields it, so ``steps.run_sync``
drives a write. A port is made per transaction around a :class:`~.tables.Tx`, whose undo log
the caller rolls back if the sequence raises. Each verb reads or writes the rows it names, as
the SQL backends' statements do, and decides nothing.

Must never: decide (ask a rule), keep state between transactions, or change a row outside its
:class:`~.tables.Tx`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...events import EVENT_SCHEMA_VERSION, MESSAGE_EVENT_TYPES, message_from_payload
from ...export import ImportedEvent
from ...history import IndexedCall, OpenCall
from ...model import EntrySelection, Message, Repair, SessionSettings, Usage, UsageDelta, now_rfc3339
from ...policy import ToolPolicy, policy_from_json
from ...rules import StoredRequest
from ...state import ScopeState, labels_json
from ..port import NewEntry, Port, SessionRow, entry_columns, new_incarnation, session_row, settings_of, usage_values
from .tables import CallRow, EventRow, RequestRow, SessionRecord, Tables, Tx, event_bytes

__all__ = ["MemoryPort", "open_calls_of", "record_values", "selected", "visible"]


def visible(row: EventRow) -> bool:
    """An entry of the projection: not a clear or an edit record, not hidden by one."""
    return row.type not in ("clear", "edit") and row.hidden_by is None


def selected(tables: Tables, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
    """``Port.select_positions`` over the tables (a scan of the range: this backend has no index to keep)."""
    ids = set(selection.client_ids)
    prefix = selection.client_id_prefix
    found: list[tuple[int, str]] = []
    for row in tables.history(session_id, selection.after, selection.upto):
        if not visible(row):
            continue
        if ids and row.client_id not in ids:
            continue
        if prefix and not (row.client_id or "").startswith(prefix):
            continue
        found.append((int(row.position or 0), row.type))
        if limit and len(found) == limit:
            break
    return found


def record_values(tables: Tables, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
    """The session's row and settings (both None if it is not stored)."""
    record = tables.sessions.get(session_id)
    if record is None:
        return None, None
    values = record.values()
    return session_row(values[:13]), settings_of(values[13:])


def open_calls_of(tables: Tables, session_id: str, owned: bool = False) -> list[OpenCall]:
    """The session's indexed calls without a result (``owned``: only those a run appended, or pending)."""
    return [
        OpenCall(c.call_id, c.assistant_position, c.call_index, c.run_id, c.pending, c.repair_mode)
        for c in tables.calls.get(session_id, {}).values()
        if c.result_position is None and (not owned or c.run_id != "" or c.pending)
    ]


class MemoryPort:
    """The port over one transaction's :class:`~.tables.Tx`."""

    __slots__ = ("_now", "_t", "_tx")

    def __init__(self, tx: Tx, now: str = "") -> None:
        self._tx = tx
        self._t = tx.tables
        self._now = now or now_rfc3339()  # the write's time: one for all its rows

    # -- core: the session row, request ids, events

    def session_row(self, session_id: str) -> tuple[SessionRow | None, str]:
        record = self._t.sessions.get(session_id)
        return (None if record is None else record.row()), self._now

    def ensure_session(self, session_id: str, workdir: str) -> tuple[SessionRow, str]:
        record = self._t.sessions.get(session_id)
        if record is None:
            record = SessionRecord(session_id, workdir, self._now, self._now, incarnation=new_incarnation())
            self._tx.put(self._t.sessions, session_id, record)
        return record.row(), self._now

    def stored_request(self, session_id: str, request_id: str) -> StoredRequest | None:
        found = self._t.requests.get(session_id, {}).get(request_id)
        return None if found is None else StoredRequest(found.kind, found.fingerprint, found.result)

    def remember(self, session_id: str, request_id: str, kind: str, fingerprint: str, record: str, now: str) -> None:
        requests = self._tx.part(self._t.requests, session_id)
        self._tx.put(requests, request_id, RequestRow(kind, fingerprint, record, now))

    def insert_event(
        self, session_id: str, position: int | None, event_type: str, trace_id: str, ts: str, payload: str
    ) -> int:
        return self._tx.add_event(
            session_id,
            position,
            type=event_type,
            trace_id=trace_id,
            ts=ts,
            schema_version=EVENT_SCHEMA_VERSION,
            payload=payload,
        )

    def insert_entries(self, session_id: str, entries: Sequence[NewEntry], trace_id: str, ts: str) -> None:
        """Beside each payload: the item and client id where set, and the encoded reply form less the item's
        bytes, with the offset they go back in at (as SQLite keeps them)."""
        for entry in entries:
            position, prepared, payload = entry
            fmt, item, encoded, item_at = entry_columns(entry, trace_id, ts)
            self._tx.add_event(
                session_id,
                position,
                type=prepared.event_type,
                trace_id=trace_id,
                ts=ts,
                schema_version=EVENT_SCHEMA_VERSION,
                payload=payload,
                format=fmt,
                item=item,
                client_id=prepared.message.client_id or None,
                encoded=encoded,
                item_at=item_at,
            )

    def advance_session(self, session_id: str, last_position: int, added: int, now: str, workdir: str) -> None:
        record = self._t.sessions.get(session_id)
        if record is not None:
            self._tx.update_session(
                session_id,
                last_position=last_position,
                message_count=record.message_count + added,
                updated_at=now,
                workdir=workdir or record.workdir,
            )

    def touch_session(self, session_id: str, now: str, workdir: str) -> None:
        record = self._t.sessions.get(session_id)
        if record is not None:
            self._tx.update_session(session_id, updated_at=now, workdir=workdir or record.workdir)

    def open_call_count(self, session_id: str) -> int:
        return len(open_calls_of(self._t, session_id))

    # -- append, usage, clear, event, delete

    def client_id_position(self, session_id: str, client_id: str, after: int) -> int | None:
        for row in self._t.history(session_id, after, 2**62):
            if row.client_id == client_id and row.hidden_by is None:
                return row.position
        return None

    def session_policy(self, session_id: str) -> ToolPolicy:
        record = self._t.sessions.get(session_id)
        return policy_from_json(None if record is None else record.tool_policy)

    def call_result(self, session_id: str, call_id: str) -> tuple[bool, int | None]:
        found = self._t.calls.get(session_id, {}).get(call_id)
        return (False, None) if found is None else (True, found.result_position)

    def entry_type(self, session_id: str, position: int) -> str | None:
        row = self._t.at(session_id, position)
        return None if row is None else row.type

    def answer_call(self, session_id: str, call_id: str, position: int) -> None:
        self._tx.update_call(session_id, call_id, result_position=position)

    def hide_entry(self, session_id: str, position: int, hidden_by: int) -> None:
        self.hide_entries(session_id, [(position, hidden_by)])

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
        calls = self._tx.part(self._t.calls, session_id)
        if call_id in calls:
            return False
        self._tx.put(calls, call_id, CallRow(call_id, position, index, None, run_id, pending, repair_mode))
        return True

    def set_usage(self, session_id: str, usage: Usage) -> None:
        self._tx.update_session(session_id, usage=usage)

    def add_model_usage(self, session_id: str, delta: UsageDelta, currency: str) -> None:
        by_model = self._tx.part(self._t.usage, session_id)
        key = (delta.model, delta.pricing_version)
        old = by_model.get(key, Usage(currency=currency))
        self._tx.put(
            by_model,
            key,
            Usage(
                old.input_tokens + delta.input_tokens,
                old.output_tokens + delta.output_tokens,
                old.cache_read_tokens + delta.cache_read_tokens,
                old.cache_write_tokens + delta.cache_write_tokens,
                old.cost_micros + delta.cost_micros,
                old.currency or currency,
            ),
        )

    def clear_session(self, session_id: str, position: int, now: str, workdir: str) -> None:
        self._tx.drop_rows(self._t.calls, session_id)
        record = self._t.sessions.get(session_id)
        if record is not None:
            self._tx.update_session(
                session_id,
                last_position=position,
                clear_position=position,
                message_count=0,
                updated_at=now,
                workdir=workdir or record.workdir,
            )

    def erase_history(self, session_id: str, fingerprint: str, kinds: Sequence[str]) -> int:
        erased = self._t.history(session_id, -(2**62), 2**62)
        for row in erased:
            self._tx.drop_event(row)
        requests = self._t.requests.get(session_id, {})
        for request_id, stored in list(requests.items()):
            if stored.kind in kinds:
                self._tx.put(
                    requests, request_id, RequestRow(stored.kind, fingerprint, stored.result, stored.created_at)
                )
        return len(erased)

    def delete_session(self, session_id: str) -> int:
        ids = self._t.session_event_ids(session_id)
        for event_id in ids:
            self._tx.drop_event(self._t.events[event_id])
        for table in (self._t.by_session, self._t.positions, self._t.calls, self._t.requests, self._t.usage):
            self._tx.drop_rows(table, session_id)
        self._tx.drop(self._t.sessions, session_id)
        return len(ids)

    def prune_requests(self, cutoff_rfc3339: str, limit: int) -> int:
        old = sorted(
            (r.created_at, sid, rid)
            for sid, records in self._t.requests.items()
            for rid, r in records.items()
            if r.created_at < cutoff_rfc3339
        )[:limit]
        for _at, sid, rid in old:
            self._tx.drop(self._t.requests[sid], rid)
        return len(old)

    # -- edit tail, create, fork, update, import, state

    def settings(self, session_id: str) -> SessionSettings | None:
        return record_values(self._t, session_id)[1]

    def claim_session(
        self, session_id: str, workdir: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> str | None:
        if session_id in self._t.sessions:
            return None
        record = SessionRecord(
            session_id,
            workdir,
            self._now,
            self._now,
            incarnation=new_incarnation(),
            state=state,
            tool_policy=tool_policy,
            forked_from=forked_from,
            forked_at_position=forked_at_position,
        )
        self._tx.put(self._t.sessions, session_id, record)
        return self._now

    def source_session(self, session_id: str) -> tuple[SessionRow, SessionSettings] | None:
        row, settings = record_values(self._t, session_id)
        return None if row is None or settings is None else (row, settings)

    def set_session_state(self, session_id: str, state: str) -> None:
        self._tx.update_session(session_id, state=state)

    def set_tool_policy(self, session_id: str, tool_policy: str) -> None:
        self._tx.update_session(session_id, tool_policy=tool_policy)

    def set_settings(
        self, session_id: str, state: str, tool_policy: str, forked_from: str, forked_at_position: int
    ) -> None:
        self._tx.update_session(
            session_id,
            state=state,
            tool_policy=tool_policy,
            forked_from=forked_from,
            forked_at_position=forked_at_position,
        )

    def write_labels(self, session_id: str, labels: Mapping[str, str]) -> None:
        """The JSON column alone: the listing matches labels by reading it (no index to keep)."""
        self._tx.update_session(session_id, labels=labels_json(labels))

    def hold_scope_states(self, scopes: Sequence[str], now: str) -> Mapping[str, str]:
        return {s: self._t.scopes[s][0] for s in scopes if s in self._t.scopes}

    def put_scope_states(self, states: Sequence[ScopeState]) -> None:
        for s in states:
            self._tx.put(self._t.scopes, s.scope, (s.state, s.updated_at))

    def tail_rows(
        self, session_id: str, floor: int, cursor: int, limit: int
    ) -> list[tuple[int, str, bool, str | None, int]]:
        rows = self._t.history(session_id, floor, cursor)[::-1][:limit]
        return [
            (int(r.position or 0), r.type, r.hidden_by is not None, r.payload if r.type == "edit" else None, size)
            for r, size in ((r, event_bytes(r)) for r in rows)
        ]

    def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        return selected(self._t, session_id, selection, limit)

    def messages_at(self, session_id: str, positions: Sequence[int]) -> list[Message]:
        rows = [r for r in (self._t.at(session_id, p) for p in sorted(set(positions))) if r is not None]
        return [message_from_payload(*r.history()) for r in rows]

    def pending_calls(self, session_id: str, call_ids: Sequence[str]) -> list[str]:
        calls = self._t.calls.get(session_id, {})
        return [
            i for i in dict.fromkeys(call_ids) if i in calls and calls[i].pending and calls[i].result_position is None
        ]

    def hide_entries(self, session_id: str, hidden: Sequence[tuple[int, int]]) -> None:
        for position, by in hidden:
            row = self._t.at(session_id, position)
            if row is not None:
                self._tx.update_event(row, hidden_by=by)

    def reopen_calls(self, session_id: str, answers: Sequence[tuple[str, int]]) -> None:
        calls = self._t.calls.get(session_id, {})
        for call_id, position in answers:
            if call_id in calls and calls[call_id].result_position == position:
                self._tx.update_call(session_id, call_id, result_position=None)

    def unindex_calls(self, session_id: str, calls: Sequence[tuple[str, int]]) -> None:
        indexed = self._t.calls.get(session_id, {})
        for call_id, position in calls:
            if call_id in indexed and indexed[call_id].assistant_position == position:
                self._tx.drop(indexed, call_id)

    def copy_entries(self, source_id: str, session_id: str, after: int, upto: int) -> list[int]:
        copied = [
            r for r in self._t.history(source_id, after, upto) if r.type in MESSAGE_EVENT_TYPES and r.hidden_by is None
        ]
        for n, r in enumerate(copied, start=1):
            self._tx.add_event(
                session_id,
                n,
                type=r.type,
                trace_id=r.trace_id,
                ts=r.ts,
                schema_version=r.schema_version,
                payload=r.payload,
                format=r.format,
                item=r.item,
                client_id=r.client_id,
            )
        return [int(r.position or 0) for r in copied]

    def payloads_containing(self, session_id: str, event_type: str, text: str) -> list[tuple[int, str]]:
        return [
            (int(r.position or 0), r.payload)
            for r in self._t.history(session_id, -(2**62), 2**62)
            if r.type == event_type and text in r.payload
        ]

    def set_payloads(self, session_id: str, payloads: Sequence[tuple[int, str]]) -> None:
        """The encoded reply form goes with the old payload (a Load encodes the new one)."""
        for position, payload in payloads:
            row = self._t.at(session_id, position)
            if row is not None:
                self._tx.update_event(row, payload=payload, encoded=None, item_at=None)

    def indexed_calls(self, session_id: str, call_ids: Sequence[str]) -> list[IndexedCall]:
        calls = self._t.calls.get(session_id, {})
        return [
            IndexedCall(
                c.call_id,
                c.assistant_position,
                c.call_index,
                c.result_position,
                c.pending,
                c.repair_mode,
                c.synthetic_position,
            )
            for c in (calls[i] for i in dict.fromkeys(call_ids) if i in calls)
        ]

    def index_calls(self, session_id: str, calls: Sequence[IndexedCall]) -> None:
        indexed = self._tx.part(self._t.calls, session_id)
        for c in calls:
            row = CallRow(
                c.call_id,
                c.assistant_position,
                c.call_index,
                c.result_position,
                "",
                c.pending,
                c.repair_mode,
                c.synthetic_position,
            )
            self._tx.put(indexed, c.call_id, row)

    def incarnation(self, session_id: str) -> str | None:
        record = self._t.sessions.get(session_id)
        return None if record is None else record.incarnation

    def events_of(self, session_id: str) -> list[tuple[int | None, str, str, str, str]]:
        rows = (self._t.events[i] for i in self._t.session_event_ids(session_id))
        return [(r.position, r.type, r.ts, r.trace_id, r.payload) for r in rows]

    def insert_events(self, session_id: str, events: Sequence[ImportedEvent]) -> None:
        for e in events:
            self._tx.add_event(
                session_id,
                e.position,
                type=e.type,
                trace_id=e.trace_id,
                ts=e.ts,
                schema_version=e.schema_version,
                payload=e.payload,
                format=e.format,
                item=e.item,
                client_id=e.client_id,
            )

    def drop_derived_rows(self, session_id: str) -> None:
        self._tx.drop_rows(self._t.calls, session_id)
        self._tx.drop_rows(self._t.usage, session_id)
        self._tx.drop(self._t.sessions, session_id)

    def insert_session_row(self, row: SessionRow, incarnation: str) -> None:
        record = SessionRecord(
            row.session_id,
            row.workdir,
            row.created_at,
            row.updated_at,
            row.last_position,
            row.clear_position,
            row.message_count,
            Usage(*usage_values(row.usage)),
            incarnation,
        )
        self._tx.put(self._t.sessions, row.session_id, record)

    def insert_model_usage(self, session_id: str, by_model: Mapping[tuple[str, str], Usage]) -> None:
        usage = self._tx.part(self._t.usage, session_id)
        for key, u in by_model.items():
            self._tx.put(usage, key, u)

    # -- load and repair

    def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        return record_values(self._t, session_id)

    def open_calls(self, session_id: str) -> list[OpenCall]:
        return open_calls_of(self._t, session_id)

    def owned_open_calls(self, session_id: str) -> list[OpenCall]:
        return open_calls_of(self._t, session_id, owned=True)

    def still_open(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        calls = self._t.calls.get(session_id, {})
        return {i for i in call_ids if i in calls and calls[i].result_position is None}

    def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        rows = (self._t.at(session_id, p) for p in set(positions))
        return [(int(r.position or 0), r.payload, r.item is not None) for r in rows if r is not None]

    def write_repairs(
        self, session_id: str, repairs: Sequence[Repair], payloads: Sequence[str], trace_id: str, now: str
    ) -> None:
        for r, p in zip(repairs, payloads, strict=True):
            self._tx.add_event(
                session_id,
                r.position,
                type="repair",
                trace_id=trace_id,
                ts=now,
                schema_version=EVENT_SCHEMA_VERSION,
                payload=p,
            )
        for r in repairs:
            self._tx.update_call(session_id, r.tool_call_id, result_position=r.position)


_: type[Port] = MemoryPort
