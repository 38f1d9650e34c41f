"""Event types, the role map and the payload codec: how every stored event's payload is spelled.

The event log is the source of truth, and its payloads are JSON text. This
module is the one place that writes and reads them, for every backend and
for the export format:

- a message (``system_message``, ``user_message``, ``assistant_message``,
  ``tool_result``): ``{"role", "content"?, "tool_calls"?, "tool_call_id"?, "name"?}``,
  written by :func:`encode_message`, read by :func:`message_from_payload`;
- a repair (the synthetic result of an interrupted call): a tool message with
  ``"synthetic": "interrupted"`` and :data:`INTERRUPTED_CONTENT`
  (:func:`encode_repair`);
- usage: the delta of one RecordUsage (:func:`encode_usage`,
  :func:`usage_from_payload`);
- a clear: ``{}``, or ``{"erased": n}`` for a clear that erased the
  history before it (:func:`encode_clear`, :func:`erased_count`);
- an edit (EditTail): ``{"removed": [p, ...]}``, the positions it took out
  of the projection (:func:`encode_edit`, :func:`edit_removed`);
- audit events (``permission_denial``, ``error``): the
  caller's JSON object as given.

The spelling is part of the database format and of request fingerprints
(a retry after an upgrade must hash the same), so every encoder here keeps
the exact bytes of the code it replaced: key order, separators, ASCII
escaping. Pure: no I/O, no SQL, no grpc.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from .model import Event, Message, PreparedMessage, ToolCall, UsageDelta

__all__ = [
    "AUDIT_EVENT_TYPES",
    "CLEAR_PAYLOAD",
    "EVENT_SCHEMA_VERSION",
    "EVENT_TYPES",
    "EVENT_TYPE_OF_ROLE",
    "HISTORY_EVENT_TYPES",
    "INTERRUPTED_CONTENT",
    "MESSAGE_EVENT_TYPES",
    "ROLE_OF_EVENT_TYPE",
    "SESSION_EVENT_TYPES",
    "SYNTHETIC_INTERRUPTED",
    "USAGE_COUNT_KEYS",
    "EventRow",
    "EventType",
    "call_names",
    "canonical_json",
    "decode_events",
    "edit_removed",
    "edit_span_start",
    "encode_clear",
    "encode_edit",
    "encode_message",
    "encode_repair",
    "encode_usage",
    "erased_count",
    "fingerprint",
    "message_from_payload",
    "message_payload",
    "prepared_message",
    "reply_entry",
    "request_message",
    "sorted_payload",
    "usage_from_payload",
    "usage_payload",
    "without_supersedes",
]

#: ``json.dumps(value, ensure_ascii=False)``, its encoder made once (``dumps`` makes one a call when given an option).
_dumps_utf8: Final = json.JSONEncoder(ensure_ascii=False).encode
#: One string's JSON form as ``_dumps_utf8`` writes it (quoted, UTF-8 kept).
_json_text: Final = json.encoder.encode_basestring

EventType = Literal[
    "system_message",
    "user_message",
    "assistant_message",
    "tool_result",
    "other_entry",
    "repair",
    "clear",
    "edit",
    "usage",
    "state",
    "session_settings",
    "permission_denial",
    "error",
]
#: The event type of a message written by Append, by role.
EVENT_TYPE_OF_ROLE: Final[Mapping[str, str]] = {
    "system": "system_message",
    "user": "user_message",
    "assistant": "assistant_message",
    "tool": "tool_result",
    "other": "other_entry",
}
#: The role in the payload of every event type that holds a message (a repair is a tool result).
ROLE_OF_EVENT_TYPE: Final[Mapping[str, str]] = {**{t: r for r, t in EVENT_TYPE_OF_ROLE.items()}, "repair": "tool"}
#: Event types whose payload is a message.
MESSAGE_EVENT_TYPES: Final = frozenset(ROLE_OF_EVENT_TYPE)
#: Event types that take a position in the session's history (Watch sends them).
#: An ``edit`` (EditTail) records the positions it removed: ``{"removed": [p, ...]}``.
HISTORY_EVENT_TYPES: Final = frozenset(MESSAGE_EVENT_TYPES | {"clear", "edit"})
#: Event types RecordEvent writes (no position).
AUDIT_EVENT_TYPES: Final = frozenset({"permission_denial", "error"})
#: Session-level events with no position: ``state`` (one StateDelta:
#: ``{"scope", "delta"}``) and ``session_settings`` (labels / tool policy as
#: set by CreateSession or UpdateSession: ``{"labels"?, "tool_policy"?}``).
SESSION_EVENT_TYPES: Final = frozenset({"state", "session_settings"})
#: Every event type the daemon writes.
EVENT_TYPES: Final = frozenset(HISTORY_EVENT_TYPES | {"usage"} | AUDIT_EVENT_TYPES | SESSION_EVENT_TYPES)
#: Version of the event payload format; bumped when a payload changes shape.
EVENT_SCHEMA_VERSION: Final = 1
#: The payload of a clear.
CLEAR_PAYLOAD: Final = "{}"
#: The counts of a usage payload, in the order of :class:`~claw_sessiond.model.Usage`.
USAGE_COUNT_KEYS: Final = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros")
#: ``synthetic`` of a repair's payload (and ``Message.synthetic_reason`` when read back).
SYNTHETIC_INTERRUPTED: Final = "interrupted"

#: Text of the synthetic tool result a repair writes. Deliberately unlike a live
#: "cancelled": the tool may or may not have run, and it was not re-run.
INTERRUPTED_CONTENT: Final = (
    "[claw-sessiond] This tool call did not complete: the previous run was interrupted before its result "
    "was recorded. The tool was NOT re-run; it may or may not have taken effect. Check the state before "
    "deciding whether to call it again."
)

#: A stored event with its payload still JSON text:
#: ``(event_id, session_id, position, type, trace_id, ts, schema_version, payload)``, and, as the
#: backend reads it, its item's format and bytes (None where it has none).
EventRow = (
    tuple[int, str, int | None, str, str, str, int, str]
    | tuple[int, str, int | None, str, str, str, int, str, str | None, bytes | None]
)


# ---------------------------------------------------------------- messages


def _call_payload(call: ToolCall) -> dict[str, object]:
    out: dict[str, object] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.pending:
        out["pending"] = True
    if call.arguments_not_json:
        out["arguments_not_json"] = True
    if call.repair_mode:
        out["repair_mode"] = call.repair_mode
    return out


def message_payload(msg: Message) -> dict[str, object]:
    """The payload of a message: role, then content, tool calls, tool call id and name where set.

    Then, only where set (so a plain message is spelled exactly as before
    they existed): ``client_id``, ``metadata`` (the caller's JSON text, as a
    string), ``usage``, ``cancelled``, ``orphan``, ``supersedes``. The
    format tag and the item are not in the payload: they are stored beside it.
    """
    payload: dict[str, object] = {"role": msg.role}
    if msg.content:
        payload["content"] = msg.content
    if msg.tool_calls:
        payload["tool_calls"] = [_call_payload(c) for c in msg.tool_calls]
    if msg.tool_call_id:
        payload["tool_call_id"] = msg.tool_call_id
    if msg.name:
        payload["name"] = msg.name
    if msg.client_id:
        payload["client_id"] = msg.client_id
    if msg.metadata:
        payload["metadata"] = msg.metadata
    if msg.usage is not None:
        payload["usage"] = usage_payload(msg.usage)
    if msg.cancelled:
        payload["cancelled"] = True
    if msg.orphan:
        payload["orphan"] = True
    if msg.supersedes:
        payload["supersedes"] = msg.supersedes
    return payload


def encode_message(msg: Message) -> str:
    """The stored payload text of a message written by Append (UTF-8 kept, not escaped).

    A payload of text fields only (most messages) is joined here from each string's JSON form, as
    ``json.dumps`` spells it (``", "`` and ``": "`` between, keys in order); any other goes through
    the encoder (tests/unit/test_event_codec.py compares both with ``json.dumps``).
    """
    payload = message_payload(msg)
    if len(payload) == 2 and "content" in payload:  # role and content alone: nearly every entry
        return '{"role": ' + _json_text(msg.role) + ', "content": ' + _json_text(msg.content) + "}"
    fields: list[str] = []
    for key, value in payload.items():
        if type(value) is not str:
            return _dumps_utf8(payload)
        fields.append(_json_text(key) + ": " + _json_text(value))
    return "{" + ", ".join(fields) + "}"


#: The fields of :class:`Message` in declaration order: :func:`message_from_payload` sets its slots in this order.
_MESSAGE_FIELDS: Final = (
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "synthetic_reason",
    "position",
    "created_at",
    "trace_id",
    "format",
    "item",
    "client_id",
    "metadata",
    "usage",
    "cancelled",
    "orphan",
    "supersedes",
    "encoded",
)
if tuple(f.name for f in dataclasses.fields(Message)) != _MESSAGE_FIELDS:  # pragma: no cover - a guard on edits
    raise ImportError("events._MESSAGE_FIELDS no longer matches model.Message")
#: Each slot's setter: every entry of a Load is rebuilt here, and the frozen dataclass's
#: ``__init__`` (one ``object.__setattr__`` per field) cost more than the JSON decoding.
_MESSAGE_SETTERS: Final = tuple(getattr(Message, name).__set__ for name in _MESSAGE_FIELDS)
_new = object.__new__


def message_from_payload(
    position: int,
    event_type: str,
    trace_id: str,
    ts: str,
    payload: str,
    fmt: str | None = None,
    item: bytes | None = None,
    encoded: bytes | None = None,
) -> Message:
    """Rebuild a :class:`Message` from a stored history event (a message or a repair) and its stored item
    (and, for a Load, its stored encoded reply form: ``Message.encoded``).

    Equal to ``Message(...)`` with the same fields; built slot by slot (see ``_MESSAGE_SETTERS``).
    """
    data = json.loads(payload)
    get = data.get
    usage = get("usage")
    calls = get("tool_calls")
    values = (
        data["role"],
        get("content", ""),
        tuple(
            ToolCall(
                c["id"],
                c.get("name", ""),
                c["arguments"],
                bool(c.get("pending", False)),
                bool(c.get("arguments_not_json", False)),
                str(c.get("repair_mode", "")),
            )
            for c in calls
        )
        if calls
        else (),
        get("tool_call_id", ""),
        get("name", ""),
        get("synthetic", "") if event_type == "repair" else "",
        position,
        ts,
        trace_id,
        fmt or "",
        item or b"",
        get("client_id", ""),
        get("metadata", ""),
        None if usage is None else usage_from_payload(usage),
        bool(get("cancelled", False)),
        bool(get("orphan", False)),
        int(get("supersedes", 0)),
        encoded,
    )
    message: Message = _new(Message)
    for set_field, value in zip(_MESSAGE_SETTERS, values, strict=True):
        set_field(message, value)
    return message


#: Event types whose entries a Load orders by role and position alone (no calls, no call id).
_ORDERED_BY_POSITION: Final = {"system_message": "system", "user_message": "user", "other_entry": "other"}


def reply_entry(
    position: int,
    event_type: str,
    trace_id: str,
    ts: str,
    payload: str | None,
    fmt: str | None = None,
    item: bytes | None = None,
    encoded: bytes | None = None,
) -> Message:
    """A stored history event for a Load's reply only (``Storage.load(reply_only=True)``).

    A system, user or other entry with its encoded reply form stored comes back as that form
    (``Message.encoded``) with its role, position, time and trace id, and nothing of its payload:
    projection and paging read no more of it, and the reply sends the stored bytes. Every other
    event (an assistant or a tool result, whose calls order the history, or a row without the
    form) is decoded whole by :func:`message_from_payload`; its payload must then be given.
    """
    role = _ORDERED_BY_POSITION.get(event_type)
    if role is None or encoded is None:
        assert payload is not None, "a row decoded whole needs its payload"
        return message_from_payload(position, event_type, trace_id, ts, payload, fmt, item, encoded)
    # Every slot set by its own call (a third cheaper than the loop of ``message_from_payload``: this runs
    # for most entries of a Load); the defaults are ``Message``'s own.
    s = _MESSAGE_SETTERS
    message: Message = _new(Message)
    s[0](message, role)
    s[1](message, "")
    s[2](message, ())
    s[3](message, "")
    s[4](message, "")
    s[5](message, "")
    s[6](message, position)
    s[7](message, ts)
    s[8](message, trace_id)
    s[9](message, "")
    s[10](message, b"")
    s[11](message, "")
    s[12](message, "")
    s[13](message, None)
    s[14](message, False)
    s[15](message, False)
    s[16](message, 0)
    s[17](message, encoded)
    return message


#: The slots of :class:`PreparedMessage`, set one by one as ``request_message`` sets a message's.
_PREPARED_FIELDS: Final = ("message", "event_type", "payload")
if tuple(f.name for f in dataclasses.fields(PreparedMessage)) != _PREPARED_FIELDS:  # pragma: no cover - a guard
    raise ImportError("events._PREPARED_FIELDS no longer matches model.PreparedMessage")
_SET_MESSAGE, _SET_EVENT_TYPE, _SET_PAYLOAD = (getattr(PreparedMessage, n).__set__ for n in _PREPARED_FIELDS)


def prepared_message(message: Message, event_type: str, payload: str) -> PreparedMessage:
    """``PreparedMessage(message, event_type, payload)``, slot by slot: an Append builds one per entry, and
    the frozen dataclass's ``__init__`` costs about four times these calls."""
    prepared: PreparedMessage = _new(PreparedMessage)
    _SET_MESSAGE(prepared, message)
    _SET_EVENT_TYPE(prepared, event_type)
    _SET_PAYLOAD(prepared, payload)
    return prepared


