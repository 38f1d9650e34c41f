"""The sessions list: the daemon's ListSessions pages, with the filters it lacks applied here over bounded scans.

ListSessions filters by id text and labels and orders by last update (newest first). The viewer's other
filters are applied by the server to the sessions ListSessions returns, a bounded number per request:

- ``updated_after`` / ``updated_before``: the order is by last update, so a scan stops at the first
  session older than ``updated_after``; at most :data:`TIME_SCAN` sessions are examined per request.
- ``has_open_calls`` / ``has_repairs``: each examined session is read with a look-only Load of its last
  :data:`MARK_ENTRIES` entries (open calls: tool calls with no result among them, or owned by a live run;
  repairs: the daemon's synthetic results among them); at most :data:`MARK_SCAN` sessions per request.

A page that stops at its bound before filling up carries a ``next_page_token`` to go on scanning, and
``total`` is null whenever such a filter is in use (the daemon's total counts the unfiltered list).
The page token is the viewer's own (the daemon's token and how many of that page were already seen).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
from dataclasses import dataclass
from typing import Any, Final

from claw_sessiond_client import LoadResult, SessionSummary

from .params import BadParam
from .shapes import summary_json
from .source import Source

__all__ = ["MARK_ENTRIES", "MARK_SCAN", "TIME_SCAN", "ListFilter", "marks", "session_page"]

#: Sessions examined per request for a time filter.
TIME_SCAN: Final = 5000
#: Sessions examined per request for has_open_calls / has_repairs (each costs a look-only Load).
MARK_SCAN: Final = 200
#: Entries of each session's tail read to find its open calls and repairs.
MARK_ENTRIES: Final = 1000
#: Sessions asked of the daemon per ListSessions call while scanning.
_SCAN_PAGE: Final = 200


@dataclass(frozen=True, slots=True)
class ListFilter:
    """What the list is asked for."""

    id_contains: str = ""
    labels: tuple[tuple[str, str], ...] = ()
    updated_after: dt.datetime | None = None
    updated_before: dt.datetime | None = None
    has_open_calls: bool = False
    has_repairs: bool = False

    @property
    def marks(self) -> bool:
        return self.has_open_calls or self.has_repairs

    @property
    def scanned(self) -> bool:
        """Some filter is applied here, not by the daemon."""
        return self.marks or self.updated_after is not None or self.updated_before is not None


def _token(daemon_token: str, seen: int) -> str:
    raw = json.dumps({"t": daemon_token, "s": seen}).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii")


def _untoken(text: str) -> tuple[str, int]:
    if not text:
        return "", 0
    try:
        found = json.loads(base64.urlsafe_b64decode(text.encode("ascii")))
        daemon_token, seen = found["t"], found["s"]
        if isinstance(daemon_token, str) and isinstance(seen, int) and 0 <= seen <= _SCAN_PAGE:
            return daemon_token, seen
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeEncodeError):
        pass
    raise BadParam("page_token is not one this viewer gave")


def marks(result: LoadResult) -> tuple[int, int]:
    """A look-only Load's open calls (unanswered among its entries, or in flight) and repairs."""
    answered = {m.tool_call_id for m in result.messages if m.tool_call_id}
    calls = {c.id for m in result.messages for c in m.tool_calls if c.id not in answered}
    calls |= {c.tool_call_id for c in result.in_flight}
    repairs = sum(1 for m in result.messages if m.synthetic_reason)
    return len(calls), repairs


async def session_page(source: Source, want: ListFilter, limit: int, page_token: str) -> dict[str, Any]:
    """One page of the list: ``{sessions, next_page_token, total}`` (``total`` null for filters applied here)."""
    daemon_token, seen = _untoken(page_token)
    labels = dict(want.labels)
    if not want.scanned:
        page = await source.list_page(want.id_contains, limit, daemon_token, labels)
        return {
            "sessions": [summary_json(s) for s in page.sessions],
            "next_page_token": _token(page.next_page_token, 0) if page.next_page_token else "",
            "total": page.total,
        }
    budget = MARK_SCAN if want.marks else TIME_SCAN
    found: list[dict[str, Any]] = []
    next_token = ""
    while budget > 0:
        page = await source.list_page(want.id_contains, _SCAN_PAGE, daemon_token, labels)
        stop = False
        for index, summary in enumerate(page.sessions[seen:], start=seen):
            budget -= 1
            keep, stop = await _keep(source, want, summary)
            if keep is not None:
                found.append(keep)
            if stop:
                break
            if len(found) == limit or budget == 0:
                more = index + 1 < len(page.sessions) or bool(page.next_page_token)
                next_token = _token(daemon_token, index + 1) if more else ""
                stop = True
                break
        if stop or not page.next_page_token:
            break
        daemon_token, seen = page.next_page_token, 0
    return {"sessions": found, "next_page_token": next_token, "total": None}


async def _keep(source: Source, want: ListFilter, s: SessionSummary) -> tuple[dict[str, Any] | None, bool]:
    """The session's row if it passes the filters, and whether no later session can (the scan stops)."""
    if want.updated_after is not None and (s.updated_at is None or s.updated_at < want.updated_after):
        return None, True
    if want.updated_before is not None and s.updated_at is not None and s.updated_at >= want.updated_before:
        return None, False
    row = summary_json(s)
    if want.marks:
        open_calls, repairs = marks(await source.load(s.id, last=MARK_ENTRIES))
        if (want.has_open_calls and not open_calls) or (want.has_repairs and not repairs):
            return None, False
        row["open_calls"], row["repairs"] = open_calls, repairs
    return row, False
