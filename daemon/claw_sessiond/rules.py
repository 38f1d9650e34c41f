"""The write rules of SPEC, as pure decisions every backend's transaction code calls.

A backend reads what a rule needs inside its write transaction, asks the
rule, and writes (or rolls back) as it says; it never re-decides. So two
backends cannot drift on:

- the expected-position check (optimistic concurrency, SPEC §3):
  :func:`check_expected`;
- request-id replay: the same id with the same content returns the first
  result, with other content it is refused (``REQUEST_ID_REUSED``):
  :func:`replay_record` and the stored result records;
- tool-result admission (a result answers a known, unanswered call; a new
  call id is unique in the visible history) and the open-call limit:
  :func:`admit_tool_result`, :func:`check_call_inserted`,
  :func:`check_open_calls`;
- usage arithmetic: one currency per session, totals within a signed 64-bit
  integer: :func:`add_usage`;
- the import fold: rebuilding a session's totals, tool-call index and
  per-model usage from its events, refusing an inconsistent history:
  :func:`fold_events`, with the refuse/merge rules of an import.

Raises only ``claw_sessiond.errors``. Must never: do I/O, speak SQL, or import grpc.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from .bounds import MAX_POSITION, JsonError, loads_limited
from .errors import (
    AlreadyExistsError,
    InvalidRequestError,
    PreconditionError,
    Reason,
    SequenceConflictError,
    ToolCallStateError,
)
from .events import canonical_json, usage_from_payload
from .model import (
    AppendResult,
    ClearResult,
    EventResult,
    ImportMode,
    PreparedMessage,
    Usage,
    UsageDelta,
    UsageResult,
)

if TYPE_CHECKING:
    from .export import ImportedEvent

__all__ = [
    "CONTENT_REQUEST_KINDS",
    "ERASED_FINGERPRINT",
    "MAX_INT64",
    "Admission",
    "CallEntry",
    "ImportFold",
    "StoredRequest",
    "add_usage",
    "admit_tool_result",
    "append_from_record",
    "charged_currency",
    "check_call_inserted",
    "check_client_id_free",
    "check_expected",
    "check_import_mode",
    "check_imported_open_calls",
    "check_open_calls",
    "check_unparsed_calls",
    "clear_from_record",
    "event_from_record",
    "fold_events",
    "has_unparsed_calls",
    "makes_calls",
    "merge_events",
    "replay_record",
    "result_record",
    "shifted_edit",
    "stored_event_key",
    "usage_from_record",
]

#: Largest usage total (a signed 64-bit integer, as stored).
MAX_INT64: Final = 2**63 - 1
#: The fingerprint kept for a request whose content a Clear with erase removed: the hash of the content
#: could confirm a guess of it, so it goes too; a retry with the same id still replays the first result.
ERASED_FINGERPRINT: Final = "erased"
#: Kinds of stored requests whose fingerprint hashes history content (erased with it).
CONTENT_REQUEST_KINDS: Final = ("append", "edit", "delete")


# ---------------------------------------------------------------- expected position


def check_expected(expected: int, actual: int) -> None:
    """``expected``: 0 means no check, -1 a new (empty) session, else the last position the caller saw.

    Raises:
        SequenceConflictError: the session's last position is ``actual``, not the expected one.
    """
    if expected == 0:
        return
    want = 0 if expected == -1 else expected
    if want != actual:
        raise SequenceConflictError(
            f"session changed: expected last position {want}, it is {actual}; reload and retry",
            reason=Reason.SEQUENCE_CONFLICT,
            expected=want,
            actual=actual,
        )


# ---------------------------------------------------------------- request ids


@dataclass(frozen=True, slots=True)
class StoredRequest:
    """The record of an earlier request with the same id on the same session."""

    kind: str
    fingerprint: str
    result: str
    """The first result, as :func:`result_record` wrote it."""


def replay_record(
    request_id: str,
    kind: str,
    fingerprint: str,
    stored: StoredRequest | None,
    earlier: Callable[[], str] | None = None,
) -> str | None:
    """The first result's record if this request repeats a stored one (it is replayed), else None (it is new).

    ``earlier``: the same content's fingerprint in a form that an earlier version stored (an append's,
    ``AppendJob.earlier_fingerprint``), computed only when the stored fingerprint is not ``fingerprint``.

    Raises:
        InvalidRequestError: reason REQUEST_ID_REUSED, the id was used for another kind or other content.
    """
    if not request_id or stored is None:
        return None
    if stored.kind == kind and stored.fingerprint == ERASED_FINGERPRINT:
        return stored.result  # its content was erased since (Clear with erase): the first result stands
    if stored.kind != kind or (
        stored.fingerprint != fingerprint and (earlier is None or stored.fingerprint != earlier())
    ):
        raise InvalidRequestError(
            f"request id {request_id!r} was already used for a different {stored.kind} request on this session; "
            "use a new request id for new content",
            reason=Reason.REQUEST_ID_REUSED,
            request_id=request_id,
        )
    return stored.result


def _usage_fields(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cost_micros": usage.cost_micros,
        "currency": usage.currency,
    }


def result_record(result: AppendResult | UsageResult | ClearResult | EventResult) -> str:
    """The stored record of a request's first result (JSON text; the spelling is part of the database)."""
    record: dict[str, Any]
    if isinstance(result, AppendResult):
        record = {"first": result.first_position, "last": result.last_position, "at": result.created_at}
    elif isinstance(result, UsageResult):
        record = {"usage": _usage_fields(result.usage)}
    elif isinstance(result, ClearResult):
        record = {"position": result.position}
        if result.events_erased:
            record["erased"] = result.events_erased
    else:
        record = {"event_id": result.event_id}
    record["trace"] = result.trace_id
    return json.dumps(record)


