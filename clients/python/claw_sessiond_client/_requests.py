"""Request building: arguments checked and turned into the daemon's request messages (pure).

A wrong type is a ``TypeError`` naming the field; a value the daemon would
refuse for sure (an unknown role or import mode, text protobuf cannot encode)
is an :class:`~claw_sessiond_client.errors.InvalidRequestError`. Both raise
before anything is sent. Every mutation gets a request id here (the
idempotency key a retry reuses).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, TypeVar

from google.protobuf.timestamp_pb2 import Timestamp

from . import errors as E
from ._checks import check_ints, check_type
from ._types import EntryUsage, Message, StateDelta, ToolCall, ToolPolicy
from .api.v1 import sessiond_pb2 as pb

__all__ = [
    "EVENT_KINDS",
    "IMPORT_MODES",
    "ROLES",
    "append_request",
    "build",
    "clear_request",
    "delete_request",
    "deltas_pb",
    "event_payload",
    "export_request",
    "import_mode",
    "import_requests",
    "json_object",
    "labels_arg",
    "list_sessions_page_request",
    "list_sessions_request",
    "load_request",
    "load_workdir",
    "message_batch",
    "message_pb",
    "messages_pb",
    "new_request_id",
    "record_event_request",
    "record_usage_request",
    "split_export",
    "strings_arg",
    "tool_policy_pb",
    "usage_request",
]

R = TypeVar("R")


ROLES: Final = {
    "system": pb.ROLE_SYSTEM,
    "user": pb.ROLE_USER,
    "assistant": pb.ROLE_ASSISTANT,
    "tool": pb.ROLE_TOOL,
    "other": pb.ROLE_OTHER,
}


#: ImportMode names accepted by ``import_lines``.
IMPORT_MODES: Final = {
    "refuse": pb.IMPORT_MODE_UNSPECIFIED,
    "replace": pb.IMPORT_MODE_REPLACE,
    "merge": pb.IMPORT_MODE_MERGE,
}


PathArg = (str, os.PathLike)


def build(factory: Callable[..., R], **fields: Any) -> R:
    """Construct a request message; text the protobuf layer cannot encode becomes InvalidRequestError."""
    try:
        return factory(**fields)
    except (UnicodeEncodeError, ValueError, TypeError) as exc:
        raise E.InvalidRequestError(
            f"request cannot be encoded: {exc} (strings must be valid UTF-8, integers fit 64 bits)",
            reason=E.Reason.INVALID_MESSAGE,
        ) from exc


def new_request_id() -> str:
    """A fresh idempotency key."""
    return uuid.uuid4().hex


_MESSAGE_HINT: Final = (
    "build one with Message.user(...), Message.assistant(...), Message.tool(...) or Message.system(...)"
)


def message_batch(messages: object, name: str = "messages") -> list[Message]:
    """``append``'s ``messages`` argument (or another argument ``name``) as a list of :class:`Message`.

    Raises:
        TypeError: it is not a Message or an iterable of them (a dict, a str, ...); the message names the item.
    """
    if isinstance(messages, Message):
        return [messages]
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise TypeError(
            f"{name}: expected a Message or a list of Message, got {type(messages).__name__} "
            f"({messages!r:.80}); {_MESSAGE_HINT}"
        )
    batch = list(messages)
    for i, m in enumerate(batch):
        if not isinstance(m, Message):
            raise TypeError(f"{name}[{i}]: expected a Message, got {type(m).__name__} ({m!r:.80}); {_MESSAGE_HINT}")
    return batch


def message_pb(m: Message, where: str = "message") -> pb.Message:
    """Client message → proto.

    Raises:
        TypeError: a field of the wrong type (named as ``messages[i].content``, ...).
        InvalidRequestError: an unknown role.
    """
    check_type(f"{where}.role", m.role, str)
    check_type(f"{where}.content", m.content, str)
    check_type(f"{where}.tool_call_id", m.tool_call_id, str)
    check_type(f"{where}.name", m.name, str)
    check_type(f"{where}.tool_calls", m.tool_calls, (tuple, list))
    for i, c in enumerate(m.tool_calls):
        if not isinstance(c, ToolCall):
            raise TypeError(
                f"{where}.tool_calls[{i}]: expected a ToolCall, got {type(c).__name__} ({c!r:.80}); "
                "build one with ToolCall(id, name, arguments)"
            )
        check_type(f"{where}.tool_calls[{i}].arguments", c.arguments, str)
        check_type(f"{where}.tool_calls[{i}].pending", c.pending, bool)
    check_type(f"{where}.cancelled", m.cancelled, bool)
    check_type(f"{where}.format", m.format, str)
    check_type(f"{where}.item", m.item, bytes)
    check_type(f"{where}.client_id", m.client_id, str)
    check_type(f"{where}.metadata", m.metadata, str)
    check_type(f"{where}.usage", m.usage, (EntryUsage, type(None)))
    role = ROLES.get(m.role)
    if role is None:
        raise E.InvalidRequestError(
            f"unknown role {m.role!r} (use system, user, assistant, tool or other)", reason=E.Reason.INVALID_MESSAGE
        )
    return build(
        pb.Message,
        role=role,
        content=m.content,
        tool_calls=[
            build(pb.ToolCall, id=c.id, name=c.name, arguments=c.arguments, pending=c.pending) for c in m.tool_calls
        ],
        tool_call_id=m.tool_call_id,
        name=m.name,
        format=m.format,
        item=m.item,
        client_id=m.client_id,
        metadata=m.metadata,
        usage=None if m.usage is None else _entry_usage_pb(m.usage, f"{where}.usage"),
        cancelled=m.cancelled,
    )


def _entry_usage_pb(u: EntryUsage, where: str) -> pb.EntryUsage:
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros"):
        check_type(f"{where}.{name}", getattr(u, name), int)
    for name in ("currency", "model", "pricing_version"):
        check_type(f"{where}.{name}", getattr(u, name), str)
    return build(
        pb.EntryUsage,
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_tokens=u.cache_read_tokens,
        cache_write_tokens=u.cache_write_tokens,
        cost_micros=u.cost_micros,
        currency=u.currency,
        model=u.model,
        pricing_version=u.pricing_version,
    )


def messages_pb(messages: Iterable[Message]) -> list[pb.Message]:
    """Client messages → protos."""
    return [message_pb(m, f"messages[{i}]") for i, m in enumerate(messages)]


def append_request(
    session_id: str,
    messages: Iterable[Message] | Message,
    *,
    expected_last_position: int,
    request_id: str | None,
    workdir: str,
    run_id: str,
    tool_policy: ToolPolicy | None = None,
    state_deltas: Sequence[StateDelta] = (),
) -> pb.AppendRequest:
    """The AppendRequest of ``append`` (unary or streamed); a fresh request id unless one is given."""
    check_type("session_id", session_id, str)
    check_ints(expected_last_position=expected_last_position)
    check_type("request_id", request_id, (str, type(None)))
    check_type("workdir", workdir, str)
    check_type("run_id", run_id, str)
    policy = tool_policy_pb(tool_policy)
    batch = message_batch(messages)
    deltas = deltas_pb(state_deltas)
    return build(
        pb.AppendRequest,
        session_id=session_id,
        messages=messages_pb(batch),
        expected_last_position=expected_last_position,
        request_id=request_id or new_request_id(),
        workdir=workdir,
        run_id=run_id,
        tool_policy=policy,
        state_deltas=deltas,
    )


# ---------------------------------------------------------------- state, labels, tool policy

#: ``ToolPolicy.repair`` → the proto enum value.
REPAIR_MODES: Final = {
    None: pb.REPAIR_MODE_UNSPECIFIED,
    "synthesize": pb.REPAIR_MODE_SYNTHESIZE,
    "drop": pb.REPAIR_MODE_DROP,
    "off": pb.REPAIR_MODE_OFF,
}


def deltas_pb(state_deltas: object, field: str = "state_deltas") -> list[pb.StateDelta]:
    """State deltas → protos (each delta's mapping JSON-encoded).

    Raises:
        TypeError: not a sequence of :class:`StateDelta`, or a delta that is not a JSON-serialisable mapping.
    """
    if isinstance(state_deltas, (str, bytes, Mapping, StateDelta)) or not isinstance(state_deltas, Iterable):
        raise TypeError(f"{field}: expected a list of StateDelta, got {type(state_deltas).__name__}")
    out = []
    for i, d in enumerate(state_deltas):
        if not isinstance(d, StateDelta):
            raise TypeError(f"{field}[{i}]: expected a StateDelta, got {type(d).__name__} ({d!r:.80})")
        check_type(f"{field}[{i}].scope", d.scope, str)
        out.append(build(pb.StateDelta, scope=d.scope, delta=json_object(d.delta, f"{field}[{i}].delta")))
    return out


def json_object(value: object, field: str) -> str:
    """A mapping as JSON object text (None values kept: in a delta they remove keys).

    Raises:
        TypeError: not a mapping with str keys, or not JSON-serialisable.
    """
    if not isinstance(value, Mapping):
        raise TypeError(f"{field}: expected a dict, got {type(value).__name__} ({value!r:.80})")
    try:
        return json.dumps(dict(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise TypeError(f"{field}: expected a JSON-serialisable dict: {exc}") from None


def labels_arg(labels: object, field: str = "labels") -> dict[str, str]:
    """A labels argument: a mapping of str to str (None: none).

    Raises:
        TypeError: naming the field and the key.
    """
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise TypeError(f"{field}: expected a dict of str to str, got {type(labels).__name__} ({labels!r:.80})")
    for key, value in labels.items():
        check_type(f"{field} key", key, str)
        check_type(f"{field}[{key!r}]", value, str)
    return dict(labels)


def strings_arg(values: object, field: str) -> list[str]:
    """A list-of-str argument (a single str is refused: it would be taken letter by letter).

    Raises:
        TypeError: naming the field and the item.
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{field}: expected a list of str, got {type(values).__name__} ({values!r:.80})")
    out = list(values)
    for i, v in enumerate(out):
        check_type(f"{field}[{i}]", v, str)
    return out


def tool_policy_pb(policy: ToolPolicy | None, field: str = "tool_policy") -> pb.ToolPolicy | None:
    """A :class:`ToolPolicy` as its proto (None stays None: the session's policy).

    Raises:
        TypeError: not a ToolPolicy, or a field of the wrong type.
        InvalidRequestError: an unknown repair mode.
    """
    if policy is None:
        return None
    check_type(field, policy, ToolPolicy)
    check_type(f"{field}.repair", policy.repair, (str, type(None)))
    check_type(f"{field}.allow_orphan_results", policy.allow_orphan_results, bool)
    check_type(f"{field}.allow_unparsed_calls", policy.allow_unparsed_calls, bool)
    if policy.repair not in REPAIR_MODES:
        raise E.InvalidRequestError(
            f"{field}.repair must be 'synthesize', 'drop', 'off' or None (got {policy.repair!r})",
            reason=E.Reason.INVALID_MESSAGE,
        )
    return pb.ToolPolicy(
        repair=REPAIR_MODES[policy.repair],
        allow_orphan_results=policy.allow_orphan_results,
        allow_unparsed_calls=policy.allow_unparsed_calls,
    )


def event_payload(payload: object) -> str:
    """RecordEvent's payload (a dict) as JSON text.

    Raises:
        TypeError: not a dict, or not JSON-serialisable.
    """
    check_type("payload", payload, dict)
    try:
        return json.dumps(payload, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise TypeError(f"payload: expected a JSON-serialisable dict: {exc}") from None


def load_workdir(workdir: str | os.PathLike[str] | None) -> str:
    """Load's workdir: ``workdir`` (or the current folder) made absolute.

    Raises:
        TypeError: ``workdir`` is not a str, a path or None.
        InvalidRequestError: no ``workdir`` and the current folder no longer exists.
    """
    check_type("workdir", workdir, (*PathArg, type(None)))
    try:
        return os.path.abspath(workdir if workdir is not None else os.getcwd())
    except OSError as exc:
        raise E.InvalidRequestError(
            f"workdir: the current folder cannot be read ({exc.strerror}); pass workdir=",
            reason=E.Reason.INVALID_WORKDIR,
        ) from None


def import_mode(mode: str) -> pb.ImportMode:
    """``refuse`` / ``replace`` / ``merge`` → the proto enum value.

    Raises:
        InvalidRequestError: an unknown mode.
    """
    check_type("mode", mode, str)
    if mode not in IMPORT_MODES:
        raise E.InvalidRequestError(f"mode must be one of {sorted(IMPORT_MODES)}", reason=E.Reason.INVALID_IMPORT)
    return IMPORT_MODES[mode]


def split_export(lines: Iterable[str]) -> list[list[str]]:
    """Split export lines into one block per session (a block starts at each header line).

    Raises:
        InvalidRequestError: the first non-blank line is not a header, or a line is not JSON.
        TypeError: ``lines`` is a single str or bytes, not iterable, or holds something else than str.
    """
    if isinstance(lines, (str, bytes)) or not isinstance(lines, Iterable):
        raise TypeError(
            f"lines: expected an iterable of str (export lines), got {type(lines).__name__}; "
            "pass text.splitlines() or an open file"
        )
    blocks: list[list[str]] = []
    for number, raw in enumerate(lines, 1):
        check_type(f"lines[{number - 1}]", raw, str)
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise E.InvalidRequestError(
                f"export line {number} is not valid JSON: {exc}", reason=E.Reason.INVALID_IMPORT
            ) from exc
        if isinstance(obj, dict) and "format" in obj and "event_id" not in obj:  # a header (an item line has both)
            blocks.append([])
        elif not blocks:
            raise E.InvalidRequestError("an export starts with a header line", reason=E.Reason.INVALID_IMPORT)
        blocks[-1].append(line)
    return blocks


# ---------------------------------------------------------------- one request per RPC
#
# Each checks its arguments in the order the methods always did (the first wrong one is named),
# then builds the request. ``workdirs`` is the client's memory of the workdir each session was
# loaded with: a mutation stores it.

#: RecordEvent kinds accepted by ``record_event``.
EVENT_KINDS: Final = {"permission_denial": pb.EVENT_KIND_PERMISSION_DENIAL, "error": pb.EVENT_KIND_ERROR}


def load_request(
    session_id: str,
    workdir: str | os.PathLike[str] | None,
    repair: bool,
    no_repair: bool = False,
    *,
    last: int | None = None,
    after_position: int | None = None,
    after_time: dt.datetime | None = None,
    scopes: object = (),
    before_position: int | None = None,
    client_ids: object = (),
    client_id_prefix: str = "",
    items_format: str = "",
) -> tuple[pb.LoadRequest, str]:
    """Load's request, and the absolute workdir it carries (the client remembers it for later mutations; ""
    for a look-only Load given none, which carries none).

    ``no_repair`` (or ``repair`` False): a Load that writes nothing at all. ``last``,
    ``after_position``, ``after_time``: a bounded load (at most one of them); ``scopes``: shared
    scopes whose states to return too. ``before_position``, ``client_ids``, ``client_id_prefix``:
    the filters of a point or range read (the daemon says which combine). ``items_format``: the reply
    carries only the stored items of that format (``LoadResponse.items``).

    Raises:
        TypeError: a bound of the wrong type.
        InvalidRequestError: more than one bound, or one out of range.
    """
    check_type("session_id", session_id, str)
    check_type("no_repair", no_repair, bool)
    check_type("last", last, (int, type(None)))
    check_type("after_position", after_position, (int, type(None)))
    check_type("after_time", after_time, (dt.datetime, type(None)))
    check_type("before_position", before_position, (int, type(None)))
    check_type("client_id_prefix", client_id_prefix, str)
    ids = strings_arg(client_ids, "client_ids")
    given = [
        n for n, v in (("last", last), ("after_position", after_position), ("after_time", after_time)) if v is not None
    ]
    if len(given) > 1:
        raise E.InvalidRequestError(
            f"load takes at most one of last, after_position and after_time (got {' and '.join(given)})",
            reason=E.Reason.INVALID_MESSAGE,
        )
    if (last is not None and not 0 < last < 2**31) or (after_position is not None and after_position < 0):
        raise E.InvalidRequestError(
            "last must be from 1 to 2**31 - 1 and after_position not negative", reason=E.Reason.INVALID_MESSAGE
        )
    look_only = no_repair or not repair
    # A look-only Load writes nothing and needs no workdir: without one the reply has the stored workdir.
    wd = "" if look_only and workdir is None else load_workdir(workdir)
    fields: dict[str, Any] = {"session_id": session_id, "workdir": wd, "no_repair": look_only}
    names = strings_arg(scopes, "scopes")
    if names:
        fields["scopes"] = names
    if last is not None:
        fields["last"] = last
    if after_position is not None:
        fields["after_position"] = after_position
    if before_position is not None:
        fields["before_position"] = before_position
    if ids:
        fields["client_ids"] = ids
    if client_id_prefix:
        fields["client_id_prefix"] = client_id_prefix
    if items_format:
        fields["items_format"] = items_format
    if after_time is not None:
        when = Timestamp()
        when.FromDatetime(after_time if after_time.tzinfo else after_time.replace(tzinfo=dt.UTC))
        fields["after_time"] = when
    return build(pb.LoadRequest, **fields), wd


def record_usage_request(
    session_id: str,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int,
    cache_write_tokens: int,
    cost_micros: int,
    currency: str,
    model: str,
    pricing_version: str,
    request_id: str | None,
    workdirs: Mapping[str, str],
) -> pb.RecordUsageRequest:
    """RecordUsage's request (a fresh request id unless one is given)."""
    check_type("session_id", session_id, str)
    check_ints(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
        cost_micros=cost_micros,
    )
    for name, text in (("currency", currency), ("model", model), ("pricing_version", pricing_version)):
        check_type(name, text, str)
    check_type("request_id", request_id, (str, type(None)))
    return build(
        pb.RecordUsageRequest,
        session_id=session_id,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
        cost_micros=cost_micros,
        currency=currency,
        model=model,
        pricing_version=pricing_version,
        request_id=request_id or new_request_id(),
        workdir=workdirs.get(session_id, ""),
    )


def clear_request(
    session_id: str,
    expected_last_position: int,
    request_id: str | None,
    workdirs: Mapping[str, str],
    erase: bool = False,
) -> pb.ClearRequest:
    """Clear's request (a fresh request id unless one is given)."""
    check_type("session_id", session_id, str)
    check_ints(expected_last_position=expected_last_position)
    check_type("request_id", request_id, (str, type(None)))
    check_type("erase", erase, bool)
    return build(
        pb.ClearRequest,
        session_id=session_id,
        request_id=request_id or new_request_id(),
        expected_last_position=expected_last_position,
        workdir=workdirs.get(session_id, ""),
        erase=erase,
    )


def record_event_request(
    session_id: str, kind: str, payload: dict[str, Any], request_id: str | None
) -> pb.RecordEventRequest:
    """RecordEvent's request (a fresh request id unless one is given).

    Raises:
        TypeError: ``payload`` is not a JSON-serialisable dict (or another argument has the wrong type).
        InvalidRequestError: an unknown ``kind``.
    """
    check_type("session_id", session_id, str)
    check_type("kind", kind, str)
    check_type("request_id", request_id, (str, type(None)))
    text = event_payload(payload)
    if kind not in EVENT_KINDS:
        raise E.InvalidRequestError(f"kind must be one of {sorted(EVENT_KINDS)}", reason=E.Reason.INVALID_EVENT)
    return build(
        pb.RecordEventRequest,
        session_id=session_id,
        kind=EVENT_KINDS[kind],
        payload=text,
        request_id=request_id or new_request_id(),
    )


def list_sessions_request(id_contains: str, limit: int, labels: object = None) -> pb.ListSessionsRequest:
    """ListSessions' request for ``list_sessions`` (arguments checked by type)."""
    check_type("id_contains", id_contains, str)
    check_ints(limit=limit)
    return build(pb.ListSessionsRequest, id_contains=id_contains, limit=limit, labels=labels_arg(labels))


def list_sessions_page_request(
    id_contains: str, limit: int, page_token: str, labels: object = None
) -> pb.ListSessionsRequest:
    """ListSessions' request for ``list_sessions_page`` (a wrong type is an InvalidRequestError from :func:`build`)."""
    return build(
        pb.ListSessionsRequest, id_contains=id_contains, limit=limit, page_token=page_token, labels=labels_arg(labels)
    )


def usage_request(session_id: str) -> pb.GetUsageRequest:
    """GetUsage's request."""
    check_type("session_id", session_id, str)
    return build(pb.GetUsageRequest, session_id=session_id)


def delete_request(session_id: str) -> pb.DeleteRequest:
    """Delete's request."""
    check_type("session_id", session_id, str)
    return build(pb.DeleteRequest, session_id=session_id)


def export_request(session_id: str | None) -> pb.ExportRequest:
    """Export's request: one session, or all with None."""
    check_type("session_id", session_id, (str, type(None)))
    return build(pb.ExportRequest, session_id=session_id or "")


def import_requests(lines: Iterable[str], mode: str) -> Iterator[pb.ImportRequest]:
    """One Import request per session block of ``lines``, built as the caller asks for the next one.

    The mode and every line are checked before the first request is handed out
    (nothing is sent if one is wrong); a block is built only once the
    previous one's call is done.

    Raises:
        InvalidRequestError: an unknown mode, a line that is not JSON, no header first.
        TypeError: ``lines`` is not an iterable of str.
    """
    enum = import_mode(mode)
    for block in split_export(lines):
        yield build(pb.ImportRequest, lines=block, mode=enum)
