"""The export format: events ↔ JSON Lines (pure: no SQL, no gRPC, no I/O).

Format ``claw-sessiond-export``, version 1. One session is a block of lines:
a header, then exactly ``events`` event lines in event order::

    {"format":"claw-sessiond-export","version":1,"session_id":"s1","workdir":"/w",
     "created_at":"2026-12-02T15:38:46.123456Z","updated_at":"...","events":2}
    {"event_id":1,"session_id":"s1","position":1,"type":"user_message",
     "ts":"2026-12-02T15:38:46.123456Z","trace_id":"4bf9...","schema_version":1,
     "payload":{"content":"hello","role":"user"}}

A history event that carries an item (``Message.format`` / ``Message.item``)
has two more keys after the payload: ``"format"`` (the tag) and
``"item_b64"`` (the item's bytes, standard base64 with padding). Lines without
them (every line of an export written before items existed) import as
before. An entry's ``client_id``, ``metadata`` and ``usage`` are keys of its
payload; an entry's usage is also a ``usage`` event of its own, right after
it (the session's totals are folded from usage events).

An export of every session is the blocks one after another. Lines are
compact JSON (UTF-8, no ASCII escaping), keys in the order shown, payload
keys sorted, so the same events always give the same bytes.

``event_id`` is the event's ordinal within its session (1, 2, ...), not the
database's global id: global ids depend on what else the database holds, and
an import into another workspace could not keep them. Timestamps, trace ids,
positions and schema versions are the stored ones, so export → import →
export gives the same bytes. Idempotency records (request ids) are not part
of the export. The ``events`` count in the header lets an import refuse a
truncated file.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .bounds import (
    FORMAT_TAG,
    MAX_CLIENT_ID_BYTES,
    MAX_JSON_DEPTH,
    MAX_NAME_BYTES,
    MAX_POSITION,
    MAX_STORED_PAYLOAD_BYTES,
    MAX_USAGE_COUNT,
    MAX_WORKDIR_BYTES,
    JsonError,
    is_currency_code,
    loads_limited,
    payload_too_large,
    utf8_len,
)
from .errors import InvalidRequestError, Reason
from .events import (
    EVENT_SCHEMA_VERSION,
    EVENT_TYPES,
    HISTORY_EVENT_TYPES,
    ROLE_OF_EVENT_TYPE,
    SESSION_EVENT_TYPES,
    USAGE_COUNT_KEYS,
    canonical_json,
    sorted_payload,
)
from .ids import check_session_id
from .model import Event
from .policy import REPAIR_MODES
from .state import check_event_payload

__all__ = [
    "DEFAULT_MAX_ITEM_BYTES",
    "FORMAT",
    "FORMAT_VERSION",
    "ExportHeader",
    "ImportedEvent",
    "ImportedSession",
    "event_line",
    "header_line",
    "is_header",
    "parse_session",
    "session_lines",
]

FORMAT: Final = "claw-sessiond-export"
FORMAT_VERSION: Final = 1
#: RFC 3339 UTC with microseconds, the only form stored (and compared as text by retention).
_TS: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
_MAX_TRACE_ID: Final = 128


@dataclass(frozen=True, slots=True)
class ExportHeader:
    """The first line of a session's block."""

    session_id: str
    workdir: str
    created_at: str
    updated_at: str
    events: int


@dataclass(frozen=True, slots=True)
class ImportedEvent:
    """One validated event line; ``payload`` is canonical JSON text."""

    position: int | None
    type: str
    ts: str
    trace_id: str
    schema_version: int
    payload: str
    format: str | None = None
    """The item's format tag (None: no item)."""
    item: bytes | None = None
    """The item's bytes (decoded from the line's ``item_b64``)."""
    client_id: str | None = None
    """The payload's ``client_id`` (None: none), stored beside the payload too."""


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """A validated block: its header and events in order."""

    header: ExportHeader
    events: list[ImportedEvent]


def _dump(ordered: Mapping[str, Any]) -> str:
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))


def header_line(header: ExportHeader) -> str:
    """The header line of a block."""
    return _dump(
        {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "session_id": header.session_id,
            "workdir": header.workdir,
            "created_at": header.created_at,
            "updated_at": header.updated_at,
            "events": header.events,
        }
    )


def event_line(ordinal: int, session_id: str, event: Event) -> str:
    """One event as a line; ``ordinal`` is its 1-based index in the session."""
    return _dump(
        {
            "event_id": ordinal,
            "session_id": session_id,
            "position": event.position,
            "type": event.type,
            "ts": event.ts,
            "trace_id": event.trace_id,
            "schema_version": event.schema_version,
            "payload": sorted_payload(event.payload),
            **({"format": event.format, "item_b64": base64.b64encode(event.item).decode()} if event.format else {}),
        }
    )


