"""All or nothing (SPEC §2, §6): a refused request writes nothing, and fails alone among its neighbours."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from claw_sessiond.errors import InvalidRequestError, PreconditionError, Reason, ToolCallStateError
from claw_sessiond.storage import Storage
from tests.storage._support import Stores, append, assistant, clear, contents, read, result, snapshot, user


async def test_a_batch_with_a_result_for_an_unknown_call_writes_nothing(storage: Storage) -> None:
    await append(storage, "s", user("before"))
    before = await snapshot(storage, "s")
    with pytest.raises(ToolCallStateError) as caught:
        await append(storage, "s", user("q"), assistant("c1"), result("c1"), result("nope"))
    assert caught.value.reason == Reason.UNKNOWN_TOOL_CALL
    assert await snapshot(storage, "s") == before
    # the call the refused batch made was not kept either: a result for it is refused, and its id is free
    with pytest.raises(ToolCallStateError):
        await append(storage, "s", result("c1"))
    assert (await append(storage, "s", assistant("c1"))).first_position == 2


async def test_a_batch_answering_an_answered_call_writes_nothing(storage: Storage) -> None:
    await append(storage, "s", assistant("c1"), result("c1"))
    before = await snapshot(storage, "s")
    with pytest.raises(ToolCallStateError) as caught:
        await append(storage, "s", user("more"), result("c1", "again"))
    assert caught.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
    assert await snapshot(storage, "s") == before


async def test_a_call_id_already_in_the_visible_history_is_refused(storage: Storage) -> None:
    await append(storage, "s", assistant("dup"))
    before = await snapshot(storage, "s")
    with pytest.raises(InvalidRequestError) as caught:
        await append(storage, "s", user("x"), assistant("dup"))
    assert caught.value.reason == Reason.DUPLICATE_TOOL_CALL_ID
    assert await snapshot(storage, "s") == before
    # after a clear the visible history no longer has it: the id may be used again
    await clear(storage, "s")
    await append(storage, "s", assistant("dup"), result("dup"))
    assert [m.role for m in await read(storage, "s")] == ["assistant", "tool"]


async def test_a_refused_write_to_a_new_session_leaves_no_session(storage: Storage) -> None:
    with pytest.raises(ToolCallStateError):
        await append(storage, "new", user("hello"), result("nope"))
    assert (await storage.load("new", "/w", "t")).session.stored is False
    assert await storage.list_sessions("", 10) == []
    figures = await storage.figures()
    assert (figures.sessions, figures.events) == (0, 0)


async def test_a_refused_request_among_concurrent_ones_fails_alone(storage: Storage) -> None:
    await append(storage, "s", user("start"))
    requests = [
        append(storage, "s", result(f"missing-{i}")) if i % 3 == 0 else append(storage, "s", user(f"m{i}"))
        for i in range(60)
    ]
    outcomes = await asyncio.gather(*requests, return_exceptions=True)
    assert all(isinstance(o, ToolCallStateError) for i, o in enumerate(outcomes) if i % 3 == 0)
    assert not any(isinstance(o, BaseException) for i, o in enumerate(outcomes) if i % 3 != 0)
    stored = await read(storage, "s")
    assert [m.content for m in stored] == ["start", *(f"m{i}" for i in range(60) if i % 3 != 0)]
    assert [m.position for m in stored] == list(range(1, len(stored) + 1))


async def test_the_open_call_limit_refuses_the_append_that_would_exceed_it(stores: Stores, tmp_path: Path) -> None:
    storage = await stores.open(tmp_path / "limited", max_open_tool_calls=2)
    await append(storage, "s", assistant("a", "b"))
    before = await snapshot(storage, "s")
    with pytest.raises(PreconditionError) as caught:
        await append(storage, "s", user("x"), assistant("c"))
    assert caught.value.reason == Reason.TOO_MANY_OPEN_CALLS
    assert await snapshot(storage, "s") == before
    # a batch that answers one call while making another stays within the limit
    await append(storage, "s", result("a"), assistant("c"))
    assert await contents(storage, "s") == ["", "done", ""]
