"""The history projection and the open calls of a history (pure: no SQL, no gRPC; the repair planner is ``repair.py``).

The event log is append-only, so a repair cannot physically insert a message
in the middle. Instead the *projection* defines conversation order:
non-tool messages in position order, each assistant message followed by the
tool messages answering its calls (in position order). A synthetic result
written by a repair therefore lands right after its assistant message and
after the results it already had, even if a user message was stored later
(SPEC §3). The same rule keeps live results next to their call, which is what
model providers require.

A tool result flagged ``orphan`` (its call was unknown; stored because the
tool policy allowed it) is never paired: it keeps its position order. Under
repair mode ``drop`` a Load hides open calls from the reply
(:func:`drop_calls`); an entry left with no content, no calls and no item
is hidden whole. A synthetic repair superseded by a real result is not read
at all (the backend skips hidden entries).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .events import edit_removed, erased_count
from .model import Message

__all__ = [
    "IndexedCall",
    "OpenCall",
    "drop_calls",
    "forked_calls",
    "hidden_by_drop",
    "moves_bound",
    "open_calls",
    "project",
    "project_window",
]


@dataclass(frozen=True, slots=True)
class OpenCall:
    """A tool call with no result: ``run_id`` is the run that appended it ("" if none).

    ``pending``: it awaits something outside the run (never repaired or dropped);
    ``repair_mode``: the mode its append set ("" : the session's).
    """

    tool_call_id: str
    assistant_position: int
    call_index: int
    run_id: str = ""
    pending: bool = False
    repair_mode: str = ""


@dataclass(frozen=True, slots=True)
class IndexedCall:
    """A row of the tool-call index: the call, where it was made, and where its result (or repair) is."""

    call_id: str
    assistant_position: int
    call_index: int
    result_position: int | None = None
    pending: bool = False
    repair_mode: str = ""
    synthetic_position: int | None = None


def forked_calls(calls: Iterable[IndexedCall], new_of: Mapping[int, int]) -> list[IndexedCall]:
    """The index rows a fork keeps: the calls made by a copied entry, at the copied positions.

    ``new_of`` maps a source position to its position in the fork (the copied entries only). A
    result or repair beyond the copied range is no position of the fork: the call is open there.
    """
    return [
        dataclasses.replace(
            c,
            assistant_position=new_of[c.assistant_position],
            result_position=None if c.result_position is None else new_of.get(c.result_position),
            synthetic_position=None if c.synthetic_position is None else new_of.get(c.synthetic_position),
        )
        for c in calls
        if c.assistant_position in new_of
    ]


def project(messages: Iterable[Message]) -> list[Message]:
    """Order the visible messages (given in position order) as a conversation.

    Tool messages whose call is not among the given assistant messages keep
    their position order (they cannot occur through the daemon's own writes).
    """
    ordered = list(messages)
    owner_of: dict[str, int] = {}
    for msg in ordered:
        if msg.role == "assistant":
            for call in msg.tool_calls:
                owner_of[call.id] = msg.position
    results: dict[int, list[Message]] = {}
    out: list[Message] = []
    for msg in ordered:
        if msg.role == "tool" and not msg.orphan and msg.tool_call_id in owner_of:
            results.setdefault(owner_of[msg.tool_call_id], []).append(msg)
    if not results:
        return ordered
    for msg in ordered:
        if msg.role == "tool" and not msg.orphan and msg.tool_call_id in owner_of:
            continue
        out.append(msg)
        if msg.role == "assistant":
            out.extend(results.get(msg.position, ()))
    return out


def project_window(messages: Iterable[Message], lead: Sequence[int]) -> list[Message]:
    """Order a window of the visible history (given in position order) as the full projection orders it.

    ``lead``: positions of the window's tool results whose assistant message lies before the
    window, in the order the full history shows them (by assistant position, then position).
    In the full projection each sits right after its assistant message, so before every
    other entry of the window: they come first, then the rest as :func:`project` orders it.
    The window's order is thus the full Load's order restricted to the window.
    """
    ordered = list(messages)
    if not lead:
        return project(ordered)
    by_position = {m.position: m for m in ordered}
    first = [by_position[p] for p in lead if p in by_position]
    leading = set(lead)
    return first + project(m for m in ordered if m.position not in leading)


def open_calls(messages: Sequence[Message]) -> list[OpenCall]:
    """Tool calls in ``messages`` without a tool message answering them, in call order."""
    answered = {m.tool_call_id for m in messages if m.role == "tool" and not m.orphan}
    return [
        OpenCall(call.id, msg.position, index, "", call.pending, call.repair_mode)
        for msg in messages
        if msg.role == "assistant"
        for index, call in enumerate(msg.tool_calls)
        if call.id and call.id not in answered
    ]


def drop_calls(messages: Iterable[Message], dropped: Collection[str]) -> list[Message]:
    """The messages with the ``dropped`` open calls taken out of their assistant messages.

    An entry left with no content, no calls and no item is left out whole
    (repair mode ``drop``: the log keeps it; only the reply hides it).
    """
    if not dropped:
        return list(messages)
    out: list[Message] = []
    for msg in messages:
        if msg.role == "assistant" and any(c.id in dropped for c in msg.tool_calls):
            kept = tuple(c for c in msg.tool_calls if c.id not in dropped)
            if not kept and not msg.content and not msg.item:
                continue
            msg = dataclasses.replace(msg, tool_calls=kept, encoded=None)  # the stored form shows them all
        out.append(msg)
    return out


def hidden_by_drop(entry: Message, dropped: Collection[str]) -> bool:
    """True if dropping the ``dropped`` calls leaves ``entry`` with nothing to show (it is hidden whole)."""
    return (
        entry.role == "assistant"
        and not entry.content
        and not entry.item
        and bool(entry.tool_calls)
        and all(c.id in dropped for c in entry.tool_calls)
    )


def moves_bound(event_type: str, payload: str, bound: int, clears: bool) -> bool:
    """True if an event stored after a stream's bound changes what the stream reads up to it.

    An ``edit`` that removed an entry at or before the bound changes a history stream
    (``clears``: the projection moved under it); a ``clear`` that erased the log changes an
    export (not ``clears``: it still has events to send). Anything else written since does not.
    """
    if event_type == "edit":
        removed = edit_removed(payload)
        return clears and bool(removed) and removed[0] <= bound
    return not clears and event_type == "clear" and erased_count(payload) is not None
