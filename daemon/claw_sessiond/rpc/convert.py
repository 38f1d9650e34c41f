"""Conversion between the proto messages of ``claw.sessiond.v1`` and the domain model.

Replies are built from domain objects (``*_pb``), and requests turned into
domain values (``*_of``, :func:`message_from_pb`). A proto enum value this
daemon does not know is refused here (it is a fact about the wire, not about
the request's content); every other check of a request's values is in
:mod:`claw_sessiond.validate`.

Must never: touch storage, or decide whether a request is allowed.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from typing import Any, Final

from google.protobuf.timestamp_pb2 import Timestamp

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..errors import InvalidRequestError, Reason
from ..events import request_message
from ..model import ImportMode, Message, SessionMeta, ToolCall, Usage, UsageDelta
from ..policy import ToolPolicy, policy_from_json, policy_json
from ..state import EMPTY, ScopeState
from ..validate import check_trace_id
from .edge import Context

__all__ = [
    "entry_usage_of",
    "event_kind_of",
    "fill_message_pb",
    "import_mode_of",
    "message_from_pb",
    "message_pb",
    "policy_text_of",
    "role_filter_of",
    "role_pb",
    "scope_state_pb",
    "session_pb",
    "session_policy_pb",
    "set_timestamp",
    "time_bound",
    "timestamp",
    "tool_policy_of",
    "tool_policy_pb",
    "trace_id_of",
    "usage_pb",
]

_ROLE_NAME: Final[dict[pb.Role, str]] = {
    pb.ROLE_SYSTEM: "system",
    pb.ROLE_USER: "user",
    pb.ROLE_ASSISTANT: "assistant",
    pb.ROLE_TOOL: "tool",
    pb.ROLE_OTHER: "other",
}
_ROLE_ENUM: Final = {v: k for k, v in _ROLE_NAME.items()}
_TRACEPARENT: Final = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

_IMPORT_MODE: Final[dict[pb.ImportMode, ImportMode]] = {
    pb.IMPORT_MODE_UNSPECIFIED: "refuse",
    pb.IMPORT_MODE_REPLACE: "replace",
    pb.IMPORT_MODE_MERGE: "merge",
}
_EVENT_KIND: Final[dict[pb.EventKind, str]] = {
    pb.EVENT_KIND_PERMISSION_DENIAL: "permission_denial",
    pb.EVENT_KIND_ERROR: "error",
}


def role_pb(role: str) -> pb.Role:
    """A domain role → its proto enum value (ROLE_UNSPECIFIED for an unknown one)."""
    return _ROLE_ENUM.get(role, pb.ROLE_UNSPECIFIED)


def role_filter_of(role: pb.Role) -> str:
    """A request's role filter → a domain role ("" for ROLE_UNSPECIFIED: any role).

    Raises:
        InvalidRequestError: an enum value this daemon does not know (reason INVALID_MESSAGE).
    """
    if role == pb.ROLE_UNSPECIFIED:
        return ""
    if role not in _ROLE_NAME:
        raise InvalidRequestError(f"unknown role {role}", reason=Reason.INVALID_MESSAGE)
    return _ROLE_NAME[role]


def import_mode_of(mode: pb.ImportMode) -> ImportMode:
    """ImportRequest's mode → the store's import mode (unspecified: refuse an existing session).

    Raises:
        InvalidRequestError: an enum value this daemon does not know (reason INVALID_IMPORT).
    """
    if mode not in _IMPORT_MODE:
        raise InvalidRequestError(f"unknown import mode {mode}", reason=Reason.INVALID_IMPORT)
    return _IMPORT_MODE[mode]


def event_kind_of(kind: pb.EventKind) -> str:
    """RecordEventRequest's kind → the stored event kind.

    Raises:
        InvalidRequestError: unspecified or unknown (reason INVALID_EVENT).
    """
    if kind not in _EVENT_KIND:
        raise InvalidRequestError(
            "kind must be EVENT_KIND_PERMISSION_DENIAL or EVENT_KIND_ERROR", reason=Reason.INVALID_EVENT
        )
    return _EVENT_KIND[kind]


def set_timestamp(out: Timestamp, value: str) -> None:
    """Write RFC 3339 text into ``out`` (for example a message's ``created_at``: no copy)."""
    # Hot path (every Append reply, every message of a Load): ``FromJsonString`` goes
    # through ``strptime`` (~14 µs); ``fromisoformat`` is C (~2 µs). Only our own
    # ``now_rfc3339`` shape (microseconds, "Z") takes it, so nothing is rounded.
    when = None
    if len(value) == 27 and value[-1] == "Z":
        try:
            when = dt.datetime.fromisoformat(value)
        except ValueError:
            when = None
    if when is None:
        out.FromJsonString(value)
        return
    delta = when - _EPOCH
    out.seconds = delta.days * 86400 + delta.seconds
    out.nanos = delta.microseconds * 1000


def timestamp(value: str | None) -> Timestamp | None:
    """RFC 3339 text → Timestamp (None stays None)."""
    if not value:
        return None
    ts = Timestamp()
    set_timestamp(ts, value)
    return ts


def usage_pb(u: Usage) -> pb.Usage:
    """Domain usage → proto."""
    return pb.Usage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_tokens=u.cache_read_tokens,
        cache_write_tokens=u.cache_write_tokens,
        cost_micros=u.cost_micros,
        currency=u.currency,
    )


