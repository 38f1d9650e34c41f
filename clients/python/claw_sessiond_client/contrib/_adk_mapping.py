"""How :mod:`claw_sessiond_client.contrib.adk` spells ADK's sessions, state and events for the daemon.

Pure functions, no I/O: the daemon session id of an ADK session, its labels
and the shared state scopes of its app and user; ADK state values in the
daemon's JSON states; and the entries (role, text, tool calls and results)
derived from an ``Event``, whose own JSON travels with them as the item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from google.adk.events.event import Event
from google.adk.sessions.state import State
from pydantic_core import to_jsonable_python

from claw_sessiond_client import EntryUsage, Message, StateDelta, ToolCall

from ._names import MAX_NAME_BYTES, bounded, escape, label_value, name_of

__all__ = [
    "FORMAT",
    "MAX_NAME_BYTES",
    "app_scope",
    "check_name",
    "decode_state",
    "deltas_of",
    "encode_value",
    "entries_of",
    "event_of",
    "label_value",
    "labels_of",
    "name_of",
    "opaque_entry",
    "session_key",
    "split_state",
    "state_deltas",
    "user_scope",
]

#: Format tag of the stored items: the Event's own JSON (``model_dump_json(exclude_none=True)``).
FORMAT: Final = "adk.event"
#: Marks a state value the daemon's JSON state cannot hold as is (see :func:`encode_value`).
_TAG: Final = "$adk"


# ---------------------------------------------------------------- names


def check_name(what: str, value: object) -> str:
    """An app name, user id or session id: any str.

    Raises:
        TypeError: not a str.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    return value


def session_key(app_name: str, user_id: str, session_id: str) -> str:
    """The daemon session id of an ADK session.

    ``adk~<app>~<user>~<session>``, each part escaped (:func:`~claw_sessiond_client.contrib._names.escape`), so it
    holds none of the characters a daemon id forbids (``/``, ``\\``, ``..``,
    control characters) and two different triples never meet (ADK allows the
    same session id under two users). Longer than 256 bytes: ``adk-`` and the
    SHA-256 of the triple. The originals are in the session's labels.
    """
    readable = f"adk~{escape(app_name)}~{escape(user_id)}~{escape(session_id)}"
    return bounded(readable, "adk-", app_name, user_id, session_id)


def app_scope(app_name: str) -> str:
    """The shared state scope of an app's ``app:`` keys: ``app:<app>`` (escaped; hashed when too long)."""
    return bounded(f"app:{escape(app_name)}", "app-sha256:", app_name)


def user_scope(app_name: str, user_id: str) -> str:
    """The shared state scope of a user's ``user:`` keys: ``user:<app>/<user>`` (escaped; hashed when too long)."""
    return bounded(f"user:{escape(app_name)}/{escape(user_id)}", "user-sha256:", app_name, user_id)


def labels_of(app_name: str, user_id: str, session_id: str) -> dict[str, str]:
    """The daemon labels of an ADK session: the originals (:func:`label_value`), for listing by app and user.

    Raises:
        ValueError: a name does not fit a label value (256 bytes).
    """
    labels = {"app": label_value(app_name), "user": label_value(user_id), "session": label_value(session_id)}
    for key, value in labels.items():
        size = len(value.encode())
        if size > MAX_NAME_BYTES:
            raise ValueError(
                f"the {key} name is {size} bytes as a label; ClawSessionService keeps it in a label of at most "
                f"{MAX_NAME_BYTES} bytes (ADK's database service allows 128 characters)"
            )
    return labels


# ---------------------------------------------------------------- state


def encode_value(value: Any) -> Any:
    """One ADK state value as the daemon stores it.

    ADK keeps a ``None`` value (``state["k"] = None`` stores None); in the
    daemon's delta a null removes the key. So None is stored as
    ``{"$adk": "none"}``, and a dict that has a ``"$adk"`` key of its own is
    wrapped as ``{"$adk": "escaped", "value": ...}``; :func:`decode_state`
    reverses both. Values that are not JSON (a datetime, a model) become their
    JSON form, as ADK's persistent services store them.
    """
    if value is None:
        return {_TAG: "none"}
    plain = to_jsonable_python(value, fallback=str)
    if isinstance(plain, dict) and _TAG in plain:
        return {_TAG: "escaped", "value": plain}
    return plain


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict) and _TAG in value:
        return None if value[_TAG] == "none" else value.get("value")
    return value


