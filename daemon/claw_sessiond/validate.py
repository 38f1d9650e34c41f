"""Request validation (pure): raw request values in, prepared domain objects out.

Everything a request can be refused for without looking at storage is
checked here, before anything is queued for the writer, so a rejected
request never reaches a transaction.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any, Final

from .bounds import (
    MAX_ATTACH_LABEL_BYTES,
    MAX_ID_CONTAINS_BYTES,
    MAX_JSON_DEPTH,
    MAX_NAME_BYTES,
    MAX_PID,
    MAX_PING_TIMEOUT_S,
    MAX_RUN_ID_BYTES,
    MAX_STORED_PAYLOAD_BYTES,
    MAX_WORKDIR_BYTES,
    JsonError,
    is_currency_code,
    loads_limited,
    payload_too_large,
    utf8_len,
)
from .config import DEFAULT_MAX_ENTRY_BYTES
from .entries import check_client_ids, check_entry
from .errors import InvalidRequestError, Reason
from .events import EVENT_TYPE_OF_ROLE, encode_message, fingerprint, prepared_message, request_message
from .ids import check_request_id, check_session_id, has_control
from .model import AppendJob, EditJob, Message, PreparedMessage, ToolCall, UsageDelta
from .policy import ToolPolicy, policy_json
from .state import prepare_deltas

__all__ = [
    "APPEND_FINGERPRINT_MARK",
    "DEFAULT_LIST_LIMIT",
    "MAX_JSON_DEPTH",
    "MAX_LIST_LIMIT",
    "MAX_NAME_BYTES",
    "MAX_TRACE_ID_CHARS",
    "MAX_WORKDIR_BYTES",
    "check_attach",
    "check_clear_expected",
    "check_follow_start",
    "check_list_sessions",
    "check_pid",
    "check_ping_timeout",
    "check_run_id",
    "check_search_limit",
    "check_trace_id",
    "check_watch_after",
    "check_workdir",
    "page_after",
    "page_key",
    "page_token",
    "parse_json_object",
    "prepare_append",
    "prepare_edit",
    "prepare_usage",
]

#: A trace id sent with a request: at most this many printable characters.
MAX_TRACE_ID_CHARS: Final = 128
#: ListSessions: rows returned when ``limit`` is 0, and the most one call may ask for.
DEFAULT_LIST_LIMIT: Final = 100
MAX_LIST_LIMIT: Final = 10000
_ROLES: Final[frozenset[str]] = frozenset(EVENT_TYPE_OF_ROLE)


_utf8_len = utf8_len


def check_workdir(workdir: str, *, required: bool) -> str:
    """A workdir must be an absolute path (or empty where it is optional).

    Raises:
        InvalidRequestError: reason INVALID_WORKDIR.
    """
    if not workdir:
        if required:
            raise InvalidRequestError(
                "workdir is required: pass the caller's absolute working folder", reason=Reason.INVALID_WORKDIR
            )
        return workdir
    if _utf8_len(workdir) > MAX_WORKDIR_BYTES or "\x00" in workdir or not os.path.isabs(workdir):
        raise InvalidRequestError(
            f"workdir must be an absolute path of at most {MAX_WORKDIR_BYTES} bytes without NUL",
            reason=Reason.INVALID_WORKDIR,
        )
    return workdir


def parse_json_object(text: str, what: str, max_bytes: int) -> str:
    """Validate a JSON object text and return it normalised (compact).

    Raises:
        InvalidRequestError: not JSON, not an object, or too large.
    """
    if _utf8_len(text) > max_bytes:
        raise InvalidRequestError(f"{what} is larger than {max_bytes} bytes", reason=Reason.FIELD_TOO_LARGE)
    try:
        value = loads_limited(text or "{}")
    except JsonError as exc:
        raise InvalidRequestError(f"{what} is not valid JSON: {exc}", reason=Reason.INVALID_EVENT) from exc
    if not isinstance(value, dict):
        raise InvalidRequestError(f"{what} must be a JSON object", reason=Reason.INVALID_EVENT)
    normalised = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    size = payload_too_large(normalised)
    if size:
        raise InvalidRequestError(
            f"{what} is {size} bytes once normalised (at most {MAX_STORED_PAYLOAD_BYTES})",
            reason=Reason.FIELD_TOO_LARGE,
        )
    return normalised


def _prepare_message(
    index: int, msg: Message, max_bytes: int, seen_calls: set[str], max_entry_bytes: int, repair_mode: str = ""
) -> PreparedMessage:
    where = f"messages[{index}]"

    def bad(why: str, reason: Reason = Reason.INVALID_MESSAGE) -> InvalidRequestError:
        return InvalidRequestError(f"{where}: {why}", reason=reason, index=index)

    if msg.role not in _ROLES:
        raise bad(f"unknown role {msg.role!r} (use system, user, assistant, tool or other)")
    check_entry(where, index, msg, max_entry_bytes)
    name_bytes = _utf8_len(msg.name) if msg.name else 0
    size = _utf8_len(msg.content) + name_bytes
    if name_bytes > MAX_NAME_BYTES:
        raise bad(f"name is longer than {MAX_NAME_BYTES} bytes", Reason.FIELD_TOO_LARGE)
    if msg.role == "tool":
        if not msg.tool_call_id:
            raise bad("a tool message needs tool_call_id (the id of the call it answers)")
    elif msg.tool_call_id:
        raise bad("only a tool message may carry tool_call_id")
    if msg.tool_calls and msg.role != "assistant":
        raise bad("only an assistant message may carry tool_calls")
    if msg.cancelled and msg.role != "tool":
        raise bad("only a tool message may be cancelled")
    calls: list[ToolCall] = []
    for j, call in enumerate(msg.tool_calls):
        # A call without an id, or whose arguments are not JSON, is refused in the append's
        # transaction unless the tool policy (the append's or its session's) allows it
        # (``rules.check_unparsed_calls``): the session's policy is only known there.
        if not call.name:
            raise bad(f"tool_calls[{j}] has no name")
        if _utf8_len(call.id) > MAX_NAME_BYTES or _utf8_len(call.name) > MAX_NAME_BYTES:
            raise bad(f"tool_calls[{j}] id or name is longer than {MAX_NAME_BYTES} bytes", Reason.FIELD_TOO_LARGE)
        if call.id in seen_calls:
            raise bad(f"duplicate tool call id {call.id!r} in this request", Reason.DUPLICATE_TOOL_CALL_ID)
        if call.id:
            seen_calls.add(call.id)
        # Ids and names count too: thousands of 256-byte ids would otherwise pass the message limit.
        size += _utf8_len(call.arguments) + _utf8_len(call.id) + _utf8_len(call.name)
        if size > max_bytes:
            raise bad(f"message is larger than {max_bytes} bytes", Reason.FIELD_TOO_LARGE)
        try:
            loads_limited(call.arguments)
            not_json = False
        except JsonError:
            not_json = True
        # The caller's text exactly as given (checked above, never re-serialised).
        mode = repair_mode if call.id else ""  # a call without an id is never repaired
        calls.append(ToolCall(call.id, call.name, call.arguments, call.pending, not_json, mode))
    if size > max_bytes:
        raise bad(f"message is larger than {max_bytes} bytes", Reason.FIELD_TOO_LARGE)
    if msg.tool_call_id and _utf8_len(msg.tool_call_id) > MAX_NAME_BYTES:
        raise bad(f"tool_call_id is longer than {MAX_NAME_BYTES} bytes", Reason.FIELD_TOO_LARGE)
    if _as_requested(msg):  # nothing to change: the request's message is the one stored
        stored = msg
    else:
        stored = request_message(
            msg.role,
            msg.content,
            tuple(calls),
            msg.tool_call_id,
            msg.name,
            msg.format,
            msg.item,
            msg.client_id,
            msg.metadata,
            _entry_usage(where, msg.usage),
            msg.cancelled,
        )
    text = encode_message(stored)
    size = payload_too_large(text)
    if size:
        raise bad(
            f"message is {size} bytes once stored as JSON (control characters take 6 bytes each); an event "
            f"must fit one export line, at most {MAX_STORED_PAYLOAD_BYTES} bytes",
            Reason.FIELD_TOO_LARGE,
        )
    return prepared_message(stored, EVENT_TYPE_OF_ROLE[msg.role], text)


def _as_requested(msg: Message) -> bool:
    """Whether ``msg`` is already what validation stores: no calls or usage to check and rebuild, and none
    of the fields that are the daemon's to set (a message built by ``events.request_message``)."""
    return (
        not msg.tool_calls
        and msg.usage is None
        and not (msg.synthetic_reason or msg.position or msg.created_at or msg.trace_id)
        and not (msg.orphan or msg.supersedes or msg.encoded is not None)
    )


