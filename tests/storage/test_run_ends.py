"""How runs end (issue 16): with a cause, remembered, reported on a late call; one run per session after it."""

from __future__ import annotations

import time
import uuid

import pytest

from claw_sessiond.errors import PreconditionError, Reason
from claw_sessiond.storage import RunEnd, SharedRuns, Storage
from tests.storage._support import append, assistant, attach, user


async def test_end_with_a_cause_frees_the_session_and_is_remembered(storage: Storage) -> None:
    run = await attach(storage, "s", 42, "agent", process_start=123, ping_timeout_s=5.0)
    assert (run.process_start, run.ping_timeout_s, run.cause) == (123, 5.0, "")
    assert storage.runs.get(run.run_id) is run and storage.runs.owner_of("s") is run
    assert storage.runs.owner_of("t") is None and storage.runs.ended_run(run.run_id) is None

    ended = storage.runs.end(run.run_id, RunEnd.PROCESS_GONE)
    assert ended is run and run.ended.is_set() and run.cause == "process_gone"
    assert storage.runs.end(run.run_id, RunEnd.ENDED) is None  # idempotent: the first cause stays
    assert storage.runs.ended_run(run.run_id) == ("s", "process_gone")
    assert storage.runs.get(run.run_id) is None and storage.runs.owner_of("s") is None
    assert not storage.runs.is_live(run.run_id) and storage.runs.count() == 0
    again = await attach(storage, "s", 43, "next")  # the session is free at once
    assert storage.runs.owner_of("s") is again


async def test_a_late_call_names_why_its_run_ended(storage: Storage) -> None:
    run = await attach(storage, "s", 1, "agent")
    storage.runs.unregister(run.run_id)  # its stream closed
    for run_id, session, cause in (
        (run.run_id, "s", "stream_closed"),
        (uuid.uuid4().hex, "s", "unknown"),
    ):
        with pytest.raises(PreconditionError) as caught:
            storage.runs.check_run(run_id, session)
        assert caught.value.reason == Reason.UNKNOWN_RUN
        assert caught.value.metadata == {"run_id": run_id, "cause": cause}
    other = await attach(storage, "t", 2, "agent")
    with pytest.raises(PreconditionError) as wrong:
        storage.runs.check_run(other.run_id, "s")
    assert wrong.value.metadata == {"run_id": other.run_id, "cause": "other_session"}
    storage.runs.end_all()
    assert storage.runs.ended_run(other.run_id) == ("t", "daemon_stopping")


async def test_calls_of_an_ended_run_are_repaired_whatever_the_cause(storage: Storage) -> None:
    for i, cause in enumerate((RunEnd.ENDED, RunEnd.PROCESS_GONE, RunEnd.PING_TIMEOUT)):
        session = f"s{i}"
        run = await attach(storage, session, 1, "agent")
        await append(storage, session, user("go"), assistant("a"), run_id=run.run_id)
        assert (await storage.load(session, "/w", "t")).repairs == []
        storage.runs.end(run.run_id, cause)
        loaded = await storage.load(session, "/w", "t")
        assert [r.tool_call_id for r in loaded.repairs] == ["a"] and loaded.in_flight == []


async def test_ping_and_confirm_run_give_the_one_answer(storage: Storage) -> None:
    # PingRun and EditTail ask the registry through ping / confirm_run (decided in the database on PostgreSQL).
    run = await attach(storage, "s", 1, "agent", ping_timeout_s=5.0)
    run.last_ping -= 3.0
    assert await storage.runs.ping(run.run_id) == 5.0
    assert time.monotonic() - run.last_ping < 1.0  # renewed
    await storage.runs.confirm_run(run.run_id, "s")
    never = uuid.uuid4().hex
    for call, cause in (
        (lambda: storage.runs.confirm_run(run.run_id, "t"), "other_session"),
        (lambda: storage.runs.ping(never), "unknown"),
        (lambda: storage.runs.confirm_run(never, "s"), "unknown"),
    ):
        with pytest.raises(PreconditionError) as caught:
            await call()
        assert caught.value.reason == Reason.UNKNOWN_RUN and caught.value.metadata["cause"] == cause
    storage.runs.end(run.run_id, RunEnd.ENDED)
    if isinstance(storage.runs, SharedRuns):
        await storage.runs.settled()
    for ended in (lambda: storage.runs.ping(run.run_id), lambda: storage.runs.confirm_run(run.run_id, "s")):
        with pytest.raises(PreconditionError) as caught:
            await ended()
        assert caught.value.metadata == {"run_id": run.run_id, "cause": "ended"}