def fill_message_pb(out: pb.Message, m: Message) -> None:
    """Write a domain message into ``out`` (for example ``chunk.messages.add()``: no copy)."""
    out.role = _ROLE_ENUM.get(m.role, pb.ROLE_UNSPECIFIED)
    if m.content:
        out.content = m.content
    for c in m.tool_calls:
        out.tool_calls.add(
            id=c.id, name=c.name, arguments=c.arguments, pending=c.pending, arguments_not_json=c.arguments_not_json
        )
    if m.tool_call_id:
        out.tool_call_id = m.tool_call_id
    if m.name:
        out.name = m.name
    out.position = m.position
    if m.created_at:
        set_timestamp(out.created_at, m.created_at)
    if m.trace_id:
        out.trace_id = m.trace_id
    if m.synthetic_reason == "interrupted":
        out.synthetic.reason = pb.SYNTHETIC_REASON_INTERRUPTED
    if m.format:
        out.format = m.format
        out.item = m.item
    if m.client_id:
        out.client_id = m.client_id
    if m.metadata:
        out.metadata = m.metadata
    if m.usage is not None:
        u = m.usage
        out.usage.input_tokens = u.input_tokens
        out.usage.output_tokens = u.output_tokens
        out.usage.cache_read_tokens = u.cache_read_tokens
        out.usage.cache_write_tokens = u.cache_write_tokens
        out.usage.cost_micros = u.cost_micros
        out.usage.currency = u.currency
        out.usage.model = u.model
        out.usage.pricing_version = u.pricing_version
    if m.cancelled:
        out.cancelled = True
    if m.orphan:
        out.orphan = True
    if m.supersedes:
        out.supersedes = m.supersedes


def message_pb(m: Message) -> pb.Message:
    """Domain message → proto."""
    out = pb.Message()
    fill_message_pb(out, m)
    return out


def session_pb(s: SessionMeta) -> pb.Session:
    """Domain session metadata → proto."""
    settings = s.settings
    return pb.Session(
        id=s.id,
        workdir=s.workdir,
        created_at=timestamp(s.created_at),
        updated_at=timestamp(s.updated_at),
        usage=usage_pb(s.usage),
        last_position=s.last_position,
        stored=s.stored,
        message_count=s.message_count,
        state=settings.state,
        labels=dict(settings.labels),
        tool_policy=session_policy_pb(settings.tool_policy) if settings.tool_policy != EMPTY else None,
        forked_from=settings.forked_from,
        forked_at_position=settings.forked_at_position,
        incarnation=settings.incarnation,
    )


def session_policy_pb(text: str) -> pb.ToolPolicy:
    """A session's stored tool policy (JSON text, ``policy.policy_json``) → proto."""
    return tool_policy_pb(policy_from_json(text))


