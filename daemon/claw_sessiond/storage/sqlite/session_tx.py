"""CreateSession, ForkSession and UpdateSession in SQLite: ``*_in_tx`` functions run in the writer's transaction.

Each reads what a rule needs, asks the rule (``rules.py``, ``state.py``) and
writes; the decisions are never made here. A request id makes each one
idempotent per session (the new session's id for a create or a fork): a retry
returns the session as it is now, marked replayed.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Final

from ... import rules
from ...errors import AlreadyExistsError, InvalidRequestError, Reason, SessionNotFoundError
from ...events import MESSAGE_EVENT_TYPES, call_names
from ...model import SessionMeta, StateDelta, now_rfc3339
from ...state import (
    EMPTY,
    CreateJob,
    ForkJob,
    ForkResult,
    SessionResult,
    UpdateJob,
    labels_after,
    settings_payload,
    state_after,
    state_payload,
)
from .state_tx import apply_deltas_in_tx, insert_session_event_in_tx, settings_in_tx, write_labels_in_tx
from .tx import _stored_request_in_tx, new_incarnation, open_call_count_in_tx, session_in_tx, session_meta

__all__ = ["create_in_tx", "fork_in_tx", "meta_in_tx", "update_in_tx"]

#: Event types a fork copies (the entries; never a clear or an edit).
_ENTRY_TYPES: Final = tuple(sorted(MESSAGE_EVENT_TYPES))
_ENTRY_IN: Final = f"type IN ({', '.join('?' * len(_ENTRY_TYPES))})"
#: Tool-call ids looked up per query (well under SQLite's 32766 parameters).
_IDS_PER_QUERY: Final = 500


def meta_in_tx(conn: sqlite3.Connection, session_id: str) -> SessionMeta:
    """The session's metadata and settings as a reply shows them (caller's transaction; it must be stored)."""
    return session_meta(session_in_tx(conn, session_id), session_id, None, settings_in_tx(conn, session_id))


def _remember_in_tx(
    conn: sqlite3.Connection, session_id: str, request_id: str, kind: str, fp: str, record: str
) -> None:
    if request_id:
        conn.execute(
            "INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, request_id, kind, fp, record, now_rfc3339()),
        )


def _exists(session_id: str, what: str) -> AlreadyExistsError:
    return AlreadyExistsError(
        f"session {session_id!r} already exists; {what} makes only new sessions (Load or UpdateSession it, "
        "or choose another id)",
        reason=Reason.SESSION_EXISTS,
        session_id=session_id,
    )


def _insert_session_in_tx(
    conn: sqlite3.Connection,
    session_id: str,
    workdir: str,
    now: str,
    *,
    state: str,
    tool_policy: str,
    forked_from: str = "",
    forked_at_position: int = 0,
) -> None:
    conn.execute(
        "INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation, state, tool_policy, "
        "forked_from, forked_at_position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, workdir, now, now, new_incarnation(), state, tool_policy, forked_from, forked_at_position),
    )


def create_in_tx(conn: sqlite3.Connection, job: CreateJob) -> SessionResult:
    """Create an empty session with its initial state, labels and tool policy, or refuse if it is stored.

    Writes the row (with a new incarnation), a ``session_settings`` event (labels and policy) and,
    for a non-empty initial state, a ``state`` event.

    Raises:
        AlreadyExistsError: reason SESSION_EXISTS.
        InvalidRequestError: REQUEST_ID_REUSED.
    """
    sid = job.session_id
    stored = _stored_request_in_tx(conn, sid, job.request_id)
    record = rules.replay_record(job.request_id, "create", job.fingerprint, stored)
    if record is not None:
        return SessionResult(meta_in_tx(conn, sid), json.loads(record)["trace"], replayed=True)
    if session_in_tx(conn, sid) is not None:
        raise _exists(sid, "CreateSession")
    now = now_rfc3339()
    state = state_after(EMPTY, job.state, "state")  # a top-level null of an initial state means absent
    _insert_session_in_tx(conn, sid, job.workdir, now, state=state, tool_policy=job.tool_policy)
    write_labels_in_tx(conn, sid, job.labels)
    payload = settings_payload(labels=job.labels, tool_policy=job.tool_policy)
    insert_session_event_in_tx(conn, sid, "session_settings", job.trace_id, now, payload)
    if state != EMPTY:
        insert_session_event_in_tx(conn, sid, "state", job.trace_id, now, state_payload(StateDelta("", state)))
    _remember_in_tx(conn, sid, job.request_id, "create", job.fingerprint, json.dumps({"trace": job.trace_id}))
    return SessionResult(meta_in_tx(conn, sid), job.trace_id)


def update_in_tx(conn: sqlite3.Connection, job: UpdateJob) -> SessionResult:
    """Apply an UpdateSession: state deltas, then labels set and removed, then the new default tool policy.

    A ``session_settings`` event records labels and policy when they change; each delta is a
    ``state`` event. Nothing changes the history's positions.

    Raises:
        SessionNotFoundError: the session is not stored.
        SequenceConflictError: the last position is not the expected one.
        InvalidRequestError: REQUEST_ID_REUSED, a state over its bound, more than 32 labels.
    """
    sid = job.session_id
    stored = _stored_request_in_tx(conn, sid, job.request_id)
    record = rules.replay_record(job.request_id, "update", job.fingerprint, stored)
    if record is not None:
        return SessionResult(meta_in_tx(conn, sid), json.loads(record)["trace"], replayed=True)
    row = session_in_tx(conn, sid)
    settings = settings_in_tx(conn, sid)
    if row is None or settings is None:
        raise SessionNotFoundError(
            f"session {sid!r} is not stored (CreateSession or Append creates it)", session_id=sid
        )
    rules.check_expected(job.expected_last_position, row.last_position)
    now = now_rfc3339()
    changed = bool(job.state_deltas)
    if job.state_deltas:
        apply_deltas_in_tx(conn, sid, job.state_deltas, job.trace_id, now)
    labels = labels_after(settings.labels, job.set_labels, job.remove_labels)
    new_labels = labels if labels != dict(settings.labels) else None
    new_policy = job.tool_policy if job.tool_policy not in (None, settings.tool_policy) else None
    if new_labels is not None:
        write_labels_in_tx(conn, sid, new_labels)
    if new_policy is not None:
        conn.execute("UPDATE sessions SET tool_policy = ? WHERE session_id = ?", (new_policy, sid))
    if new_labels is not None or new_policy is not None:
        payload = settings_payload(labels=new_labels, tool_policy=new_policy)
        insert_session_event_in_tx(conn, sid, "session_settings", job.trace_id, now, payload)
        changed = True
    if changed:
        conn.execute("UPDATE sessions SET updated_at = ? WHERE session_id = ?", (now, sid))
    _remember_in_tx(conn, sid, job.request_id, "update", job.fingerprint, json.dumps({"trace": job.trace_id}))
    return SessionResult(meta_in_tx(conn, sid), job.trace_id)


def fork_in_tx(conn: sqlite3.Connection, job: ForkJob, max_open_calls: int = 0) -> ForkResult:
    """Create ``job.session_id`` as a copy of the source's visible entries up to a position.

    The entries become positions 1..n of the new session, each event copied as stored (its
    payload, item bytes, format, client id, time and trace id; a synthetic repair stays one),
    except that a ``supersedes`` mark is dropped (the repair it names is hidden, so not copied).
    Calls keep their ``tool_calls`` rows at the new positions, without run ownership: a call
    whose result lies beyond the copied range is open in the fork. The state, tool policy and
    (unless given) labels are copied; the lineage is recorded. Usage totals start at zero.
    Cost: O(entries copied), through the ``events_position`` index.

    Raises:
        SessionNotFoundError: the source is not stored.
        AlreadyExistsError: reason SESSION_EXISTS, the new id is stored.
        InvalidRequestError: up_to_position beyond the source's last position; REQUEST_ID_REUSED.
        PreconditionError: TOO_MANY_OPEN_CALLS, the fork would hold more open calls than the limit.
    """
    sid, src = job.session_id, job.source_id
    stored = _stored_request_in_tx(conn, sid, job.request_id)
    record = rules.replay_record(job.request_id, "fork", job.fingerprint, stored)
    if record is not None:
        found = json.loads(record)
        return ForkResult(meta_in_tx(conn, sid), int(found["copied"]), found["trace"], replayed=True)
    source = session_in_tx(conn, src)
    source_settings = settings_in_tx(conn, src)
    if source is None or source_settings is None:
        raise SessionNotFoundError(f"source session {src!r} is not stored", session_id=src)
    if session_in_tx(conn, sid) is not None:
        raise _exists(sid, "ForkSession")
    if job.up_to_position > source.last_position:
        raise InvalidRequestError(
            f"up_to_position {job.up_to_position} is beyond the last position of {src!r} ({source.last_position})",
            field="up_to_position",
            last_position=source.last_position,
        )
    upto = job.up_to_position or source.last_position
    now = now_rfc3339()
    labels = source_settings.labels if job.labels is None else job.labels
    state, policy = source_settings.state, source_settings.tool_policy
    _insert_session_in_tx(
        conn,
        sid,
        job.workdir or source.workdir,
        now,
        state=state,
        tool_policy=policy,
        forked_from=src,
        forked_at_position=upto,
    )
    write_labels_in_tx(conn, sid, labels)
    payload = settings_payload(labels=labels, tool_policy=policy, forked_from=src, forked_at_position=upto)
    insert_session_event_in_tx(conn, sid, "session_settings", job.trace_id, now, payload)
    if state != EMPTY:
        insert_session_event_in_tx(conn, sid, "state", job.trace_id, now, state_payload(StateDelta("", state)))
    copied = _copy_entries_in_tx(conn, src, sid, source.clear_position, upto)
    if max_open_calls:
        rules.check_open_calls(open_call_count_in_tx(conn, sid), max_open_calls, sid)
    conn.execute("UPDATE sessions SET last_position = ?, message_count = ? WHERE session_id = ?", (copied, copied, sid))
    _remember_in_tx(
        conn, sid, job.request_id, "fork", job.fingerprint, json.dumps({"copied": copied, "trace": job.trace_id})
    )
    return ForkResult(meta_in_tx(conn, sid), copied, job.trace_id)


def _copy_entries_in_tx(conn: sqlite3.Connection, src: str, sid: str, after: int, upto: int) -> int:
    """Copy the visible entries of ``src`` in ``(after, upto]`` to positions 1..n of ``sid``; returns n."""
    visible = f"session_id = ? AND position > ? AND position <= ? AND {_ENTRY_IN} AND hidden_by IS NULL"
    bounds = (src, after, upto, *_ENTRY_TYPES)
    conn.execute(
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
        "client_id) SELECT ?, row_number() OVER (ORDER BY position), type, trace_id, ts, schema_version, "
        "CASE WHEN json_extract(payload, '$.supersedes') IS NULL THEN payload "
        "ELSE json_remove(payload, '$.supersedes') END, format, item, client_id "
        f"FROM events WHERE {visible} ORDER BY position",
        (sid, *bounds),
    )
    old = [int(r[0]) for r in conn.execute(f"SELECT position FROM events WHERE {visible} ORDER BY position", bounds)]
    new_of = {p: i for i, p in enumerate(old, 1)}
    call_ids: list[str] = []
    for (payload,) in conn.execute(
        "SELECT payload FROM events WHERE session_id = ? AND position > ? AND position <= ? "
        "AND type = 'assistant_message' AND hidden_by IS NULL ORDER BY position",
        (src, after, upto),
    ):
        call_ids.extend(call_names(payload))
    for i in range(0, len(call_ids), _IDS_PER_QUERY):
        part = call_ids[i : i + _IDS_PER_QUERY]
        rows = conn.execute(
            "SELECT call_id, assistant_position, call_index, result_position, pending, repair_mode, "
            f"synthetic_position FROM tool_calls WHERE session_id = ? AND call_id IN ({','.join('?' * len(part))})",
            (src, *part),
        ).fetchall()
        conn.executemany(
            "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, result_position, run_id, "
            "pending, repair_mode, synthetic_position) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?)",
            [
                (sid, call_id, new_of[at], index, _moved(new_of, result), pending, mode, _moved(new_of, synthetic))
                for call_id, at, index, result, pending, mode, synthetic in rows
                if at in new_of
            ],
        )
    return len(old)


def _moved(new_of: dict[int, int], position: int | None) -> int | None:
    """A source position's position in the fork (None: not copied, or none)."""
    return None if position is None else new_of.get(position)