def _entry_usage(where: str, usage: UsageDelta | None) -> UsageDelta | None:
    """An entry's usage, checked as RecordUsage checks its delta (the error names the message)."""
    if usage is None:
        return None
    try:
        return prepare_usage(usage)
    except InvalidRequestError as exc:
        raise InvalidRequestError(f"{where}.usage: {exc.message}", reason=exc.reason, **exc.metadata) from exc


#: The mark that starts an append's fingerprint in today's form (:func:`_append_fingerprint`); a stored
#: fingerprint without it was stored before that form, and :func:`_earlier_append_fingerprint` recomputes it.
APPEND_FINGERPRINT_MARK: Final = "v2:"


def _append_fingerprint(head: list[object], prepared: Sequence[PreparedMessage]) -> str:
    """The content hash of an append's entries: one SHA-256 over ``head``'s JSON, then the entries'
    payloads, their formats, their items' lengths and their items' bytes, one section after another.

    Each section is one join (no JSON of each entry, no hash of each item: about a fifth of the
    earlier form's CPU for 1,000 items). Unambiguous: a payload is JSON text and a format a tag, so
    neither holds a NUL or a newline (the separators); the lengths say where each item ends.
    """
    digest = hashlib.sha256(json.dumps(head).encode())
    digest.update(b"\n")
    digest.update("\0".join([p.payload for p in prepared]).encode("utf-8", "surrogatepass"))
    digest.update(b"\n")
    digest.update("\0".join([p.message.format for p in prepared]).encode())
    items = [p.message.item for p in prepared]
    digest.update(b"\n")
    digest.update(" ".join([str(len(item)) for item in items]).encode())
    digest.update(b"\n")
    digest.update(b"".join(items))
    return digest.hexdigest()