def append_from_record(text: str) -> AppendResult:
    """The replayed result of an Append."""
    r = json.loads(text)
    return AppendResult(r["first"], r["last"], r["at"], r["trace"], replayed=True)


def usage_from_record(text: str) -> UsageResult:
    """The replayed result of a RecordUsage."""
    r = json.loads(text)
    return UsageResult(Usage(**r["usage"]), r["trace"], replayed=True)


def clear_from_record(text: str) -> ClearResult:
    """The replayed result of a Clear."""
    r = json.loads(text)
    return ClearResult(r["position"], r["trace"], replayed=True, events_erased=int(r.get("erased", 0)))


def event_from_record(text: str) -> EventResult:
    """The replayed result of a RecordEvent."""
    r = json.loads(text)
    return EventResult(r["event_id"], r["trace"], replayed=True)


# ---------------------------------------------------------------- tool calls


#: How an admitted tool result is stored: paired with its call, as an orphan (its call is
#: unknown and the policy allows it), or superseding the synthetic repair that answered its call.
Admission = Literal["pair", "orphan", "supersede"]


def admit_tool_result(
    tool_call_id: str,
    known: bool,
    result_position: int | None,
    *,
    answered_by_repair: bool = False,
    allow_orphan: bool = False,
) -> Admission:
    """A tool result must answer a call of the visible history that has no result yet.

    ``known``: the call is in the session's tool-call index; ``result_position``: its result, if any;
    ``answered_by_repair``: that result is a synthetic repair (then this real result supersedes it:
    the tool did run, and the history must say so); ``allow_orphan``: the tool policy stores a
    result for an unknown call, flagged and never paired.

    Raises:
        ToolCallStateError: reason UNKNOWN_TOOL_CALL or TOOL_CALL_ALREADY_ANSWERED.
    """
    if not known:
        if allow_orphan:
            return "orphan"
        raise ToolCallStateError(
            f"tool result for unknown tool call {tool_call_id!r}: no assistant message in the visible "
            "history made that call (a tool policy with allow_orphan_results stores it as an orphan)",
            reason=Reason.UNKNOWN_TOOL_CALL,
            tool_call_id=tool_call_id,
        )
    if result_position is not None:
        if answered_by_repair:
            return "supersede"
        raise ToolCallStateError(
            f"tool call {tool_call_id!r} already has a result (position {result_position})",
            reason=Reason.TOOL_CALL_ALREADY_ANSWERED,
            tool_call_id=tool_call_id,
            result_position=result_position,
        )
    return "pair"


def has_unparsed_calls(messages: Sequence[PreparedMessage]) -> bool:
    """True if an append makes a call without an id or with arguments that are not JSON."""
    return any(not c.id or c.arguments_not_json for p in messages for c in p.message.tool_calls)