def request_message(
    role: str,
    content: str,
    tool_calls: tuple[ToolCall, ...],
    tool_call_id: str,
    name: str,
    fmt: str,
    item: bytes,
    client_id: str,
    metadata: str,
    usage: UsageDelta | None,
    cancelled: bool,
) -> Message:
    """``Message(...)`` of the fields a request carries (no position, time, trace or daemon mark), slot by slot.

    An Append builds two per entry (the request's and the validated one it stores); the frozen
    dataclass's ``__init__`` costs about twice these calls.
    """
    s = _MESSAGE_SETTERS
    message: Message = _new(Message)
    s[0](message, role)
    s[1](message, content)
    s[2](message, tool_calls)
    s[3](message, tool_call_id)
    s[4](message, name)
    s[5](message, "")
    s[6](message, 0)
    s[7](message, "")
    s[8](message, "")
    s[9](message, fmt)
    s[10](message, item)
    s[11](message, client_id)
    s[12](message, metadata)
    s[13](message, usage)
    s[14](message, cancelled)
    s[15](message, False)
    s[16](message, 0)
    s[17](message, None)
    return message


def call_names(payload: str) -> dict[str, str]:
    """``{call id: tool name}`` of the tool calls in a stored assistant payload (empty for any other)."""
    return {call["id"]: call.get("name", "") for call in json.loads(payload).get("tool_calls", ())}


