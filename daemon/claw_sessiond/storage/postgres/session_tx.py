"""CreateSession, ForkSession and UpdateSession in PostgreSQL: ``*_in_tx`` coroutines in the caller's transaction.

The same decisions as the SQLite backend's ``session_tx.py`` (``rules.py``,
``state.py``); only the locking differs. A new session's row is claimed with
``INSERT … ON CONFLICT DO NOTHING``: of two daemons creating one id at once,
the second waits for the first to commit and then finds the row, locks it and
replays (same request id and content) or refuses with SESSION_EXISTS. A fork
first locks its source's row ``FOR SHARE``, so no write to the source commits
while its entries are copied. An update locks the session row as every write
does (``tx.lock_session_in_tx``).
"""

from __future__ import annotations

import json
from typing import Any, Final

from ... import rules
from ...errors import AlreadyExistsError, InvalidRequestError, Reason, SessionNotFoundError
from ...events import MESSAGE_EVENT_TYPES, call_names
from ...model import SessionMeta, StateDelta
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
from ..nul_text import db_text
from .state_tx import (
    SETTINGS_COLS,
    apply_deltas_in_tx,
    insert_session_event_in_tx,
    settings_of,
    write_labels_in_tx,
)
from .tx import (
    NOW_SQL,
    SESSION_COLS,
    _stored_request_in_tx,
    lock_session_in_tx,
    new_incarnation,
    open_call_count_in_tx,
    session_meta,
    session_row,
)

__all__ = ["create_in_tx", "fork_in_tx", "meta_in_tx", "update_in_tx"]

#: Event types a fork copies (the entries; never a clear or an edit).
_ENTRY_TYPES: Final = sorted(MESSAGE_EVENT_TYPES)


async def meta_in_tx(conn: Any, session_id: str) -> SessionMeta:
    """The session's metadata and settings as a reply shows them (it must be stored)."""
    found = await conn.fetchrow(
        f"SELECT {SESSION_COLS}, {SETTINGS_COLS} FROM sessions WHERE session_id = $1", session_id
    )
    return session_meta(session_row(found), session_id, None, settings_of(found[13:]))


async def _remember_in_tx(
    conn: Any, session_id: str, request_id: str, kind: str, fp: str, record: str, now: str
) -> None:
    if request_id:
        await conn.execute(
            "INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
            "VALUES ($1, $2, $3, $4, $5, $6)",
            session_id,
            request_id,
            kind,
            fp,
            record,
            now,
        )


def _exists(session_id: str, what: str) -> AlreadyExistsError:
    return AlreadyExistsError(
        f"session {session_id!r} already exists; {what} makes only new sessions (Load or UpdateSession it, "
        "or choose another id)",
        reason=Reason.SESSION_EXISTS,
        session_id=session_id,
    )


