"""Session state, shared scope states, labels and the default tool policy: the pure rules (no I/O).

- **State**: a JSON object per session (``sessions.state``), and one per shared scope
  (``scope_states``, for example ``app:weather``: every session that names the scope shares it).
  A :class:`~claw_sessiond.model.StateDelta` sets its top-level keys (a value replaces the old one
  whole) and removes those whose value is null (:func:`apply_delta`). A state is stored with
  sorted keys (:func:`~claw_sessiond.events.canonical_json`), so the same keys and values are
  always the same text, and it is at most :data:`MAX_STATE_BYTES` after each delta.
- **Labels**: at most :data:`MAX_LABELS`, keys of 1-64 characters ``[A-Za-z0-9._:/-]``, values of
  at most 256 bytes without control characters (:func:`check_labels`, :func:`labels_after`).
- **Tool policy**: the session's default, kept as JSON text ``{"repair"?, "allow_orphan_results"?,
  "allow_unparsed_calls"?}`` with unset keys omitted (``policy.policy_json``); the tool-call rules
  read it at Load and Append time.
- **Events**: every applied delta is a ``state`` event (no position), payload
  ``{"delta": {...}, "scope": ""}`` (:func:`state_payload`); a change of labels, tool policy or
  lineage is a ``session_settings`` event whose payload holds the values after the change
  (``{"labels"?, "tool_policy"?, "forked_from"?, "forked_at_position"?}``, :func:`settings_payload`).
  Import folds them back (:func:`fold_settings`), so export → import reproduces a session's state,
  labels, policy and lineage. A shared scope's delta stays in the log of the session that wrote it
  but is not applied again by an import: a scope belongs to no one session, and an import into the
  workspace it came from would apply it twice.

Raises only ``claw_sessiond.errors``. Must never: do I/O, speak SQL, or import grpc.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .bounds import MAX_JSON_DEPTH, MAX_POSITION, JsonError, loads_limited, utf8_len
from .errors import InvalidRequestError, Reason
from .events import canonical_json
from .ids import check_session_id, has_control
from .model import SessionMeta, StateDelta
from .policy import REPAIR_MODES, policy_from_json, policy_json

__all__ = [
    "EMPTY",
    "MAX_DELTA_DEPTH",
    "MAX_LABELS",
    "MAX_LABEL_KEY_BYTES",
    "MAX_LABEL_VALUE_BYTES",
    "MAX_SCOPES",
    "MAX_SCOPE_BYTES",
    "MAX_STATE_BYTES",
    "MAX_STATE_DELTAS",
    "CreateJob",
    "ForkJob",
    "ForkResult",
    "ScopeState",
    "SessionResult",
    "SettingsFold",
    "UpdateJob",
    "apply_delta",
    "check_event_payload",
    "check_labels",
    "check_scope",
    "fold_settings",
    "labels_after",
    "labels_json",
    "parse_delta",
    "parse_labels",
    "prepare_deltas",
    "settings_payload",
    "state_after",
    "state_payload",
]

#: The empty state (and the empty policy, and no labels), as stored.
EMPTY: Final = "{}"
#: Largest state (the session's own or a scope's) after a delta, in bytes of its stored JSON text.
MAX_STATE_BYTES: Final = 1024 * 1024
#: Most state deltas in one request (Append, UpdateSession).
MAX_STATE_DELTAS: Final = 100
#: Deepest nesting of a delta (or an initial state): its event payload is one level deeper, and an
#: export line one more, which Import reads with ``MAX_JSON_DEPTH + 1``.
MAX_DELTA_DEPTH: Final = MAX_JSON_DEPTH - 1
#: Most labels on one session.
MAX_LABELS: Final = 32
MAX_LABEL_KEY_BYTES: Final = 64
MAX_LABEL_VALUE_BYTES: Final = 256
#: A shared scope's name: 1 to this many bytes of UTF-8, no control characters.
MAX_SCOPE_BYTES: Final = 256
#: Most scopes one GetScopeStates (or one Load) reads.
MAX_SCOPES: Final = 100

_LABEL_KEY: Final = re.compile(r"[A-Za-z0-9._:/-]{1,64}")
_POLICY_FLAGS: Final = ("allow_orphan_results", "allow_unparsed_calls")


# ---------------------------------------------------------------- jobs and results


@dataclass(frozen=True, slots=True)
class ScopeState:
    """The state of one shared scope ("{}" and no time for a scope never written)."""

    scope: str
    state: str = EMPTY
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class CreateJob:
    """A validated CreateSession: an empty session with its initial state, labels and tool policy."""

    session_id: str
    workdir: str = ""
    state: str = EMPTY
    labels: Mapping[str, str] = field(default_factory=dict)
    tool_policy: str = EMPTY
    request_id: str = ""
    fingerprint: str = ""
    trace_id: str = ""


@dataclass(frozen=True, slots=True)
class ForkJob:
    """A validated ForkSession: copy ``source_id``'s visible entries up to a position into ``session_id``."""

    source_id: str
    session_id: str
    up_to_position: int = 0
    """0: every visible entry."""
    workdir: str = ""
    """Empty: the source's."""
    labels: Mapping[str, str] | None = None
    """None: the source's."""
    request_id: str = ""
    fingerprint: str = ""
    trace_id: str = ""