def without_supersedes(payload: str) -> str | None:
    """A stored result's payload with its ``supersedes`` mark taken out (None: it carries none).

    A fork copies a result but not the repair it superseded (that one is hidden): the copy keeps
    the rest of the payload as written (``encode_message``'s spelling).
    """
    data = json.loads(payload)
    if data.pop("supersedes", None) is None:
        return None
    return _dumps_utf8(data)


def encode_repair(tool_call_id: str, name: str) -> str:
    """The payload of the synthetic result that repairs an interrupted call (``name``: the call's tool)."""
    payload: dict[str, object] = {
        "role": "tool",
        "content": INTERRUPTED_CONTENT,
        "tool_call_id": tool_call_id,
        "synthetic": SYNTHETIC_INTERRUPTED,
    }
    if name:
        payload["name"] = name
    return json.dumps(payload)


# ---------------------------------------------------------------- clears and edits


def encode_clear(erased: int | None = None) -> str:
    """The payload of a clear: ``{}``, or ``{"erased": n}`` when it erased ``n`` events of the log before it."""
    return CLEAR_PAYLOAD if erased is None else json.dumps({"erased": erased})


def erased_count(payload: str) -> int | None:
    """How many events a stored clear erased (None: a clear that kept the log)."""
    value = json.loads(payload).get("erased")
    return None if value is None else int(value)


