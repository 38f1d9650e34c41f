"""The tool-call policy's property: random policies and operation sequences, and the invariants they keep.

Hypothesis draws appends of calls (pending or not, JSON or free-text arguments, with or without an id),
results (real or cancelled, for known, answered, repaired or unknown calls), each under a random tool
policy (repair mode, orphans, unparsed calls), and Loads with and without repair. After every step the
projection's invariants must hold (checked against what the caller saw acknowledged, not against the
daemon's code):

* every visible tool result follows, in the projection, the assistant message that made its call, or is
  flagged ``orphan``; every result that superseded a repair names it and the repair is not visible;
* no pending call is ever repaired (no repair event for it, no repair reported);
* a call whose repair mode is ``drop`` is never visible without its result;
  after a repairing Load, every visible unanswered call is pending or in mode ``off``;
* the log never loses an event: the export holds every acknowledged message at its acknowledged position,
  every repair a Load reported, and nothing else; a refused request and a look-only Load change nothing;
* ``message_count`` is the number of entries Load returned; a second repairing Load repairs nothing.

The same sequences run two ways (:class:`Side`): on a ``Storage`` in-process, both backends, with many
examples (tests/storage/test_policy_property.py), and through a real daemon's client with a few
(tests/e2e/test_policy_property.py). A drawn message is the client's ``Message``; in-process it becomes
what the daemon's Append would hand its storage (the client's request encoding, then the daemon's).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from hypothesis import strategies as st

from claw_sessiond import errors as daemon_errors
from claw_sessiond.rpc.convert import tool_policy_of
from claw_sessiond.storage import Storage
from claw_sessiond_client import InvalidRequestError, Message, SessionClient, ToolCall, ToolCallStateError, ToolPolicy
from claw_sessiond_client._requests import message_pb, tool_policy_pb
from tests.helpers.in_process import from_wire
from tests.storage._support import export_lines, history, job

#: Call ids as drawn: "new" becomes a fresh id, "dup" one already used, "" stays id-less.
CALL_IDS = ("new", "new", "new", "dup", "")
#: Result targets as drawn: "recent<k>" is the k-th most recently made call, "unknown" none.
RESULT_IDS = ("recent0", "recent0", "recent1", "recent2", "unknown")
#: Refusals the policy rules may give, by reason name (anything else, INTERNAL above all, fails the test).
EXPECTED_REFUSALS = {
    "UNKNOWN_TOOL_CALL",
    "TOOL_CALL_ALREADY_ANSWERED",
    "DUPLICATE_TOOL_CALL_ID",
    "ARGUMENTS_NOT_JSON",
    "INVALID_MESSAGE",
}
WORKDIR = "/tmp"

_policy = st.builds(ToolPolicy, st.sampled_from((None, "synthesize", "drop", "off")), st.booleans(), st.booleans())
policies = st.one_of(st.none(), _policy, _policy)
calls = st.builds(
    lambda cid, pending, args: ToolCall(cid, "tool", args, pending=pending),
    st.sampled_from(CALL_IDS),
    st.booleans(),
    st.sampled_from(('{"n": 1}', '{"n": 1}', "[ 1 , 2 ]", "free text")),
)
assistant = st.builds(
    lambda cs, text: Message.assistant(text, cs),
    st.lists(calls, min_size=1, max_size=2),
    st.sampled_from(("", "thinking")),
)
result = st.builds(
    lambda cid, cancelled: Message.tool(cid, "r", cancelled=cancelled),
    st.sampled_from(RESULT_IDS),
    st.booleans(),
)
_append = st.tuples(
    st.just("append"),
    st.lists(st.one_of(assistant, result, st.just(Message.user("u"))), min_size=1, max_size=3),
    policies,
)
_calls = st.tuples(st.just("append"), st.lists(assistant, min_size=1, max_size=2), policies)
_answer = st.tuples(st.just("answer"), result, policies)  # one result alone: often for a repaired or pending call
_load = st.tuples(st.just("load"), st.booleans())
#: Branches repeated to weigh them: calls, then repairing Loads, then late results are what the rules are about.
operation = st.one_of(_append, _calls, _calls, _answer, _answer, _load, st.just(("load", True)))


@dataclass
class Seen:
    """What the client was told: acknowledged messages by position, repairs, call flags."""

    messages: dict[int, Message] = field(default_factory=dict)
    repairs: dict[int, str] = field(default_factory=dict)  # position -> call id
    pending: set[str] = field(default_factory=set)
    made: list[str] = field(default_factory=list)  # call ids drawn so far, in order
    fresh: int = 0
    mode: dict[str, str] = field(default_factory=dict)  # call id -> its append's repair mode ("" none)
    counts: dict[str, int] = field(default_factory=lambda: {"ops": 0, "refused": 0, "superseded": 0, "dropped": 0})


@dataclass
class Loaded:
    """What a Load told the caller: the projection, the repairs it wrote, the session's message count."""

    messages: list[Any]  # the client's or the daemon's Message: the same field names
    repairs: list[Any]  # each with tool_call_id and position
    message_count: int