def _entry_key(p: PreparedMessage) -> object:
    """What the earlier form of the fingerprint holds of one entry: its payload, and its item's format and
    hash if any (a plain message is the payload alone, as before items existed)."""
    if not p.message.format:
        return p.payload
    return [p.payload, p.message.format, hashlib.sha256(p.message.item).hexdigest()]


def _earlier_append_fingerprint(
    session_id: str, prepared: Sequence[PreparedMessage], expected: int, policy: ToolPolicy | None
) -> str:
    """An append's fingerprint as versions before :data:`APPEND_FINGERPRINT_MARK` stored it (without the
    state deltas): a retry sent to one of them and repeated after an upgrade must still replay."""
    parts: list[object] = ["append", session_id, [_entry_key(p) for p in prepared], expected]
    if policy is not None:
        parts.append(policy_json(policy))
    return fingerprint(*parts)


def prepare_append(
    session_id: str,
    messages: Sequence[Message],
    *,
    expected_last_position: int,
    request_id: str,
    workdir: str,
    run_id: str,
    trace_id: str,
    max_message_bytes: int,
    max_batch_messages: int,
    max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES,
    tool_policy: ToolPolicy | None = None,
    state_deltas: Sequence[tuple[str, str]] = (),
) -> AppendJob:
    """Validate an Append and build the writer's job.

    ``tool_policy``: the append's own (its repair mode is stored with each call it makes;
    see ``policy.py``). Unparsed calls are flagged here and admitted or refused in the
    append's transaction, where the session's policy is known.

    Raises:
        InvalidRequestError: the first problem found, naming the message index.
    """
    check_session_id(session_id)
    check_request_id(request_id)
    check_workdir(workdir, required=False)
    if not messages:
        raise InvalidRequestError("an append needs at least one message", reason=Reason.EMPTY_BATCH)
    if len(messages) > max_batch_messages:
        raise InvalidRequestError(
            f"an append takes at most {max_batch_messages} messages (got {len(messages)})",
            reason=Reason.FIELD_TOO_LARGE,
        )
    if expected_last_position < -1:
        raise InvalidRequestError(
            "expected_last_position must be -1 (new session), 0 (no check) or a position",
            reason=Reason.INVALID_MESSAGE,
        )
    seen: set[str] = set()
    policy = tool_policy if tool_policy is not None and not tool_policy.empty else None
    mode = policy.repair if policy is not None else ""
    prepared = [_prepare_message(i, m, max_message_bytes, seen, max_entry_bytes, mode) for i, m in enumerate(messages)]
    check_client_ids([p.message for p in prepared])
    deltas = prepare_deltas(state_deltas)
    # Content only: a retry from another process may carry another workdir or run id.
    # The policy counts where set (it decides what is admitted).
    delta_parts = [(d.scope, d.delta) for d in deltas]

    def with_deltas(content: str) -> str:  # an append without deltas hashes as before they existed
        return fingerprint(content, delta_parts) if delta_parts else content

    head = ["append", session_id, expected_last_position, policy_json(policy) if policy is not None else None]
    fp = APPEND_FINGERPRINT_MARK + with_deltas(_append_fingerprint(head, prepared))
    return AppendJob(
        session_id,
        prepared,
        expected_last_position,
        request_id,
        fp,
        workdir,
        run_id,
        trace_id,
        policy,
        deltas,
        lambda: with_deltas(_earlier_append_fingerprint(session_id, prepared, expected_last_position, policy)),
    )


