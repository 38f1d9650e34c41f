"""The tool-call policy a caller chooses (pure): its domain type, its stored spelling, and how policies combine.

A policy is set per session (``sessions.tool_policy``, written by
CreateSession / UpdateSession) and per append (``AppendRequest.tool_policy``).
The append's fields win where set; a field set by neither has today's
behaviour: repair ``synthesize``, orphan results and unparsed calls refused.

- ``repair``: what a Load does with an open call that no live run owns and
  that is not pending: ``synthesize`` (a synthetic "interrupted" result is
  written), ``drop`` (the call is hidden from the reply, the log keeps it,
  nothing is written) or ``off`` (left open and visible). Stored per call
  (``tool_calls.repair_mode`` and the call's payload) when the append set it;
  a call stored without a mode follows the session's policy at Load time.
- ``allow_orphan_results``: a tool result whose call is unknown is stored,
  flagged ``orphan``, never paired.
- ``allow_unparsed_calls``: a call whose arguments are not JSON is stored as
  given (flagged ``arguments_not_json``); a call without an id is stored,
  with no entry in the tool-call index: never paired, never repaired.

The stored spelling (the ``sessions.tool_policy`` column, and the
``session_settings`` event) is a JSON object with only the keys that are set:
``{"repair": "synthesize"|"drop"|"off", "allow_orphan_results": true,
"allow_unparsed_calls": true}``. Must never: do I/O, speak SQL, or import grpc.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "DEFAULT_REPAIR",
    "REPAIR_MODES",
    "CallFate",
    "RepairMode",
    "ToolPolicy",
    "call_fate",
    "effective_repair",
    "merge_policies",
    "policy_from_json",
    "policy_json",
]

RepairMode = Literal["synthesize", "drop", "off"]
#: Every repair mode, in the proto's order.
REPAIR_MODES: Final[tuple[str, ...]] = ("synthesize", "drop", "off")
#: The repair mode of a call when neither its append nor its session set one.
DEFAULT_REPAIR: Final = "synthesize"

#: What a Load does with one open call: ``in_flight`` (a live run owns it, or it is pending:
#: listed, left alone), ``repair`` (a synthetic result is written), ``drop`` (hidden from
#: the reply), ``open`` (left open and visible).
CallFate = Literal["in_flight", "repair", "drop", "open"]


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """Tool-call rules; ``repair`` "" means not set (the session's, else :data:`DEFAULT_REPAIR`)."""

    repair: str = ""
    allow_orphan_results: bool = False
    allow_unparsed_calls: bool = False

    @property
    def empty(self) -> bool:
        """True if no field is set (the policy changes nothing)."""
        return not (self.repair or self.allow_orphan_results or self.allow_unparsed_calls)


def merge_policies(session: ToolPolicy, append: ToolPolicy | None) -> ToolPolicy:
    """The policy an append runs under: the append's fields where set, else the session's.

    A flag is "set" when true (proto3 booleans have no presence): an append can
    allow what its session does not, never forbid what its session allows.
    """
    if append is None:
        return session
    return ToolPolicy(
        append.repair or session.repair,
        append.allow_orphan_results or session.allow_orphan_results,
        append.allow_unparsed_calls or session.allow_unparsed_calls,
    )


def effective_repair(call_mode: str, session: ToolPolicy) -> str:
    """The repair mode of one open call: its own (set by its append), else the session's, else the default."""
    return call_mode or session.repair or DEFAULT_REPAIR


def call_fate(*, live: bool, pending: bool, call_mode: str, session: ToolPolicy) -> CallFate:
    """What a Load does with one open call (see :data:`CallFate`).

    A call owned by a live run, and a pending call (whether or not its owner
    lives), is in flight: never repaired, never dropped.
    """
    if live or pending:
        return "in_flight"
    mode = effective_repair(call_mode, session)
    if mode == "drop":
        return "drop"
    if mode == "off":
        return "open"
    return "repair"


@functools.lru_cache(maxsize=64)
def policy_json(policy: ToolPolicy) -> str:
    """The stored spelling of a policy (only the keys that are set; ``{}`` for none); kept, as the parse is
    (:func:`policy_from_json`): an append with a policy (every one of the adapters') spells it for its fingerprint."""
    out: dict[str, object] = {}
    if policy.repair:
        out["repair"] = policy.repair
    if policy.allow_orphan_results:
        out["allow_orphan_results"] = True
    if policy.allow_unparsed_calls:
        out["allow_unparsed_calls"] = True
    return json.dumps(out, separators=(",", ":"))


@functools.lru_cache(maxsize=64)
def policy_from_json(text: str | None) -> ToolPolicy:
    """Read a stored policy; what is missing, or not understood, counts as not set.

    A stored value is the daemon's own writing; lenient reading keeps a Load
    working on a value another version wrote (an unknown mode is today's default).
    Its answers are kept (a policy is frozen; a daemon's sessions hold a handful
    of texts): each Load of a session with a policy reads it.
    """
    if not text:
        return ToolPolicy()
    try:
        data = json.loads(text)
    except ValueError:
        return ToolPolicy()
    if not isinstance(data, dict):
        return ToolPolicy()
    repair = data.get("repair", "")
    return ToolPolicy(
        repair if repair in REPAIR_MODES else "",
        data.get("allow_orphan_results") is True,
        data.get("allow_unparsed_calls") is True,
    )
