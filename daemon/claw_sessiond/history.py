"""The history projection and the open calls of a history (pure: no SQL, no gRPC; the repair planner is ``repair.py``).

The event log is append-only, so a repair cannot physically insert a message
in the middle. Instead the *projection* defines conversation order:
non-tool messages in position order, each assistant message followed by the
tool messages answering its calls (in position order). A synthetic result
written by a repair therefore lands right after its assistant message and
after the results it already had, even if a user message was stored later
(SPEC §3). The same rule keeps live results next to their call, which is what
model providers require.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .model import Message

__all__ = ["OpenCall", "open_calls", "project", "project_window"]


@dataclass(frozen=True, slots=True)
class OpenCall:
    """A tool call with no result: ``run_id`` is the run that appended it ("" if none)."""

    tool_call_id: str
    assistant_position: int
    call_index: int
    run_id: str = ""


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
        if msg.role == "tool" and msg.tool_call_id in owner_of:
            results.setdefault(owner_of[msg.tool_call_id], []).append(msg)
    if not results:
        return ordered
    for msg in ordered:
        if msg.role == "tool" and msg.tool_call_id in owner_of:
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
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    return [
        OpenCall(call.id, msg.position, index)
        for msg in messages
        if msg.role == "assistant"
        for index, call in enumerate(msg.tool_calls)
        if call.id not in answered
    ]