async def _claim_in_tx(
    conn: Any,
    session_id: str,
    workdir: str,
    *,
    state: str,
    tool_policy: str,
    forked_from: str = "",
    forked_at_position: int = 0,
) -> str | None:
    """Insert the new session's row; its creation time, or None if the id is stored (after a concurrent
    creation of it committed)."""
    created: str | None = await conn.fetchval(
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


async def _replayed_in_tx(conn: Any, session_id: str, request_id: str, kind: str, fp: str) -> str | None:
    """Lock a stored session's row; the record of a replay of this request, or None."""
    await lock_session_in_tx(conn, session_id)
    return rules.replay_record(request_id, kind, fp, await _stored_request_in_tx(conn, session_id, request_id))


async def create_in_tx(conn: Any, job: CreateJob) -> SessionResult:
    """Create an empty session with its initial state, labels and tool policy, or refuse if it is stored.

    Raises:
        AlreadyExistsError: reason SESSION_EXISTS.
        InvalidRequestError: REQUEST_ID_REUSED.
    """
    sid = job.session_id
    state = state_after(EMPTY, job.state, "state")  # a top-level null of an initial state means absent
    now = await _claim_in_tx(conn, sid, job.workdir, state=state, tool_policy=job.tool_policy)
    if now is None:
        record = await _replayed_in_tx(conn, sid, job.request_id, "create", job.fingerprint)
        if record is not None:
            return SessionResult(await meta_in_tx(conn, sid), json.loads(record)["trace"], replayed=True)
        raise _exists(sid, "CreateSession")
    await write_labels_in_tx(conn, sid, job.labels)
    payload = settings_payload(labels=job.labels, tool_policy=job.tool_policy)
    await insert_session_event_in_tx(conn, sid, "session_settings", job.trace_id, now, payload)
    if state != EMPTY:
        await insert_session_event_in_tx(conn, sid, "state", job.trace_id, now, state_payload(StateDelta("", state)))
    record = json.dumps({"trace": job.trace_id})
    await _remember_in_tx(conn, sid, job.request_id, "create", job.fingerprint, record, now)
    return SessionResult(await meta_in_tx(conn, sid), job.trace_id)


async def update_in_tx(conn: Any, job: UpdateJob) -> SessionResult:
    """Apply an UpdateSession: state deltas, then labels set and removed, then the new default tool policy.

    Raises:
        SessionNotFoundError: the session is not stored.
        SequenceConflictError: the last position is not the expected one.
        InvalidRequestError: REQUEST_ID_REUSED, a state over its bound, more than 32 labels.
    """
    sid = job.session_id
    row, now = await lock_session_in_tx(conn, sid)
    stored = await _stored_request_in_tx(conn, sid, job.request_id)
    record = rules.replay_record(job.request_id, "update", job.fingerprint, stored)
    if record is not None:
        return SessionResult(await meta_in_tx(conn, sid), json.loads(record)["trace"], replayed=True)
    if row is None:
        raise SessionNotFoundError(
            f"session {sid!r} is not stored (CreateSession or Append creates it)", session_id=sid
        )
    rules.check_expected(job.expected_last_position, row.last_position)
    settings = settings_of(await conn.fetchrow(f"SELECT {SETTINGS_COLS} FROM sessions WHERE session_id = $1", sid))
    changed = bool(job.state_deltas)
    if job.state_deltas:
        await apply_deltas_in_tx(conn, sid, job.state_deltas, job.trace_id, now)
    labels = labels_after(settings.labels, job.set_labels, job.remove_labels)
    new_labels = labels if labels != dict(settings.labels) else None
    new_policy = job.tool_policy if job.tool_policy not in (None, settings.tool_policy) else None
    if new_labels is not None:
        await write_labels_in_tx(conn, sid, new_labels)
    if new_policy is not None:
        await conn.execute("UPDATE sessions SET tool_policy = $1 WHERE session_id = $2", new_policy, sid)
    if new_labels is not None or new_policy is not None:
        payload = settings_payload(labels=new_labels, tool_policy=new_policy)
        await insert_session_event_in_tx(conn, sid, "session_settings", job.trace_id, now, payload)
        changed = True
    if changed:
        await conn.execute("UPDATE sessions SET updated_at = $1 WHERE session_id = $2", now, sid)
    record = json.dumps({"trace": job.trace_id})
    await _remember_in_tx(conn, sid, job.request_id, "update", job.fingerprint, record, now)
    return SessionResult(await meta_in_tx(conn, sid), job.trace_id)


async def fork_in_tx(conn: Any, job: ForkJob, max_open_calls: int = 0) -> ForkResult:
    """Create ``job.session_id`` as a copy of the source's visible entries up to a position.

    As the SQLite backend's ``fork_in_tx``: entries become positions 1..n, each event copied as
    stored (payload, item bytes, format, client id, time, trace id; a ``supersedes`` mark dropped),
    calls keep their ``tool_calls`` rows at the new positions without run ownership; state, tool
    policy and (unless given) labels are copied; the lineage is recorded; usage starts at zero.
    Cost: O(entries copied).

    Raises:
        SessionNotFoundError: the source is not stored.
        AlreadyExistsError: reason SESSION_EXISTS, the new id is stored.
        InvalidRequestError: up_to_position beyond the source's last position; REQUEST_ID_REUSED.
        PreconditionError: TOO_MANY_OPEN_CALLS, the fork would hold more open calls than the limit.
    """
    sid, src = job.session_id, job.source_id
    found = await conn.fetchrow(
        f"SELECT {SESSION_COLS}, {SETTINGS_COLS} FROM sessions WHERE session_id = $1 FOR SHARE", src
    )
    source = session_row(found)
    if source is None:
        if await conn.fetchval("SELECT 1 FROM sessions WHERE session_id = $1", sid) is not None:
            replayed = await _fork_replay_in_tx(conn, job)
            if replayed is not None:
                return replayed
        raise SessionNotFoundError(f"source session {src!r} is not stored", session_id=src)
    source_settings = settings_of(found[13:])
    upto = job.up_to_position or source.last_position
    labels = source_settings.labels if job.labels is None else job.labels
    state, policy = source_settings.state, source_settings.tool_policy
    now = await _claim_in_tx(
        conn,
        sid,
        job.workdir or source.workdir,
        state=state,
        tool_policy=policy,
        forked_from=src,
        forked_at_position=upto,
    )
    if now is None:
        replayed = await _fork_replay_in_tx(conn, job)
        if replayed is not None:
            return replayed
        raise _exists(sid, "ForkSession")
    if job.up_to_position > source.last_position:
        raise InvalidRequestError(
            f"up_to_position {job.up_to_position} is beyond the last position of {src!r} ({source.last_position})",
            field="up_to_position",
            last_position=source.last_position,
        )
    await write_labels_in_tx(conn, sid, labels)
    payload = settings_payload(labels=labels, tool_policy=policy, forked_from=src, forked_at_position=upto)
    await insert_session_event_in_tx(conn, sid, "session_settings", job.trace_id, now, payload)
    if state != EMPTY:
        await insert_session_event_in_tx(conn, sid, "state", job.trace_id, now, state_payload(StateDelta("", state)))
    copied = await _copy_entries_in_tx(conn, src, sid, source.clear_position, upto)
    if max_open_calls:
        rules.check_open_calls(await open_call_count_in_tx(conn, sid), max_open_calls, sid)
    await conn.execute("UPDATE sessions SET last_position = $1, message_count = $1 WHERE session_id = $2", copied, sid)
    record = json.dumps({"copied": copied, "trace": job.trace_id})
    await _remember_in_tx(conn, sid, job.request_id, "fork", job.fingerprint, record, now)
    return ForkResult(await meta_in_tx(conn, sid), copied, job.trace_id)


async def _fork_replay_in_tx(conn: Any, job: ForkJob) -> ForkResult | None:
    """The replay of a fork whose new session is stored, or None (not a retry of it)."""
    record = await _replayed_in_tx(conn, job.session_id, job.request_id, "fork", job.fingerprint)
    if record is None:
        return None
    found = json.loads(record)
    return ForkResult(await meta_in_tx(conn, job.session_id), int(found["copied"]), found["trace"], replayed=True)


async def _copy_entries_in_tx(conn: Any, src: str, sid: str, after: int, upto: int) -> int:
    """Copy the visible entries of ``src`` in ``(after, upto]`` to positions 1..n of ``sid``; returns n."""
    visible = "session_id = $1 AND position > $2 AND position <= $3 AND type = ANY($4::text[]) AND hidden_by IS NULL"
    bounds = (src, after, upto, _ENTRY_TYPES)
    copied = await conn.fetch(
        "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, "
        "client_id) SELECT $5, row_number() OVER (ORDER BY position), type, trace_id, ts, schema_version, payload, "
        f"format, item, client_id FROM events WHERE {visible} ORDER BY position "
        "RETURNING event_id, position, type, payload",
        *bounds,
        sid,
    )
    # A supersedes mark names a repair that is hidden, so not copied: the fork's copy drops it
    # (the rest of the payload text is kept as written).
    marked = []
    for r in copied:
        if r[2] == "tool_result" and '"supersedes"' in r[3]:
            data = json.loads(r[3])
            if data.pop("supersedes", None) is not None:
                marked.append((json.dumps(data, ensure_ascii=False), int(r[0])))
    if marked:
        await conn.executemany("UPDATE events SET payload = $1 WHERE event_id = $2", marked)
    old = [
        int(r[0]) for r in await conn.fetch(f"SELECT position FROM events WHERE {visible} ORDER BY position", *bounds)
    ]
    new_of = {p: i for i, p in enumerate(old, 1)}
    call_ids: list[str] = []
    for r in copied:
        if r[2] == "assistant_message":
            call_ids.extend(call_names(r[3]))
    if call_ids:
        rows = await conn.fetch(
            "SELECT call_id, assistant_position, call_index, result_position, pending, repair_mode, "
            "synthetic_position FROM tool_calls WHERE session_id = $1 AND call_id = ANY($2::text[])",
            src,
            [db_text(c) for c in call_ids],
        )
        await conn.executemany(
            "INSERT INTO tool_calls(session_id, call_id, assistant_position, call_index, result_position, run_id, "
            "pending, repair_mode, synthetic_position) VALUES ($1, $2, $3, $4, $5, '', $6, $7, $8)",
            [
                (sid, r[0], new_of[int(r[1])], r[2], _moved(new_of, r[3]), r[4], r[5], _moved(new_of, r[6]))
                for r in rows
                if int(r[1]) in new_of
            ],
        )
    return len(old)


def _moved(new_of: dict[int, int], position: int | None) -> int | None:
    """A source position's position in the fork (None: not copied, or none)."""
    return None if position is None else new_of.get(int(position))
