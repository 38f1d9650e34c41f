"""Append, RecordUsage, Clear, RecordEvent and Delete: each write's sequence, once, for both backends.

Each write is a generator of port calls (``steps.py``, ``port.py``): it holds the session's row
first (on PostgreSQL that is the row lock, the first statement of every write: SPEC §8), asks
the pure rules (``rules.py``, ``events.py``, ``policy.py``) at every decision, and names each
read and write it needs as a verb of the port. SQLite's writer runs it synchronously inside its
transaction (``steps.run_sync``), PostgreSQL's connection asynchronously inside the caller's
(``steps.run_async``); both run the same order of reads and writes.

A request id is answered once: a repeated id replays the stored record (``rules.replay_record``)
and writes nothing. A write that creates its session asks again after creating it: on
PostgreSQL another daemon may have created it first (the insert waited for its commit), with
this very request's record.

Must never: touch a connection, a clock or a lock (the port and its driver do), or decide
anything a rule decides.
"""

# A write verb answers None: ``yield port.advance_session(...)`` hands the call to the driver, and the
# None it sends back is not used (mypy's func-returns-value would refuse the ``yield`` of such a call).
# mypy: disable-error-code="func-returns-value"

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from .. import rules
from ..events import encode_clear, encode_message, encode_usage
from ..model import (
    AppendJob,
    AppendResult,
    ClearResult,
    EventResult,
    PreparedMessage,
    Usage,
    UsageDelta,
    UsageResult,
)
from ..policy import ToolPolicy, merge_policies
from .port import NewEntry, Port, SessionRow
from .states import apply_deltas
from .steps import Steps

__all__ = ["add_usage", "append", "clear", "delete", "record_event", "record_usage", "replayed"]

_log = logging.getLogger("claw_sessiond.store")

Result = AppendResult | UsageResult | ClearResult | EventResult


# -- request ids and the held row


def replayed(
    port: Port,
    session_id: str,
    request_id: str,
    kind: str,
    fingerprint: str,
    earlier: Callable[[], str] | None = None,
) -> Steps[str | None]:
    """The stored record of an earlier request with this id (it is replayed), or None (it is new, or has no id).

    ``earlier``: as in ``rules.replay_record`` (an append's fingerprint in the form of earlier versions).

    Raises:
        InvalidRequestError: reason REQUEST_ID_REUSED (``rules.replay_record``).
    """
    if not request_id:
        return None
    stored = yield port.stored_request(session_id, request_id)
    return rules.replay_record(request_id, kind, fingerprint, stored, earlier)


def _remember(
    port: Port, session_id: str, request_id: str, kind: str, fingerprint: str, result: Result, now: str
) -> Steps[None]:
    """Store the first result of a request that has an id (what a repeat of it replays)."""
    if request_id:
        yield port.remember(session_id, request_id, kind, fingerprint, rules.result_record(result), now)


def _held(
    port: Port,
    session_id: str,
    request_id: str,
    kind: str,
    fingerprint: str,
    expected: int,
    workdir: str,
    earlier: Callable[[], str] | None = None,
) -> Steps[tuple[str | None, SessionRow | None, str]]:
    """Hold the session's row, created if missing once the checks pass: (the record to replay or None, row, time).

    The row is None only with a record to replay.

    Raises:
        InvalidRequestError: reason REQUEST_ID_REUSED.
        SequenceConflictError: ``expected`` is not the session's last position (``rules.check_expected``).
    """
    row, now = yield port.session_row(session_id)
    record = yield from replayed(port, session_id, request_id, kind, fingerprint, earlier)
    if record is not None:
        return record, row, now
    rules.check_expected(expected, row.last_position if row else 0)
    if row is None:
        row, now = yield port.ensure_session(session_id, workdir)
        record = yield from replayed(port, session_id, request_id, kind, fingerprint, earlier)
        if record is None:
            rules.check_expected(expected, row.last_position)
    return record, row, now


# -- append


class _Policy:
    """The policy an append runs under (its own merged over its session's), read once, when first asked."""

    __slots__ = ("_job", "_policy")

    def __init__(self, job: AppendJob) -> None:
        self._job = job
        self._policy: ToolPolicy | None = None

    def get(self, port: Port) -> Steps[ToolPolicy]:
        if self._policy is None:
            stored = yield port.session_policy(self._job.session_id)
            self._policy = merge_policies(stored, self._job.tool_policy)
        return self._policy