def encode_edit(removed: Sequence[int], *, scattered: bool = False) -> str:
    """The payload of an edit: the positions it removed, ascending.

    ``scattered`` (a DeleteEntries): entries between its removed positions, and after them, may
    still be visible; without it (an EditTail) every position from the first removed one up to
    the edit is out of the projection (:func:`edit_span_start`).
    """
    return json.dumps({"removed": sorted(removed), "scattered": True} if scattered else {"removed": sorted(removed)})


def edit_span_start(payload: str) -> int | None:
    """The first position of the span a stored edit took whole out of the projection (every position from it
    up to the edit), or None: it removed nothing, or scattered entries (a DeleteEntries)."""
    data = json.loads(payload)
    removed = data.get("removed") or ()
    return None if data.get("scattered") is True or not removed else int(removed[0])


def edit_removed(payload: str) -> tuple[int, ...]:
    """The positions a stored edit removed, ascending."""
    return tuple(int(p) for p in json.loads(payload).get("removed", ()))


# ---------------------------------------------------------------- usage


def usage_payload(delta: UsageDelta) -> dict[str, object]:
    """The payload of a usage event: what one RecordUsage added."""
    return {
        "model": delta.model,
        "pricing_version": delta.pricing_version,
        "input_tokens": delta.input_tokens,
        "output_tokens": delta.output_tokens,
        "cache_read_tokens": delta.cache_read_tokens,
        "cache_write_tokens": delta.cache_write_tokens,
        "cost_micros": delta.cost_micros,
        "currency": delta.currency,
    }


