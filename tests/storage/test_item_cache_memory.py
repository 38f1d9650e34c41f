"""Erased items do not stay in the item cache (``storage/item_cache.py``): the two ways found by a review."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path

import pytest

from claw_sessiond.storage import Storage
from tests.storage._support import Stores, append
from tests.storage.test_item_cache import SID, F, item, items, n


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_a_delete_whose_caller_is_cancelled_drops_the_items_once_it_commits(storage: Storage) -> None:
    """When the caller of an erasing write is cancelled (an RPC deadline, a client gone) the write stays queued
    and commits later (``engine.settle``: "the write stands"). A Load in between reads the session as it was and
    keeps it; the drop must come when the Delete has committed, not when its caller went away, or the erased
    items stay in the daemon's memory (``Storage._dropping``)."""
    await append(storage, SID, item(0), item(1))
    assert await items(storage) == n(0, 1)
    # Another session's slow write holds SQLite's one writer thread (the Delete queues behind it).
    hold, held = threading.Event(), threading.Event()

    def slow(_conn: object) -> None:
        held.set()
        hold.wait(10)

    writer = storage.engine.writer  # type: ignore[attr-defined]
    blocker = asyncio.create_task(writer.submit(slow, "other"))
    while not held.is_set():
        await asyncio.sleep(0.01)
    deleting = asyncio.create_task(storage.delete(SID))
    await asyncio.sleep(0.05)  # the Delete's job is queued
    deleting.cancel()  # the caller goes away; the Delete stays queued
    with contextlib.suppress(asyncio.CancelledError):
        await deleting
    assert await items(storage) == n(0, 1)  # not committed yet: read, and kept under the new ticket
    hold.set()
    await blocker
    for _ in range(200):  # the Delete commits
        if not (await storage.load(SID, "", "t", repair=False)).session.stored:
            break
        await asyncio.sleep(0.01)
    assert await items(storage) == []  # deleted (reads stay right: the snapshot's check)
    kept, _ticket = storage.item_cache.get(SID, F)
    assert kept is None, f"the deleted session's items are still held in memory: {kept.items!r}"


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
async def test_a_load_after_another_daemons_delete_drops_the_erased_items(stores: Stores, tmp_path: Path) -> None:
    """A session erased by another daemon on the same database leaves this daemon's entry until its next Load of
    that session: that Load finds no row and returns before ``first_items`` (``loading.read_load``), and must
    drop the entry it was handed, or the erased items stay in this daemon's memory until pushed out."""
    mine = await stores.open(tmp_path / "main")
    other = await stores.open(tmp_path / "main")
    await append(other, SID, item(0), item(1))
    assert await items(mine) == n(0, 1)
    await other.delete(SID)  # a second daemon (or its retention) erases the session
    assert await items(mine) == []  # this daemon's next Load of that session
    kept, _ticket = mine.item_cache.get(SID, F)
    assert kept is None, f"the deleted session's items are still held in memory: {kept.items!r}"
