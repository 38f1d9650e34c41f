"""The items of whole Loads kept between Loads (``storage/item_cache.py``): every write that can change them is seen.

A whole Load of items (``items_format``, no window) keeps what it read; the next one checks it in its own
snapshot and reads only the items after it. Each test below makes the cache hold a session's items, makes
one kind of write, then puts the entry read *before* the write back into the cache (as if the write had not
dropped it: the drop is hygiene, the snapshot's check is what keeps reads right; a second daemon on the
same PostgreSQL database never drops this daemon's entries) and proves the next Load returns the items as
they now are, the same as a Load with no cache at all. One kind per test, on every backend; on PostgreSQL
also with the write made by a second storage on the same database (a second daemon).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.model import HistoryCursor, LoadWindow, Message, ToolCall
from claw_sessiond.storage import Storage
from claw_sessiond.storage.item_cache import ITEM_OVERHEAD_BYTES, ItemCache, KnownItems
from claw_sessiond.validate_sessions import prepare_fork, prepare_update
from tests.storage._support import (
    WORKDIR,
    Stores,
    append,
    clear,
    delete_entries,
    export_lines,
    import_lines,
    job,
    renamed,
)
from tests.storage._support import (
    edit as edit_on,
)

F = "f.items"
SID = "s"


def item(n: int | str, client_id: str = "") -> Message:
    return Message("user", f"u{n}", format=F, item=f'{{"n":"{n}"}}'.encode(), client_id=client_id)


def call(call_id: str) -> Message:
    return Message("assistant", "", tool_calls=(ToolCall(call_id, "bash", "{}"),), format=F, item=b'{"call":1}')


def output(call_id: str) -> Message:
    return Message("tool", "done", tool_call_id=call_id, format=F, item=b'{"output":1}')


def n(*values: int | str) -> list[bytes]:
    return [f'{{"n":"{v}"}}'.encode() for v in values]


async def items(storage: Storage, session_id: str = SID) -> list[bytes]:
    """The whole history's items, as the adapter reads them (a look: ``repair=False``)."""
    loaded = await storage.load(session_id, WORKDIR, "t", repair=False, items_format=F)
    rest = [] if loaded.cursor is None else [i async for page, _ in storage.item_pages(loaded.cursor, F) for i in page]
    return loaded.items + rest


async def uncached(storage: Storage, session_id: str = SID) -> list[bytes]:
    """The same items read with the cache emptied first (what a Load without any cache returns)."""
    storage.item_cache.drop(session_id)
    return await items(storage, session_id)


async def kept_then_written(
    reader: Storage, write: Callable[[], Awaitable[Any]], session_id: str = SID
) -> tuple[KnownItems, list[bytes]]:
    """Fill ``reader``'s cache, run ``write``, put the entry read before it back, and read again."""
    before = await items(reader, session_id)
    stale, _ticket = reader.item_cache.get(session_id, F)
    assert stale is not None and list(stale.items) == before  # the cache holds the read: the check is exercised
    await write()
    reader.item_cache.put(F, stale, reader.item_cache.get(session_id, F)[1])
    assert reader.item_cache.get(session_id, F)[0] is stale
    return stale, await items(reader, session_id)


async def edit(storage: Storage, *replacements: Message, remove_last: int = 0, after: int = 0) -> Any:
    return await edit_on(storage, SID, *replacements, remove_last=remove_last, after=after)


# ---------------------------------------------------------------- the cache is used


async def test_a_second_whole_load_reads_only_what_was_appended(storage: Storage) -> None:
    """The Load after a Load reads no item again; after an Append it reads the appended ones alone."""
    await append(storage, SID, *(item(i) for i in range(5)))
    assert await items(storage) == n(0, 1, 2, 3, 4)
    read = storage.counters.history_events_read
    assert await items(storage) == n(0, 1, 2, 3, 4)
    assert storage.counters.history_events_read == read  # nothing read again
    await append(storage, SID, item(5), Message("user", "plain"), item(6))
    assert await items(storage) == n(0, 1, 2, 3, 4, 5, 6)
    assert storage.counters.history_events_read == read + 2  # the two new items alone
    assert await uncached(storage) == n(0, 1, 2, 3, 4, 5, 6)


async def test_a_window_and_another_format_do_not_use_the_entry(storage: Storage) -> None:
    """Only a whole Load of the entry's format uses it; a window reads its own range."""
    await append(storage, SID, item(0), Message("user", "o", format="f.other", item=b"x"), item(1))
    assert await items(storage) == n(0, 1)
    other = await storage.load(SID, WORKDIR, "t", repair=False, items_format="f.other")
    assert other.items == [b"x"]
    last = await storage.load(SID, WORKDIR, "t", repair=False, window=LoadWindow(last=1), items_format=F)
    assert last.items == n(1)


