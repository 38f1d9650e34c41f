"""The LangChain adapter's mapping between LangChain messages and stored entries (no I/O).

A LangChain message is stored as one entry: format ``langchain``, item = the UTF-8 JSON of
``message_to_dict(message)``, which ``messages_from_dict`` turns back into an equal message.
The item is the truth. Beside it the adapter derives what the daemon indexes (role, text, tool
calls, the answered call, client id, usage), and it derives them so that the daemon never has
to refuse a message LangChain accepts: whatever does not fit the daemon's rules (a repeated
id, a call without an id or name, a second answer to one call, an over-long name) is left
out of the index, never out of the item. :class:`Known` carries what the session already holds,
so a batch can be derived again after the daemon said an id was taken.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.messages.tool import invalid_tool_call, tool_call

from claw_sessiond_client import EntryUsage, Message, ToolCall, ToolPolicy

from ._order import written_order

__all__ = [
    "FORMAT",
    "POLICY",
    "Known",
    "decode_entries",
    "derive_entries",
    "encode_item",
]

#: The format tag of a stored LangChain message.
FORMAT = "langchain"
#: The tool policy of every append: LangChain keeps calls that nobody answered, results whose
#: call it never saw, and calls without an id; it repairs nothing itself and wants no repair.
POLICY = ToolPolicy(repair="off", allow_orphan_results=True, allow_unparsed_calls=True)

#: The daemon's bound on ids, names and call ids (bytes of UTF-8).
_MAX_NAME_BYTES = 256
#: At most this much of a message's text is copied into the daemon's text field (search, CLI),
#: and at most this much of its calls' arguments into the calls, counted as JSON text (a
#: control character as its escape): together they stay within the daemon's default message
#: limit (1 MiB of text and calls; the item has its own, 16 MiB). The item holds all of both.
MAX_DERIVED_TEXT_BYTES = 512 * 1024
MAX_DERIVED_ARGUMENTS_BYTES = 256 * 1024
#: Token counts above this are not copied into the entry's usage (the item keeps them).
_MAX_TOKENS = 2**53

_ROLE_OF_TYPE = {
    "human": "user",
    "HumanMessageChunk": "user",
    "ai": "assistant",
    "AIMessageChunk": "assistant",
    "system": "system",
    "SystemMessageChunk": "system",
    "tool": "tool",
    "ToolMessageChunk": "tool",
}
_ROLE_OF_CHAT_ROLE = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "system": "system"}


@dataclass
class Known:
    """Ids the session's visible history already uses (empty: assume none; the daemon tells)."""

    client_ids: set[str] = field(default_factory=set)
    call_ids: set[str] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, entries: Iterable[Message]) -> Known:
        """What the loaded ``entries`` use."""
        known = cls()
        for entry in entries:
            if entry.client_id:
                known.client_ids.add(entry.client_id)
            known.call_ids.update(call.id for call in entry.tool_calls if call.id)
            if entry.role == "tool" and entry.tool_call_id:
                known.answered.add(entry.tool_call_id)
        return known


def encode_item(message: BaseMessage, index: int) -> bytes:
    """The stored item of ``message``: compact JSON of ``message_to_dict``, UTF-8.

    Text that UTF-8 cannot carry (a lone surrogate) is written as a JSON escape instead.

    Raises:
        TypeError: ``message`` is not a LangChain message, or holds a value JSON cannot carry
            (bytes, an object; for example in a ToolMessage's ``artifact``).
    """
    if not isinstance(message, BaseMessage):
        raise TypeError(f"messages[{index}] is a {type(message).__name__}, not a LangChain message")
    data = message_to_dict(message)
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:  # ValueError: a circular reference
        raise TypeError(
            f"messages[{index}] ({message.type}) cannot be stored: a value in it is not JSON ({exc}); "
            "store JSON values (for example base64 text instead of bytes)"
        ) from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, separators=(",", ":")).encode("ascii")


def derive_entries(
    messages: Sequence[BaseMessage], items: Sequence[bytes], known: Known, *, bare: bool = False
) -> list[Message]:
    """The entries to append for ``messages`` (with their ``items``), given what the session holds.

    ``known`` is updated with the ids the batch takes. ``bare``: index no ids, calls or answers
    at all (the last resort when the daemon still refuses the derived ones).
    """
    return [_entry(m, item, known, bare) for m, item in zip(messages, items, strict=True)]


def decode_entries(entries: Iterable[Message]) -> list[BaseMessage]:
    """LangChain messages of loaded entries, in the order they were appended.

    That is position order (:func:`~claw_sessiond_client.contrib._order.written_order`): a
    LangChain history is the list as it was added. Entries stored by
    this adapter come back from their items. Plain messages (appended by another client) are
    converted; entries with another framework's item, or with no conversation role, are skipped.
    """
    out: list[BaseMessage] = []
    for entry in written_order(entries):
        if entry.format == FORMAT:
            out.extend(messages_from_dict([json.loads(entry.item)]))
        elif not entry.format and entry.role != "other":
            out.append(_plain(entry))
    return out


# -- derivation


def _clean(text: str) -> str:
    """``text`` as UTF-8 can carry it (a lone surrogate becomes '?')."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _short(value: object) -> str:
    """A name or id fit for the daemon's index: the string itself, or '' when it is not one."""
    if not isinstance(value, str) or _clean(value) != value or len(value.encode("utf-8")) > _MAX_NAME_BYTES:
        return ""
    return value


