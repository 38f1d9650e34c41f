"""The viewer's JSON shapes: client types (sessions, entries, hits, usage) as the JSON the pages read.

One function per shape, used by the JSON API (:mod:`.api`), the live stream (:mod:`.live`) and the HTML
export (:mod:`.export_html`), so an entry looks the same wherever it is shown. Times are RFC 3339 UTC text;
an item that is not UTF-8 is sent as ``item_b64`` (``item`` is then null).
"""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

from claw_sessiond_client import EntryUsage, InFlightCall, LoadResult, Message, SessionSummary, Usage, WatchEvent

__all__ = [
    "entry_json",
    "event_json",
    "in_flight_json",
    "session_json",
    "summary_json",
    "time_text",
    "usage_json",
]


def time_text(when: dt.datetime | None) -> str | None:
    """``when`` as RFC 3339 UTC text (None stays None)."""
    if when is None:
        return None
    when = when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when.astimezone(dt.UTC)
    return when.isoformat(timespec="microseconds").replace("+00:00", "Z")


def usage_json(u: Usage | EntryUsage) -> dict[str, Any]:
    """A session's (or a row's, or an entry's) usage totals."""
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_tokens": u.cache_read_tokens,
        "cache_write_tokens": u.cache_write_tokens,
        "cost_micros": u.cost_micros,
        "currency": u.currency,
    }


def summary_json(s: SessionSummary) -> dict[str, Any]:
    """One row of the sessions list."""
    return {
        "id": s.id,
        "message_count": s.message_count,
        "last_position": s.last_position,
        "labels": dict(s.labels),
        "created_at": time_text(s.created_at),
        "updated_at": time_text(s.updated_at),
        "workdir": s.workdir,
        "usage": usage_json(s.usage),
    }


def session_json(result: LoadResult) -> dict[str, Any]:
    """The head of one session's page: what Load says of the session itself."""
    s = result.session
    return {
        "id": s.id,
        "workdir": s.workdir,
        "labels": dict(s.labels),
        "usage": usage_json(s.usage),
        "created_at": time_text(s.created_at),
        "updated_at": time_text(s.updated_at),
        "last_position": s.last_position,
        "message_count": s.message_count,
        "forked_from": s.forked_from,
        "forked_at_position": s.forked_at_position,
    }


def _item(item: bytes) -> tuple[str | None, str | None]:
    if not item:
        return None, None
    try:
        return item.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, base64.b64encode(item).decode("ascii")


def entry_json(m: Message) -> dict[str, Any]:
    """One stored entry, with the daemon's marks: ``synthetic`` (a repair), ``supersedes``, ``orphan``."""
    item, item_b64 = _item(m.item)
    out: dict[str, Any] = {
        "position": m.position,
        "created_at": time_text(m.created_at),
        "role": m.role,
        "content": m.content,
        "name": m.name,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls],
        "tool_call_id": m.tool_call_id,
        "format": m.format,
        "item": item,
        "metadata": m.metadata,
        "usage": None,
        "trace_id": m.trace_id,
        "client_id": m.client_id,
        "synthetic": {"reason": m.synthetic_reason} if m.synthetic_reason else None,
        "cancelled": m.cancelled,
        "orphan": m.orphan,
        "supersedes": m.supersedes,
    }
    if item_b64 is not None:
        out["item_b64"] = item_b64
    if m.usage is not None:
        out["usage"] = {**usage_json(m.usage), "model": m.usage.model}
    return out


def in_flight_json(result: LoadResult) -> list[dict[str, Any]]:
    """The calls in flight of a look-only Load, each with the run that owns it (pid, host, label, run id)."""
    names = {c.id: c.name for m in result.messages for c in m.tool_calls}
    return [_call_in_flight(c, names.get(c.tool_call_id, "")) for c in result.in_flight]


def _call_in_flight(c: InFlightCall, name: str) -> dict[str, Any]:
    return {
        "call_id": c.tool_call_id,
        "name": name,
        "assistant_position": c.assistant_position,
        "run": {"label": c.owner_label, "pid": c.owner_pid, "host": c.owner_host, "run_id": c.run_id},
    }


def event_json(event: WatchEvent) -> tuple[str, dict[str, Any]]:
    """A Watch event as the live stream's (SSE event name, data): ``entry``, ``edit`` or ``clear``."""
    if event.cleared:
        return "clear", {"position": event.position, "erased": event.erased}
    if event.edited:
        return "edit", {"position": event.position, "removed_positions": list(event.removed_positions)}
    if event.message is not None:
        return "entry", entry_json(event.message)
    return "ping", {"position": event.position}