def check_unparsed_calls(messages: Sequence[PreparedMessage], allowed: bool) -> None:
    """Calls without an id, or whose arguments are not JSON, need a policy with ``allow_unparsed_calls``.

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE (no id) or ARGUMENTS_NOT_JSON, naming the message.
    """
    if allowed:
        return
    for i, prepared in enumerate(messages):
        for j, call in enumerate(prepared.message.tool_calls):
            if not call.id:
                raise InvalidRequestError(
                    f"messages[{i}]: tool_calls[{j}] has no id (a tool policy with allow_unparsed_calls stores it)",
                    reason=Reason.INVALID_MESSAGE,
                    index=i,
                )
            if call.arguments_not_json:
                try:
                    loads_limited(call.arguments)
                    why = "not valid JSON"
                except JsonError as exc:
                    why = f"not valid JSON: {exc}"
                raise InvalidRequestError(
                    f"messages[{i}]: tool_calls[{j}] ({call.name}) arguments are {why}",
                    reason=Reason.ARGUMENTS_NOT_JSON,
                    index=i,
                )


def check_call_inserted(call_id: str, inserted: bool) -> None:
    """A new tool call's id must not be in the visible history already (``inserted``: it was not).

    Raises:
        InvalidRequestError: reason DUPLICATE_TOOL_CALL_ID.
    """
    if not inserted:
        raise InvalidRequestError(
            f"duplicate tool call id {call_id!r}: the session's visible history already has a call with it",
            reason=Reason.DUPLICATE_TOOL_CALL_ID,
            tool_call_id=call_id,
        )


def check_client_id_free(client_id: str, stored_position: int | None) -> None:
    """A new entry's client id must not be on an entry of the visible history (``stored_position``: where it is).

    Raises:
        AlreadyExistsError: reason CLIENT_ID_EXISTS.
    """
    if stored_position is not None:
        raise AlreadyExistsError(
            f"client_id {client_id[:80]!r} is already on the entry at position {stored_position}; client ids "
            "are unique within a session's visible history",
            reason=Reason.CLIENT_ID_EXISTS,
            client_id=client_id,
            position=stored_position,
        )


def makes_calls(messages: Sequence[PreparedMessage]) -> bool:
    """True if an append makes new tool calls (only such an append can exceed the open-call limit)."""
    return any(p.message.tool_calls for p in messages)


def check_open_calls(open_calls: int, limit: int, session_id: str) -> None:
    """After an append, the session may hold at most ``limit`` unanswered calls (0: no limit).

    Raises:
        PreconditionError: reason TOO_MANY_OPEN_CALLS.
    """
    if limit and open_calls > limit:
        raise PreconditionError(
            f"session {session_id!r} would have {open_calls} unanswered tool calls, more than the limit of "
            f"{limit} (--max-open-tool-calls); append results for its open calls first, or Load it to repair "
            "interrupted ones (pending calls, and calls in repair mode drop or off, stay open until answered)",
            reason=Reason.TOO_MANY_OPEN_CALLS,
            open_calls=open_calls,
            limit=limit,
        )


# ---------------------------------------------------------------- usage


def charged_currency(delta: UsageDelta) -> str:
    """The currency a delta charges in: its own if it has a cost, else none."""
    return delta.currency if delta.cost_micros else ""


def add_usage(old: Usage, delta: UsageDelta, session_id: str) -> Usage:
    """The session's totals after ``delta``: one currency per session, every total within 64 bits.

    Raises:
        PreconditionError: reason CURRENCY_MISMATCH, a cost in another currency than the session's.
        InvalidRequestError: reason INVALID_USAGE, a total would overflow a signed 64-bit integer.
    """
    if delta.cost_micros and old.currency and delta.currency != old.currency:
        raise PreconditionError(
            f"session costs are recorded in {old.currency}; got cost in {delta.currency!r}",
            reason=Reason.CURRENCY_MISMATCH,
            currency=old.currency,
        )
    new = Usage(
        old.input_tokens + delta.input_tokens,
        old.output_tokens + delta.output_tokens,
        old.cache_read_tokens + delta.cache_read_tokens,
        old.cache_write_tokens + delta.cache_write_tokens,
        old.cost_micros + delta.cost_micros,
        old.currency or charged_currency(delta),
    )
    if max(new.input_tokens, new.output_tokens, new.cache_read_tokens, new.cache_write_tokens, new.cost_micros) > (
        MAX_INT64
    ):
        raise InvalidRequestError(
            "usage totals would overflow a 64-bit integer", reason=Reason.INVALID_USAGE, session_id=session_id
        )
    return new


