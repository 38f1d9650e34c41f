"""Bounded Loads (issue 14): the last N entries, entries after a position or a time, in the full Load's order.

The window's order must be the full Load's order restricted to the window's
entries (a repair's synthetic result sits right after its assistant message,
even when the window holds the result and not the assistant), ``complete``
must say whether a visible entry was left out, and the work must not grow
with the history: the storage counts the history events a Load reads.
"""

from __future__ import annotations

import random

import pytest

from claw_sessiond.model import LoadWindow, Message
from claw_sessiond.storage import Storage
from claw_sessiond.storage.paging import ITEM_PAGE_ROWS, PAGE_BYTES
from tests.storage._support import WORKDIR, append, assistant, clear, history, read, result, user


async def window(storage: Storage, sid: str, *, repair: bool = False, **bound: object) -> tuple[list[Message], bool]:
    loaded = await storage.load(sid, WORKDIR, "w", repair=repair, window=LoadWindow(**bound))  # type: ignore[arg-type]
    return await history(storage, loaded), loaded.complete


def positions(messages: list[Message]) -> list[int]:
    return [m.position for m in messages]


async def test_last_after_position_and_after_time(storage: Storage) -> None:
    await append(storage, "s", user("old"))
    await clear(storage, "s")  # position 2
    await append(storage, "s", *(user(f"m{i}") for i in range(5)))  # positions 3..7
    full = await read(storage, "s")
    assert positions(full) == [3, 4, 5, 6, 7]

    assert positions((await window(storage, "s", last=2))[0]) == [6, 7]
    assert (await window(storage, "s", last=2))[1] is False
    assert (await window(storage, "s", last=5)) == (full, True)
    assert (await window(storage, "s", last=50)) == (full, True)

    assert positions((await window(storage, "s", after_position=5))[0]) == [6, 7]
    assert (await window(storage, "s", after_position=5))[1] is False
    assert (await window(storage, "s", after_position=1)) == (full, True)  # before the clear: all visible
    assert (await window(storage, "s", after_position=2)) == (full, True)
    assert (await window(storage, "s", after_position=7)) == ([], False)
    assert (await window(storage, "s", after_position=99)) == ([], False)

    stamps = [m.created_at for m in full]
    later = await append(storage, "s", user("later"))
    got, complete = await window(storage, "s", after_time=max(stamps))
    assert positions(got) == [later.first_position] and not complete
    got, complete = await window(storage, "s", after_time="2000-01-01T00:00:00.000000Z")
    assert positions(got) == [3, 4, 5, 6, 7, 8] and complete
    assert await window(storage, "s", after_time="2999-01-01T00:00:00.000000Z") == ([], False)


async def test_an_unknown_or_empty_session_has_an_empty_complete_window(storage: Storage) -> None:
    assert await window(storage, "nobody", last=3) == ([], True)
    await append(storage, "s", user("x"))
    await clear(storage, "s")
    assert await window(storage, "s", last=3) == ([], True)
    assert await window(storage, "s", after_position=1) == ([], True)


async def test_a_window_holding_a_repair_but_not_its_assistant_shows_it_first(storage: Storage) -> None:
    await append(storage, "s", user("q"), assistant("c1", "c2"), result("c1"), user("u1"), user("u2"))
    await storage.load("s", WORKDIR, "t")  # repairs c2 at position 6, shown right after position 3
    full = await read(storage, "s")
    assert positions(full) == [1, 2, 3, 6, 4, 5]
    got, complete = await window(storage, "s", last=3)  # positions 4, 5, 6
    assert positions(got) == [6, 4, 5] and not complete
    got, _ = await window(storage, "s", last=4)  # 3..6: c1's result and c2's repair lead, by position
    assert positions(got) == [3, 6, 4, 5]
    got, _ = await window(storage, "s", last=5)  # 2..6: the assistant is in: its results follow it
    assert positions(got) == [2, 3, 6, 4, 5]


async def test_a_bounded_load_still_repairs_the_whole_session(storage: Storage) -> None:
    await append(storage, "s", assistant("early"), *(user(f"m{i}") for i in range(20)))
    loaded = await storage.load("s", WORKDIR, "t", window=LoadWindow(last=2))
    assert [r.tool_call_id for r in loaded.repairs] == ["early"]
    got = await history(storage, loaded)
    assert [(m.position, m.synthetic_reason) for m in got] == [(22, "interrupted"), (21, "")]
    assert loaded.session.last_position == 22 and not loaded.complete


@pytest.mark.parametrize("seed", range(12))
async def test_every_window_is_the_full_order_restricted_to_it(storage: Storage, seed: int) -> None:
    rng = random.Random(seed)
    sid = f"r{seed}"
    open_calls: list[str] = []
    for n in range(1, rng.randint(5, 40) + 1):
        pick = rng.random()
        if pick < 0.25:
            calls = [f"c{n}-{k}" for k in range(rng.randint(1, 3))]
            await append(storage, sid, assistant(*calls))
            open_calls += calls
        elif pick < 0.45 and open_calls:
            await append(storage, sid, result(open_calls.pop(rng.randrange(len(open_calls)))))
        elif pick < 0.55:
            await storage.load(sid, WORKDIR, "t")  # repairs every open call, far from its assistant
            open_calls = []
        elif pick < 0.6:
            await clear(storage, sid)
            open_calls = []
        elif pick < 0.7:
            await append(storage, sid, Message("other", format="x", item=bytes([n % 256])))
        else:
            await append(storage, sid, user(f"u{n}"))
    full = await read(storage, sid)
    visible = sorted(positions(full))
    for last in range(1, len(visible) + 2):
        got, complete = await window(storage, sid, last=last)
        kept = set(visible[-last:])
        assert got == [m for m in full if m.position in kept], (seed, last)
        assert complete == (last >= len(visible))
    for after in range(0, (visible[-1] if visible else 0) + 1):
        got, complete = await window(storage, sid, after_position=after)
        assert got == [m for m in full if m.position > after], (seed, after)
        assert complete == all(p > after for p in visible)