def append(port: Port, job: AppendJob, max_open_calls: int = 0) -> Steps[AppendResult]:
    """Append ``job``'s messages, all or none (``max_open_calls``: 0 for no limit).

    Only an append that makes new calls can exceed the limit, so only such an append counts
    the session's open calls (after its own writes, so that the results it carries count too;
    a refusal rolls back with the rest of the write).

    Raises:
        InvalidRequestError, SequenceConflictError, ToolCallStateError, PreconditionError: as the rules decide.
    """
    sid = job.session_id
    record, row, now = yield from _held(
        port,
        sid,
        job.request_id,
        "append",
        job.fingerprint,
        job.expected_last_position,
        job.workdir,
        job.earlier_fingerprint,
    )
    if record is not None:
        return rules.append_from_record(record)
    assert row is not None
    position = row.last_position
    first = position + 1
    usage = row.usage
    policy = _Policy(job)
    if rules.has_unparsed_calls(job.messages):
        rules.check_unparsed_calls(job.messages, (yield from policy.get(port)).allow_unparsed_calls)
    hidden = 0  # synthetic repairs superseded by this append's results
    # The entries are written together (one verb, as few statements as the backend can), after the checks of
    # each: the checks read only what was stored before this append (its own client ids are told apart by
    # validation) and the call index. A usage event still follows its entry in the log.
    entries: list[NewEntry] = []
    for prepared in job.messages:
        position += 1
        msg = prepared.message
        if msg.client_id:
            taken = yield port.client_id_position(sid, msg.client_id, row.clear_position)
            rules.check_client_id_free(msg.client_id, taken)
        payload = prepared.payload
        if msg.role == "tool":
            payload, hid = yield from _answer(port, sid, prepared, position, policy)
            hidden += hid
        if msg.tool_calls:
            yield from _insert_calls(port, sid, prepared, position, job.run_id)
        entries.append((position, prepared, payload))
        if msg.usage is not None:
            yield port.insert_entries(sid, entries, job.trace_id, now)
            entries = []
            usage = yield from add_usage(port, sid, usage, msg.usage, now, job.trace_id)
    if entries:
        yield port.insert_entries(sid, entries, job.trace_id, now)
    if max_open_calls and rules.makes_calls(job.messages):
        rules.check_open_calls((yield port.open_call_count(sid)), max_open_calls, sid)
    if job.state_deltas:  # in this transaction: a refused delta refuses the whole append
        yield from apply_deltas(port, sid, job.state_deltas, job.trace_id, now)
    yield port.advance_session(sid, position, len(job.messages) - hidden, now, job.workdir)
    result = AppendResult(first, position, now, job.trace_id)
    yield from _remember(port, sid, job.request_id, "append", job.fingerprint, result, now)
    return result


def _answer(
    port: Port, session_id: str, prepared: PreparedMessage, position: int, policy: _Policy
) -> Steps[tuple[str, int]]:
    """Admit a tool result stored at ``position``; returns its payload and how many entries it hid (0 or 1).

    A result for a call whose only answer is a synthetic repair supersedes it: the result's
    payload records the repair's position (``supersedes``), the repair is hidden by the result
    (``hidden_by``) and the call's result moves to the result. A result for an unknown call is
    stored with ``orphan`` when the policy allows it, and pairs with nothing.

    Raises:
        ToolCallStateError: reason UNKNOWN_TOOL_CALL or TOOL_CALL_ALREADY_ANSWERED.
    """
    msg = prepared.message
    known, answered_at = yield port.call_result(session_id, msg.tool_call_id)
    by_repair = False
    if answered_at is not None:
        by_repair = (yield port.entry_type(session_id, answered_at)) == "repair"
    allow_orphan = False
    if not known:
        allow_orphan = (yield from policy.get(port)).allow_orphan_results
    admission = rules.admit_tool_result(
        msg.tool_call_id, known, answered_at, answered_by_repair=by_repair, allow_orphan=allow_orphan
    )
    if admission == "orphan":
        return encode_message(dataclasses.replace(msg, orphan=True)), 0
    yield port.answer_call(session_id, msg.tool_call_id, position)
    if admission == "pair":
        return prepared.payload, 0
    assert answered_at is not None
    yield port.hide_entry(session_id, answered_at, position)
    # The audit trail: the result's payload names the repair it superseded; the log line says it happened.
    _log.info(
        "event=repair_superseded session=%s repair_position=%d result_position=%d", session_id, answered_at, position
    )
    return encode_message(dataclasses.replace(msg, supersedes=answered_at)), 1