def prepare_edit(
    session_id: str,
    replacements: Sequence[Message],
    *,
    remove_last: int,
    after_position: int,
    expected_last_position: int,
    request_id: str,
    workdir: str,
    run_id: str,
    trace_id: str,
    discard_pending: bool,
    max_message_bytes: int,
    max_batch_messages: int,
    max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES,
    tool_policy: ToolPolicy | None = None,
) -> EditJob:
    """Validate an EditTail and build the writer's job; the replacements are checked as an Append's messages
    (``tool_policy`` is theirs, as an Append's).

    Raises:
        InvalidRequestError: the first problem found (a replacement's is named ``replacements[i]``).
    """
    check_session_id(session_id)
    check_request_id(request_id)
    check_workdir(workdir, required=False)
    for name, value in (("remove_last", remove_last), ("after_position", after_position)):
        if value < 0:
            raise InvalidRequestError(f"{name} must not be negative (got {value})", field=name)
    if remove_last and after_position:
        raise InvalidRequestError(
            "set remove_last or after_position, not both (remove_last: the last N visible entries; "
            "after_position: every visible entry after that position)",
            field="remove_last",
        )
    if not (remove_last or after_position or replacements):
        raise InvalidRequestError(
            "an edit needs remove_last, after_position or replacements", reason=Reason.EMPTY_BATCH
        )
    if expected_last_position < -1:
        raise InvalidRequestError("expected_last_position must be -1 (new session), 0 (no check) or a position")
    appended: AppendJob | None = None
    if replacements:
        try:
            appended = prepare_append(
                session_id,
                replacements,
                expected_last_position=0,
                request_id="",
                workdir=workdir,
                run_id=run_id,
                trace_id=trace_id,
                max_message_bytes=max_message_bytes,
                max_batch_messages=max_batch_messages,
                max_entry_bytes=max_entry_bytes,
                tool_policy=tool_policy,
            )
        except InvalidRequestError as exc:
            if exc.message.startswith("messages[") or exc.message.startswith("an append"):
                text = exc.message.replace("messages[", "replacements[", 1).replace("an append", "an edit", 1)
                raise InvalidRequestError(text, reason=exc.reason, **exc.metadata) from None
            raise
    # The replacements' content in the earlier form: an edit's fingerprint is spelled as before.
    content = appended.earlier_fingerprint() if appended is not None and appended.earlier_fingerprint else ""
    fp = fingerprint("edit", session_id, remove_last, after_position, expected_last_position, discard_pending, content)
    return EditJob(
        session_id,
        remove_last,
        after_position,
        appended,
        expected_last_position,
        request_id,
        fp,
        workdir,
        trace_id,
        discard_pending,
    )