async def test_a_window_larger_than_a_page_is_streamed_in_the_same_order(storage: Storage) -> None:
    await append(storage, "s", user("q"), assistant("early"))
    await append(storage, "s", *(user(f"m{i} " + "x" * 3000) for i in range(700)))
    await storage.load("s", WORKDIR, "t")  # the repair of "early" lands at 703
    full = await read(storage, "s")
    loaded = await storage.load("s", WORKDIR, "w", repair=False, window=LoadWindow(last=600))
    assert loaded.cursor is not None and not loaded.complete  # over one page: streamed by pages
    got = await history(storage, loaded)
    kept = set(sorted(positions(full))[-600:])
    assert got == [m for m in full if m.position in kept]
    assert got[0].synthetic_reason == "interrupted"


async def test_the_last_ten_cost_the_same_at_ten_and_at_ten_thousand_entries(storage: Storage) -> None:
    await append(storage, "small", *(user(f"m{i}") for i in range(10)))
    for start in range(0, 10_000, 1000):
        await append(storage, "large", *(user(f"m{i}") for i in range(start, start + 1000)))

    async def events_read(sid: str, window_: LoadWindow | None) -> int:
        before = storage.counters.history_events_read
        loaded = await storage.load(sid, WORKDIR, "t", repair=False, window=window_)
        got = await history(storage, loaded)
        assert len(got) == (10 if window_ else 10_000)
        return storage.counters.history_events_read - before

    small = await events_read("small", LoadWindow(last=10))
    large = await events_read("large", LoadWindow(last=10))
    assert small == large == 10
    assert await events_read("large", LoadWindow(after_position=9_990)) == 10
    assert await events_read("large", None) >= 10_000  # the counter counts: a full Load reads everything


async def test_item_pages_are_the_items_of_one_format_in_position_order(storage: Storage) -> None:
    """``Storage.load(items_format=...)`` + ``item_pages`` (``LoadRequest.items_format``): the items alone, their
    first page with the Load and the rest page by page, in the order written, for a whole history and a window;
    some items too large to come with a page's first read (20 KB) among small ones; pages cut by their count
    (``ITEM_PAGE_ROWS``: a run of small items) and by their bytes (``PAGE_BYTES``: where the large ones are)."""
    await append(storage, "s", assistant("a", "b"), result("b"), result("a"))  # no items
    large = {n for n in range(3100, 4200) if n % 7 == 1}
    written = [
        Message("user", f"u{n}", format="f.one", item=b'{"n":%d}' % n + b" " * (20_000 if n in large else 0))
        if n % 3
        else Message("user", f"o{n}", format="f.two", item=b"other")
        for n in range(4200)
    ]
    for at in range(0, len(written), 600):
        await append(storage, "s", *written[at : at + 600])
    mine = [m.item for m in written if m.format == "f.one"]
    loaded = await storage.load("s", WORKDIR, "t", repair=False, items_format="f.one")
    assert loaded.messages == [] and loaded.cursor is not None and loaded.complete
    assert len(loaded.items) == ITEM_PAGE_ROWS  # small items first: cut by the count
    pages = [page async for page in storage.item_pages(loaded.cursor, "f.one")]
    assert loaded.items + [item for page, _last in pages for item in page] == mine
    assert len(pages) >= 2 and all(0 < len(page) <= ITEM_PAGE_ROWS for page, _last in pages)
    assert all(sum(map(len, page)) <= PAGE_BYTES for page, _last in pages)  # the large items: cut by bytes
    assert [last for _page, last in pages] == [False] * (len(pages) - 1) + [True]  # the reply ends with it

    loaded = await storage.load("s", WORKDIR, "t", repair=False, window=LoadWindow(last=6), items_format="f.one")
    assert (loaded.items, loaded.cursor, loaded.messages, loaded.complete) == (mine[-4:], None, [], False)
    loaded = await storage.load(
        "s", WORKDIR, "t", repair=False, window=LoadWindow(after_position=3), items_format="f.one"
    )
    assert not loaded.complete and loaded.cursor is not None  # the first three entries are left out
    assert loaded.items + [i async for page, _last in storage.item_pages(loaded.cursor, "f.one") for i in page] == mine
    unknown = await storage.load("nobody", WORKDIR, "t", repair=False, items_format="f.one")
    assert (unknown.items, unknown.cursor, unknown.messages) == ([], None, [])


async def test_a_page_of_items_just_over_the_inline_size_is_read_whole_and_cut_by_bytes(storage: Storage) -> None:
    """Items each a byte over what a page's first read carries (``PAGE_BYTES // ITEM_PAGE_ROWS``): every item of
    a page comes from its second statement (more positions than one SQLite statement takes), and the page is cut
    at ``PAGE_BYTES`` before ``ITEM_PAGE_ROWS``."""
    size = PAGE_BYTES // ITEM_PAGE_ROWS + 1
    written = [b"%05d" % n + b"x" * (size - 5) for n in range(ITEM_PAGE_ROWS + 100)]
    for at in range(0, len(written), 600):
        await append(storage, "m", *(Message("user", "u", format="f", item=i) for i in written[at : at + 600]))
    loaded = await storage.load("m", WORKDIR, "t", repair=False, items_format="f")
    assert loaded.cursor is not None
    assert len(loaded.items) == PAGE_BYTES // size  # the bytes' bound, below the count's
    rest = [item async for page, _last in storage.item_pages(loaded.cursor, "f") for item in page]
    assert loaded.items + rest == written
