"""One total order per session (SPEC §4): gapless, unique positions; submission order kept; durable."""

from __future__ import annotations

import asyncio
from pathlib import Path

from claw_sessiond.storage import Storage
from tests.storage._support import Stores, append, clear, contents, read, user

WRITERS = 8
APPENDS = 25


async def test_concurrent_appenders_get_gapless_unique_positions(storage: Storage) -> None:
    async def writer(w: int) -> list[tuple[int, int]]:
        spans = []
        for i in range(APPENDS):
            if i % 5 == 4:  # some appends carry two messages: they take two consecutive positions
                r = await append(storage, "shared", user(f"{w}:{i}:a"), user(f"{w}:{i}:b"))
            else:
                r = await append(storage, "shared", user(f"{w}:{i}"))
            spans.append((r.first_position, r.last_position))
        return spans

    spans = [s for part in await asyncio.gather(*(writer(w) for w in range(WRITERS))) for s in part]
    total = WRITERS * (APPENDS + APPENDS // 5)
    taken = sorted(p for first, last in spans for p in range(first, last + 1))
    assert taken == list(range(1, total + 1)), "every position taken exactly once, no gaps"

    messages = await read(storage, "shared")
    assert [m.position for m in messages] == list(range(1, total + 1))
    assert len({m.content for m in messages}) == total, "nothing lost, nothing written twice"
    for w in range(WRITERS):
        mine = [m.content for m in messages if m.content.split(":")[0] == str(w)]
        assert [int(c.split(":")[1]) for c in mine if not c.endswith(":b")] == list(range(APPENDS)), (
            f"writer {w}'s order was not kept"
        )
    # a two-message append is contiguous: its second message directly follows its first
    by_content = {m.content: m.position for m in messages}
    for w in range(WRITERS):
        for i in range(4, APPENDS, 5):
            assert by_content[f"{w}:{i}:b"] == by_content[f"{w}:{i}:a"] + 1


async def test_unawaited_appends_to_one_session_commit_in_submission_order(storage: Storage) -> None:
    await append(storage, "s", user("first"))
    submitted = [asyncio.ensure_future(append(storage, "s", user(f"m{i}"))) for i in range(60)]
    results = await asyncio.gather(*submitted)
    assert [r.first_position for r in results] == list(range(2, 62))
    assert await contents(storage, "s") == ["first", *(f"m{i}" for i in range(60))]


async def test_a_batch_takes_consecutive_positions_in_its_order(storage: Storage) -> None:
    first = await append(storage, "s", user("a"))
    batch = await append(storage, "s", user("b"), user("c"), user("d"))
    assert (first.first_position, first.last_position) == (1, 1)
    assert (batch.first_position, batch.last_position) == (2, 4)
    assert [(m.position, m.content) for m in await read(storage, "s")] == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]


async def test_each_session_has_its_own_positions(storage: Storage) -> None:
    async def writer(sid: str, n: int) -> None:
        for i in range(n):
            await append(storage, sid, user(f"{sid}-{i}"))

    await asyncio.gather(*(writer(f"s{k}", 10 + k) for k in range(4)))
    for k in range(4):
        messages = await read(storage, f"s{k}")
        assert [m.position for m in messages] == list(range(1, 11 + k))
        assert [m.content for m in messages] == [f"s{k}-{i}" for i in range(10 + k)]


async def test_a_clear_takes_the_next_position_and_the_visible_history_starts_after_it(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"))
    cleared = await clear(storage, "s")
    assert cleared.position == 3
    after = await append(storage, "s", user("c"))
    assert after.first_position == 4
    loaded = await storage.load("s", "/w", "t", repair=False)
    assert [(m.position, m.content) for m in loaded.messages] == [(4, "c")]
    assert (loaded.session.last_position, loaded.session.message_count) == (4, 1)


async def test_what_was_acknowledged_is_there_after_reopening(stores: Stores, tmp_path: Path) -> None:
    folder = tmp_path / "durable"
    first = await stores.open(folder)
    await append(first, "s", user("one"), user("two"))
    await clear(first, "s")
    await append(first, "s", user("three"))
    before = await first.load("s", "/w", "t")
    await stores.close(first)

    again = await stores.open(folder)
    after = await again.load("s", "/w", "t")
    assert [(m.position, m.content) for m in after.messages] == [(4, "three")]
    assert after.session.created_at == before.session.created_at
    assert after.session.updated_at == before.session.updated_at
    assert (await append(again, "s", user("four"))).first_position == 5