def _text(message: BaseMessage) -> str:
    """The message's text (LangChain's ``.text`` rule: str content, or its text blocks), capped."""
    content: Any = message.content
    if isinstance(content, str):
        text = content
    else:
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
        text = "".join(parts)
    return _fit(_clean(text), MAX_DERIVED_TEXT_BYTES)


def _json_size(text: str) -> int:
    """Bytes of ``text`` inside the daemon's JSON payload (UTF-8, escapes counted)."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8")) - 2


def _fit(text: str, budget: int) -> str:
    """The longest prefix of ``text`` (roughly) whose JSON size is within ``budget``."""
    size = _json_size(text)
    while size > budget:
        text = text[: max(0, len(text) * budget // size - 1)]
        size = _json_size(text)
    return text


def _role(message: BaseMessage) -> str:
    if message.type in ("chat", "ChatMessageChunk"):
        return _ROLE_OF_CHAT_ROLE.get(str(getattr(message, "role", "")), "other")
    return _ROLE_OF_TYPE.get(message.type, "other")


def _arguments(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return ""
    return _clean(text)


def _calls(message: BaseMessage, known: Known) -> tuple[ToolCall, ...]:
    """The tool calls to index: parsed calls with JSON arguments, invalid ones with their raw text.

    A call id already taken (or unfit) is left out, so the call is stored without an id (never
    paired); a call without a usable name is not indexed at all; arguments beyond the budget
    are not copied (empty, so flagged not JSON).
    """
    calls: list[ToolCall] = []
    budget = MAX_DERIVED_ARGUMENTS_BYTES
    wanted: list[tuple[Any, Any, str]] = [
        (c.get("id"), c.get("name"), _arguments(c.get("args"))) for c in getattr(message, "tool_calls", None) or ()
    ]
    for bad in getattr(message, "invalid_tool_calls", None) or ():
        args = bad.get("args")
        wanted.append((bad.get("id"), bad.get("name"), _clean(args) if isinstance(args, str) else ""))
    for raw_id, raw_name, arguments in wanted:
        name = _short(raw_name)
        if not name:
            continue
        call_id = _short(raw_id)
        if call_id in known.call_ids:
            call_id = ""
        if call_id:
            known.call_ids.add(call_id)
        size = _json_size(arguments)
        if size > budget:
            arguments, size = "", 0
        budget -= size
        calls.append(ToolCall(call_id, name, arguments))
    return tuple(calls)


def _usage(message: BaseMessage) -> EntryUsage | None:
    """Per-entry usage from ``usage_metadata`` (cache reads and writes from its input details)."""
    meta = getattr(message, "usage_metadata", None)
    if not isinstance(meta, dict):
        return None
    details = meta.get("input_token_details") or {}
    if not isinstance(details, dict):
        details = {}
    counts = [meta.get("input_tokens", 0), meta.get("output_tokens", 0)]
    counts += [details.get("cache_read", 0) or 0, details.get("cache_creation", 0) or 0]
    if not all(type(n) is int and 0 <= n < _MAX_TOKENS for n in counts):
        return None
    model = message.response_metadata.get("model_name") or message.response_metadata.get("model") or ""
    return EntryUsage(
        input_tokens=counts[0],
        output_tokens=counts[1],
        cache_read_tokens=counts[2],
        cache_write_tokens=counts[3],
        model=_short(model),
    )


def _entry(message: BaseMessage, item: bytes, known: Known, bare: bool) -> Message:
    client_id = "" if bare else _short(message.id)
    if client_id in known.client_ids:
        client_id = ""
    if client_id:
        known.client_ids.add(client_id)
    role = _role(message)
    common: dict[str, Any] = {"format": FORMAT, "item": item, "client_id": client_id, "usage": _usage(message)}
    if role == "tool":
        answers = "" if bare else _short(getattr(message, "tool_call_id", ""))
        if not answers or answers in known.answered:
            role = "other"
        else:
            known.answered.add(answers)
            return Message("tool", _text(message), (), answers, _short(message.name), **common)
    if role == "other":
        return Message.other(FORMAT, item, name=_short(message.name), client_id=client_id, usage=common["usage"])
    calls = () if bare or role != "assistant" else _calls(message, known)
    return Message(role, _text(message), calls, "", _short(message.name), **common)


# -- plain entries (appended by another client)


def _plain(entry: Message) -> BaseMessage:
    ident = entry.client_id or None
    name = entry.name or None
    if entry.role == "user":
        return HumanMessage(entry.content, name=name, id=ident)
    if entry.role == "system":
        return SystemMessage(entry.content, name=name, id=ident)
    if entry.role == "tool":
        status = "error" if entry.synthetic or entry.cancelled else "success"
        return ToolMessage(entry.content, tool_call_id=entry.tool_call_id, name=name, id=ident, status=status)
    calls, invalid = [], []
    for call in entry.tool_calls:
        try:
            args = json.loads(call.arguments)
        except ValueError:
            args = None
        if isinstance(args, dict):
            calls.append(tool_call(name=call.name, args=args, id=call.id or None))
        else:
            invalid.append(invalid_tool_call(name=call.name, args=call.arguments, id=call.id or None, error=None))
    return AIMessage(entry.content, name=name, id=ident, tool_calls=calls, invalid_tool_calls=invalid)