class Refused(Exception):
    """An append was refused; ``reason`` is the reason's name."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _reason_name(reason: Any) -> str:
    return str(getattr(reason, "name", reason))


class Side(Protocol):
    """Where the operations go: a storage in-process, or a daemon through its client."""

    async def append(self, sid: str, batch: list[Message], policy: ToolPolicy | None) -> tuple[int, int]:
        """The first and last positions stored; raises :class:`Refused`."""
        ...

    async def load(self, sid: str, repair: bool) -> Loaded: ...

    async def export_events(self, sid: str) -> list[dict[str, Any]]:
        """The session's exported events (every line after the header), [] for a session not stored."""
        ...


class ClientSide:
    """Through a real daemon, with its sync client."""

    def __init__(self, client: SessionClient) -> None:
        self.client = client

    async def append(self, sid: str, batch: list[Message], policy: ToolPolicy | None) -> tuple[int, int]:
        try:
            stored = self.client.append(sid, batch, tool_policy=policy)
        except (ToolCallStateError, InvalidRequestError) as exc:
            raise Refused(_reason_name(exc.reason)) from exc
        return stored.first_position, stored.last_position

    async def load(self, sid: str, repair: bool) -> Loaded:
        loaded = self.client.load(sid, WORKDIR, no_repair=not repair)
        return Loaded(loaded.messages, loaded.repairs, loaded.session.message_count)

    async def export_events(self, sid: str) -> list[dict[str, Any]]:
        stored = self.client.load(sid, WORKDIR, no_repair=True).session.stored
        lines = list(self.client.export(sid)) if stored else []
        return [json.loads(line) for line in lines[1:]]


