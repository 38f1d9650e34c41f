"""The viewer's JSON API (all GET): info, the sessions list, one session's page, search, usage and lookup.

Each route reads through the :class:`~claw_sessiond.ui.source.Source` (the daemon, or the offline view)
and answers in the shapes of :mod:`.shapes`; every bound is in :mod:`.params` (and :mod:`.lists` for the
list's scans), every error an ``{"error": ...}`` answer (:func:`~.params.json_route`). The routes are
documented in docs/ui.md.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Final

from aiohttp import web

from claw_sessiond_client import LoadResult, Message

from .. import __version__
from . import params
from .history import LOOKBACK, log_events
from .lists import ListFilter, marks, session_page
from .params import BadParam, json_route
from .shapes import entry_json, in_flight_json, session_json, time_text, usage_json
from .source import Source

__all__ = ["LOOKUP_ENTRIES", "LOOKUP_SESSIONS", "MAX_SEARCH", "SOURCE", "WORKSPACE", "routes"]

#: The app keys the routes read: where they read, and the workspace shown.
SOURCE: Final = web.AppKey("source", Source)
WORKSPACE: Final = web.AppKey("workspace", str)
#: Search hits per request, at most (the daemon's own cap).
MAX_SEARCH: Final = 200
#: A lookup without a session looks at this many sessions (the list's first page). By trace id it scans
#: their last :data:`LOOKUP_ENTRIES` entries each (with a session: its last :data:`LOOKUP_SESSION_ENTRIES`);
#: by client id it reads each session's index of client ids, so every entry is found.
LOOKUP_SESSIONS: Final = 50
LOOKUP_ENTRIES: Final = 1000
LOOKUP_SESSION_ENTRIES: Final = 10000

routes = web.RouteTableDef()


def _source(request: web.Request) -> Source:
    return request.app[SOURCE]


@routes.get("/api/info")
@json_route
async def info(request: web.Request) -> web.StreamResponse:
    source = _source(request)
    return web.json_response(
        {
            "workspace": request.app[WORKSPACE],
            "backend": source.backend,
            "daemon_running": not source.offline,
            "offline": source.offline,
            "version": __version__,
        }
    )


@routes.get("/api/sessions")
@json_route
async def sessions(request: web.Request) -> web.StreamResponse:
    want = ListFilter(
        id_contains=request.query.get("id_contains", ""),
        labels=tuple(sorted(params.labels(request).items())),
        updated_after=params.time(request, "updated_after"),
        updated_before=params.time(request, "updated_before"),
        has_open_calls=params.flag(request, "has_open_calls"),
        has_repairs=params.flag(request, "has_repairs"),
    )
    limit = params.integer(request, "limit", params.DEFAULT_SESSIONS, 1, params.MAX_SESSIONS)
    assert limit is not None
    page = await session_page(_source(request), want, limit, request.query.get("page_token", ""))
    return web.json_response(page)


def _session_id(request: web.Request) -> str:
    return request.match_info["session_id"]


async def _page(source: Source, session_id: str, before: int | None, after: int | None, limit: int) -> dict[str, Any]:
    """The entries of one page (the last ``limit`` by default; older than ``before``; newer than ``after``) and
    the log's clears and edits over the page's span of positions (:func:`.history.log_events`)."""
    if after is not None:
        result = params.stored(await source.load(session_id, after=after))
        shown = result.messages[:limit]
        has_older = result.session.message_count > len(result.messages)
        has_newer = len(result.messages) > limit
    elif before is None:
        result = params.stored(await source.load(session_id, last=limit))
        shown = result.messages
        has_older, has_newer = result.session.message_count > len(shown), False
    else:
        # Older entries: the last ``limit`` before ``before`` (newest-first paging backwards, a read that does
        # not grow with the history), one more to know whether older ones are left.
        result = params.stored(await source.load(session_id, last=limit + 1, before=before))
        shown = result.messages[-limit:]
        has_older = len(result.messages) > limit
        has_newer = bool(shown) and before <= result.session.last_position
    # The page's span: from its first entry (the oldest page: LOOKBACK earlier) to the next page's start.
    last = result.session.last_position
    if after is not None:
        lower = after + 1
    elif shown and has_older:
        lower = shown[0].position
    else:
        lower = max(1, (shown[0].position if shown else last) - LOOKBACK)
    upper = last
    if has_newer:
        upper = before - 1 if before is not None else shown[-1].position
    events, complete = await log_events(source, session_id, lower, upper)
    page = _page_json(result, shown, has_older=has_older, has_newer=has_newer, log=events)
    page["events_complete"] = complete
    return page


def _page_json(
    result: LoadResult, shown: list[Message], *, has_older: bool, has_newer: bool, log: list[dict[str, Any]]
) -> dict[str, Any]:
    open_calls, _repairs = marks(result)
    session = session_json(result)
    session["open_calls"] = open_calls
    events = list(log)
    if result.session.forked_from:
        events.append(
            {
                "position": result.session.forked_at_position,
                "type": "fork",
                "at": time_text(result.session.created_at),
                "detail": {"from": result.session.forked_from},
            }
        )
    events.sort(key=lambda e: e["position"])
    return {
        "session": session,
        "entries": [entry_json(m) for m in shown],
        "events": events,
        "in_flight": in_flight_json(result),
        "repairs": [
            {"tool_call_id": m.tool_call_id, "position": m.position, "reason": m.synthetic_reason}
            for m in shown
            if m.synthetic_reason
        ],
        "first_position": shown[0].position if shown else None,
        "has_older": has_older,
        "has_newer": has_newer,
    }


@routes.get("/api/sessions/{session_id}")
@json_route
async def session(request: web.Request) -> web.StreamResponse:
    before = params.integer(request, "before", None, 1, 2**62)
    after = params.integer(request, "after", None, 0, 2**62)
    if before is not None and after is not None:
        raise BadParam("give before or after, not both")
    limit = params.integer(request, "limit", params.DEFAULT_ENTRIES, 1, params.MAX_ENTRIES)
    assert limit is not None
    page = await _page(_source(request), _session_id(request), before, after, limit)
    return web.json_response(page)


@routes.get("/api/search")
@json_route
async def search(request: web.Request) -> web.StreamResponse:
    query = request.query.get("q", "")
    if not query.strip():
        raise BadParam("q (the text to search for) is required")
    limit = params.integer(request, "limit", 50, 1, MAX_SEARCH)
    assert limit is not None
    found = await _source(request).search(query, request.query.get("session_id", ""), limit)
    hits = [
        {
            "session_id": h.session_id,
            "position": h.position,
            "role": h.role,
            "created_at": time_text(h.created_at),
            "snippet": [{"text": text, "hit": hit} for text, hit in h.snippet],
        }
        for h in found.hits
    ]
    return web.json_response({"hits": hits, "truncated": found.truncated})


_USAGE_FIELDS: Final = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros")


@routes.get("/api/usage")
@json_route
async def usage(request: web.Request) -> web.StreamResponse:
    by = request.query.get("by", "model")
    if by not in ("model", "day"):
        raise BadParam("by must be model or day")
    report = await _source(request).usage_report(params.time(request, "since"), params.time(request, "until"))
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    totals: dict[str, dict[str, Any]] = defaultdict(dict)
    for r in report.rows:
        key = r.model if by == "model" else r.day
        figures = usage_json(r.usage)
        for into in (rows.setdefault((key, r.usage.currency), {"key": key}), totals[r.usage.currency]):
            for name in _USAGE_FIELDS:
                into[name] = into.get(name, 0) + figures[name]
            into["currency"] = r.usage.currency
    ordered = sorted(rows.values(), key=lambda row: (row["key"], row["currency"]))
    return web.json_response({"rows": ordered, "totals": list(totals.values()), "truncated": report.truncated})


@routes.get("/api/lookup")
@json_route
async def lookup(request: web.Request) -> web.StreamResponse:
    trace_id = request.query.get("trace_id", "")
    client_id = request.query.get("client_id", "")
    session_id = request.query.get("session_id", "")
    if bool(trace_id) == bool(client_id):
        raise BadParam("give trace_id or client_id (one of them)")
    source = _source(request)
    if session_id:
        targets = [session_id]
    else:
        page = await source.list_page("", LOOKUP_SESSIONS, "", {})
        targets = [s.id for s in page.sessions]
    entries = LOOKUP_SESSION_ENTRIES if session_id else LOOKUP_ENTRIES
    matches = []
    for target in targets:
        if client_id:  # through the daemon's index of client ids: cost O(1) per session, not O(history)
            result = await source.load(target, client_ids=(client_id,))
        else:
            result = await source.load(target, last=entries)
        if session_id:
            params.stored(result)
        for m in result.messages:
            if (trace_id and m.trace_id == trace_id) or (client_id and m.client_id == client_id):
                matches.append({"session_id": target, "position": m.position})
    # A trace-id lookup scans each session's last entries (the bound ``scanned`` names); a client-id lookup
    # reads through the index, every entry of the sessions it looks at (``scanned`` null).
    scanned = None if client_id else {"sessions": len(targets), "entries_per_session": entries}
    return web.json_response(
        {
            "matches": matches,
            "sessions_looked_at": len(targets),
            "through": "index" if client_id else "scan",
            "scanned": scanned,
        }
    )
