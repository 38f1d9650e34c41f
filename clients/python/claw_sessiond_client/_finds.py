"""Cross-session reads: search hits, follow-all events, usage report rows (pure: request building, conversion).

Used by :class:`~claw_sessiond_client.sync.SessionClient` (``search``,
``watch_all``, ``usage_report``; the result types are exported by the package). No I/O here.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

from google.protobuf.timestamp_pb2 import Timestamp

from . import errors as E
from ._responses import message_of, usage_of
from ._runs import WatchCursor
from ._types import Message, Usage
from .api.v1 import sessiond_pb2 as pb

__all__ = [
    "CrossSessionUsage",
    "FollowCursor",
    "FollowEvent",
    "SearchHit",
    "SearchResult",
    "UsageReportRow",
    "search_request",
    "search_result_of",
    "usage_report_of",
    "usage_report_request",
]

_ROLES = {"system": pb.ROLE_SYSTEM, "user": pb.ROLE_USER, "assistant": pb.ROLE_ASSISTANT, "tool": pb.ROLE_TOOL}
_ROLE_NAMES = {v: k for k, v in _ROLES.items()}


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One message that matched: where it is, and an excerpt as ``(text, is_match)`` parts."""

    session_id: str
    position: int
    role: str
    created_at: dt.datetime | None
    rank: float
    snippet: tuple[tuple[str, bool], ...]
    cleared: bool


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits, best first; ``truncated`` if more matched than the limit."""

    hits: list[SearchHit]
    truncated: bool


@dataclass(frozen=True, slots=True)
class FollowEvent:
    """A history event of any session from ``watch_all``: a message, a clear or an edit (see ``WatchEvent``)."""

    event_id: int
    session_id: str
    position: int
    message: Message | None
    cleared: bool
    edited: bool = False
    removed_positions: tuple[int, ...] = ()
    erased: bool = False


@dataclass(frozen=True, slots=True)
class UsageReportRow:
    """Usage of one (UTC day, model, pricing version, currency[, session]) group."""

    day: str
    model: str
    pricing_version: str
    usage: Usage
    session_id: str
    events: int


@dataclass(frozen=True, slots=True)
class CrossSessionUsage:
    """Rows ordered by day, model, pricing version, currency; ``truncated`` if the daemon's row cap was hit."""

    rows: list[UsageReportRow]
    truncated: bool


def _ts(when: dt.datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(when if when.tzinfo else when.replace(tzinfo=dt.UTC))
    return ts


def search_request(
    query: str,
    *,
    raw: bool,
    session_id: str,
    role: str,
    since: dt.datetime | None,
    until: dt.datetime | None,
    limit: int,
    include_cleared: bool,
) -> pb.SearchRequest:
    """The Search request.

    Raises:
        InvalidRequestError: unknown role.
    """
    if role and role not in _ROLES:
        raise E.InvalidRequestError(f"role must be one of {', '.join(sorted(_ROLES))} (got {role!r})")
    request = pb.SearchRequest(
        query=query,
        raw=raw,
        session_id=session_id,
        role=_ROLES.get(role, pb.ROLE_UNSPECIFIED),
        limit=limit,
        include_cleared=include_cleared,
    )
    if since is not None:
        request.since.CopyFrom(_ts(since))
    if until is not None:
        request.until.CopyFrom(_ts(until))
    return request


def _time(ts: Timestamp) -> dt.datetime | None:
    if not ts.seconds and not ts.nanos:
        return None
    return ts.ToDatetime(tzinfo=dt.UTC)


def search_result_of(r: pb.SearchResponse) -> SearchResult:
    """SearchResponse → :class:`SearchResult`."""
    return SearchResult(
        [
            SearchHit(
                h.session_id,
                h.position,
                _ROLE_NAMES.get(h.role, ""),
                _time(h.created_at),
                h.rank,
                tuple((p.text, p.match) for p in h.snippet),
                h.cleared,
            )
            for h in r.hits
        ],
        r.truncated,
    )


def usage_report_request(
    since: dt.datetime | None, until: dt.datetime | None, by_session: bool
) -> pb.GetUsageReportRequest:
    """The GetUsageReport request."""
    request = pb.GetUsageReportRequest(by_session=by_session)
    if since is not None:
        request.since.CopyFrom(_ts(since))
    if until is not None:
        request.until.CopyFrom(_ts(until))
    return request


def usage_report_of(r: pb.GetUsageReportResponse) -> CrossSessionUsage:
    """GetUsageReportResponse → :class:`CrossSessionUsage`."""
    return CrossSessionUsage(
        [
            UsageReportRow(row.day, row.model, row.pricing_version, usage_of(row.usage), row.session_id, row.events)
            for row in r.rows
        ],
        r.truncated,
    )


class FollowCursor:
    """Where a follow-all stands (the last event id delivered); resumes like a Watch."""

    def __init__(self, last: int, retry_window_s: float) -> None:
        self.after = 0
        self.started = False
        self.last = last
        self._watch = WatchCursor("-", 0, retry_window_s)

    def request(self) -> pb.WatchAllRequest:
        """The WatchAll request that resumes after the last delivered event (or starts); it names this process."""
        if not self.started:
            return pb.WatchAllRequest(last=self.last, batch=True, pid=os.getpid())
        return pb.WatchAllRequest(after_event_id=self.after, resume=True, batch=True, pid=os.getpid())

    def accept(self, r: pb.WatchAllResponse) -> FollowEvent | None:
        """The event to deliver, or None for the start marker or one already delivered."""
        if r.started:
            if not self.started:
                self.started, self.after = True, r.event_id
            return None
        if r.event_id <= self.after:
            return None
        self.started = True
        self.after = r.event_id
        self._watch.accept(pb.WatchResponse(position=self._watch.position + 1, cleared=True))  # resets backoff
        message = message_of(r.message) if r.HasField("message") else None
        edited = r.HasField("edit")
        removed = tuple(r.edit.removed_positions) if edited else ()
        return FollowEvent(r.event_id, r.session_id, r.position, message, r.cleared, edited, removed, r.erased)

    def resume_delay(self, err: E.SessiondError, now: float) -> float:
        """Seconds to wait before resuming after ``err`` (see ``WatchCursor.resume_delay``)."""
        return self._watch.resume_delay(err, now)