# ---------------------------------------------------------------- one test per kind of write


async def test_append_with_state_deltas(storage: Storage) -> None:
    await append(storage, SID, item(0))
    _stale, got = await kept_then_written(
        storage, lambda: storage.append(job(SID, item(1), item(2), state_deltas=[("", '{"turn": 2}')]))
    )
    assert got == n(0, 1, 2) == await uncached(storage)


async def test_a_result_that_supersedes_the_loads_own_repair(storage: Storage) -> None:
    """A Load's repair writes a synthetic result (no item); a late real result hides it (no edit event)."""
    await append(storage, SID, item(0), call("c1"))
    repaired = await storage.load(SID, WORKDIR, "t", repair=True, items_format=F)  # the Load's own repair
    assert len(repaired.repairs) == 1
    assert await items(storage) == [*n(0), b'{"call":1}']
    _stale, got = await kept_then_written(storage, lambda: append(storage, SID, output("c1")))
    assert got == [*n(0), b'{"call":1}', b'{"output":1}'] == await uncached(storage)


async def test_the_loads_own_repair(storage: Storage) -> None:
    await append(storage, SID, item(0), call("c1"))
    _stale, got = await kept_then_written(storage, lambda: storage.load(SID, WORKDIR, "t", repair=True))
    assert got == [*n(0), b'{"call":1}'] == await uncached(storage)


async def test_edit_tail_pop(storage: Storage) -> None:
    await append(storage, SID, *(item(i) for i in range(4)))
    _stale, got = await kept_then_written(storage, lambda: edit(storage, remove_last=1))
    assert got == n(0, 1, 2) == await uncached(storage)


async def test_edit_tail_with_replacements(storage: Storage) -> None:
    await append(storage, SID, *(item(i) for i in range(4)))
    _stale, got = await kept_then_written(storage, lambda: edit(storage, item("x"), item("y"), after=2))
    assert got == n(0, 1, "x", "y") == await uncached(storage)


async def test_delete_entries_by_client_id(storage: Storage) -> None:
    """LangGraph's delete of entries by client id (and by range): an edit event, entries before the bound."""
    await append(storage, SID, *(item(i, client_id=f"k{i}") for i in range(5)))

    def delete(**selector: Any) -> Any:
        return delete_entries(storage, SID, **selector)

    _stale, got = await kept_then_written(storage, lambda: delete(client_ids=("k1",)))
    assert got == n(0, 2, 3, 4) == await uncached(storage)
    _stale, got = await kept_then_written(storage, lambda: delete(from_position=1, to_position=3))
    assert got == n(3, 4) == await uncached(storage)


@pytest.mark.parametrize("erase", [False, True])
async def test_clear(storage: Storage, erase: bool) -> None:
    await append(storage, SID, item(0), item(1))

    async def cleared() -> None:
        await storage.clear(SID, request_id="", expected_last_position=0, workdir="", trace_id="t", erase=erase)
        await append(storage, SID, item(2))

    _stale, got = await kept_then_written(storage, cleared)
    assert got == n(2) == await uncached(storage)


async def test_delete_and_recreation_at_the_same_last_position(storage: Storage) -> None:
    """A session deleted and written again up to the same last position: another incarnation."""
    await append(storage, SID, item(0), item(1))

    async def recreated() -> None:
        await storage.delete(SID)
        await append(storage, SID, item("a"), item("b"))

    stale, got = await kept_then_written(storage, recreated)
    assert got == n("a", "b") == await uncached(storage)
    assert (await storage.load(SID, WORKDIR, "t", repair=False)).session.last_position == stale.bounds.last_position


async def test_retention(storage: Storage) -> None:
    await append(storage, SID, item(0), item(1))

    async def swept_and_written() -> None:
        assert await storage.delete_if_not_updated_since(SID, "9999-01-01T00:00:00.000000Z") > 0
        await append(storage, SID, item("a"), item("b"))

    _stale, got = await kept_then_written(storage, swept_and_written)
    assert got == n("a", "b") == await uncached(storage)


async def test_fork_into_a_deleted_id(storage: Storage) -> None:
    await append(storage, "src", item("a"), item("b"))
    await append(storage, SID, item(0), item(1))

    async def forked() -> None:
        await storage.delete(SID)
        fork = prepare_fork("src", SID, up_to_position=0, workdir="", labels=None, request_id="", trace_id="t")
        await storage.fork_session(fork)

    _stale, got = await kept_then_written(storage, forked)
    assert got == n("a", "b") == await uncached(storage)