def prepare_usage(delta: UsageDelta) -> UsageDelta:
    """Check a usage delta: non-negative counts, currency with cost, short labels.

    Raises:
        InvalidRequestError: reason INVALID_USAGE.
    """
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros"):
        if getattr(delta, name) < 0:
            raise InvalidRequestError(f"{name} must not be negative", reason=Reason.INVALID_USAGE)
    if delta.cost_micros and not delta.currency:
        raise InvalidRequestError("currency is required when cost_micros > 0", reason=Reason.INVALID_USAGE)
    if delta.currency and not is_currency_code(delta.currency):
        raise InvalidRequestError(
            f"currency must be an ISO 4217 code such as USD (got {delta.currency!r})", reason=Reason.INVALID_USAGE
        )
    for name in ("model", "pricing_version"):
        if _utf8_len(getattr(delta, name)) > MAX_NAME_BYTES:
            raise InvalidRequestError(f"{name} is longer than {MAX_NAME_BYTES} bytes", reason=Reason.FIELD_TOO_LARGE)
    return delta


def check_list_sessions(id_contains: str, limit: int) -> int:
    """Check a ListSessions request; returns the effective limit.

    ``id_contains`` longer than the longest session id could never match (and
    SQLite refuses LIKE patterns over 50,000 bytes); a control character
    (NUL included) is never part of a session id.

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE (limit, length) or INVALID_MESSAGE.
    """
    limit = limit or DEFAULT_LIST_LIMIT
    if not 0 < limit <= MAX_LIST_LIMIT:
        raise InvalidRequestError(f"limit must be between 1 and {MAX_LIST_LIMIT}", reason=Reason.FIELD_TOO_LARGE)
    if utf8_len(id_contains) > MAX_ID_CONTAINS_BYTES:
        raise InvalidRequestError(
            f"id_contains is longer than {MAX_ID_CONTAINS_BYTES} bytes (no session id is longer)",
            reason=Reason.FIELD_TOO_LARGE,
        )
    if has_control(id_contains):
        raise InvalidRequestError(
            "id_contains contains a control character (no session id does)", reason=Reason.INVALID_MESSAGE
        )
    return limit


def check_run_id(run_id: str) -> str:
    """A run id is at most :data:`MAX_RUN_ID_BYTES` bytes ("" means none).

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE.
    """
    if utf8_len(run_id) > MAX_RUN_ID_BYTES:
        raise InvalidRequestError(
            f"run_id is longer than {MAX_RUN_ID_BYTES} bytes (use the run id Attach returned)",
            reason=Reason.FIELD_TOO_LARGE,
        )
    return run_id


def check_pid(pid: int) -> None:
    """A declared pid (Attach, Watch, WatchAll) is 0 (not given) or a process id.

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE.
    """
    if not 0 <= pid <= MAX_PID:
        raise InvalidRequestError(
            f"pid must be between 0 (not given) and {MAX_PID} (got {pid})", reason=Reason.INVALID_MESSAGE
        )


def check_attach(pid: int, label: str) -> None:
    """Attach's pid is 0 (not given) or a process id; its label is short text.

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE (pid) or FIELD_TOO_LARGE (label).
    """
    check_pid(pid)
    if utf8_len(label) > MAX_ATTACH_LABEL_BYTES:
        raise InvalidRequestError(f"label is longer than {MAX_ATTACH_LABEL_BYTES} bytes", reason=Reason.FIELD_TOO_LARGE)