def policy_text_of(policy: pb.ToolPolicy) -> str:
    """A request's tool policy → its stored text (``{"repair"?, "allow_orphan_results"?, ...}``, unset omitted).

    Raises:
        InvalidRequestError: a repair mode this daemon does not know.
    """
    return policy_json(tool_policy_of(policy))


def scope_state_pb(s: ScopeState) -> pb.ScopeState:
    """A shared scope's state → proto."""
    return pb.ScopeState(scope=s.scope, state=s.state, updated_at=timestamp(s.updated_at))


def message_from_pb(m: pb.Message) -> Message:
    """Proto message → domain (role "unknown(N)" for unknown enum values; validation refuses it)."""
    return request_message(
        _ROLE_NAME.get(m.role) or f"unknown({m.role})",  # the name spelled only when it is needed
        m.content,
        # ``arguments_not_json``, ``orphan`` and ``supersedes`` are the daemon's to set: not read here.
        tuple(ToolCall(c.id, c.name, c.arguments, c.pending) for c in m.tool_calls) if m.tool_calls else (),
        m.tool_call_id,
        m.name,
        m.format,
        m.item,
        m.client_id,
        m.metadata,
        entry_usage_of(m.usage) if m.HasField("usage") else None,
        m.cancelled,
    )


def entry_usage_of(u: pb.EntryUsage) -> UsageDelta:
    """An entry's usage → the delta it adds to the session's totals."""
    return UsageDelta(
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.cost_micros,
        u.currency,
        u.model,
        u.pricing_version,
    )


_REPAIR_MODE: Final[dict[pb.RepairMode, str]] = {
    pb.REPAIR_MODE_UNSPECIFIED: "",
    pb.REPAIR_MODE_SYNTHESIZE: "synthesize",
    pb.REPAIR_MODE_DROP: "drop",
    pb.REPAIR_MODE_OFF: "off",
}
_REPAIR_ENUM: Final = {v: k for k, v in _REPAIR_MODE.items()}


def tool_policy_of(policy: pb.ToolPolicy) -> ToolPolicy:
    """A request's ToolPolicy → the domain's (unset fields stay unset).

    Raises:
        InvalidRequestError: a repair mode this daemon does not know (reason INVALID_MESSAGE).
    """
    if policy.repair not in _REPAIR_MODE:
        raise InvalidRequestError(
            f"tool_policy.repair: unknown repair mode {policy.repair}", reason=Reason.INVALID_MESSAGE
        )
    return ToolPolicy(_REPAIR_MODE[policy.repair], policy.allow_orphan_results, policy.allow_unparsed_calls)


def tool_policy_pb(policy: ToolPolicy) -> pb.ToolPolicy:
    """A domain ToolPolicy → proto (for example a session's, in ``Session.tool_policy``)."""
    return pb.ToolPolicy(
        repair=_REPAIR_ENUM.get(policy.repair, pb.REPAIR_MODE_UNSPECIFIED),
        allow_orphan_results=policy.allow_orphan_results,
        allow_unparsed_calls=policy.allow_unparsed_calls,
    )


def trace_id_of(request_trace_id: str, context: Context) -> str:
    """Trace id: the request's, else W3C ``traceparent`` metadata's, else a new one."""
    if request_trace_id:
        return check_trace_id(request_trace_id)
    for key, value in context.invocation_metadata() or ():
        if key == "traceparent" and isinstance(value, str):
            match = _TRACEPARENT.match(value.strip().lower())
            if match and match.group(1) != "0" * 32:
                return match.group(1)
    return os.urandom(16).hex()  # 128 random bits, like uuid4, at a third of its cost


def time_bound(request: Any, field: str) -> str:
    """A request's optional Timestamp field as stored-time text ("" if unset)."""
    if not request.HasField(field):
        return ""
    try:
        when = getattr(request, field).ToDatetime(tzinfo=dt.UTC)
    except (ValueError, OverflowError) as exc:
        raise InvalidRequestError(f"{field} is not a valid time: {exc}", reason=Reason.INVALID_MESSAGE) from exc
    return str(when.isoformat(timespec="microseconds")).replace("+00:00", "Z")