def session_lines(header: ExportHeader, events: Sequence[Event]) -> list[str]:
    """A whole block: header then events (``header.events`` must equal ``len(events)``)."""
    return [header_line(header), *(event_line(i, header.session_id, e) for i, e in enumerate(events, 1))]


def is_header(obj: object) -> bool:
    """True if a parsed line is a block header (an event line with an item has a ``format`` too, and an id)."""
    return isinstance(obj, dict) and "format" in obj and "event_id" not in obj


# ---------------------------------------------------------------- parsing


def _bad(line_no: int, why: str) -> InvalidRequestError:
    return InvalidRequestError(f"import line {line_no}: {why}", reason=Reason.INVALID_IMPORT, line=line_no)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_ts(line_no: int, name: str, value: object) -> str:
    # The shape alone lets month 13 or day 31 of February through, which every later
    # conversion to a protobuf Timestamp (Load, ListSessions, show) would then fail on.
    try:
        valid = isinstance(value, str) and bool(_TS.fullmatch(value)) and bool(dt.datetime.fromisoformat(value[:-1]))
    except ValueError:
        valid = False
    if not valid:
        raise _bad(line_no, f"{name} must be RFC 3339 UTC with microseconds like 2026-01-02T03:04:05.000006Z")
    assert isinstance(value, str)
    return value


def _parse_header(line_no: int, obj: Any) -> ExportHeader:
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise _bad(line_no, f'the first line must be a header with "format": "{FORMAT}"')
    if obj.get("version") != FORMAT_VERSION or not _is_int(obj.get("version")):
        raise _bad(line_no, f"unsupported export version {obj.get('version')!r} (this daemon reads {FORMAT_VERSION})")
    session_id = obj.get("session_id")
    if not isinstance(session_id, str):
        raise _bad(line_no, "session_id must be a string")
    check_session_id(session_id)
    workdir = obj.get("workdir", "")
    if (
        not isinstance(workdir, str)
        or (workdir and not workdir.startswith("/"))
        or "\x00" in workdir
        or utf8_len(workdir) > MAX_WORKDIR_BYTES
    ):
        raise _bad(line_no, f"workdir must be an absolute path of at most {MAX_WORKDIR_BYTES} bytes, or empty")
    count = obj.get("events")
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_POSITION:
        raise _bad(line_no, f"events must be an integer from 0 to {MAX_POSITION}")
    return ExportHeader(
        session_id,
        workdir,
        _check_ts(line_no, "created_at", obj.get("created_at")),
        _check_ts(line_no, "updated_at", obj.get("updated_at")),
        count,
    )


