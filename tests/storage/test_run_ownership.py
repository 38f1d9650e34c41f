"""Live runs (SPEC §3, §4): a live run's open calls are in flight, not interrupted; one run per session."""

from __future__ import annotations

import pytest

from claw_sessiond.errors import PreconditionError, Reason
from claw_sessiond.model import InFlightCall
from claw_sessiond.storage import Storage
from tests.storage._support import append, assistant, attach, event_types, history, result, user


async def test_a_call_of_a_live_run_is_in_flight_and_not_repaired(storage: Storage) -> None:
    run = await attach(storage, "s", 4242, "agent")
    await append(storage, "s", user("go"), assistant("a", "b"), run_id=run.run_id)
    await append(storage, "s", assistant("c"))  # appended without a run: interrupted as soon as it is open
    events_before = (await storage.figures()).events

    loaded = await storage.load("s", "/w", "t")
    assert [r.tool_call_id for r in loaded.repairs] == ["c"]
    assert loaded.in_flight == [InFlightCall("a", 2, run.run_id), InFlightCall("b", 2, run.run_id)]
    again = await storage.load("s", "/w", "t")
    assert again.repairs == [] and again.in_flight == loaded.in_flight
    assert (await storage.figures()).events == events_before + 1  # the one repair of "c", and nothing for a or b
    read_only = await storage.load("s", "/w", "t", repair=False)
    assert read_only.in_flight == loaded.in_flight


async def test_after_the_run_ends_its_calls_are_repaired_at_the_next_load(storage: Storage) -> None:
    run = await attach(storage, "s", 1, "agent")
    await append(storage, "s", user("go"), assistant("a", "b"), run_id=run.run_id)
    assert (await storage.load("s", "/w", "t")).repairs == []
    storage.runs.unregister(run.run_id)
    assert run.ended.is_set()

    loaded = await storage.load("s", "/w", "t")
    assert [(r.tool_call_id, r.position) for r in loaded.repairs] == [("a", 3), ("b", 4)]
    assert loaded.in_flight == []
    assert [m.synthetic_reason for m in await history(storage, loaded)] == ["", "", "interrupted", "interrupted"]
    assert (await storage.load("s", "/w", "t")).repairs == []


async def test_the_owner_answers_its_in_flight_call(storage: Storage) -> None:
    run = await attach(storage, "s", 1, "agent")
    await append(storage, "s", assistant("a"), run_id=run.run_id)
    await storage.load("s", "/w", "t")  # another process loads meanwhile: nothing repaired
    await append(storage, "s", result("a", "real"), run_id=run.run_id)
    storage.runs.unregister(run.run_id)
    loaded = await storage.load("s", "/w", "t")
    assert loaded.repairs == []
    assert [(m.role, m.content) for m in await history(storage, loaded)] == [("assistant", ""), ("tool", "real")]
    assert await event_types(storage, "s") == ["assistant_message", "tool_result"]


async def test_a_second_run_on_a_session_is_refused(storage: Storage) -> None:
    run = await attach(storage, "s", 10, "first")
    with pytest.raises(PreconditionError) as caught:
        await attach(storage, "s", 11, "second")
    assert caught.value.reason == Reason.RUN_ALREADY_OWNED
    assert caught.value.metadata["run_id"] == run.run_id
    other = await attach(storage, "t", 12, "elsewhere")  # another session is free
    assert storage.runs.count() == 2
    storage.runs.unregister(run.run_id)
    storage.runs.unregister(run.run_id)  # idempotent
    after = await attach(storage, "s", 13, "next")
    assert after.run_id not in (run.run_id, other.run_id)
    assert storage.runs.count() == 2


async def test_an_append_names_a_live_run_of_its_own_session(storage: Storage) -> None:
    run = await attach(storage, "s", 77, "agent")
    storage.runs.check_run(run.run_id, "s")
    assert storage.runs.is_live(run.run_id) and storage.runs.pid_of(run.run_id) == 77
    with pytest.raises(PreconditionError) as other_session:
        storage.runs.check_run(run.run_id, "t")
    assert other_session.value.reason == Reason.UNKNOWN_RUN
    storage.runs.unregister(run.run_id)
    assert not storage.runs.is_live(run.run_id) and storage.runs.pid_of(run.run_id) == 0
    with pytest.raises(PreconditionError) as ended:
        storage.runs.check_run(run.run_id, "s")
    assert ended.value.reason == Reason.UNKNOWN_RUN


async def test_ending_every_run_releases_their_streams(storage: Storage) -> None:
    runs = [await attach(storage, f"s{i}", i, "agent") for i in range(3)]
    storage.runs.end_all()
    assert all(run.ended.is_set() for run in runs)
