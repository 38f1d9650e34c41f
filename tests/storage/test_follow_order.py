"""A follow-all (WatchAll) never skips an event while sessions commit concurrently (every backend).

A follower reads ``follow_batch`` pages after the last event id it received, as the service does.
On a backend whose event ids are drawn before commit (PostgreSQL's identity column), a session
whose transaction drew a lower id but committed later could be passed by the cursor; the
follow-all cursor must be commit-ordered. Here several sessions append in parallel, transaction
after transaction, while a follower reads without pause; at the end it must have received every
history event exactly once, each session's in position order.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from claw_sessiond.storage import Storage
from tests.storage._support import Stores, append, user

SESSIONS = 8
APPENDS = 30


async def _follow_until(storage: Storage, after: int, want: int, done: asyncio.Event) -> list[tuple[int, str, int]]:
    """Follow from ``after`` until ``want`` events arrived (or the writers are done and nothing more comes)."""
    seen: list[tuple[int, str, int]] = []
    idle_after_done = 0
    for _ in range(100_000):  # bounded: far more pages than the writers make
        rows, more = await storage.follow_batch(after, 7)
        for event_id, sid, position, _item in rows:
            seen.append((event_id, sid, position))
            after = event_id
        if len(seen) >= want:
            return seen
        if done.is_set() and not rows and not more:
            idle_after_done += 1
            if idle_after_done > 50:
                return seen
            await asyncio.sleep(0.01)
        elif not rows:
            await asyncio.sleep(0)
    return seen


async def test_a_follower_receives_every_event_of_sessions_committing_at_once(storage: Storage) -> None:
    start = await storage.follow_start(0)
    done = asyncio.Event()

    async def writer(sid: str) -> None:
        for i in range(APPENDS):
            await append(storage, sid, user(f"{sid}-{i}"))

    async def writers() -> None:
        try:
            await asyncio.gather(*(writer(f"s{n}") for n in range(SESSIONS)))
        finally:
            done.set()

    follower = asyncio.ensure_future(_follow_until(storage, start, SESSIONS * APPENDS, done))
    await writers()
    seen = await asyncio.wait_for(follower, 60)
    ids = [e for e, _s, _p in seen]
    assert ids == sorted(set(ids)), "event ids arrive increasing, each once"
    by_session: dict[str, list[int]] = {}
    for _e, sid, position in seen:
        by_session.setdefault(sid, []).append(position)
    missing = {sid: APPENDS - len(p) for sid, p in by_session.items() if len(p) != APPENDS}
    assert len(seen) == SESSIONS * APPENDS, f"the follower skipped events: {missing or 'whole sessions'}"
    assert all(p == list(range(1, APPENDS + 1)) for p in by_session.values())


async def test_two_storages_on_one_store_never_make_a_follower_skip(
    stores: Stores, tmp_path: Path, backend: str
) -> None:
    """On PostgreSQL, two storages on one database stand for two daemons (SQLite: one daemon per file, so
    the second writer is the same storage)."""
    first = await stores.open(tmp_path / "main")
    second = await stores.open(tmp_path / "main") if backend == "postgres" else first
    start = await first.follow_start(0)
    done = asyncio.Event()

    async def writer(store: Storage, sid: str) -> None:
        for i in range(APPENDS):
            await append(store, sid, user(f"{sid}-{i}"))

    async def writers() -> None:
        try:
            await asyncio.gather(*(writer(second if n % 2 else first, f"s{n}") for n in range(SESSIONS)))
        finally:
            done.set()

    follower = asyncio.ensure_future(_follow_until(first, start, SESSIONS * APPENDS, done))
    await writers()
    seen = await asyncio.wait_for(follower, 60)
    assert len(seen) == SESSIONS * APPENDS and len({(s, p) for _e, s, p in seen}) == len(seen)
