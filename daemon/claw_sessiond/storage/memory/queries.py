"""The reference backend's whole-store reads (``base.StoreReads``): listings, search, usage, the follow feed.

Each reads the tables as they are (every one runs on the event loop without awaiting, so none
sees half a write) and answers what the SQL backends' statements answer, in the same order and
with the same bounds (``queries.py``'s ``MAX_REPORT_ROWS``, ``MAX_FOLLOW_LAST``; a follow page
of at most the rows asked and about ``paging.PAGE_BYTES``). Search is a case-insensitive
substring match of each word or phrase of the query (``queries.fts_query``'s form), not a
full-text index: every hit scores the same, in event order; its snippet marks the first match.

Must never: write, or decide what a rule decides.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...edits import history_item
from ...errors import InvalidRequestError, Reason, SessionNotFoundError
from ...events import MESSAGE_EVENT_TYPES
from ...export import ExportHeader
from ...model import HistoryCursor, ModelUsage, SessionSummary, Usage
from ...queries import MATCH_CLOSE, MATCH_OPEN, MAX_FOLLOW_LAST, MAX_REPORT_ROWS, SearchFilter, SearchRow, UsageRow
from ...state import ScopeState, parse_labels
from ..base import FollowItem
from ..figures import StorageFigures
from ..paging import PAGE_BYTES, cut
from ..port import session_summary
from .tables import EventRow, SessionRecord, Tables, event_bytes

__all__ = ["SCHEMA_VERSION", "MemoryReads"]

#: The reference backend's schema version (its tables have no other).
SCHEMA_VERSION: Final = 1
#: Characters of message text around a snippet's match.
_SNIPPET_CHARS: Final = 48
_PHRASE: Final = re.compile(r'"((?:[^"]|"")*)"')
_INT64_MAX: Final = (1 << 63) - 1
_ASCII_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
#: The usage numbers of a usage event's payload, in :class:`~claw_sessiond.queries.UsageRow`'s order.
_USAGE_KEYS: Final = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros")


def _terms(match: str) -> list[str]:
    """The words or phrases a search looks for, lower-cased: ``fts_query``'s quoted strings, else its words
    (a NUL separates words, as in a full-text index)."""
    match = match.replace("\x00", " ")
    phrases = [p.replace('""', '"') for p in _PHRASE.findall(match)]
    terms = (" ".join(t.split()) for t in (phrases or match.split()))
    return [t.casefold() for t in terms if t]


def _snippet(content: str, term: str) -> str:
    """``content`` around the first occurrence of ``term`` (lower-cased), the match between the marks."""
    at = content.casefold().find(term)
    if at < 0:
        return content[: 2 * _SNIPPET_CHARS]
    end = at + len(term)
    head = ("…" if at > _SNIPPET_CHARS else "") + content[max(0, at - _SNIPPET_CHARS) : at]
    tail = content[end : end + _SNIPPET_CHARS] + ("…" if end + _SNIPPET_CHARS < len(content) else "")
    return f"{head}{MATCH_OPEN}{content[at:end]}{MATCH_CLOSE}{tail}"


def _listed(record: SessionRecord, id_contains: str, labels: Mapping[str, str]) -> bool:
    """Whether a listing keeps the session: its id holds ``id_contains`` (ASCII letters in either case, as
    SQL's ``LIKE``) and it carries every one of ``labels``."""
    if id_contains.translate(_ASCII_LOWER) not in record.session_id.translate(_ASCII_LOWER):
        return False
    carried = parse_labels(record.labels)
    return all(carried.get(k) == v for k, v in labels.items())


class MemoryReads:
    """The whole-store reads over one store's :class:`~.tables.Tables`."""

    __slots__ = ("_t",)

    def __init__(self, tables: Tables) -> None:
        self._t = tables

    async def list_sessions(
        self,
        id_contains: str,
        limit: int,
        after: tuple[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[SessionSummary]:
        rows = [r for r in self._t.sessions.values() if _listed(r, id_contains, labels or {})]
        rows.sort(key=lambda r: r.session_id)
        rows.sort(key=lambda r: r.updated_at, reverse=True)
        if after is not None:
            rows = [
                r for r in rows if r.updated_at < after[0] or (r.updated_at == after[0] and r.session_id > after[1])
            ]
        return [session_summary((*r.values()[:13], r.labels)) for r in rows[:limit]]

    async def count_sessions(self, id_contains: str, labels: Mapping[str, str] | None = None) -> int:
        return sum(1 for r in self._t.sessions.values() if _listed(r, id_contains, labels or {}))

    async def scope_states(self, scopes: Sequence[str]) -> list[ScopeState]:
        found = self._t.scopes
        return [ScopeState(s, *found[s]) if s in found else ScopeState(s) for s in scopes]

    async def list_scope_states(self, after: str, limit: int) -> list[ScopeState]:
        start = after.encode("utf-8", "surrogatepass")
        keys = sorted((s for s in self._t.scopes if s.encode("utf-8", "surrogatepass") > start), key=str.encode)
        return [ScopeState(s, *self._t.scopes[s]) for s in keys[:limit]]

    async def usage_by_model(self, session_id: str) -> tuple[Usage, list[ModelUsage]]:
        record = self._t.sessions.get(session_id)
        if record is None:
            raise SessionNotFoundError(f"session {session_id!r} is not stored", session_id=session_id)
        by_model = self._t.usage.get(session_id, {})
        return record.usage, [ModelUsage(m, v, by_model[m, v]) for m, v in sorted(by_model)]

    async def session_ids(self) -> list[str]:
        return [r.session_id for r in sorted(self._t.sessions.values(), key=lambda r: (r.created_at, r.session_id))]

    async def export_start(self, session_id: str) -> tuple[ExportHeader, HistoryCursor, int] | None:
        record = self._t.sessions.get(session_id)
        if record is None:
            return None
        ids = self._t.session_event_ids(session_id)
        header = ExportHeader(session_id, record.workdir, record.created_at, record.updated_at, len(ids))
        cursor = HistoryCursor(session_id, record.created_at, record.clear_position, record.last_position)
        return header, cursor, ids[-1] if ids else 0

    async def search(self, match: str, filters: SearchFilter, limit: int) -> tuple[list[SearchRow], bool]:
        terms = _terms(match)
        if not terms:
            raise InvalidRequestError("the search query has no words to look for")
        hits: list[SearchRow] = []
        for row in self._history_rows():
            if len(hits) > limit:
                break
            hit = self._hit(row, terms, filters)
            if hit is not None:
                hits.append(hit)
        return hits[:limit], len(hits) > limit

    def _hit(self, row: EventRow, terms: list[str], filters: SearchFilter) -> SearchRow | None:
        """The search row of a history event that every term matches and the filters keep, or None."""
        if row.type not in MESSAGE_EVENT_TYPES or row.type == "other_entry":
            return None
        if filters.session_id and row.session_id != filters.session_id:
            return None
        if (filters.since and row.ts < filters.since) or (filters.until and row.ts >= filters.until):
            return None
        payload = json.loads(row.payload)
        content, role = str(payload.get("content") or ""), str(payload.get("role") or "")
        if (filters.role and role != filters.role) or not all(t in content.casefold() for t in terms):
            return None
        record = self._t.sessions.get(row.session_id)
        position = int(row.position or 0)
        cleared = record is None or position <= record.clear_position or row.hidden_by is not None
        if cleared and not filters.include_cleared:
            return None
        return SearchRow(row.session_id, position, role, row.ts, 0.0, _snippet(content, terms[0]), cleared)

    async def usage_report(self, since: str, until: str, *, by_session: bool) -> tuple[list[UsageRow], bool]:
        groups: dict[tuple[str, str, str, str, str], list[int]] = {}
        for event_id in sorted(self._t.events):
            row = self._t.events[event_id]
            if row.type != "usage" or not since <= row.ts < (until or "\uffff"):
                continue
            p = json.loads(row.payload)
            numbers = [int(p.get(k) or 0) for k in _USAGE_KEYS]
            currency = str(p.get("currency") or "") if numbers[-1] else ""
            key = (row.ts[:10], str(p.get("model") or ""), str(p.get("pricing_version") or ""), currency)
            totals = groups.setdefault((*key, row.session_id if by_session else ""), [0] * 6)
            for i, n in enumerate([*numbers, 1]):
                totals[i] += n
        if any(abs(v) > _INT64_MAX for totals in groups.values() for v in totals):
            raise InvalidRequestError(
                "a usage total does not fit a 64-bit integer; report a shorter time range", reason=Reason.INVALID_USAGE
            )
        out = [UsageRow(*key, *groups[key]) for key in sorted(groups)]
        return out[:MAX_REPORT_ROWS], len(out) > MAX_REPORT_ROWS

    async def follow_start(self, last: int) -> int:
        if last <= 0:
            return self._t.counters["last_event_id"] if self._t.events else 0
        history = [r.event_id for r in self._history_rows()]
        n = min(last, MAX_FOLLOW_LAST)
        return history[-n] - 1 if len(history) >= n else 0

    async def follow_batch(self, after_event_id: int, limit: int) -> tuple[list[FollowItem], bool]:
        rows: list[EventRow] = []
        for row in self._history_rows(after_event_id):
            rows.append(row)
            if len(rows) == limit:
                break
        if not rows:
            return [], False
        n = cut([(r.event_id, event_bytes(r)) for r in rows], PAGE_BYTES)
        out = [(r.event_id, r.session_id, int(r.position or 0), history_item(*_history(r))) for r in rows[:n]]
        return out, n < len(rows) or len(rows) >= limit

    async def sessions_not_updated_since(self, cutoff_rfc3339: str) -> list[str]:
        old = [r for r in self._t.sessions.values() if r.updated_at < cutoff_rfc3339]
        return [r.session_id for r in sorted(old, key=lambda r: r.updated_at)]

    async def requests_due(self, cutoff_rfc3339: str) -> bool:
        return any(r.created_at < cutoff_rfc3339 for records in self._t.requests.values() for r in records.values())

    async def newest_update(self) -> str | None:
        return max((r.updated_at for r in self._t.sessions.values()), default=None)

    async def figures(self) -> StorageFigures:
        """``stored_bytes``: the bytes of the events' payloads and items (the rows' other columns are not counted)."""
        t = self._t
        stored = sum(event_bytes(r) for r in t.events.values())
        requests = sum(len(r) for r in t.requests.values())
        return StorageFigures(len(t.sessions), len(t.events), requests, SCHEMA_VERSION, stored, 0)

    def _history_rows(self, after_event_id: int = 0) -> list[EventRow]:
        """Every session's history events (those with a position) after an event id, in event order."""
        events = self._t.events
        return [events[i] for i in sorted(events) if i > after_event_id and events[i].position is not None]


def _history(row: EventRow) -> tuple[Any, ...]:
    """A history row as ``edits.history_item`` takes it."""
    return (int(row.position or 0), row.type, row.trace_id, row.ts, row.payload, row.format, row.item)
