"""A session as ``show`` and ``repair`` print it: read through Load, as text or as a ``--json`` document.

:func:`read_transcript` takes the history from the daemon's Load reply (its
projection: conversation order, each tool result after its call), with
``repair`` or without (``no_repair``: looking writes nothing), plus the
calls a live run owns. :func:`audit_events` adds the permission denials and
errors, which only Export carries. :func:`render_transcript` is the text for
people: every stored string goes to rich as a ``Text`` span (never markup)
through :func:`claw_sessiond.cli.termsafe.visible`, folded to the terminal's
width; :func:`transcript_json` is the ``--json`` document.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import terminal
from .connect import stored_summary
from .offline import OPEN_CALL_NOTE
from .output import call_json, cost, counted, rfc3339, usage_json
from .termsafe import visible

if TYPE_CHECKING:
    from claw_sessiond_client import InFlightCall, Message, Session, SessionClient


__all__ = [
    "Transcript",
    "audit_events",
    "labels_text",
    "message_json",
    "read_transcript",
    "render_transcript",
    "stored_workdir",
    "transcript_json",
]


def message_json(m: Message) -> dict[str, Any]:
    """A message in ``show``'s ``--json`` document."""
    out: dict[str, Any] = {"position": m.position, "role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [call_json(c) for c in m.tool_calls]
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    if m.name:
        out["name"] = m.name
    if m.synthetic_reason:
        out["synthetic"] = m.synthetic_reason
    if m.format:
        out["format"] = m.format
        out["item_b64"] = base64.b64encode(m.item).decode()
    if m.client_id:
        out["client_id"] = m.client_id
    if m.metadata:
        out["metadata"] = m.metadata
    if m.usage is not None:
        out["usage"] = dataclasses.asdict(m.usage)
    for flag in ("cancelled", "orphan", "supersedes"):
        if getattr(m, flag):
            out[flag] = getattr(m, flag)
    out["created_at"] = rfc3339(m.created_at)
    out["trace_id"] = m.trace_id
    return out


@dataclass
class Transcript:
    """What ``show`` (and ``repair``) print: metadata, the history shown, and the state of its tool calls."""

    session: Session
    messages: list[Message]
    #: Unanswered calls, in call order (of the whole history, not only the messages shown).
    open_calls: list[str]
    #: Those a live run owns: tool call id → its InFlightCall.
    running: dict[str, InFlightCall]
    repaired_now: list[str] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    #: Messages in the history before the ones shown (``--tail``/``--since``).
    hidden: int = 0

    @property
    def interrupted(self) -> list[str]:
        return [c for c in self.open_calls if c not in self.running]

    #: Set by the offline view (daemon down): nothing repairs open calls now.
    offline: bool = False


def _open_calls(messages: list[Message]) -> list[str]:
    """The calls in the loaded history that no tool message answers, in call order.

    The history is the daemon's projection (the Load reply, in conversation order); the reply names the
    calls a live run owns (``in_flight``) but not the others, so the unanswered ones are read off it here.
    """
    answered = {m.tool_call_id for m in messages if m.role == "tool" and not m.orphan}
    return [c.id for m in messages if m.role == "assistant" for c in m.tool_calls if c.id and c.id not in answered]


def audit_events(client: SessionClient, session_id: str) -> list[dict[str, Any]]:
    """Permission denials and errors, from Export (only their lines are parsed)."""
    out = []
    for line in client.export(session_id):
        if '"permission_denial"' not in line and '"error"' not in line:
            continue
        e = json.loads(line)
        if e.get("type") in ("permission_denial", "error"):
            out.append({"type": e["type"], "ts": e["ts"], "payload": e["payload"]})
    return out


def read_transcript(client: SessionClient, session_id: str, workdir: str, *, repair: bool) -> Transcript | None:
    """Load a session (``repair``: as a resuming agent does; else only look); None if it is not stored."""
    result = client.load(session_id, workdir=workdir, repair=repair)
    if not result.session.stored:
        return None
    return Transcript(
        result.session,
        result.messages,
        _open_calls(result.messages),
        {c.tool_call_id: c for c in result.in_flight},
        [r.tool_call_id for r in result.repairs],
        offline=bool(getattr(client, "offline", False)),
    )


def stored_workdir(client: SessionClient, session_id: str) -> str | None:
    """The session's stored workdir ("" if none), or None if it is not stored (Load with it: looking moves nothing)."""
    summary = stored_summary(client, session_id)
    if summary is not None:
        return summary.workdir
    client.load(session_id, "/", repair=False)  # an invalid id gets the daemon's own message (nothing is written)
    return None


def transcript_json(t: Transcript) -> dict[str, Any]:
    """``show``'s ``--json`` document (without its ``"format"`` key)."""
    s = t.session
    return {
        "session": {
            "id": s.id,
            "workdir": s.workdir,
            "created_at": rfc3339(s.created_at),
            "updated_at": rfc3339(s.updated_at),
            "messages": s.message_count,
            "last_position": s.last_position,
            "usage": usage_json(s.usage),
            "state": s.state,
            "labels": dict(sorted(s.labels.items())),
            "forked_from": s.forked_from,
            "forked_at_position": s.forked_at_position,
        },
        "messages": [message_json(m) for m in t.messages],
        "messages_not_shown": t.hidden,
        "open_calls": t.open_calls,
        "running": [
            {"tool_call_id": c.tool_call_id, "run_id": c.run_id, "owner_pid": c.owner_pid} for c in t.running.values()
        ],
        "interrupted": t.interrupted,
        "repaired_now": t.repaired_now,
        "audit_events": t.audit,
    }


def labels_text(labels: dict[str, str]) -> str:
    """Labels as ``key=value`` pairs in key order, one space apart."""
    return " ".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _call_state(t: Transcript, call_id: str) -> str:
    """What became of an unanswered call: running (a live run owns it), interrupted, or (offline) not known."""
    if t.offline:
        return OPEN_CALL_NOTE
    owner = t.running.get(call_id)
    if owner is not None and not owner.run_id:
        return "pending (awaits approval or a long-running tool; never repaired)"
    if owner is not None:
        return f"running (run {visible(owner.run_id)}, pid {owner.owner_pid})"
    return "interrupted (no result; the next Load repairs it)"


def render_transcript(t: Transcript) -> str:
    """The transcript as text (rich styles on a terminal), folded to the terminal's width.

    Every stored string is a ``Text`` span, never markup; only the messages shown are formatted.
    """
    from rich.console import Console
    from rich.padding import Padding
    from rich.text import Text

    def line(*parts: str | tuple[str, str]) -> Text:
        # Text.assemble takes (text, style) pairs literally: "[bold]" or ":smile:" in content stays as typed.
        return Text.assemble(*parts)

    out = io.StringIO()
    styled = terminal.colour()
    console = Console(
        file=out,
        width=terminal.width(),
        force_terminal=styled,
        no_color=not styled,
        highlight=False,
        soft_wrap=False,
        emoji=False,
        markup=False,
    )
    s = t.session
    u = s.usage
    console.print(line((f"session {visible(s.id)}", "bold"), f"  workdir {visible(s.workdir or '-')}"))
    console.print(line(f"created {rfc3339(s.created_at)}  updated {rfc3339(s.updated_at)}"))
    console.print(
        line(f"messages {s.message_count}  tokens {u.input_tokens} in / {u.output_tokens} out  cost {visible(cost(u))}")
    )
    if s.labels:
        console.print(line(f"labels {visible(labels_text(s.labels))}"))
    if s.forked_from:
        console.print(line(f"forked from {visible(s.forked_from)} at position {s.forked_at_position}"))
    if s.state:
        console.print(line(f"state {visible(json.dumps(s.state, ensure_ascii=False, sort_keys=True))}"))
    if t.repaired_now:
        console.print(line((f"repaired now: {visible(', '.join(t.repaired_now))}", "yellow")))
    for call_id in t.open_calls:
        console.print(line((f"tool call {visible(call_id)}: {_call_state(t, call_id)}", "yellow")))
    for event in t.audit:
        detail = visible(json.dumps(event["payload"], ensure_ascii=False))
        console.print(line((visible(event["type"]), "red"), f" {visible(str(event['ts']))} {detail}"))
    if t.hidden:
        console.print(line((f"({counted(t.hidden, 'earlier message')} not shown)", "dim")))
    open_calls = set(t.open_calls)
    styles = {"system": "magenta", "user": "green", "assistant": "blue", "tool": "cyan"}
    for m in t.messages:
        console.print()
        head: list[str | tuple[str, str]] = [
            (f"#{m.position} {visible(m.role)}", f"bold {styles.get(m.role, 'white')}")
        ]
        if m.role == "tool":
            head.append(f" ← {visible(m.tool_call_id)}" + (f" ({visible(m.name)})" if m.name else ""))
        if m.synthetic_reason:
            reason = visible(m.synthetic_reason)
            head.append((f"  SYNTHETIC ({reason}): tool not re-run", "bold yellow"))
        if m.format:
            head.append((f"  [{visible(m.format)} item, {len(m.item):,} bytes]", "dim"))
        if m.client_id:
            head.append((f"  id {visible(m.client_id)}", "dim"))
        console.print(line(*head))
        if m.content:  # folded lines keep the two-space indent
            console.print(Padding(line(visible(m.content, keep_layout=True)), (0, 0, 0, 2), expand=False))
        for call in m.tool_calls:
            call_line: list[str | tuple[str, str]] = [
                f"→ {visible(call.name)}({visible(call.arguments)})  [{visible(call.id)}]"
            ]
            if call.id in open_calls:  # the header above says what "interrupted" means
                call_line.append((f"  {_call_state(t, call.id).split(' (no result', 1)[0]}", "yellow"))
            console.print(Padding(line(*call_line), (0, 0, 0, 2), expand=False))
    # rich pads folded lines to the width: drop the padding (it would follow a copy-paste).
    return "\n".join(text.rstrip(" ") for text in out.getvalue().split("\n"))
