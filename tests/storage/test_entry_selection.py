"""Point and range reads of a Load: by client ids, by a client id prefix, before a position.

Every backend returns the visible entries chosen, in position order, with ``complete`` false
whenever the filter left a visible entry out; hidden entries (an edit's) and entries before a
clear are never chosen; ids not stored are simply absent.
"""

from __future__ import annotations

import dataclasses

import pytest

from claw_sessiond.model import LoadWindow, Message
from claw_sessiond.storage import Storage
from tests.storage._support import WORKDIR, append, clear, history, user


def tagged(client_id: str, text: str = "") -> Message:
    return dataclasses.replace(user(text or client_id), client_id=client_id)


async def chosen(storage: Storage, sid: str, *, repair: bool = False, **bound: object) -> tuple[list[int], bool]:
    loaded = await storage.load(sid, WORKDIR, "w", repair=repair, window=LoadWindow(**bound))  # type: ignore[arg-type]
    return [m.position for m in await history(storage, loaded)], loaded.complete


async def test_client_ids_choose_their_visible_entries_in_position_order(storage: Storage) -> None:
    await append(storage, "s", tagged("gone"))
    await clear(storage, "s")  # position 2: "gone" is out of the projection
    await append(storage, "s", tagged("a"), user("plain"), tagged("b"), tagged("c/1"), tagged("c/2"), tagged("d"))
    # positions 3..8
    assert await chosen(storage, "s", client_ids=("d", "a", "missing", "gone")) == ([3, 8], False)
    assert await chosen(storage, "s", client_ids=("missing",)) == ([], False)
    assert await chosen(storage, "nobody", client_ids=("a",)) == ([], True)
    loaded = await storage.load("s", WORKDIR, "w", repair=False, window=LoadWindow(client_ids=("b",)))
    (only,) = await history(storage, loaded)
    assert (only.position, only.content, only.client_id) == (5, "b", "b")


async def test_a_prefix_chooses_through_its_range_and_pages_by_after_position(storage: Storage) -> None:
    await append(
        storage,
        "s",
        tagged("c/1"),
        tagged("c"),
        tagged("c/2"),
        tagged("c0"),
        tagged("b/1"),
        tagged("c/\U0010ffff"),
        tagged("c/3"),
        tagged("c\U0010ffff/x"),
    )
    assert await chosen(storage, "s", client_id_prefix="c/") == ([1, 3, 6, 7], False)
    assert await chosen(storage, "s", client_id_prefix="c\U0010ffff") == ([8], False)
    assert await chosen(storage, "s", client_id_prefix="c") == ([1, 2, 3, 4, 6, 7, 8], False)
    assert await chosen(storage, "s", client_id_prefix="") == ([1, 2, 3, 4, 5, 6, 7, 8], True)  # no filter
    # At most max_entries, the lowest positions; continue after the last one received.
    assert await chosen(storage, "s", client_id_prefix="c/", max_entries=2) == ([1, 3], False)
    assert await chosen(storage, "s", client_id_prefix="c/", max_entries=2, after_position=3) == ([6, 7], False)
    assert await chosen(storage, "s", client_id_prefix="c/", before_position=7) == ([1, 3, 6], False)
    assert await chosen(storage, "s", client_id_prefix="z") == ([], False)


async def test_every_entry_chosen_is_complete(storage: Storage) -> None:
    await append(storage, "s", tagged("x/1"), tagged("x/2"))
    assert await chosen(storage, "s", client_id_prefix="x/") == ([1, 2], True)
    assert await chosen(storage, "s", client_ids=("x/2", "x/1")) == ([1, 2], True)


async def test_before_position_pages_backwards_with_last_and_bounds_a_range(storage: Storage) -> None:
    await append(storage, "s", *(user(f"m{i}") for i in range(10)))  # positions 1..10
    assert await chosen(storage, "s", before_position=4) == ([1, 2, 3], False)
    assert await chosen(storage, "s", before_position=11) == (list(range(1, 11)), True)
    assert await chosen(storage, "s", before_position=99) == (list(range(1, 11)), True)
    assert await chosen(storage, "s", last=3, before_position=9) == ([6, 7, 8], False)
    assert await chosen(storage, "s", last=3, before_position=3) == ([1, 2], False)
    assert await chosen(storage, "s", last=3, before_position=1) == ([], False)
    assert await chosen(storage, "s", after_position=2, before_position=6) == ([3, 4, 5], False)
    assert await chosen(storage, "s", after_position=0, before_position=11) == (list(range(1, 11)), True)


@pytest.mark.parametrize("n", [1300])
async def test_a_before_position_read_larger_than_a_page_streams_its_bound(storage: Storage, n: int) -> None:
    await append(storage, "s", *(user(f"m{i}") for i in range(1000)))
    await append(storage, "s", *(user(f"n{i}") for i in range(n - 1000)))
    got, complete = await chosen(storage, "s", before_position=n)
    assert got == list(range(1, n)) and not complete
    got, complete = await chosen(storage, "s", last=700, before_position=1001)
    assert got == list(range(301, 1001)) and not complete