def _nonempty(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def _check_payload(line_no: int, event_type: str, payload: dict[str, Any]) -> None:
    role = ROLE_OF_EVENT_TYPE.get(event_type)
    if role is not None:
        if payload.get("role") != role:
            raise _bad(line_no, f"a {event_type} payload needs role {role!r}")
        for key in ("content", "name", "tool_call_id", "synthetic"):
            if not isinstance(payload.get(key, ""), str):
                raise _bad(line_no, f"payload.{key} must be a string")
        for key in ("name", "tool_call_id", "synthetic"):
            if utf8_len(payload.get(key, "")) > MAX_NAME_BYTES:
                raise _bad(line_no, f"payload.{key} is longer than {MAX_NAME_BYTES} bytes")
        _check_entry_keys(line_no, payload)
        if (role == "tool") != bool(payload.get("tool_call_id")):
            raise _bad(line_no, "tool_call_id is required on tool results and forbidden elsewhere")
        calls = payload.get("tool_calls", [])
        if not isinstance(calls, list) or (calls and role != "assistant"):
            raise _bad(line_no, "tool_calls must be a list, on assistant messages only")
        for call in calls:
            # An empty id, and arguments that are not JSON, were stored under a tool policy that allowed them.
            if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not _nonempty(call.get("name")):
                raise _bad(line_no, "each tool call needs a string id and a non-empty string name")
            if utf8_len(call["id"]) > MAX_NAME_BYTES or utf8_len(call["name"]) > MAX_NAME_BYTES:
                raise _bad(line_no, f"a tool call id or name is longer than {MAX_NAME_BYTES} bytes")
            if not isinstance(call.get("arguments"), str):
                raise _bad(line_no, "tool call arguments must be JSON text (a string)")
            for key in ("pending", "arguments_not_json"):
                if not isinstance(call.get(key, False), bool):
                    raise _bad(line_no, f"tool call {key} must be true or false")
            if call.get("repair_mode", "synthesize") not in REPAIR_MODES:
                raise _bad(line_no, f"tool call repair_mode must be one of {', '.join(REPAIR_MODES)}")
            if not call.get("arguments_not_json"):
                try:
                    loads_limited(call["arguments"])
                except JsonError as exc:
                    raise _bad(line_no, f"tool call {call['id']!r} arguments are not valid JSON: {exc}") from exc
        for key in ("cancelled", "orphan"):
            if not isinstance(payload.get(key, False), bool) or (payload.get(key) and role != "tool"):
                raise _bad(line_no, f"payload.{key} must be true or false, on tool results only")
        supersedes = payload.get("supersedes", 0)
        if not _is_int(supersedes) or supersedes < 0 or (supersedes and role != "tool"):
            raise _bad(line_no, "payload.supersedes must be a position, on tool results only")
    elif event_type == "usage":
        _check_usage(line_no, "usage payload", payload)
    elif event_type in SESSION_EVENT_TYPES:
        problem = check_event_payload(event_type, payload)
        if problem is not None:
            raise _bad(line_no, problem)


def _check_usage(line_no: int, where: str, payload: dict[str, Any]) -> None:
    for key in USAGE_COUNT_KEYS:
        value = payload.get(key, 0)
        if not _is_int(value) or not 0 <= value <= MAX_USAGE_COUNT:
            raise _bad(line_no, f"{where}.{key} must be an integer from 0 to {MAX_USAGE_COUNT}")
    for key in ("model", "pricing_version", "currency"):
        if not isinstance(payload.get(key, ""), str):
            raise _bad(line_no, f"{where}.{key} must be a string")
        if utf8_len(payload.get(key, "")) > MAX_NAME_BYTES:
            raise _bad(line_no, f"{where}.{key} is longer than {MAX_NAME_BYTES} bytes")
    currency = payload.get("currency", "")
    if currency and not is_currency_code(currency):
        raise _bad(line_no, f"{where}.currency must be an ISO 4217 code such as USD (got {currency!r})")
    if payload.get("cost_micros", 0) and not payload.get("currency"):
        raise _bad(line_no, "usage with a cost needs a currency")


def _check_entry_keys(line_no: int, payload: dict[str, Any]) -> None:
    """A message payload's entry keys: ``client_id``, ``metadata`` (JSON object text) and ``usage``."""
    client_id = payload.get("client_id", "")
    if not isinstance(client_id, str) or utf8_len(client_id) > MAX_CLIENT_ID_BYTES:
        raise _bad(line_no, f"payload.client_id must be a string of at most {MAX_CLIENT_ID_BYTES} bytes")
    metadata = payload.get("metadata", "")
    if not isinstance(metadata, str):
        raise _bad(line_no, "payload.metadata must be JSON object text (a string)")
    if metadata:
        try:
            value = loads_limited(metadata)
        except JsonError as exc:
            raise _bad(line_no, f"payload.metadata is not valid JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise _bad(line_no, "payload.metadata must be a JSON object")
    usage = payload.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            raise _bad(line_no, "payload.usage must be an object")
        _check_usage(line_no, "payload.usage", usage)


def _parse_item(line_no: int, event_type: str, obj: dict[str, Any], max_item_bytes: int) -> tuple[str, bytes] | None:
    """The line's item (``format`` + ``item_b64``), or None; ``other_entry`` needs one."""
    if "format" not in obj and "item_b64" not in obj:
        if event_type == "other_entry":
            raise _bad(line_no, "an other_entry event needs format and item_b64")
        return None
    if event_type not in ROLE_OF_EVENT_TYPE or event_type == "repair":
        raise _bad(line_no, f"a {event_type} event carries no item (format, item_b64)")
    fmt, text = obj.get("format"), obj.get("item_b64")
    if not isinstance(fmt, str) or not FORMAT_TAG.fullmatch(fmt):
        raise _bad(line_no, "format must be a format tag (1-64 characters of a-z, 0-9, '.', '_', '-') with item_b64")
    if not isinstance(text, str) or not text:
        raise _bad(line_no, "item_b64 must be the item's bytes in base64 (not empty), with format")
    if len(text) // 4 * 3 > max_item_bytes + 3:
        raise _bad(line_no, f"the item is larger than {max_item_bytes} bytes (--max-entry-bytes)")
    try:
        item = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _bad(line_no, f"item_b64 is not valid base64: {exc}") from exc
    if not item or len(item) > max_item_bytes:
        raise _bad(line_no, f"the item must be 1 to {max_item_bytes} bytes")
    return fmt, item


def _check_mark(line_no: int, event_type: str, position: int, payload: dict[str, Any]) -> None:
    """An edit lists the earlier positions it removed (ascending); a clear may say how many events it erased."""
    if event_type == "edit":
        removed = payload.get("removed")
        if (
            not isinstance(removed, list)
            or not all(_is_int(p) and 0 < p < position for p in removed)
            or removed != sorted(set(removed))
        ):
            raise _bad(line_no, "an edit's payload.removed must be the ascending positions it removed, each before it")
    elif "erased" in payload and not (_is_int(payload["erased"]) and 0 <= payload["erased"] <= MAX_POSITION):
        raise _bad(line_no, "a clear's payload.erased must be the number of events it erased")


_EVENT_KEYS: Final = frozenset(
    {"event_id", "session_id", "position", "type", "ts", "trace_id", "schema_version", "payload"}
)
#: Keys an event line may have beside :data:`_EVENT_KEYS`: an entry's item.
_ITEM_KEYS: Final = frozenset({"format", "item_b64"})
#: The largest item an import takes when the caller gives no bound (the daemon passes --max-entry-bytes).
DEFAULT_MAX_ITEM_BYTES: Final = 16 * 1024 * 1024


def _parse_event(
    line_no: int, ordinal: int, session_id: str, obj: Any, last_position: int, max_item_bytes: int
) -> ImportedEvent:
    if not isinstance(obj, dict) or not _EVENT_KEYS <= set(obj) <= _EVENT_KEYS | _ITEM_KEYS:
        raise _bad(
            line_no,
            f"an event line has exactly the keys {sorted(_EVENT_KEYS)}, and an entry's item also {sorted(_ITEM_KEYS)}",
        )
    if obj["event_id"] != ordinal or not _is_int(obj["event_id"]):
        raise _bad(line_no, f"event_id must be {ordinal} (events are numbered 1, 2, ... within the session)")
    if obj["session_id"] != session_id:
        raise _bad(line_no, f"session_id {obj['session_id']!r} differs from the header's {session_id!r}")
    event_type = obj["type"]
    if not isinstance(event_type, str) or event_type not in EVENT_TYPES:
        raise _bad(line_no, f"unknown event type {event_type!r}")
    position = obj["position"]
    if event_type in HISTORY_EVENT_TYPES:
        if not _is_int(position) or position <= last_position:
            raise _bad(line_no, f"a {event_type} event needs a position greater than {last_position}")
        if position > MAX_POSITION:
            raise _bad(line_no, f"position {position} is above the highest allowed ({MAX_POSITION})")
    elif position is not None:
        raise _bad(line_no, f"a {event_type} event has no position (null)")
    trace_id = obj["trace_id"]
    if not isinstance(trace_id, str) or len(trace_id) > _MAX_TRACE_ID or not trace_id.isprintable():
        raise _bad(line_no, f"trace_id must be at most {_MAX_TRACE_ID} printable characters")
    version = obj["schema_version"]
    if not _is_int(version) or not 1 <= version <= EVENT_SCHEMA_VERSION:
        raise _bad(line_no, f"schema_version {version!r} is not one this daemon reads (1..{EVENT_SCHEMA_VERSION})")
    payload = obj["payload"]
    if not isinstance(payload, dict):
        raise _bad(line_no, "payload must be a JSON object")
    _check_payload(line_no, event_type, payload)
    if event_type in ("edit", "clear"):
        _check_mark(line_no, event_type, position, payload)
    item = _parse_item(line_no, event_type, obj, max_item_bytes)
    text = canonical_json(payload)
    size = payload_too_large(text)
    if size:
        raise _bad(line_no, f"payload is {size} bytes as stored (at most {MAX_STORED_PAYLOAD_BYTES}: one export line)")
    return ImportedEvent(
        position,
        event_type,
        _check_ts(line_no, "ts", obj["ts"]),
        trace_id,
        version,
        text,
        None if item is None else item[0],
        None if item is None else item[1],
        payload.get("client_id") or None if event_type in ROLE_OF_EVENT_TYPE else None,
    )


def parse_session(lines: Iterable[str], max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES) -> ImportedSession:
    """Validate one session's block (blank lines are ignored); items are at most ``max_item_bytes``.

    Raises:
        InvalidRequestError: reason INVALID_IMPORT (or INVALID_SESSION_ID), naming the line.
    """
    header: ExportHeader | None = None
    events: list[ImportedEvent] = []
    last_position = 0
    line_no = 0
    for line_no, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            # An event line is one level deeper than its payload.
            obj = loads_limited(raw, MAX_JSON_DEPTH + 1)
        except JsonError as exc:
            raise _bad(line_no, f"not valid JSON: {exc}") from exc
        if header is None:
            header = _parse_header(line_no, obj)
            continue
        if is_header(obj):
            raise _bad(line_no, "a second header: import one session per request")
        if len(events) >= header.events:
            raise _bad(line_no, f"more events than the header's count ({header.events})")
        event = _parse_event(line_no, len(events) + 1, header.session_id, obj, last_position, max_item_bytes)
        if event.position is not None:
            last_position = event.position
        events.append(event)
    if header is None:
        raise _bad(line_no, "no header line: nothing to import")
    if len(events) != header.events:
        raise _bad(line_no, f"the header announces {header.events} events, found {len(events)} (truncated?)")
    return ImportedSession(header, events)