def check_ping_timeout(seconds: int) -> int:
    """Attach's ping bound is 0 (none) or 1 to :data:`MAX_PING_TIMEOUT_S` seconds.

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE.
    """
    if not 0 <= seconds <= MAX_PING_TIMEOUT_S:
        raise InvalidRequestError(
            f"ping_timeout_seconds must be 0 (no pings) or 1 to {MAX_PING_TIMEOUT_S} (got {seconds})",
            reason=Reason.INVALID_MESSAGE,
        )
    return seconds


def check_trace_id(trace_id: str) -> str:
    """A trace id sent with a request is short printable text.

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE.
    """
    if len(trace_id) > MAX_TRACE_ID_CHARS or not trace_id.isprintable():
        raise InvalidRequestError(
            f"trace_id must be at most {MAX_TRACE_ID_CHARS} printable characters", reason=Reason.FIELD_TOO_LARGE
        )
    return trace_id


def check_clear_expected(expected_last_position: int) -> None:
    """Clear's ``expected_last_position`` is -1 (no session yet), 0 (no check) or a position.

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE.
    """
    if expected_last_position < -1:
        raise InvalidRequestError("expected_last_position must be -1, 0 or a position")


def check_watch_after(after_position: int) -> None:
    """Watch's ``after_position`` is 0 (from the start) or a position.

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE.
    """
    if after_position < 0:
        raise InvalidRequestError("after_position must be 0 (from the start) or a position")


def check_search_limit(limit: int, *, max_hits: int, default_hits: int) -> int:
    """Search's ``limit`` is 0 (``default_hits``) up to ``max_hits``; returns the effective limit.

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE.
    """
    if not 0 <= limit <= max_hits:
        raise InvalidRequestError(
            f"limit must be between 1 and {max_hits} (0: {default_hits})", reason=Reason.FIELD_TOO_LARGE
        )
    return limit or default_hits


def check_follow_start(after_event_id: int, last: int, *, max_last: int) -> None:
    """WatchAll starts after an event id (0: now) and replays at most ``max_last`` events first.

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE.
    """
    if after_event_id < 0 or not 0 <= last <= max_last:
        raise InvalidRequestError(
            f"after_event_id must be 0 or an event id, and last between 0 and {max_last}",
            reason=Reason.FIELD_TOO_LARGE,
        )


#: A page token holds an RFC 3339 time and a session id (at most 256 bytes). JSON escapes each
#: non-ASCII byte to up to 6 characters and base64 adds a third: a real token stays under 2,200
#: characters; 4,096 leaves room (1,024 refused tokens for long non-ASCII ids that ListSessions made).
_MAX_PAGE_TOKEN_CHARS: Final = 4096


def page_key(row: Any) -> tuple[str, str]:
    """The sort key of a ListSessions row: (updated_at, session id)."""
    return (str(row.updated_at), str(row.id))


def page_token(row: Any) -> str:
    """ListSessions' opaque cursor: the sort key of a page's last row."""
    return base64.urlsafe_b64encode(json.dumps(page_key(row)).encode()).decode()


def page_after(token: str) -> tuple[str, str]:
    """Decode a ``page_token``.

    Raises:
        InvalidRequestError: not a token ListSessions gave.
    """
    if len(token) > _MAX_PAGE_TOKEN_CHARS:
        raise InvalidRequestError("page_token is not a token ListSessions returned", reason=Reason.INVALID_MESSAGE)
    try:
        updated_at, session_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        keys = isinstance(updated_at, str) and isinstance(session_id, str)
        if keys and not (has_control(updated_at) or has_control(session_id)):  # no stored key holds one
            return updated_at, session_id
    except (ValueError, TypeError):
        pass
    raise InvalidRequestError("page_token is not a token ListSessions returned", reason=Reason.INVALID_MESSAGE)
