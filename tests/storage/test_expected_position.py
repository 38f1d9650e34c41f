"""Optimistic concurrency (SPEC §4): "append only if the last position is still N"; on mismatch nothing is written."""

from __future__ import annotations

import asyncio

import pytest

from claw_sessiond.errors import Reason, SequenceConflictError
from claw_sessiond.storage import Storage
from tests.storage._support import append, clear, contents, snapshot, user


async def test_minus_one_means_the_session_must_be_new(storage: Storage) -> None:
    assert (await append(storage, "s", user("a"), expected=-1)).last_position == 1
    before = await snapshot(storage, "s")
    with pytest.raises(SequenceConflictError) as caught:
        await append(storage, "s", user("stale writer"), expected=-1)
    assert caught.value.reason == Reason.SEQUENCE_CONFLICT
    assert caught.value.metadata == {"expected": "0", "actual": "1"}
    assert await snapshot(storage, "s") == before


async def test_a_stale_expected_position_is_refused_and_writes_nothing(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"))
    assert (await append(storage, "s", user("c"), expected=2)).first_position == 3
    before = await snapshot(storage, "s")
    with pytest.raises(SequenceConflictError) as caught:
        await append(storage, "s", user("d"), user("e"), expected=2)
    assert caught.value.metadata == {"expected": "2", "actual": "3"}
    assert await snapshot(storage, "s") == before
    assert await contents(storage, "s") == ["a", "b", "c"]


async def test_an_expected_position_on_an_unknown_session_is_refused_and_creates_nothing(storage: Storage) -> None:
    with pytest.raises(SequenceConflictError):
        await append(storage, "new", user("x"), expected=3)
    assert (await storage.figures()).sessions == 0
    assert (await storage.load("new", "/w", "t")).session.stored is False


async def test_of_racing_writers_with_the_same_expectation_exactly_one_wins(storage: Storage) -> None:
    await append(storage, "s", user("base"))
    outcomes = await asyncio.gather(
        *(append(storage, "s", user(f"w{i}"), expected=1) for i in range(12)), return_exceptions=True
    )
    won = [o for o in outcomes if not isinstance(o, BaseException)]
    lost = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(won) == 1 and won[0].first_position == 2
    assert len(lost) == 11 and all(isinstance(e, SequenceConflictError) for e in lost)
    assert len(await contents(storage, "s")) == 2


async def test_clear_checks_the_expected_position_too(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"))
    before = await snapshot(storage, "s")
    with pytest.raises(SequenceConflictError):
        await clear(storage, "s", expected=1)
    assert await snapshot(storage, "s") == before
    assert (await clear(storage, "s", expected=2)).position == 3
    assert await contents(storage, "s") == []


async def test_zero_means_no_check(storage: Storage) -> None:
    await append(storage, "s", user("a"))
    await append(storage, "s", user("b"), expected=0)
    await clear(storage, "s", expected=0)
    assert (await storage.load("s", "/w", "t")).session.last_position == 3