class StorageSide:
    """On a ``Storage`` in-process: each append as the daemon's Append builds it from the client's request."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def append(self, sid: str, batch: list[Message], policy: ToolPolicy | None) -> tuple[int, int]:
        try:
            wire_policy = tool_policy_pb(policy)
            stored = await self.storage.append(
                job(
                    sid,
                    *from_wire(message_pb(m) for m in batch),
                    tool_policy=tool_policy_of(wire_policy) if wire_policy is not None else None,
                )
            )
        except (InvalidRequestError, daemon_errors.InvalidRequestError, daemon_errors.ToolCallStateError) as exc:
            raise Refused(_reason_name(exc.reason)) from exc
        return stored.first_position, stored.last_position

    async def load(self, sid: str, repair: bool) -> Loaded:
        loaded = await self.storage.load(sid, WORKDIR, "trace", repair=repair)
        return Loaded(await history(self.storage, loaded), loaded.repairs, loaded.session.message_count)

    async def export_events(self, sid: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (await export_lines(self.storage, sid))[1:]]


def check_log(events: list[dict[str, Any]], seen: Seen) -> None:
    history = [e for e in events if e["position"] is not None]
    assert [e["position"] for e in history] == list(range(1, len(history) + 1)), "positions are not gapless"
    for e in history:
        position, payload = e["position"], e["payload"]
        if e["type"] == "repair":
            assert seen.repairs.get(position) == payload["tool_call_id"], f"unreported repair at {position}"
            assert payload["tool_call_id"] not in seen.pending, "a pending call was repaired"
        else:
            sent = seen.messages.get(position)
            assert sent is not None, f"an event at {position} nobody appended"
            assert (payload["role"], payload.get("content", ""), payload.get("tool_call_id", "")) == (
                sent.role,
                sent.content,
                sent.tool_call_id,
            )
    stored = {e["position"] for e in history}
    assert set(seen.messages) | set(seen.repairs) == stored, "an acknowledged message or a repair was lost"


def check_projection(loaded: Loaded, seen: Seen, *, repaired: bool) -> None:
    messages = loaded.messages
    assert loaded.message_count == len(messages)
    answered: set[str] = set()
    owner: dict[str, int] = {}
    visible_positions = {m.position for m in messages}
    block: set[str] = set()
    for m in messages:
        if m.role == "tool":
            if m.orphan:
                continue
            assert m.tool_call_id in block, f"result {m.tool_call_id} not right after its call's assistant"
            answered.add(m.tool_call_id)
            if m.supersedes:
                assert m.supersedes in seen.repairs and m.supersedes not in visible_positions
            continue
        block = {c.id for c in m.tool_calls if c.id}
        for c in m.tool_calls:
            if c.id:  # an id-less call is never open: never paired, never repaired
                owner[c.id] = m.position
    for cid in owner:
        if cid in answered:
            continue
        assert seen.mode.get(cid) != "drop" or cid in seen.pending, f"dropped call {cid} is visible without a result"
        if repaired:
            assert cid in seen.pending or seen.mode.get(cid) == "off", f"call {cid} left open by a repairing Load"
    assert not {r.tool_call_id for r in loaded.repairs} & seen.pending, "a pending call was repaired"


def resolve(m: Message, seen: Seen) -> Message:
    """A drawn message with its placeholder ids made real (see :data:`CALL_IDS`, :data:`RESULT_IDS`)."""
    if m.role == "tool":
        k = m.tool_call_id.removeprefix("recent")
        made = seen.made
        target = made[-1 - int(k)] if k.isdigit() and len(made) > int(k) else "unknown"
        return Message.tool(target, m.content, cancelled=m.cancelled)
    out = []
    for c in m.tool_calls:
        if c.id == "new":
            seen.fresh += 1
            cid = f"k{seen.fresh}"
        elif c.id == "dup":
            cid = seen.made[0] if seen.made else "k0"
        else:
            cid = c.id
        out.append(ToolCall(cid, c.name, c.arguments, pending=c.pending))
    return Message(m.role, m.content, tuple(out))


async def apply(side: Side, sid: str, seen: Seen, op: tuple[Any, ...], before: list[Any]) -> list[Any]:
    """Send one drawn operation; ``before`` is the log as exported before it, the return value the log after it.

    Only this sequence writes ``sid``, so the log after one operation is the log before the next: each step
    exports once, and every step is still checked against a fresh export.
    """
    kind = op[0]
    seen.counts["ops"] += 1
    if kind == "load":
        loaded = await side.load(sid, op[1])
        after = await side.export_events(sid)
        if not op[1]:
            assert loaded.repairs == [] and after == before, "a look-only Load wrote"
        for r in loaded.repairs:
            seen.repairs[r.position] = r.tool_call_id
        check_projection(loaded, seen, repaired=op[1])
        if op[1]:
            again = await side.load(sid, True)
            assert again.repairs == [], "a second Load repaired again"
            assert await side.export_events(sid) == after, "a second Load wrote"
        return after
    batch = [resolve(m, seen) for m in (op[1] if kind == "append" else [op[1]])]
    policy: ToolPolicy | None = op[2]
    try:
        first, last = await side.append(sid, batch, policy)
    except Refused as exc:
        assert exc.reason in EXPECTED_REFUSALS, exc
        after = await side.export_events(sid)
        assert after == before, "a refused append wrote"
        seen.counts["refused"] += 1
        return after
    seen.made.extend(c.id for m in batch for c in m.tool_calls if c.id and c.id not in seen.made)
    mode = (policy.repair or "") if policy is not None else ""
    for position, m in zip(range(first, last + 1), batch, strict=True):
        seen.messages[position] = m
        for c in m.tool_calls:
            if c.pending and c.id:
                seen.pending.add(c.id)
            if c.id:
                seen.mode[c.id] = mode
                seen.counts["dropped"] += mode == "drop"
    after = await side.export_events(sid)
    seen.counts["superseded"] += sum(1 for e in after[len(before) :] if e["payload"].get("supersedes"))
    return after


async def run_sequence(side: Side, ops: list[tuple[Any, ...]]) -> Seen:
    """Every operation on a new session, checked after each step; then the end state, repaired."""
    sid = f"pp-{uuid.uuid4().hex[:12]}"
    seen = Seen()
    log: list[Any] = []  # a new session: nothing stored
    for op in ops:
        log = await apply(side, sid, seen, op, log)
        check_log(log, seen)
    check_log(await apply(side, sid, seen, ("load", True), log), seen)
    return seen


#: Every rule at least once, whatever hypothesis draws (an ``@example`` of both tests).
EVERY_RULE: list[tuple[Any, ...]] = [
    (
        "append",
        [Message.assistant("", [ToolCall("new", "t", "{}"), ToolCall("new", "t", "{}", pending=True)])],
        None,
    ),
    ("append", [Message.assistant("", [ToolCall("new", "t", "{}")])], ToolPolicy("drop")),
    (
        "append",
        [Message.assistant("x", [ToolCall("new", "t", "free"), ToolCall("", "t")])],
        ToolPolicy("off", allow_unparsed_calls=True),
    ),
    ("load", False),
    ("load", True),
    ("answer", Message.tool("recent3", "late"), None),  # supersedes the repair of the first call
    ("answer", Message.tool("recent2", "approved"), None),  # answers the pending call
    ("answer", Message.tool("unknown", "stray"), ToolPolicy(allow_orphan_results=True)),
    ("answer", Message.tool("recent1", "late"), None),  # the dropped call, answered after all
]