def decode_state(state: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A daemon state as ADK state keys (``prefix`` + key) and values."""
    return {prefix + key: _decode_value(value) for key, value in state.items()}


def split_state(state: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """ADK state keys split into (session, app, user) parts, un-prefixed and encoded; ``temp:`` keys dropped."""
    own: dict[str, Any] = {}
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    for key, value in state.items():
        if key.startswith(State.APP_PREFIX):
            app[key.removeprefix(State.APP_PREFIX)] = encode_value(value)
        elif key.startswith(State.USER_PREFIX):
            user[key.removeprefix(State.USER_PREFIX)] = encode_value(value)
        elif not key.startswith(State.TEMP_PREFIX):
            own[key] = encode_value(value)
    return own, app, user


def deltas_of(
    own: dict[str, Any], app: dict[str, Any], user: dict[str, Any], app_name: str, user_id: str
) -> list[StateDelta]:
    """Split, encoded state (:func:`split_state`) as the daemon's deltas: the session's own, the app's, the user's."""
    deltas = []
    if own:
        deltas.append(StateDelta(own))
    if app:
        deltas.append(StateDelta(app, scope=app_scope(app_name)))
    if user:
        deltas.append(StateDelta(user, scope=user_scope(app_name, user_id)))
    return deltas


def state_deltas(state: Mapping[str, Any], app_name: str, user_id: str) -> list[StateDelta]:
    """An ADK state delta as the daemon's deltas (``temp:`` keys dropped)."""
    return deltas_of(*split_state(state), app_name, user_id)


# ---------------------------------------------------------------- events


def _json(value: Any) -> str:
    return json.dumps(to_jsonable_python(value, fallback=str), ensure_ascii=False, separators=(",", ":"))


def _usage(event: Event) -> EntryUsage | None:
    """The event's token counts as the daemon's per-entry usage (Gemini's counts; thoughts count as output)."""
    u = event.usage_metadata
    if u is None:
        return None
    return EntryUsage(
        input_tokens=u.prompt_token_count or 0,
        output_tokens=(u.candidates_token_count or 0) + (u.thoughts_token_count or 0),
        cache_read_tokens=u.cached_content_token_count or 0,
        model=event.model_version or "",
    )


def opaque_entry(event: Event, item: bytes) -> Message:
    """The event as one entry with no conversation role (the item alone)."""
    return Message.other(FORMAT, item, client_id=_client_id(event), name=event.author, usage=_usage(event))


def _client_id(event: Event) -> str:
    """The event id as the entry's client id (the daemon's limit is 1-256 bytes; otherwise none)."""
    return event.id if 0 < len(event.id.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES else ""


def entries_of(event: Event, item: bytes) -> list[Message]:
    """The daemon entries of one event; the last one carries the item (``FORMAT``) and the event id.

    - no content, or content with no text, call or result (state deltas,
      transfers, rewinds, images alone, ...): one entry with no role;
    - ``function_response`` parts with an id: tool results, one entry each
      (the daemon's tool message answers one call); the extra ones come first
      and carry no item, so the event's own entry is the last of the append;
    - ``function_call`` parts: an assistant entry with those calls (a call
      listed in ``long_running_tool_ids`` is *pending*: never repaired), and
      the text of the non-thought text parts;
    - text only: a user entry (content role ``user``) or an assistant entry.
    """
    content = event.content
    parts = (content.parts or []) if content is not None else []
    texts = [p.text for p in parts if p.text and not p.thought]
    text = "".join(texts)
    long_running = event.long_running_tool_ids or set()
    calls = [
        ToolCall(fc.id or "", fc.name or "", _json(fc.args or {}), pending=bool(fc.id) and fc.id in long_running)
        for p in parts
        if (fc := p.function_call) is not None
    ]
    results = [fr for p in parts if (fr := p.function_response) is not None and fr.id]
    usage = _usage(event)
    client_id = _client_id(event)
    if content is None or (not texts and not calls and not results) or (results and calls):
        return [opaque_entry(event, item)]
    if calls and content.role == "user":
        return [opaque_entry(event, item)]
    if results:
        extra = [
            Message(
                "tool",
                _json(fr.response),
                tool_call_id=fr.id or "",
                name=fr.name or "",
                metadata=_json({"adk.event": event.id}),
            )
            for fr in results[1:]
        ]
        first = results[0]
        main = Message(
            "tool",
            _json(first.response),
            tool_call_id=first.id or "",
            name=first.name or "",
            format=FORMAT,
            item=item,
            client_id=client_id,
            usage=usage,
        )
        return [*extra, main]
    role = "user" if content.role == "user" else "assistant"
    return [
        Message(role, text, tuple(calls), name=event.author, format=FORMAT, item=item, client_id=client_id, usage=usage)
    ]


def event_of(message: Message) -> Event | None:
    """The ADK event an entry carries, or None for an entry that is not one (an extra tool result)."""
    if message.format != FORMAT or not message.item:
        return None
    return Event.model_validate_json(message.item)