# ---------------------------------------------------------------- import


def check_import_mode(session_id: str, exists: bool, mode: ImportMode) -> None:
    """An import in mode ``refuse`` needs a session id that is not stored.

    Raises:
        PreconditionError: reason SESSION_EXISTS.
    """
    if exists and mode == "refuse":
        raise PreconditionError(
            f"session {session_id!r} already exists; import with mode replace (erase it first) or merge",
            reason=Reason.SESSION_EXISTS,
            session_id=session_id,
        )


def stored_event_key(event_type: str, ts: str, trace_id: str, payload: str) -> tuple[str, str, str, str]:
    """What makes a stored event "the same" as an imported one in a merge (payload spelling aside)."""
    return (event_type, ts, trace_id, canonical_json(json.loads(payload)))


def merge_events(
    stored: set[tuple[str, str, str, str]], events: Sequence[ImportedEvent], last_position: int
) -> tuple[list[ImportedEvent], int]:
    """A merge: the imported events not already stored (by :func:`stored_event_key`), and the offset of their positions.

    The kept events are appended after the stored history: their positions
    move up so that the first of them follows ``last_position`` (never down).
    """
    kept = [e for e in events if (e.type, e.ts, e.trace_id, e.payload) not in stored]
    offset = last_position - min((e.position for e in kept if e.position is not None), default=1) + 1
    return kept, max(offset, 0)


def shifted_edit(payload: str, offset: int) -> str:
    """A merged edit's payload with its removed positions moved up as its own position moved (canonical JSON)."""
    data = json.loads(payload)
    data["removed"] = [p + offset for p in data.get("removed", ())]
    return canonical_json(data)


def check_imported_open_calls(open_calls: int, limit: int, session_id: str) -> None:
    """An imported session may hold at most ``limit`` unanswered calls (0: no limit): its repair is bounded.

    Raises:
        InvalidRequestError: reason INVALID_IMPORT.
    """
    if limit and open_calls > limit:
        raise InvalidRequestError(
            f"the imported session {session_id!r} has {open_calls} unanswered tool calls, more than the limit of "
            f"{limit} (--max-open-tool-calls); nothing was imported",
            reason=Reason.INVALID_IMPORT,
            open_calls=open_calls,
            limit=limit,
        )


@dataclass(slots=True)
class CallEntry:
    """A tool call of the visible history: where it was made and where its result is (None: open)."""

    assistant_position: int
    call_index: int
    result_position: int | None = None
    pending: bool = False
    repair_mode: str = ""


@dataclass(slots=True)
class ImportFold:
    """A session's derived state, rebuilt from its events."""

    last_position: int = 0
    clear_position: int = 0
    message_count: int = 0
    calls: dict[str, CallEntry] = field(default_factory=dict)
    client_ids: dict[str, int] = field(default_factory=dict)
    """Client id → position, of the visible entries that have one."""
    usage: Usage = field(default_factory=Usage)
    by_model: dict[tuple[str, str], Usage] = field(default_factory=dict)
    #: Entries out of the projection that the log keeps: position -> the position of the event that
    #: hid it (an edit, or the real result that superseded a synthetic repair): ``events.hidden_by``.
    hidden: dict[int, int] = field(default_factory=dict)
    #: The visible entries: position -> (the call ids it made, the call id it answers, its client id).
    visible: dict[int, tuple[tuple[str, ...], str, str]] = field(default_factory=dict)


def _plus(total: Usage, delta: UsageDelta, currency: str) -> Usage:
    return Usage(
        total.input_tokens + delta.input_tokens,
        total.output_tokens + delta.output_tokens,
        total.cache_read_tokens + delta.cache_read_tokens,
        total.cache_write_tokens + delta.cache_write_tokens,
        total.cost_micros + delta.cost_micros,
        total.currency or currency,
    )