async def test_import_replace_with_the_same_bounds(storage: Storage) -> None:
    """An import that replaces a session with another history of the same length, same creation time."""
    await append(storage, SID, item(0), item(1))
    lines = await export_lines(storage, SID)
    crafted = []
    for line in lines:
        obj = json.loads(line)
        if obj.get("item_b64") == base64.b64encode(n(1)[0]).decode():
            obj["item_b64"] = base64.b64encode(n("other")[0]).decode()
        crafted.append(json.dumps(obj))
    _stale, got = await kept_then_written(storage, lambda: import_lines(storage, crafted, "replace"))
    assert got == n(0, "other") == await uncached(storage)


async def test_import_merge(stores: Stores, tmp_path: Path) -> None:
    """A merging import keeps the incarnation and adds events after the history, an edit among them."""
    storage = await stores.open(tmp_path / "main")
    source = await stores.open(tmp_path / "source")
    await append(source, "x", item(0), item(1))
    await import_lines(storage, renamed(await export_lines(source, "x"), SID))
    await edit_on(source, "x", item("x"), remove_last=1)  # 1 removed by an edit event, "x" after it
    newer = renamed(await export_lines(source, "x"), SID)
    _stale, got = await kept_then_written(storage, lambda: import_lines(storage, newer, "merge"))
    assert got == await uncached(storage)
    assert got == n(0, "x")


async def test_update_of_state_and_a_drop_policy_changes_no_item(storage: Storage) -> None:
    """State, labels and a ``drop`` policy over an open call that has an item: the items stay as they are."""
    await append(storage, SID, item(0), call("c1"))
    update = prepare_update(
        SID,
        state_deltas=[("", '{"k": 1}')],
        set_labels={"a": "b"},
        remove_labels=[],
        tool_policy='{"repair": "drop"}',
        expected_last_position=0,
        request_id="",
        trace_id="t",
    )
    _stale, got = await kept_then_written(storage, lambda: storage.update_session(update))
    assert got == [*n(0), b'{"call":1}'] == await uncached(storage)


# ---------------------------------------------------------------- another daemon on the same database


async def test_writes_of_a_second_daemon_on_the_same_postgresql_database(
    backend: str, stores: Stores, tmp_path: Path
) -> None:
    """Two storages on one database stand for two daemons (SQLite: one daemon per file): each write of the
    second is seen by the first's next Load, whose cache the second never drops."""
    mine = await stores.open(tmp_path / "main")
    other = await stores.open(tmp_path / "main") if backend == "postgres" else mine
    await append(other, SID, item(0), item(1))
    assert await items(mine) == n(0, 1)
    await append(other, SID, item(2))
    assert await items(mine) == n(0, 1, 2)
    await edit_on(other, SID, remove_last=2)
    assert await items(mine) == n(0)
    await other.delete(SID)
    await append(other, SID, item("a"), item("b"), item("c"), item("d"))  # beyond the last position seen
    assert await items(mine) == n("a", "b", "c", "d")
    await clear(other, SID)
    assert await items(mine) == []
    assert mine.item_cache.get(SID, F)[0] is not None  # the check, not a drop, kept the reads right


# ---------------------------------------------------------------- the bounds


def test_the_cache_is_bounded_by_bytes_least_recently_used_first() -> None:
    def entry(sid: str, size: int) -> KnownItems:
        return KnownItems.of(HistoryCursor(sid, "t", 0, 1), "i", (b"x" * size,))

    one = 1000 + ITEM_OVERHEAD_BYTES
    cache = ItemCache(max_bytes=8 * one)
    for sid in "abcd":
        cache.put(F, entry(sid, 1000), cache.get(sid, F)[1])
    assert len(cache) == 4 and cache.size == 4 * one
    cache.get("a", F)  # now the most recently used
    cache.put(F, entry("e", 5 * 1000 + 4 * ITEM_OVERHEAD_BYTES), cache.get("e", F)[1])  # too large: an eighth at most
    assert cache.get("e", F)[0] is None
    for sid in "fghij":
        cache.put(F, entry(sid, 1000), cache.get(sid, F)[1])
    assert cache.size <= 8 * one
    assert cache.get("a", F)[0] is not None and cache.get("b", F)[0] is None  # b was the least recently used
    _known, ticket = cache.get("k", F)
    cache.drop("a")  # a write meanwhile: what was read before it is not kept
    cache.put(F, entry("k", 10), ticket)
    assert cache.get("k", F)[0] is None and cache.get("a", F)[0] is None