def encode_usage(delta: UsageDelta) -> str:
    """The stored payload text of a usage event."""
    return json.dumps(usage_payload(delta))


def usage_from_payload(payload: Mapping[str, Any]) -> UsageDelta:
    """A usage event's delta (missing keys count 0 or empty, as in payloads of older writers)."""
    tokens_in, tokens_out, cache_read, cache_write, cost = (int(payload.get(k, 0)) for k in USAGE_COUNT_KEYS)
    return UsageDelta(
        tokens_in,
        tokens_out,
        cache_read,
        cache_write,
        cost,
        currency=str(payload.get("currency", "")),
        model=str(payload.get("model", "")),
        pricing_version=str(payload.get("pricing_version", "")),
    )


# ---------------------------------------------------------------- export spelling and request hashes


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys (the one spelling of a payload in an export, and for comparing two)."""
    return json.dumps(_sorted(value), ensure_ascii=False, separators=(",", ":"))


def sorted_payload(value: Any) -> Any:
    """``value`` with every object's keys sorted (how an export line holds a payload)."""
    return _sorted(value)


def decode_events(rows: Sequence[EventRow | Sequence[Any]]) -> list[Event]:
    """Stored event rows → events (parses the JSON payloads: run it off the event loop for many)."""
    out: list[Event] = []
    for r in rows:
        fmt, item = (r[8] or "", r[9] or b"") if len(r) > 8 else ("", b"")  # type: ignore[misc]
        out.append(Event(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7]), fmt, item))
    return out


def fingerprint(*parts: object) -> str:
    """A stable hash of a request's content, to detect a reused request id."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
