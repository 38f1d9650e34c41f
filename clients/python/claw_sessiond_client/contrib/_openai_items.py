"""How an OpenAI Agents SDK item is stored as an entry, and read back (pure: no I/O, no SDK import).

Used by :mod:`claw_sessiond_client.contrib.openai_agents`; see its docstring for the mapping.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from claw_sessiond_client import (
    InvalidRequestError,
    Message,
    Reason,
    SessiondError,
    ToolCall,
    ToolCallStateError,
    ToolPolicy,
)

#: The format tag of the entries this adapter writes.
FORMAT = "openai.responses"
#: The tool-call rules of every write (and of the sessions this adapter creates).
TOOL_POLICY = ToolPolicy(repair="off", allow_orphan_results=True, allow_unparsed_calls=True)

#: Call item type → its output item type (the SDK pairs these by ``call_id``).
_CALL_TO_OUTPUT = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "shell_call": "shell_call_output",
    "local_shell_call": "local_shell_call_output",
    "computer_call": "computer_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "tool_search_call": "tool_search_output",
    "program": "program_output",
}
_OUTPUTS = frozenset(_CALL_TO_OUTPUT.values())
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_TEXT_PARTS = {"input_text": "text", "output_text": "text", "text": "text", "refusal": "refusal"}
#: A ``limit`` at least this large reads the whole history (``last`` is an int32 on the wire).
ALL = 2**31 - 1
#: Errors of a pairing the daemon refused; the entries of that call id are then stored with no role.
_PAIRING_REASONS = frozenset(
    {Reason.DUPLICATE_TOOL_CALL_ID, Reason.TOOL_CALL_ALREADY_ANSWERED, Reason.UNKNOWN_TOOL_CALL}
)


def encode_item(item: Any) -> bytes:
    """The item's JSON text as UTF-8 (compact); lone surrogates, which UTF-8 cannot hold, are escaped.

    Raises:
        TypeError: the item is not a JSON object, or holds a value JSON cannot (NaN, a set, ...).
    """
    if not isinstance(item, Mapping):
        raise TypeError(f"a session item must be a JSON object (a dict), not {type(item).__name__}")
    try:
        text = json.dumps(item, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"a session item must be JSON: {exc}") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(item, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def _text_of(content: Any) -> str:
    """The text of a message's content or an output: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, Mapping):
                key = _TEXT_PARTS.get(str(part.get("type")))
                if key is not None and isinstance(part.get(key), str):
                    texts.append(part[key])
        return "\n".join(texts)
    return ""


def _call_arguments(item: Mapping[str, Any]) -> str:
    """A call's arguments as text: the item's own string (JSON or not), else its action as JSON."""
    for key in ("arguments", "input", "action", "operation", "actions"):
        if key in item:
            value = item[key]
            return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), allow_nan=False)
    return "{}"


def _call_id(item: Mapping[str, Any]) -> str:
    value = item.get("call_id")
    return value if isinstance(value, str) else ""


def entry_for_item(item: Mapping[str, Any], *, data: bytes | None = None, pending: bool = False) -> Message:
    """The entry that stores one SDK item (see the module's docstring for the mapping).

    Args:
        item: the SDK item (a JSON object).
        data: its JSON bytes (default: :func:`encode_item`).
        pending: mark a call item's tool call pending (its output is not in this write).
    """
    data = encode_item(item) if data is None else data
    kind = item.get("type")
    role = item.get("role")
    if (kind == "message" or kind is None) and isinstance(role, str) and role in _ROLES:
        return Message(_ROLES[role], _text_of(item.get("content")), format=FORMAT, item=data)
    if isinstance(kind, str) and kind in _CALL_TO_OUTPUT:
        name = item.get("name")
        call = ToolCall(
            _call_id(item), name if isinstance(name, str) and name else kind, _call_arguments(item), pending=pending
        )
        return Message("assistant", "", (call,), format=FORMAT, item=data)
    if isinstance(kind, str) and kind in _OUTPUTS and _call_id(item):
        return Message("tool", _text_of(item.get("output")), tool_call_id=_call_id(item), format=FORMAT, item=data)
    return Message.other(FORMAT, data)


def entries_for_items(items: Sequence[Mapping[str, Any]], unpaired: frozenset[str] = frozenset()) -> list[Message]:
    """The entries of one write.

    A call whose output is not in the same write is pending. Within the write, a second call
    with a call id already used, or a second output for it, is stored with no role (the daemon
    pairs one call with one output); so are all entries of a call id in ``unpaired`` (a pairing
    the daemon refused against the stored history).
    """
    answered = {_call_id(i) for i in items if i.get("type") in _OUTPUTS and _call_id(i)}
    calls: set[str] = set()
    outputs: set[str] = set()
    entries = []
    for item in items:
        data = encode_item(item)
        kind, call_id = item.get("type"), _call_id(item)
        seen = calls if kind in _CALL_TO_OUTPUT else outputs if kind in _OUTPUTS else None
        if seen is not None and call_id and (call_id in unpaired or call_id in seen):
            entries.append(Message.other(FORMAT, data))
            continue
        if seen is not None and call_id:
            seen.add(call_id)
        pending = kind in _CALL_TO_OUTPUT and bool(call_id) and call_id not in answered
        entries.append(entry_for_item(item, data=data, pending=pending))
    return entries


def item_of(entry: Message) -> dict[str, Any] | None:
    """The SDK item an entry stores (``json.loads`` of its bytes), or None for an entry written by
    someone else (a plain message, a repair): such entries are not part of the SDK's history."""
    if entry.format != FORMAT or not entry.item:
        return None
    return item_from_bytes(entry.item)


def item_from_bytes(data: bytes) -> dict[str, Any] | None:
    """The SDK item stored as ``data`` (an entry's item of :data:`FORMAT`), or None if it is not a JSON object."""
    item = json.loads(data)
    return item if isinstance(item, dict) else None


#: json's own scanner (C): one JSON value read at an index of a text, without ``json.loads``'s set-up per call.
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: a scanner as context


def items_from_bytes(data: Iterable[bytes]) -> list[dict[str, Any]]:
    """The SDK items stored as ``data``, in order; an item that is not a JSON object is left out.

    Each is what :func:`item_from_bytes` gives, at well under half its cost for small items (a
    whole history is thousands of them): the item's UTF-8 text is read by json's scanner, and
    taken only if that one value spans the whole text. Anything else (whitespace around the
    value, a byte order mark, text that is not UTF-8, not JSON) is read again by ``json.loads``,
    which gives its value, or raises its error, exactly as before.
    """
    out: list[dict[str, Any]] = []
    for raw in data:
        try:
            text = raw.decode("utf-8")
            item, end = _SCAN(text, 0)
        except (StopIteration, ValueError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            end = -1
        if end < 0 or end != len(text):
            item = json.loads(raw)
        if isinstance(item, dict):
            out.append(item)
    return out


def refused_pairing(err: SessiondError) -> str | None:
    """The call id of a pairing the daemon refused, if ``err`` is one."""
    if isinstance(err, InvalidRequestError | ToolCallStateError) and err.reason in _PAIRING_REASONS:
        return err.metadata.get("tool_call_id") or None
    return None
