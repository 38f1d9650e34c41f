"""CreateSession, ForkSession and UpdateSession: each write's sequence, once for every backend (``steps.py``).

Each reads what a rule needs through the port, asks the rule (``rules.py``, ``state.py``,
``history.py``, ``events.py``) and writes through the port; the backends implement only the
port's verbs. A request id makes each one idempotent per session (the new session's id for a
create or a fork): a retry returns the session as it is now, marked replayed.

A new session's row is *claimed* (:meth:`~.port.Port.claim_session`, an insert that does nothing
for a stored id): of two daemons creating one id at once on PostgreSQL, the second waits for the
first to commit and then finds the row, holds it and replays (same request id and content) or
refuses with SESSION_EXISTS. A fork first holds its source's row against writes
(:meth:`~.port.Port.source_session`), so no write to the source commits while its entries are
copied. A refusal raised after a claim rolls the claim back with the rest of the transaction.

Must never: touch a connection or a clock (the port does), or decide what a rule decides.
"""

# A write verb answers None: ``yield port.write_labels(...)`` hands the call to the driver, and the
# None it sends back is not used (mypy's func-returns-value would refuse the ``yield`` of such a call).
# mypy: disable-error-code="func-returns-value"

from __future__ import annotations

import json

from .. import rules
from ..errors import AlreadyExistsError, InvalidRequestError, Reason, SessionNotFoundError
from ..events import call_names, without_supersedes
from ..history import forked_calls
from ..model import SessionMeta
from ..state import (
    EMPTY,
    CreateJob,
    ForkJob,
    ForkResult,
    SessionResult,
    UpdateJob,
    labels_after,
    settings_payload,
    state_after,
)
from .port import Port, session_meta
from .states import apply_deltas, settle_new_session
from .steps import Steps
from .writes import replayed

__all__ = ["create_session", "fork_session", "meta", "replayed_record", "update_session"]


def meta(port: Port, session_id: str) -> Steps[SessionMeta]:
    """The session's metadata and settings as a reply shows them (it must be stored)."""
    row, _now = yield port.session_row(session_id)
    return session_meta(row, session_id, None, (yield port.settings(session_id)))


def replayed_record(port: Port, session_id: str, request_id: str, kind: str, fp: str) -> Steps[str | None]:
    """Hold a session's row; the record of a replay of this request, or None (no row, no id, or not stored).

    Raises:
        InvalidRequestError: REQUEST_ID_REUSED, the id was used for other content.
    """
    row, _now = yield port.session_row(session_id)
    if row is None:
        return None
    record: str | None = yield from replayed(port, session_id, request_id, kind, fp)
    return record


def _exists(session_id: str, what: str) -> AlreadyExistsError:
    return AlreadyExistsError(
        f"session {session_id!r} already exists; {what} makes only new sessions (Load or UpdateSession it, "
        "or choose another id)",
        reason=Reason.SESSION_EXISTS,
        session_id=session_id,
    )


def _remember(port: Port, job: CreateJob | UpdateJob | ForkJob, kind: str, record: str, now: str) -> Steps[None]:
    if job.request_id:
        yield port.remember(job.session_id, job.request_id, kind, job.fingerprint, record, now)


def create_session(port: Port, job: CreateJob) -> Steps[SessionResult]:
    """Create an empty session with its initial state, labels and tool policy, or refuse if it is stored.

    Writes the row (with a new incarnation), a ``session_settings`` event (labels and policy) and,
    for a non-empty initial state, a ``state`` event.

    Raises:
        AlreadyExistsError: reason SESSION_EXISTS.
        InvalidRequestError: REQUEST_ID_REUSED.
    """
    sid = job.session_id
    state = state_after(EMPTY, job.state, "state")  # a top-level null of an initial state means absent
    now = yield port.claim_session(sid, job.workdir, state, job.tool_policy, "", 0)
    if now is None:
        record = yield from replayed_record(port, sid, job.request_id, "create", job.fingerprint)
        if record is not None:
            return SessionResult((yield from meta(port, sid)), json.loads(record)["trace"], replayed=True)
        raise _exists(sid, "CreateSession")
    yield from settle_new_session(port, sid, job.labels, job.tool_policy, state, job.trace_id, now)
    yield from _remember(port, job, "create", json.dumps({"trace": job.trace_id}), now)
    return SessionResult((yield from meta(port, sid)), job.trace_id)