@dataclass(frozen=True, slots=True)
class UpdateJob:
    """A validated UpdateSession: state deltas, label changes and a new default tool policy, all or none."""

    session_id: str
    state_deltas: Sequence[StateDelta] = ()
    set_labels: Mapping[str, str] = field(default_factory=dict)
    remove_labels: Sequence[str] = ()
    tool_policy: str | None = None
    """None: unchanged."""
    expected_last_position: int = 0
    request_id: str = ""
    fingerprint: str = ""
    trace_id: str = ""


@dataclass(frozen=True, slots=True)
class SessionResult:
    """What CreateSession and UpdateSession return: the session after the change."""

    session: SessionMeta
    trace_id: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class ForkResult:
    """What ForkSession returns."""

    session: SessionMeta
    entries_copied: int
    trace_id: str
    replayed: bool = False


# ---------------------------------------------------------------- state


def _bad(field_name: str, why: str, reason: Reason = Reason.INVALID_MESSAGE) -> InvalidRequestError:
    return InvalidRequestError(f"{field_name}: {why}", reason=reason, field=field_name)


def parse_delta(text: str, field_name: str) -> str:
    """A delta (or an initial state) as the caller sent it → its stored text (sorted keys, compact).

    Raises:
        InvalidRequestError: not a JSON object, nested deeper than :data:`MAX_DELTA_DEPTH`, or larger
            than :data:`MAX_STATE_BYTES` (reason FIELD_TOO_LARGE); the message names ``field_name``.
    """
    if utf8_len(text) > MAX_STATE_BYTES:
        raise _bad(field_name, f"is larger than {MAX_STATE_BYTES} bytes (a state's limit)", Reason.FIELD_TOO_LARGE)
    try:
        value = loads_limited(text, MAX_DELTA_DEPTH)
    except JsonError as exc:
        raise _bad(field_name, f"is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise _bad(field_name, "must be a JSON object (its keys are set; a null value removes the key)")
    stored = canonical_json(value)
    if utf8_len(stored) > MAX_STATE_BYTES:
        raise _bad(field_name, f"is larger than {MAX_STATE_BYTES} bytes once stored", Reason.FIELD_TOO_LARGE)
    return stored


def prepare_deltas(deltas: Sequence[tuple[str, str]], field_name: str = "state_deltas") -> tuple[StateDelta, ...]:
    """A request's ``(scope, delta text)`` pairs → validated deltas, in order.

    Raises:
        InvalidRequestError: more than :data:`MAX_STATE_DELTAS`, a bad scope or a bad delta, naming
            the field (``state_deltas[2].delta``).
    """
    if len(deltas) > MAX_STATE_DELTAS:
        raise _bad(
            field_name, f"at most {MAX_STATE_DELTAS} deltas in one request (got {len(deltas)})", Reason.FIELD_TOO_LARGE
        )
    out = []
    for i, (scope, text) in enumerate(deltas):
        if scope:
            check_scope(scope, f"{field_name}[{i}].scope")
        out.append(StateDelta(scope, parse_delta(text, f"{field_name}[{i}].delta")))
    return tuple(out)


def check_scope(scope: str, field_name: str) -> str:
    """A shared scope's name: 1-256 bytes of UTF-8 without control characters.

    Raises:
        InvalidRequestError: naming ``field_name``.
    """
    if not scope:
        raise _bad(field_name, "a scope name is 1 to 256 bytes (empty means the session's own state)")
    if utf8_len(scope) > MAX_SCOPE_BYTES:
        raise _bad(field_name, f"a scope name is at most {MAX_SCOPE_BYTES} bytes", Reason.FIELD_TOO_LARGE)
    if has_control(scope):
        raise _bad(field_name, "a scope name has no control characters")
    return scope


def apply_delta(state: Mapping[str, Any], delta: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` after ``delta``: each key of the delta set to its value, a null value removing the key."""
    out = dict(state)
    for key, value in delta.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def state_after(old: str, delta: str, field_name: str) -> str:
    """The stored text of a state after a delta (both stored texts).

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE, the state would exceed :data:`MAX_STATE_BYTES`.
    """
    new = canonical_json(apply_delta(json.loads(old), json.loads(delta)))
    size = utf8_len(new)
    if size > MAX_STATE_BYTES:
        raise _bad(
            field_name,
            f"the state would be {size} bytes after this delta, more than the limit of {MAX_STATE_BYTES}; "
            "remove keys (set them to null) or keep large values elsewhere",
            Reason.FIELD_TOO_LARGE,
        )
    return new


def state_payload(delta: StateDelta) -> str:
    """The payload of the ``state`` event recording one applied delta (sorted keys, as canonical JSON)."""
    return '{"delta":' + delta.delta + ',"scope":' + json.dumps(delta.scope, ensure_ascii=False) + "}"


# ---------------------------------------------------------------- labels


def check_labels(labels: Mapping[str, str], field_name: str) -> dict[str, str]:
    """Labels as given (to set, or to filter by): valid keys and values, at most :data:`MAX_LABELS`.

    Raises:
        InvalidRequestError: naming the field and the key.
    """
    if len(labels) > MAX_LABELS:
        raise _bad(field_name, f"at most {MAX_LABELS} labels (got {len(labels)})", Reason.FIELD_TOO_LARGE)
    for key, value in labels.items():
        check_label_key(key, field_name)
        where = f"{field_name}[{key!r}]"
        if utf8_len(value) > MAX_LABEL_VALUE_BYTES:
            raise _bad(where, f"a label value is at most {MAX_LABEL_VALUE_BYTES} bytes", Reason.FIELD_TOO_LARGE)
        if has_control(value):
            raise _bad(where, "a label value has no control characters")
    return dict(labels)


def check_label_key(key: str, field_name: str) -> str:
    """A label key: 1-64 characters of ``A-Z a-z 0-9 . _ : / -``.

    Raises:
        InvalidRequestError: naming the field and the key.
    """
    if _LABEL_KEY.fullmatch(key) is None:
        shown = key if len(key) <= 80 else key[:80] + "..."
        raise _bad(
            f"{field_name}[{shown!r}]",
            f"a label key is 1 to {MAX_LABEL_KEY_BYTES} characters of A-Z a-z 0-9 . _ : / -",
        )
    return key


def labels_after(old: Mapping[str, str], set_labels: Mapping[str, str], remove: Iterable[str]) -> dict[str, str]:
    """A session's labels after an UpdateSession: ``set_labels`` set (a value replaces), ``remove`` removed.

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE, the session would have more than :data:`MAX_LABELS`.
    """
    new = {**old, **set_labels}
    for key in remove:
        new.pop(key, None)
    if len(new) > MAX_LABELS:
        raise _bad(
            "set_labels",
            f"the session would have {len(new)} labels, more than the limit of {MAX_LABELS}",
            Reason.FIELD_TOO_LARGE,
        )
    return new


def labels_json(labels: Mapping[str, str]) -> str:
    """Labels as stored (``sessions.labels``): a JSON object with sorted keys."""
    return canonical_json(dict(labels))


def parse_labels(text: str) -> dict[str, str]:
    """Stored labels → a dict."""
    value = json.loads(text or EMPTY)
    return {str(k): str(v) for k, v in value.items()}


# ---------------------------------------------------------------- session_settings events


def settings_payload(
    *,
    labels: Mapping[str, str] | None = None,
    tool_policy: str | None = None,
    forked_from: str = "",
    forked_at_position: int = 0,
) -> str:
    """The payload of a ``session_settings`` event: the values after the change (only those that changed)."""
    out: dict[str, object] = {}
    if labels is not None:
        out["labels"] = dict(labels)
    if tool_policy is not None:
        out["tool_policy"] = json.loads(tool_policy)
    if forked_from:
        out["forked_from"] = forked_from
        out["forked_at_position"] = forked_at_position
    return canonical_json(out)


def _problem_of_settings(payload: Mapping[str, Any]) -> str | None:
    unknown = set(payload) - {"labels", "tool_policy", "forked_from", "forked_at_position"}
    if unknown:
        return f"a session_settings payload has unknown keys {sorted(unknown)}"
    labels = payload.get("labels", {})
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        return "payload.labels must be an object of strings"
    try:
        check_labels(labels, "payload.labels")
    except InvalidRequestError as exc:
        return exc.message
    policy = payload.get("tool_policy", {})
    if not isinstance(policy, dict) or set(policy) - {"repair", *_POLICY_FLAGS}:
        return "payload.tool_policy must be an object with repair, allow_orphan_results, allow_unparsed_calls"
    if "repair" in policy and policy["repair"] not in REPAIR_MODES:
        return f"payload.tool_policy.repair must be one of {list(REPAIR_MODES)}"
    if any(not isinstance(policy.get(k, False), bool) for k in _POLICY_FLAGS):
        return "payload.tool_policy flags must be true or false"
    forked_from = payload.get("forked_from", "")
    at = payload.get("forked_at_position", 0)
    if (
        not isinstance(forked_from, str)
        or not isinstance(at, int)
        or isinstance(at, bool)
        or not 0 <= at <= MAX_POSITION
    ):
        return "payload.forked_from must be a session id and payload.forked_at_position a position"
    if forked_from:
        try:
            check_session_id(forked_from)
        except InvalidRequestError as exc:
            return f"payload.forked_from: {exc.message}"
    return None


def _problem_of_state(payload: Mapping[str, Any]) -> str | None:
    if set(payload) != {"delta", "scope"}:
        return 'a state payload has exactly the keys "delta" and "scope"'
    scope = payload["scope"]
    if not isinstance(scope, str) or utf8_len(scope) > MAX_SCOPE_BYTES or has_control(scope):
        return f"payload.scope must be a scope name of at most {MAX_SCOPE_BYTES} bytes (or empty)"
    if not isinstance(payload["delta"], dict):
        return "payload.delta must be a JSON object"
    return None


def check_event_payload(event_type: str, payload: Mapping[str, Any]) -> str | None:
    """What is wrong with an imported ``state`` or ``session_settings`` payload (None: nothing)."""
    if event_type == "state":
        return _problem_of_state(payload)
    if event_type == "session_settings":
        return _problem_of_settings(payload)
    return None


@dataclass(slots=True)
class SettingsFold:
    """A session's state, labels, tool policy and lineage, rebuilt from its events."""

    state: str = EMPTY
    labels: dict[str, str] = field(default_factory=dict)
    tool_policy: str = EMPTY
    forked_from: str = ""
    forked_at_position: int = 0


def fold_settings(session_id: str, events: Iterable[tuple[str, str]]) -> SettingsFold:
    """Fold a session's ``state`` and ``session_settings`` events ``(type, payload text)``, in event order.

    The session's own deltas (empty scope) apply in order; shared scopes' deltas are skipped (see
    the module docstring). A settings event replaces what it holds.

    Raises:
        InvalidRequestError: reason INVALID_IMPORT, the state would exceed :data:`MAX_STATE_BYTES`.
    """
    fold = SettingsFold()
    state: dict[str, Any] = {}
    for event_type, text in events:
        payload = json.loads(text)
        if event_type == "state":
            if payload.get("scope", ""):
                continue
            state = apply_delta(state, payload.get("delta", {}))
        elif event_type == "session_settings":
            if "labels" in payload:
                fold.labels = {str(k): str(v) for k, v in payload["labels"].items()}
            if "tool_policy" in payload:
                fold.tool_policy = policy_json(policy_from_json(json.dumps(payload["tool_policy"])))
            if "forked_from" in payload:
                fold.forked_from = str(payload["forked_from"])
                fold.forked_at_position = int(payload.get("forked_at_position", 0))
    fold.state = canonical_json(state)
    if utf8_len(fold.state) > MAX_STATE_BYTES:
        raise InvalidRequestError(
            f"import of {session_id!r}: its state would be larger than {MAX_STATE_BYTES} bytes",
            reason=Reason.INVALID_IMPORT,
            session_id=session_id,
        )
    return fold
