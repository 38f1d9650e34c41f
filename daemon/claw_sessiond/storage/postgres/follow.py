"""A commit-ordered follow-all (WatchAll) on PostgreSQL: the event-id horizon.

Event ids come from an identity sequence, drawn when a row is inserted, not
when it commits: transaction A may draw id 100, B id 101, B commit first, and
a follower that read 101 and moved its cursor past it would never see 100.
The follower's cursor stays an event id (the protocol's ``after_event_id``);
what changes is how far a page may reach: only up to the **horizon**, the
highest id below which every id that will ever commit is already visible.

- A write transaction that may insert history events **announces** itself
  first (:data:`ANNOUNCE_SQL`, its first statement): it reads the next id the
  sequence would give, ``L``, and takes a transaction-level shared advisory
  lock whose key encodes ``L``. Every id it then draws is ``≥ L``. The lock
  goes away when it commits (after its rows became visible) or rolls back.
- A follower (:func:`horizon`) reads, in this order and in separate
  statements: ``V``, the last id the sequence gave; then the smallest ``L``
  among the announce locks held in this database (``pg_locks``). The horizon
  is ``min(V, L - 1)``. Its page is then read in a later statement, so with a
  snapshot taken after both.

Why nothing is skipped: take a transaction T that commits an id ``e ≤
horizon``. If T announced before the follower read ``pg_locks`` and still held
its lock then, ``e ≥ L > horizon``: impossible. If T had not announced yet, it
drew ``e`` after the follower read ``V``, so ``e > V ≥ horizon``: impossible.
So T had released its lock (committed) before the follower's page statement
began, and the page sees ``e``.

The cost: one statement per history write, one read of ``pg_locks`` per
follow page, and a follow-all that delivers an event only once every write
transaction announced before it has ended (so a slow write anywhere in the
database delays the follow-all, never a session's Watch). Lock keys use the
two-key form with :data:`FOLLOW_LOCK_NS` in the first key's high 16 bits and
48 bits of ``L`` below (ids up to 2^48).
"""

from __future__ import annotations

from typing import Any, Final

from ..base import FollowItem
from ..sql.store_reads import follow_rows
from .dialect import POSTGRES
from .reads import snapshot

__all__ = ["ANNOUNCE_SQL", "FOLLOW_LOCK_NS", "follow_rows_after", "horizon"]

#: High 16 bits of the first key of every announce lock ("FL"); no other lock of the daemon uses them.
FOLLOW_LOCK_NS: Final = 0x464C

_NEXT_ID: Final = "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS n FROM events_event_id_seq"

#: A history writer's announcement: a shared advisory lock keyed by the lowest id it can draw.
ANNOUNCE_SQL: Final = (
    f"SELECT pg_advisory_xact_lock_shared(({FOLLOW_LOCK_NS << 16} | ((n >> 32) & 65535))::int, "
    f"(n & 4294967295)::bit(32)::int) FROM ({_NEXT_ID}) AS s"
)

_LAST_ID: Final = "SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM events_event_id_seq"

_LOWEST_ANNOUNCED: Final = (
    "SELECT min(((classid::bigint & 65535) << 32) | objid::bigint) FROM pg_locks "
    "WHERE locktype = 'advisory' AND objsubid = 2 AND (classid::bigint >> 16) = $1 "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


async def horizon(conn: Any) -> tuple[int, bool]:
    """The highest event id a follower may read up to now, and whether ids below the last drawn one are
    still held back by write transactions in flight. Call it outside a snapshot, before the read it bounds."""
    last = int(await conn.fetchval(_LAST_ID))
    lowest = await conn.fetchval(_LOWEST_ANNOUNCED, FOLLOW_LOCK_NS)
    if lowest is None or int(lowest) > last:
        return last, False
    return int(lowest) - 1, True


async def follow_rows_after(conn: Any, after_event_id: int, limit: int) -> tuple[list[FollowItem], bool, bool]:
    """History events of any session after an event id, up to the horizon (``store_reads.follow_rows``), and
    True if the horizon held back ids that may still commit."""
    bound, held = await horizon(conn)
    if bound <= after_event_id:
        return [], False, held
    async with snapshot(conn):
        rows, more = await follow_rows(conn, POSTGRES, after_event_id, limit, bound)
    return rows, more, held