def update_session(port: Port, job: UpdateJob) -> Steps[SessionResult]:
    """Apply an UpdateSession: state deltas, then labels set and removed, then the new default tool policy.

    A ``session_settings`` event records labels and policy when they change; each delta is a
    ``state`` event. Nothing changes the history's positions.

    Raises:
        SessionNotFoundError: the session is not stored.
        SequenceConflictError: the last position is not the expected one.
        InvalidRequestError: REQUEST_ID_REUSED, a state over its bound, more than 32 labels.
    """
    sid = job.session_id
    row, now = yield port.session_row(sid)
    if row is not None:
        record = yield from replayed(port, sid, job.request_id, "update", job.fingerprint)
        if record is not None:
            return SessionResult((yield from meta(port, sid)), json.loads(record)["trace"], replayed=True)
    settings = None if row is None else (yield port.settings(sid))
    if row is None or settings is None:
        raise SessionNotFoundError(
            f"session {sid!r} is not stored (CreateSession or Append creates it)", session_id=sid
        )
    rules.check_expected(job.expected_last_position, row.last_position)
    changed = bool(job.state_deltas)
    if job.state_deltas:
        yield from apply_deltas(port, sid, job.state_deltas, job.trace_id, now)
    labels = labels_after(settings.labels, job.set_labels, job.remove_labels)
    new_labels = labels if labels != dict(settings.labels) else None
    new_policy = job.tool_policy if job.tool_policy not in (None, settings.tool_policy) else None
    if new_labels is not None:
        yield port.write_labels(sid, new_labels)
    if new_policy is not None:
        yield port.set_tool_policy(sid, new_policy)
    if new_labels is not None or new_policy is not None:
        payload = settings_payload(labels=new_labels, tool_policy=new_policy)
        yield port.insert_event(sid, None, "session_settings", job.trace_id, now, payload)
        changed = True
    if changed:
        yield port.touch_session(sid, now, "")
    yield from _remember(port, job, "update", json.dumps({"trace": job.trace_id}), now)
    return SessionResult((yield from meta(port, sid)), job.trace_id)


def _fork_replay(port: Port, job: ForkJob) -> Steps[ForkResult | None]:
    """The replay of a fork whose new session is stored, or None (not a retry of it)."""
    record = yield from replayed_record(port, job.session_id, job.request_id, "fork", job.fingerprint)
    if record is None:
        return None
    found = json.loads(record)
    return ForkResult((yield from meta(port, job.session_id)), int(found["copied"]), found["trace"], replayed=True)


def fork_session(port: Port, job: ForkJob, max_open_calls: int = 0) -> Steps[ForkResult]:
    """Create ``job.session_id`` as a copy of the source's visible entries up to a position.

    The entries become positions 1..n of the new session, each event copied as stored (its
    payload, item bytes, format, client id, time and trace id; a synthetic repair stays one),
    except that a ``supersedes`` mark is dropped (``events.without_supersedes``: the repair it
    names is hidden, so not copied). Calls keep their index rows at the new positions, without
    run ownership (``history.forked_calls``): a call whose result lies beyond the copied range is
    open in the fork. The state, tool policy and (unless given) labels are copied; the lineage
    is recorded. Usage totals start at zero. Cost: O(entries copied).

    Raises:
        SessionNotFoundError: the source is not stored.
        AlreadyExistsError: reason SESSION_EXISTS, the new id is stored.
        InvalidRequestError: up_to_position beyond the source's last position; REQUEST_ID_REUSED.
        PreconditionError: TOO_MANY_OPEN_CALLS, the fork would hold more open calls than the limit.
    """
    sid, src = job.session_id, job.source_id
    found = yield port.source_session(src)
    if found is None:
        replayed = yield from _fork_replay(port, job)
        if replayed is not None:
            return replayed
        raise SessionNotFoundError(f"source session {src!r} is not stored", session_id=src)
    source, source_settings = found
    upto = job.up_to_position or source.last_position
    labels = source_settings.labels if job.labels is None else job.labels
    state, policy = source_settings.state, source_settings.tool_policy
    now = yield port.claim_session(sid, job.workdir or source.workdir, state, policy, src, upto)
    if now is None:
        replayed = yield from _fork_replay(port, job)
        if replayed is not None:
            return replayed
        raise _exists(sid, "ForkSession")
    if job.up_to_position > source.last_position:
        raise InvalidRequestError(
            f"up_to_position {job.up_to_position} is beyond the last position of {src!r} ({source.last_position})",
            field="up_to_position",
            last_position=source.last_position,
        )
    yield from settle_new_session(
        port, sid, labels, policy, state, job.trace_id, now, forked_from=src, forked_at_position=upto
    )
    copied = yield from _copy_entries(port, src, sid, source.clear_position, upto)
    if max_open_calls:
        rules.check_open_calls((yield port.open_call_count(sid)), max_open_calls, sid)
    yield port.advance_session(sid, copied, copied, now, "")
    yield from _remember(port, job, "fork", json.dumps({"copied": copied, "trace": job.trace_id}), now)
    return ForkResult((yield from meta(port, sid)), copied, job.trace_id)


def _copy_entries(port: Port, src: str, sid: str, after: int, upto: int) -> Steps[int]:
    """Copy the visible entries of ``src`` in ``(after, upto]`` to positions 1..n of ``sid`` with their calls' index
    rows; returns n."""
    old = yield port.copy_entries(src, sid, after, upto)
    marked = yield port.payloads_containing(sid, "tool_result", '"supersedes"')
    unmarked = [(position, p) for position, p in ((pos, without_supersedes(text)) for pos, text in marked) if p]
    if unmarked:
        yield port.set_payloads(sid, unmarked)
    call_ids: list[str] = []
    for _position, payload in (yield port.payloads_containing(sid, "assistant_message", '"tool_calls"')):
        call_ids.extend(call_names(payload))
    if call_ids:
        new_of = {p: i for i, p in enumerate(old, 1)}
        yield port.index_calls(sid, forked_calls((yield port.indexed_calls(src, call_ids)), new_of))
    return len(old)