def _insert_calls(port: Port, session_id: str, prepared: PreparedMessage, position: int, run_id: str) -> Steps[None]:
    """Index the calls an assistant message makes (an id-less call is not indexed: never paired or repaired).

    Raises:
        InvalidRequestError: reason DUPLICATE_TOOL_CALL_ID, a call id already in the visible history.
    """
    for index, call in enumerate(prepared.message.tool_calls):
        if call.id:
            inserted = yield port.insert_call(
                session_id, call.id, position, index, run_id, call.pending, call.repair_mode
            )
            rules.check_call_inserted(call.id, inserted)


# -- usage


def add_usage(port: Port, session_id: str, old: Usage, delta: UsageDelta, now: str, trace_id: str) -> Steps[Usage]:
    """Add ``delta`` to the session's totals (``old``: its totals now) and its model's, and log a usage event.

    Shared by RecordUsage and by an Append whose entries carry usage (the report reads the usage events).

    Raises:
        PreconditionError, InvalidRequestError: as ``rules.add_usage``.
    """
    new = rules.add_usage(old, delta, session_id)
    yield port.set_usage(session_id, new)
    yield port.add_model_usage(session_id, delta, rules.charged_currency(delta))
    yield port.insert_event(session_id, None, "usage", trace_id, now, encode_usage(delta))
    return new


def record_usage(
    port: Port, session_id: str, delta: UsageDelta, request_id: str, fingerprint: str, workdir: str, trace_id: str
) -> Steps[UsageResult]:
    """Add usage to the session's totals, creating the session if needed."""
    row, now = yield port.ensure_session(session_id, workdir)
    record = yield from replayed(port, session_id, request_id, "usage", fingerprint)
    if record is not None:
        return rules.usage_from_record(record)
    new = yield from add_usage(port, session_id, row.usage, delta, now, trace_id)
    yield port.touch_session(session_id, now, workdir)
    result = UsageResult(new, trace_id)
    yield from _remember(port, session_id, request_id, "usage", fingerprint, result, now)
    return result


# -- clear, event, delete


def clear(
    port: Port,
    session_id: str,
    request_id: str,
    fingerprint: str,
    expected: int,
    workdir: str,
    trace_id: str,
    erase: bool = False,
) -> Steps[ClearResult]:
    """Write a clear; with ``erase`` (an erasing clear) the history before it goes first, in this transaction.

    The erasure deletes the session's history events, its tool-call rows and their search-index
    entries, and replaces the content hashes of its stored history requests
    (``rules.ERASED_FINGERPRINT``); the clear's payload says how many events went. The
    backend's ``erase_history`` verb takes the bytes out (SQLite: with ``secure_delete`` and the
    checkpoint its store runs after the commit; PostgreSQL: the next vacuum).

    Raises:
        InvalidRequestError, SequenceConflictError: as for :func:`append`.
    """
    record, row, now = yield from _held(port, session_id, request_id, "clear", fingerprint, expected, workdir)
    if record is not None:
        return rules.clear_from_record(record)
    assert row is not None
    erased: int | None = None
    if erase:
        erased = yield port.erase_history(session_id, rules.ERASED_FINGERPRINT, rules.CONTENT_REQUEST_KINDS)
    position = row.last_position + 1
    yield port.insert_event(session_id, position, "clear", trace_id, now, encode_clear(erased))
    yield port.clear_session(session_id, position, now, workdir)
    result = ClearResult(position, trace_id, events_erased=erased or 0)
    yield from _remember(port, session_id, request_id, "clear", fingerprint, result, now)
    return result


def record_event(
    port: Port, session_id: str, event_type: str, payload: str, request_id: str, fingerprint: str, trace_id: str
) -> Steps[EventResult]:
    """Store an audit event (outside the history), creating the session if needed."""
    _row, now = yield port.ensure_session(session_id, "")
    record = yield from replayed(port, session_id, request_id, "event", fingerprint)
    if record is not None:
        return rules.event_from_record(record)
    event_id = yield port.insert_event(session_id, None, event_type, trace_id, now, payload)
    yield port.touch_session(session_id, now, "")
    result = EventResult(event_id, trace_id)
    yield from _remember(port, session_id, request_id, "event", fingerprint, result, now)
    return result


def delete(port: Port, session_id: str) -> Steps[int]:
    """Delete every row of the session, its row held first; returns how many events it had."""
    yield port.session_row(session_id)
    count: Any = yield port.delete_session(session_id)
    return int(count)
