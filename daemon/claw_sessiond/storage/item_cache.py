"""The items of whole-history Loads, kept between Loads: :class:`ItemCache` (bounded, least recently used first out).

A framework adapter reads a session's whole history of items every turn, after appending a few
(the OpenAI Agents SDK's Runner does): without a memory of the last read, each turn reads every row
again. The cache keeps, per session and item format, the items a whole Load of items returned and
the bounds it read them at (:class:`KnownItems`: the session's incarnation, creation time, clear
position and last position). It is never trusted on its own: each Load checks it *in its own
snapshot* (``loading.first_items``), against the session row it has just read, by the rule a
streamed history already rests on (``history_reads.guard``):

- the same incarnation, creation time and clear position, and a last position no lower: the
  entries up to the known last position are the ones the cache read, unless an ``edit`` stored
  after it removed one at or before it (an EditTail, a DeleteEntries, a merging Import's edits),
  which the Load then looks for among the edits and clears stored since (the check the stream's
  pages make: through the index of positions, the events written since, not the history);
- then only the items after the known last position are read, and the reply is the known items
  followed by them. Anything else (another incarnation: a Delete, retention, an Import that
  replaced the session, a re-creation; a clear, with or without erase; an edit reaching back)
  makes it a full read, which then replaces the entry.

What the rule does not need to see: an Append's result that supersedes a synthetic repair hides
that repair (``hidden_by``) with no edit event, but a repair never carries an item (the daemon
writes none; an import refuses one: ``export._parse_item``); a tool policy's ``drop`` never hides
an entry with an item (``history.drop_calls``); state, labels, policy, usage and audit events
change no entry. Because the check reads the row in the Load's snapshot, it holds for writes of
another daemon on the same PostgreSQL database as for this daemon's own.

Bounds: at most :data:`ITEM_CACHE_BYTES` of items (each counted with :data:`ITEM_OVERHEAD_BYTES`);
an entry over an eighth of that (8 MiB: about 18,000 items of 450 bytes) is not kept; the least
recently used go first. Each write of this daemon that removes entries, erases them or makes the
session anew (Clear, EditTail, DeleteEntries, Delete, retention, Import, Fork, CreateSession) drops
the session's entries once the write itself has ended, even if its caller went away first
(:meth:`ItemCache.drop`: erased content does not stay in memory after the write that erased it),
and an entry read before such a drop is not kept after it (:meth:`ItemCache.get`'s ticket).
Appends, usage, events and UpdateSession change no item and drop nothing. A session erased by
another daemon on the same database leaves this daemon's entry until its next Load of that session,
which replaces the entry or, finding it no longer holds (the session gone), drops it; or until it
is pushed out.

All methods run on the daemon's event loop (a Load's snapshot only reads the entry handed to it).

Must never: serve an entry without the Load's snapshot check, or touch storage.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from ..model import HistoryCursor

__all__ = ["ITEM_CACHE_BYTES", "ITEM_OVERHEAD_BYTES", "ItemCache", "ItemsSeen", "KnownItems"]

#: The most item bytes the cache holds, all sessions together.
ITEM_CACHE_BYTES: Final = 64 * 1024 * 1024
#: What an item costs beside its bytes: the ``bytes`` object's header and the list's pointer to it.
ITEM_OVERHEAD_BYTES: Final = sys.getsizeof(b"") + 8


@dataclass(frozen=True, slots=True)
class KnownItems:
    """The items of a whole Load of one format, and the bounds and incarnation of the snapshot that read them."""

    bounds: HistoryCursor
    """The session id, creation time, clear position and last position the items were read at."""
    incarnation: str
    items: tuple[bytes, ...]
    size: int
    """What the entry counts against :data:`ITEM_CACHE_BYTES`."""

    @staticmethod
    def of(bounds: HistoryCursor, incarnation: str, items: tuple[bytes, ...]) -> KnownItems:
        """An entry for ``items``, its size counted."""
        return KnownItems(bounds, incarnation, items, sum(map(len, items)) + ITEM_OVERHEAD_BYTES * len(items))


@dataclass(slots=True)
class ItemsSeen:
    """What a Load's snapshot is handed (``known``, if the cache has an entry) and what it read (``read``: the
    whole history's items at the snapshot's bounds, set only when the reply holds them all)."""

    known: KnownItems | None
    read: KnownItems | None = None


class ItemCache:
    """Whole-history items of recent Loads, per session and format (see the module docstring)."""

    __slots__ = ("_drops", "_entries", "_formats", "_size", "largest_bytes", "max_bytes")

    def __init__(self, max_bytes: int = ITEM_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        #: The largest entry kept: an eighth of the whole (one long history does not push out every other).
        self.largest_bytes = max_bytes // 8
        self._entries: OrderedDict[tuple[str, str], KnownItems] = OrderedDict()
        self._formats: dict[str, set[str]] = {}
        self._size = 0
        self._drops = 0

    @property
    def size(self) -> int:
        """The bytes the entries count."""
        return self._size

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, session_id: str, item_format: str) -> tuple[KnownItems | None, int]:
        """The entry of ``session_id``'s items of ``item_format`` (None if none; now the most recently used), and a
        ticket for :meth:`put`."""
        key = (session_id, item_format)
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found, self._drops

    def put(self, item_format: str, entry: KnownItems, ticket: int) -> None:
        """Keep ``entry`` (replacing the session's entry of that format), unless a drop came since ``ticket`` was
        handed out (the entry may hold what that write erased) or it is larger than :attr:`largest_bytes`."""
        sid = entry.bounds.session_id
        self._remove((sid, item_format))
        if ticket != self._drops or entry.size > self.largest_bytes:
            return
        self._entries[(sid, item_format)] = entry
        self._formats.setdefault(sid, set()).add(item_format)
        self._size += entry.size
        while self._size > self.max_bytes:
            self._remove(next(iter(self._entries)))

    def drop(self, session_id: str) -> None:
        """Forget the session's entries (a write that may change or erase them was submitted)."""
        self._drops += 1
        for item_format in self._formats.pop(session_id, set()):
            gone = self._entries.pop((session_id, item_format))
            self._size -= gone.size

    def _remove(self, key: tuple[str, str]) -> None:
        gone = self._entries.pop(key, None)
        if gone is None:
            return
        self._size -= gone.size
        formats = self._formats[key[0]]
        formats.discard(key[1])
        if not formats:
            del self._formats[key[0]]
