"""The reference backend's reads: a Load's snapshot (:class:`ReadPort`) and a paged read's steps (:class:`PageReads`).

Both are ``async def`` verbs, as on the SQL backends, over the same :class:`~.tables.Tables`;
none of them awaits anything, so a read that runs on the event loop sees no write between
its verbs. Pages are cut as the SQL backends cut them (``paging.cut``: at most
``paging.PAGE_ROWS`` entries, about ``paging.PAGE_BYTES``).

Must never: decide (``loading.py``, ``history_reads.py`` and the rules do), or write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from ...entry_wire import splice
from ...events import message_from_payload, reply_entry
from ...history import OpenCall
from ...model import EntrySelection, HistoryCursor, Message, SessionSettings
from ...policy import ToolPolicy
from .. import history_reads
from ..paging import ITEM_PAGE_ROWS, PAGE_BYTES, PAGE_ROWS, cut
from ..port import PageReads, SessionRow
from .port import MemoryPort, open_calls_of, record_values, selected, visible
from .tables import EventRow, Tables, Tx, event_bytes

__all__ = ["MemoryPageReads", "MemoryReadPort", "entry_message"]

#: Beyond any position (the upper bound of "every history event").
_END: Final = 2**62


def entry_message(row: EventRow, reply_only: bool) -> Message:
    """A history row as a Load reads it: whole with its encoded reply form (the item put back in: ``splice``),
    or for the reply only."""
    decode = reply_entry if reply_only else message_from_payload
    encoded = None if row.encoded is None else splice((row.encoded, row.item_at), row.item or b"")
    return decode(int(row.position or 0), row.type, row.trace_id, row.ts, row.payload, row.format, row.item, encoded)


def _main_rows(tables: Tables, session_id: str, after: int, last: int) -> tuple[list[EventRow], bool]:
    """The next page of visible history rows after ``after`` (position ≤ ``last``); True if nothing follows."""
    rows: list[EventRow] = []
    for row in tables.history(session_id, after, last):
        if visible(row):
            rows.append(row)
            if len(rows) == PAGE_ROWS:
                break
    if not rows:
        return [], True
    n = cut([(r.position, event_bytes(r)) for r in rows], PAGE_BYTES)
    return rows[:n], n == len(rows) < PAGE_ROWS


def _result_call_id(row: EventRow) -> str:
    """The call id a tool result or a repair answers, from its payload."""
    return str(json.loads(row.payload).get("tool_call_id", ""))


class MemoryReadPort:
    """The snapshot reads of a Load (``storage/port.py``'s :class:`ReadPort`), over the store's tables."""

    __slots__ = ("_port", "_t")

    def __init__(self, tables: Tables) -> None:
        self._t = tables
        self._port = MemoryPort(Tx(tables))  # its reads only: nothing is written through it

    async def session_and_settings(self, session_id: str) -> tuple[SessionRow | None, SessionSettings | None]:
        return record_values(self._t, session_id)

    async def open_calls(self, session_id: str) -> list[OpenCall]:
        return open_calls_of(self._t, session_id)

    async def session_policy(self, session_id: str) -> ToolPolicy:
        return self._port.session_policy(session_id)

    async def entries_at(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, str, bool]]:
        return self._port.entries_at(session_id, positions)

    async def history_page(
        self, session_id: str, after: int, last_position: int, reply_only: bool
    ) -> tuple[list[Message] | None, int]:
        rows, complete = _main_rows(self._t, session_id, after, last_position)
        return ([entry_message(r, reply_only) for r in rows] if complete else None), len(rows)

    async def item_page(
        self, session_id: str, after: int, last_position: int, item_format: str
    ) -> tuple[list[bytes], int]:
        return await MemoryPageReads(self._t).item_page(session_id, after, last_position, item_format)

    async def nth_visible_back(self, session_id: str, clear_position: int, last_position: int, n: int) -> int | None:
        shown = [r.position for r in self._t.history(session_id, clear_position, last_position) if visible(r)]
        return shown[-n] if 0 < n <= len(shown) else None

    async def first_position_after_time(
        self, session_id: str, after_time: str, clear_position: int, last_position: int
    ) -> int | None:
        later = [r.position for r in self._t.history(session_id, clear_position, last_position) if r.ts > after_time]
        return later[0] if later else None

    async def last_visible_before(self, session_id: str, clear_position: int, position: int) -> int | None:
        shown = [r.position for r in self._t.history(session_id, clear_position, position - 1) if visible(r)]
        return shown[-1] if shown else None

    async def lead_positions(self, session_id: str, start: int, last_position: int) -> tuple[int, ...]:
        calls = self._t.calls.get(session_id, {})
        lead: list[tuple[int, int]] = []
        for r in self._t.history(session_id, start - 1, last_position):
            if r.type in ("tool_result", "repair") and r.hidden_by is None:
                call = calls.get(_result_call_id(r))
                if call is not None and call.assistant_position < start:
                    lead.append((call.assistant_position, int(r.position or 0)))
        return tuple(p for _a, p in sorted(lead))

    async def select_positions(self, session_id: str, selection: EntrySelection, limit: int) -> list[tuple[int, str]]:
        return selected(self._t, session_id, selection, limit)

    async def check_cursor(self, cursor: HistoryCursor) -> None:
        await history_reads.guard(MemoryPageReads(self._t), cursor)


class MemoryPageReads:
    """The reads of one step of a paged history read (``storage/port.py``'s :class:`PageReads`)."""

    __slots__ = ("_t",)

    def __init__(self, tables: Tables) -> None:
        self._t = tables

    async def session_bounds(self, session_id: str) -> tuple[str, int, int] | None:
        record = self._t.sessions.get(session_id)
        return None if record is None else (record.created_at, record.clear_position, record.last_position)

    async def marks_after(self, session_id: str, position: int) -> list[tuple[str, str]]:
        return [(r.type, r.payload) for r in self._t.history(session_id, position, _END) if r.type in ("edit", "clear")]

    async def visible_page(self, session_id: str, after: int, last_position: int, reply_only: bool) -> list[Message]:
        rows, _complete = _main_rows(self._t, session_id, after, last_position)
        return [entry_message(r, reply_only) for r in rows]

    async def entries_by_position(self, session_id: str, positions: Sequence[int], reply_only: bool) -> list[Message]:
        return [entry_message(r, reply_only) for r in self._rows_at(session_id, positions)]

    async def entry_sizes(self, session_id: str, positions: Sequence[int]) -> list[tuple[int, int]]:
        return [(int(r.position or 0), event_bytes(r)) for r in self._rows_at(session_id, positions)]

    async def item_page(
        self, session_id: str, after: int, last_position: int, item_format: str
    ) -> tuple[list[bytes], int]:
        rows: list[EventRow] = []
        for row in self._t.history(session_id, after, last_position):
            if visible(row) and row.format == item_format:
                rows.append(row)
                if len(rows) == ITEM_PAGE_ROWS:
                    break
        if not rows:
            return [], 0
        n = cut([(r.position, len(r.item or b"")) for r in rows], PAGE_BYTES)
        end = last_position if n == len(rows) < ITEM_PAGE_ROWS else int(rows[n - 1].position or 0)
        return [r.item for r in rows[:n] if r.item], end

    async def items_at(self, session_id: str, positions: Sequence[int], item_format: str) -> list[tuple[int, bytes]]:
        rows = self._rows_at(session_id, positions)
        return [(int(r.position or 0), r.item) for r in rows if r.format == item_format and r.item]

    async def known_calls(self, session_id: str, call_ids: Sequence[str]) -> set[str]:
        calls = self._t.calls.get(session_id, {})
        return {i for i in call_ids if i in calls}

    async def far_results(self, session_id: str, call_ids: Sequence[str], after: int, last_position: int) -> list[Any]:
        calls = self._t.calls.get(session_id, {})
        far = {
            p
            for p in (calls[i].result_position for i in call_ids if i in calls)
            if p is not None and after < p <= last_position
        }
        return [(int(r.position or 0), event_bytes(r)) for r in self._rows_at(session_id, sorted(far))]

    async def incarnation(self, session_id: str) -> str | None:
        record = self._t.sessions.get(session_id)
        return None if record is None else record.incarnation

    async def event_sizes_after(self, session_id: str, position: int, limit: int) -> list[Any]:
        return [(r.position, event_bytes(r)) for r in self._t.history(session_id, position, _END)[:limit]]

    async def history_events(self, session_id: str, after: int, upto: int) -> list[Any]:
        return [r.history() for r in self._t.history(session_id, after, upto)]

    async def export_sizes(self, session_id: str, after_id: int, max_id: int, limit: int) -> list[Any]:
        return [(r.event_id, event_bytes(r)) for r in self._events(session_id, after_id, max_id)[:limit]]

    async def export_rows(self, session_id: str, after_id: int, upto_id: int) -> list[Any]:
        return [
            (r.event_id, r.session_id, *r.history()[:4], r.schema_version, r.payload, r.format, r.item)
            for r in self._events(session_id, after_id, upto_id)
        ]

    def _rows_at(self, session_id: str, positions: Sequence[int]) -> list[EventRow]:
        """The session's events at these positions (those stored), in position order."""
        return [r for r in (self._t.at(session_id, p) for p in sorted(set(positions))) if r is not None]

    def _events(self, session_id: str, after_id: int, upto_id: int) -> list[EventRow]:
        """The session's events with ids in ``(after_id, upto_id]``, in id order."""
        return [self._t.events[i] for i in self._t.session_event_ids(session_id) if after_id < i <= upto_id]


_: type[PageReads] = MemoryPageReads