def fold_events(session_id: str, events: Iterable[tuple[int | None, str, str]]) -> ImportFold:
    """Fold a session's events ``(position, type, payload text)``, in event order, into its derived state.

    A clear empties the visible history (and its tool-call index); usage adds
    to the totals and to its (model, pricing version); every other event with
    a position is a message: its calls join the index (an id-less call does
    not), its result answers one (an orphan result none; a real result for a
    call answered by a synthetic repair supersedes it, see ``hidden``); an
    edit takes the entries it names out of the visible history (their calls
    leave the index, their results reopen their calls, see ``hidden``).

    Raises:
        InvalidRequestError: reason INVALID_IMPORT, if the events are not a consistent history: a
            duplicate call id, a result for an unknown or answered call, two currencies, totals
            beyond 64 bits, or positions beyond the highest allowed.
    """

    def bad(why: str) -> InvalidRequestError:
        return InvalidRequestError(
            f"import of {session_id!r}: {why}", reason=Reason.INVALID_IMPORT, session_id=session_id
        )

    fold = ImportFold()
    repairs: set[int] = set()  # positions of synthetic repairs (a real result may supersede one)
    for position, event_type, text in events:
        payload = json.loads(text)
        if position is not None:
            fold.last_position = max(fold.last_position, position)
        if event_type == "clear":
            assert position is not None
            fold.clear_position, fold.message_count = position, 0
            fold.calls.clear()
            fold.client_ids.clear()
            fold.visible.clear()
        elif event_type == "edit":
            assert position is not None
            _fold_edit(fold, position, payload.get("removed", ()), bad)
        elif event_type == "usage":
            delta = usage_from_payload(payload)
            currency = charged_currency(delta)
            if currency and fold.usage.currency and currency != fold.usage.currency:
                raise bad(f"usage is recorded in {fold.usage.currency} and {currency}")
            fold.usage = _plus(fold.usage, delta, currency)
            key = (delta.model, delta.pricing_version)
            fold.by_model[key] = _plus(fold.by_model.get(key, Usage()), delta, currency)
        elif position is not None:
            fold.message_count += 1
            client_id = payload.get("client_id", "")
            if client_id:
                if client_id in fold.client_ids:
                    raise bad(
                        f"client_id {client_id!r} is on the entries at positions {fold.client_ids[client_id]} and "
                        f"{position} of the visible history"
                    )
                fold.client_ids[client_id] = position
            for index, call in enumerate(payload.get("tool_calls", ())):
                if not call["id"]:
                    continue  # an id-less call (allowed by a tool policy): never paired, never repaired
                if call["id"] in fold.calls:
                    raise bad(f"duplicate tool call id {call['id']!r} in the visible history")
                fold.calls[call["id"]] = CallEntry(
                    position, index, None, call.get("pending") is True, str(call.get("repair_mode", ""))
                )
            call_id = payload.get("tool_call_id", "")
            answers = call_id if payload.get("orphan") is not True else ""
            made = tuple(c["id"] for c in payload.get("tool_calls", ()) if c["id"])
            fold.visible[position] = (made, answers, client_id)
            if event_type == "repair":
                repairs.add(position)
            if answers:
                found = fold.calls.get(call_id)
                if found is None:
                    raise bad(f"tool result at position {position} answers unknown tool call {call_id!r}")
                if found.result_position is not None:
                    if event_type == "repair" or found.result_position not in repairs:
                        raise bad(f"tool call {call_id!r} has two results")
                    # A real result superseding a synthetic repair: the log keeps both, the projection the real one.
                    fold.hidden[found.result_position] = position
                    fold.visible.pop(found.result_position, None)
                    fold.message_count -= 1
                found.result_position = position
    u = fold.usage
    if max(u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_micros) > MAX_INT64:
        raise bad("usage totals overflow a 64-bit integer")
    if fold.last_position > MAX_POSITION:  # a merge adds the stored history's length to the imported positions
        raise bad(f"positions would reach {fold.last_position}, above the highest allowed ({MAX_POSITION})")
    return fold


def _fold_edit(fold: ImportFold, position: int, removed: Iterable[int], bad: Any) -> None:
    """An edit in the fold: its removed entries leave the visible history, their calls go, their results reopen.

    Raises:
        InvalidRequestError: (``bad``) a removed position is not a visible entry.
    """
    for p in removed:
        entry = fold.visible.pop(p, None) if isinstance(p, int) else None
        if entry is None:
            raise bad(f"the edit at position {position} removes position {p!r}, which is not a visible entry")
        fold.hidden[p] = position
        fold.message_count -= 1
        made, answers, client_id = entry
        if client_id and fold.client_ids.get(client_id) == p:
            del fold.client_ids[client_id]
        for call_id in made:
            fold.calls.pop(call_id, None)
        found = fold.calls.get(answers) if answers else None
        if found is not None and found.result_position == p:
            found.result_position = None
