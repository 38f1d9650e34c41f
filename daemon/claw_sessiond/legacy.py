"""Session files of the two seed harnesses → export-format lines (pure: bytes in, lines out; no I/O).

Two formats are read:

* the Go harness's ``.claw/sessions/<id>.json``: ``id``, ``workdir``,
  ``created_at``/``updated_at``, ``history`` and token totals. Field names
  are matched ignoring case and underscores, so Go's default names (``ID``,
  ``WorkDir``, ``CreatedAt``, ``ToolCalls``, ``ToolCallID``) and snake_case
  both work. A tool result is a ``user`` (or ``tool``) message with a
  ``tool_call_id``; tool call arguments may be a JSON value or JSON text.
* the Python port's ``.port_sessions/<id>.json``: ``session_id``,
  ``messages`` (the user prompts, as strings), ``input_tokens``, ``output_tokens``.

Every event of a file gets the trace id ``legacy-<sha256 of the file>[:32]``
(a deterministic marker: the same file always converts to the same lines),
and the session's update time as its timestamp (the files keep no per-message
times). Usage becomes one ``usage`` event with the file's totals (model
``""``, pricing version ``legacy``). Interrupted tool calls are imported as
they are; the first Load repairs them.

:func:`convert` also runs the checks an import would: the lines must pass
the daemon's export parser, and every tool result must answer an earlier call
of the file exactly once (the daemon's import refuses anything else). So a
``migrate-legacy --dry-run`` that reports a file as convertible is not
contradicted by the real run, except by what only the daemon's state decides
(the session id already in use).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from .bounds import JsonError, loads_limited
from .errors import InvalidRequestError
from .events import EVENT_TYPE_OF_ROLE, message_payload
from .export import ExportHeader, parse_session, session_lines
from .ids import check_session_id
from .model import Event, Message, ToolCall

__all__ = ["LegacyError", "LegacySession", "convert", "normalise_time"]

LegacyKind = Literal["go", "python-port"]
_FRACTION: Final = re.compile(r"\.(\d+)")
_ZERO_TIME: Final = "0001-01-01T00:00:00Z"


class LegacyError(ValueError):
    """A legacy file cannot be converted; the message says why."""


@dataclass(frozen=True, slots=True)
class LegacySession:
    """A converted file: its kind, session id and export lines."""

    kind: LegacyKind
    session_id: str
    lines: list[str]
    messages: int


def _key(name: str) -> str:
    return name.replace("_", "").lower()


def _fields(obj: dict[str, Any]) -> dict[str, Any]:
    return {_key(k): v for k, v in obj.items()}


def normalise_time(value: object, what: str) -> str | None:
    """An RFC 3339 time (any offset, up to nanoseconds) → ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; None if absent or zero.

    Raises:
        LegacyError: not a time.
    """
    if value in (None, "", _ZERO_TIME):
        return None
    if not isinstance(value, str):
        raise LegacyError(f"{what} must be an RFC 3339 time string, got {type(value).__name__}")
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), value.strip(), count=1)
    text = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise LegacyError(f"{what} is not an RFC 3339 time: {value!r}") from exc
    if parsed.tzinfo is None:
        raise LegacyError(f"{what} has no time zone: {value!r}")
    if parsed.year <= 1:
        return None
    return parsed.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _int(value: object, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LegacyError(f"{what} must be a non-negative integer, got {value!r}")
    return value


def _str(value: object, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise LegacyError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _first(fields: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in fields:
            return fields[name]
    return None


def _arguments(value: object, what: str) -> str:
    if value is None:
        return "{}"
    if isinstance(value, str):
        try:
            loads_limited(value)  # the daemon's rule: say so here rather than as a refused Append
        except JsonError as exc:
            raise LegacyError(f"{what} is a string that is not acceptable JSON text: {exc}") from exc
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _go_message(index: int, raw: object) -> dict[str, Any]:
    where = f"history[{index}]"
    if not isinstance(raw, dict):
        raise LegacyError(f"{where} must be an object")
    f = _fields(raw)
    role = _str(f.get("role"), f"{where}.role")
    content = f.get("content")
    if content is not None and not isinstance(content, str):
        raise LegacyError(f"{where}.content must be a string, got {type(content).__name__}")
    tool_call_id = _str(f.get("toolcallid"), f"{where}.tool_call_id")
    if role == "user" and tool_call_id:
        role = "tool"  # the Go harness stores a tool result as a user message with tool_call_id
    if role not in ("system", "user", "assistant", "tool"):
        raise LegacyError(f"{where}: unknown role {role!r}")
    if role == "tool" and not tool_call_id:
        raise LegacyError(f"{where}: a tool message needs tool_call_id")
    name = _str(f.get("name"), f"{where}.name")
    calls_raw = f.get("toolcalls") or []
    if not isinstance(calls_raw, list):
        raise LegacyError(f"{where}.tool_calls must be a list")
    if calls_raw and role != "assistant":
        raise LegacyError(f"{where}: only an assistant message may carry tool_calls")
    calls = []
    for j, call in enumerate(calls_raw):
        if not isinstance(call, dict):
            raise LegacyError(f"{where}.tool_calls[{j}] must be an object")
        cf = _fields(call)
        if isinstance(cf.get("function"), dict):  # OpenAI shape: {"id", "type", "function": {"name", "arguments"}}
            cf = {**_fields(cf["function"]), "id": cf.get("id")}
        call_id = _str(cf.get("id"), f"{where}.tool_calls[{j}].id")
        call_name = _str(cf.get("name"), f"{where}.tool_calls[{j}].name")
        if not call_id or not call_name:
            raise LegacyError(f"{where}.tool_calls[{j}] needs an id and a name")
        calls.append(ToolCall(call_id, call_name, _arguments(cf.get("arguments"), call_id)))
    message = Message(role, content or "", tuple(calls), tool_call_id if role == "tool" else "", name)
    return message_payload(message)


def _go_usage(f: dict[str, Any], history: list[Any]) -> dict[str, int]:
    prompt = _first(f, "totalprompttokens", "prompttokens", "totalinputtokens", "inputtokens")
    completion = _first(f, "totalcompletiontokens", "completiontokens", "totaloutputtokens", "outputtokens")
    tokens = _first(f, "tokens", "usage", "totalusage")
    if isinstance(tokens, dict):
        tf = _fields(tokens)
        prompt = prompt if prompt is not None else _first(tf, "prompttokens", "inputtokens")
        completion = completion if completion is not None else _first(tf, "completiontokens", "outputtokens")
    usage = {"input_tokens": _int(prompt, "prompt tokens"), "output_tokens": _int(completion, "completion tokens")}
    if prompt is None and completion is None:  # no totals: sum the per-message usage
        for i, m in enumerate(history):
            mu = _fields(m).get("usage") if isinstance(m, dict) else None
            if isinstance(mu, dict):
                muf = _fields(mu)
                usage["input_tokens"] += _int(muf.get("prompttokens"), f"history[{i}].usage.prompt_tokens")
                usage["output_tokens"] += _int(muf.get("completiontokens"), f"history[{i}].usage.completion_tokens")
    return usage


def _detect(obj: dict[str, Any]) -> LegacyKind:
    f = _fields(obj)
    if "history" in f:
        return "go"
    if "sessionid" in f and isinstance(f.get("messages"), list):
        return "python-port"
    raise LegacyError("neither a Go harness session (no history) nor a Python port session (no session_id/messages)")


def convert(data: bytes, *, fallback_id: str, fallback_time: str) -> LegacySession:
    """Convert one legacy session file to export lines.

    Args:
        data: the file's bytes.
        fallback_id: the session id if the file names none (its file name without ``.json``).
        fallback_time: RFC 3339 UTC time for a file without times (its modification time).

    Raises:
        LegacyError: the file is empty, not JSON, of an unknown shape, has wrong types or an unusable id.
    """
    if not data.strip():
        raise LegacyError("empty file: no session to import")
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise LegacyError(f"not valid JSON (truncated?): {exc}") from exc
    if not isinstance(obj, dict):
        raise LegacyError(f"the top level must be a JSON object, got {type(obj).__name__}")
    kind = _detect(obj)
    f = _fields(obj)
    trace_id = "legacy-" + hashlib.sha256(data).hexdigest()[:32]
    payloads: list[dict[str, Any]]
    if kind == "go":
        session_id = _str(_first(f, "id", "sessionid"), "id") or fallback_id
        workdir = _str(f.get("workdir"), "workdir")
        created = normalise_time(f.get("createdat"), "created_at")
        updated = normalise_time(f.get("updatedat"), "updated_at")
        history = f.get("history") or []
        if not isinstance(history, list):
            raise LegacyError("history must be a list")
        payloads = [_go_message(i, m) for i, m in enumerate(history)]
        usage = _go_usage(f, history)
    else:
        session_id = _str(f.get("sessionid"), "session_id") or fallback_id
        workdir = ""
        created = updated = None
        messages = f["messages"]
        for i, m in enumerate(messages):
            if not isinstance(m, str):
                raise LegacyError(f"messages[{i}] must be a string (a user prompt), got {type(m).__name__}")
        payloads = [message_payload(Message("user", m)) for m in messages if m]
        usage = {
            "input_tokens": _int(f.get("inputtokens"), "input_tokens"),
            "output_tokens": _int(f.get("outputtokens"), "output_tokens"),
        }
    try:
        check_session_id(session_id)
    except InvalidRequestError as exc:
        raise LegacyError(f"unusable session id {session_id!r}: {exc.message}") from exc
    if workdir and not workdir.startswith("/"):
        workdir = ""  # a relative or foreign path says nothing about this machine
    updated = updated or created or fallback_time
    created = created or updated
    events: list[Event] = []
    for position, payload in enumerate(payloads, 1):
        event_type = EVENT_TYPE_OF_ROLE[str(payload["role"])]
        events.append(Event(position, session_id, position, event_type, trace_id, updated, 1, payload))
    if usage["input_tokens"] or usage["output_tokens"]:
        payload = {"model": "", "pricing_version": "legacy", **usage}
        events.append(Event(0, session_id, None, "usage", trace_id, updated, 1, payload))
    _check_tool_results(payloads)
    header = ExportHeader(session_id, workdir, created, updated, len(events))
    lines = session_lines(header, events)
    try:
        parse_session(lines)
    except InvalidRequestError as exc:
        raise LegacyError(f"the converted session would be refused by the daemon: {exc.message}") from exc
    return LegacySession(kind, session_id, lines, len(payloads))


def _check_tool_results(payloads: list[dict[str, Any]]) -> None:
    """Every tool result answers exactly one earlier call; call ids are unique (the daemon's import rules).

    Raises:
        LegacyError: naming the history index.
    """
    answered: dict[str, bool] = {}
    for index, payload in enumerate(payloads):
        for call in payload.get("tool_calls", ()):
            if call["id"] in answered:
                raise LegacyError(f"history[{index}]: duplicate tool call id {call['id']!r}")
            answered[call["id"]] = False
        call_id = payload.get("tool_call_id", "")
        if not call_id:
            continue
        if call_id not in answered:
            raise LegacyError(f"history[{index}]: tool result answers unknown tool call {call_id!r}")
        if answered[call_id]:
            raise LegacyError(f"history[{index}]: tool call {call_id!r} has two results")
        answered[call_id] = True
