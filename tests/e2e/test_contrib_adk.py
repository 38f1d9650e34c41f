"""The Google ADK adapter (``claw_sessiond_client.contrib.adk``) against ADK's own expectations.

google-adk's sdist ships no tests, so this is the project's contract suite,
written from what ADK's session-service conformance tests expect of every
backend. Each contract test runs twice: on ADK's own ``InMemorySessionService``
(the reference: it shows the test states ADK's behaviour) and on
``ClawSessionService`` over a real daemon; where the two differ by design the
reference run is an expected failure naming why (:data:`DIVERGENCES`). The
differential tests run one script on both and compare what they return.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond.ids import check_session_id
from claw_sessiond_client import SessionClient
from tests.helpers.daemon import DaemonProcess
from tests.helpers.lazy import LazyModule

if TYPE_CHECKING:
    from google.adk.events.event import Event
    from google.adk.sessions.base_session_service import BaseSessionService

    from claw_sessiond_client.contrib.adk import ClawSessionService

#: ADK, the adapter and the events and runner the tests build (tests/helpers/adk_events.py), imported by the first
#: test that uses them (collection loads no framework: tests/helpers/lazy.py).
adk = LazyModule("tests.helpers.adk_events")

#: ADK's session contract runs on both stores: the adapter must behave alike on PostgreSQL.
BOTH = pytest.mark.both_backends("ADK's session contract through the adapter, on each backend's daemon")
#: Contract tests where ADK's in-memory service behaves otherwise on purpose (strict xfail there).
DIVERGENCES = {
    "test_a_stale_session_cannot_append": "InMemorySessionService has no stale-session check (persistent ones do)",
    "test_one_of_two_concurrent_stale_appends_fails": "InMemorySessionService has no stale-session check",
}


@pytest.fixture(scope="module")
def live(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """One daemon for the module; each test works in an app of its own."""
    ws = tmp_path_factory.mktemp("adk") / "ws"
    ws.mkdir()
    daemon = DaemonProcess(ws).start()
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def app() -> str:
    return f"app-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def claw(live: DaemonProcess) -> AsyncIterator[ClawSessionService]:
    service = adk.ClawSessionService(address=live.address, autostart=False)
    yield service
    await service.close()


@pytest.fixture(params=["memory", "claw"])
async def service(request: pytest.FixtureRequest, live: DaemonProcess) -> AsyncIterator[BaseSessionService]:
    """The contract suite's backend: ADK's reference, or the adapter on the live daemon."""
    if request.param == "memory":
        reason = DIVERGENCES.get(request.node.originalname)
        if reason:
            request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
        yield adk.InMemorySessionService()
        return
    claw = adk.ClawSessionService(address=live.address, autostart=False)
    yield claw
    await claw.close()


# ---------------------------------------------------------------- the contract (both backends)


@BOTH
async def test_get_of_a_missing_session_is_none(service: BaseSessionService, app: str) -> None:
    assert await service.get_session(app_name=app, user_id="u", session_id="nope") is None


@pytest.mark.smoke
@BOTH
async def test_create_get_delete_round_trip(service: BaseSessionService, app: str) -> None:
    created = await service.create_session(app_name=app, user_id="u", state={"k": "v", "n": 1}, session_id="s1")
    assert (created.id, created.app_name, created.user_id, created.events) == ("s1", app, "u", [])
    assert created.state == {"k": "v", "n": 1}
    got = await service.get_session(app_name=app, user_id="u", session_id="s1")
    assert got == created
    await service.delete_session(app_name=app, user_id="u", session_id="s1")
    assert await service.get_session(app_name=app, user_id="u", session_id="s1") is None
    await service.delete_session(app_name=app, user_id="u", session_id="s1")  # deleting nothing is fine


@BOTH
async def test_a_blank_session_id_gets_a_fresh_one_and_ids_are_stripped(service: BaseSessionService, app: str) -> None:
    a = await service.create_session(app_name=app, user_id="u")
    b = await service.create_session(app_name=app, user_id="u", session_id="   ")
    assert a.id and b.id and a.id != b.id
    c = await service.create_session(app_name=app, user_id="u", session_id="  padded ")
    assert c.id == "padded"
    assert await service.get_session(app_name=app, user_id="u", session_id=" padded") is not None


@BOTH
async def test_create_of_an_existing_session_raises(service: BaseSessionService, app: str) -> None:
    await service.create_session(app_name=app, user_id="u", session_id="s", state={"a": 1})
    with pytest.raises(adk.AlreadyExistsError):
        await service.create_session(app_name=app, user_id="u", session_id="s", state={"a": 2})
    got = await service.get_session(app_name=app, user_id="u", session_id="s")
    assert got is not None and got.state == {"a": 1}


@BOTH
async def test_one_session_id_under_two_users_is_two_sessions(service: BaseSessionService, app: str) -> None:
    await service.create_session(app_name=app, user_id="alice", session_id="s", state={"who": "alice"})
    await service.create_session(app_name=app, user_id="bob", session_id="s", state={"who": "bob"})
    alice = await service.get_session(app_name=app, user_id="alice", session_id="s")
    bob = await service.get_session(app_name=app, user_id="bob", session_id="s")
    assert alice is not None and bob is not None
    assert (alice.state["who"], bob.state["who"]) == ("alice", "bob")
    await service.delete_session(app_name=app, user_id="alice", session_id="s")
    assert await service.get_session(app_name=app, user_id="bob", session_id="s") is not None


@BOTH
async def test_list_by_user_and_by_app_oldest_update_first(service: BaseSessionService, app: str) -> None:
    for user, sid in (("bob", "b1"), ("alice", "a1"), ("alice", "a2")):
        await service.create_session(app_name=app, user_id=user, session_id=sid, state={"sid": sid})
        await asyncio.sleep(0.01)
    first = await service.get_session(app_name=app, user_id="bob", session_id="b1")
    assert first is not None
    await service.append_event(first, adk.event("later", ts=time.time() + 5))  # b1 becomes the newest
    await service.create_session(app_name="other-" + app, user_id="alice", session_id="x")

    mine = await service.list_sessions(app_name=app, user_id="alice")
    assert [(s.user_id, s.id) for s in mine.sessions] == [("alice", "a1"), ("alice", "a2")]
    every = await service.list_sessions(app_name=app)
    assert [(s.user_id, s.id) for s in every.sessions] == [("alice", "a1"), ("alice", "a2"), ("bob", "b1")]
    assert all(s.events == [] for s in every.sessions)
    assert {s.id: s.state["sid"] for s in every.sessions} == {"a1": "a1", "a2": "a2", "b1": "b1"}
    assert (await service.list_sessions(app_name=app, user_id="carol")).sessions == []
    assert (await service.list_sessions(app_name="no-such-" + app)).sessions == []


@BOTH
async def test_state_scopes_app_user_session_and_temp(service: BaseSessionService, app: str) -> None:
    s1 = await service.create_session(
        app_name=app,
        user_id="alice",
        session_id="s1",
        state={"app:theme": "dark", "user:lang": "fr", "own": 1, "temp:scratch": "x"},
    )
    assert s1.state == {"app:theme": "dark", "user:lang": "fr", "own": 1}
    s2 = await service.create_session(app_name=app, user_id="alice", session_id="s2")
    assert s2.state == {"app:theme": "dark", "user:lang": "fr"}  # app: and user: shared, own not
    bob = await service.create_session(app_name=app, user_id="bob", session_id="s3")
    assert bob.state == {"app:theme": "dark"}  # app: shared across users, user: not

    delta = {"app:theme": "light", "user:lang": None, "own": {"x": [1]}, "flag": False, "temp:t": 5}
    appended = await service.append_event(s1, adk.state_event(delta))
    assert s1.state["temp:t"] == 5  # temp: visible in memory for the invocation ...
    assert "temp:t" not in (appended.actions.state_delta or {})  # ... and trimmed from the stored delta
    again = await service.get_session(app_name=app, user_id="alice", session_id="s1")
    assert again is not None
    assert again.state == {"app:theme": "light", "user:lang": None, "own": {"x": [1]}, "flag": False}
    assert again.state["flag"] is False  # booleans keep their type
    other = await service.get_session(app_name=app, user_id="bob", session_id="s3")
    assert other is not None and other.state == {"app:theme": "light"}
    await service.append_event(again, adk.state_event({"own": {"y": 2}}))  # a dict delta replaces, no merge
    last = await service.get_session(app_name=app, user_id="alice", session_id="s1")
    assert last is not None and last.state["own"] == {"y": 2}


@BOTH
async def test_get_user_state(service: BaseSessionService, app: str) -> None:
    await service.create_session(app_name=app, user_id="alice", state={"user:lang": "fr", "app:x": 1, "own": 2})
    assert await service.get_user_state(app_name=app, user_id="alice") == {"lang": "fr"}
    assert await service.get_user_state(app_name=app, user_id="nobody") == {}


@BOTH
async def test_num_recent_events_and_after_timestamp(service: BaseSessionService, app: str) -> None:
    session = await service.create_session(app_name=app, user_id="u", session_id="s")
    base = 1_700_000_000.0
    for i in range(40):
        await service.append_event(session, adk.event(f"m{i}", ts=base + i))

    async def texts(**config: Any) -> list[str]:
        got = await service.get_session(
            app_name=app, user_id="u", session_id="s", config=adk.GetSessionConfig(**config)
        )
        assert got is not None
        return [e.content.parts[0].text for e in got.events if e.content and e.content.parts]

    assert await texts() == [f"m{i}" for i in range(40)]
    assert await texts(num_recent_events=3) == ["m37", "m38", "m39"]
    assert await texts(num_recent_events=0) == []
    assert await texts(num_recent_events=100) == [f"m{i}" for i in range(40)]
    assert await texts(after_timestamp=base + 35) == ["m35", "m36", "m37", "m38", "m39"]
    assert await texts(after_timestamp=base + 2.5) == [f"m{i}" for i in range(3, 40)]  # beyond the first window
    assert await texts(after_timestamp=base - 1) == [f"m{i}" for i in range(40)]
    assert await texts(after_timestamp=base + 99) == []
    assert await texts(num_recent_events=10, after_timestamp=base + 37) == ["m37", "m38", "m39"]
    assert await texts(num_recent_events=2, after_timestamp=base) == ["m38", "m39"]
    with pytest.raises(ValueError):
        adk.GetSessionConfig(num_recent_events=-1)


@BOTH
async def test_after_timestamp_follows_the_events_own_clock(service: BaseSessionService, app: str) -> None:
    """Timestamps that are not in append order (a clock that stepped back, events stamped by the
    caller): the reply is what ADK's in-memory service gives, whatever time the daemon stored them."""
    session = await service.create_session(app_name=app, user_id="u", session_id="s")
    for text, ts in (("a", 10.0), ("b", 30.0), ("c", 20.0), ("d", 40.0), ("e", 35.0)):
        await service.append_event(session, adk.event(text, ts=ts))
    got = await service.get_session(
        app_name=app, user_id="u", session_id="s", config=adk.GetSessionConfig(after_timestamp=25)
    )
    assert got is not None
    assert [e.content.parts[0].text for e in got.events if e.content and e.content.parts] == ["d", "e"]


@BOTH
async def test_after_timestamp_with_events_stamped_ahead_of_the_store(service: BaseSessionService, app: str) -> None:
    """Events stamped an hour ahead: the daemon's first window (by its own clock) is empty, and the
    reads from the end still find the answer ADK's in-memory service gives."""
    session = await service.create_session(app_name=app, user_id="u", session_id="s")
    ahead = time.time() + 3600
    for i in range(70):
        await service.append_event(session, adk.event(f"m{i}", ts=ahead + i))
    for bound, first in ((ahead + 65, 65), (ahead + 20, 20), (ahead - 5, 0)):
        config = adk.GetSessionConfig(after_timestamp=bound)
        got = await service.get_session(app_name=app, user_id="u", session_id="s", config=config)
        assert got is not None
        assert [e.content.parts[0].text for e in got.events if e.content and e.content.parts] == [
            f"m{i}" for i in range(first, 70)
        ]


@BOTH
async def test_events_with_state_deltas_only(service: BaseSessionService, app: str) -> None:
    session = await service.create_session(app_name=app, user_id="u", session_id="s")
    await service.append_event(session, adk.state_event({"step": 1}))
    await service.append_event(session, adk.event(None, actions=adk.EventActions(transfer_to_agent="other")))
    got = await service.get_session(app_name=app, user_id="u", session_id="s")
    assert got is not None
    assert [e.content for e in got.events] == [None, None]
    assert got.events[0].actions.state_delta == {"step": 1}
    assert got.events[1].actions.transfer_to_agent == "other"
    assert got.events == session.events


@BOTH
async def test_requested_tool_confirmations_survive(service: BaseSessionService, app: str) -> None:
    session = await service.create_session(app_name=app, user_id="u", session_id="s")
    confirmation = adk.ToolConfirmation(hint="delete the file?", confirmed=False, payload={"path": "/tmp/x"})
    asked = adk.event(None, actions=adk.EventActions(requested_tool_confirmations={"call-7": confirmation}))
    await service.append_event(session, asked)
    got = await service.get_session(app_name=app, user_id="u", session_id="s")
    assert got is not None
    assert got.events[0].actions.requested_tool_confirmations == {"call-7": confirmation}


@BOTH
async def test_last_update_time_is_the_events_timestamp(service: BaseSessionService, app: str) -> None:
    session = await service.create_session(app_name=app, user_id="u", session_id="s")
    created = session.last_update_time
    assert abs(created - time.time()) < 60
    stamped = adk.event("hi", ts=created + 123.456)
    await service.append_event(session, stamped)
    assert session.last_update_time == stamped.timestamp
    got = await service.get_session(
        app_name=app, user_id="u", session_id="s", config=adk.GetSessionConfig(num_recent_events=0)
    )
    assert got is not None and got.last_update_time == stamped.timestamp and got.events == []
    listed = await service.list_sessions(app_name=app, user_id="u")
    assert [s.last_update_time for s in listed.sessions] == [stamped.timestamp]


@BOTH
async def test_append_to_a_missing_or_deleted_session_raises(service: BaseSessionService, app: str) -> None:
    session = await service.create_session(app_name=app, user_id="u", session_id="s")
    await service.append_event(session, adk.event("one"))
    await service.delete_session(app_name=app, user_id="u", session_id="s")
    with pytest.raises(adk.SessionNotFoundError):
        await service.append_event(session, adk.event("two"))
    fresh = await service.create_session(app_name=app, user_id="u", session_id="f")
    await service.delete_session(app_name=app, user_id="u", session_id="f")
    with pytest.raises(adk.SessionNotFoundError):
        await service.append_event(fresh, adk.event("three"))
    assert await service.get_session(app_name=app, user_id="u", session_id="f") is None


@BOTH
async def test_a_stale_session_cannot_append(service: BaseSessionService, app: str) -> None:
    await service.create_session(app_name=app, user_id="u", session_id="s")
    mine = await service.get_session(app_name=app, user_id="u", session_id="s")
    theirs = await service.get_session(app_name=app, user_id="u", session_id="s")
    assert mine is not None and theirs is not None
    await service.append_event(theirs, adk.event("theirs"))
    with pytest.raises(adk.StaleSessionError):
        await service.append_event(mine, adk.event("mine"))
    got = await service.get_session(app_name=app, user_id="u", session_id="s")
    assert got is not None and [e.content.parts[0].text for e in got.events] == ["theirs"]
    await service.append_event(got, adk.event("mine, reloaded"))  # a fresh read may append


@BOTH
async def test_one_of_two_concurrent_stale_appends_fails(service: BaseSessionService, app: str) -> None:
    created = await service.create_session(app_name=app, user_id="u", session_id="s")
    await service.append_event(created, adk.event("first"))
    copies = [await service.get_session(app_name=app, user_id="u", session_id="s") for _ in range(2)]
    outcomes = await asyncio.gather(
        *(service.append_event(c, adk.event(f"w{i}")) for i, c in enumerate(copies) if c is not None),
        return_exceptions=True,
    )
    assert sum(isinstance(o, adk.StaleSessionError) for o in outcomes) == 1
    assert sum(isinstance(o, adk.Event) for o in outcomes) == 1


@BOTH
async def test_partial_events_are_not_stored(service: BaseSessionService, app: str) -> None:
    session = await service.create_session(app_name=app, user_id="u", session_id="s")
    await service.append_event(session, adk.event("stream chunk", partial=True))
    got = await service.get_session(app_name=app, user_id="u", session_id="s")
    assert got is not None and got.events == []


# ---------------------------------------------------------------- differential: one script, both services


async def _run_both(claw: ClawSessionService, app: str, script: list[Event]) -> tuple[Any, Any]:
    """Append ``script`` (copies) to a new session of each service; return both sessions as read back."""
    sessions = []
    for service in (adk.InMemorySessionService(), claw):
        session = await service.create_session(app_name=app, user_id="u", session_id="s", state={"start": True})
        for e in script:
            await service.append_event(session, copy.deepcopy(e))
        sessions.append(await service.get_session(app_name=app, user_id="u", session_id="s"))
    return sessions[0], sessions[1]


async def test_every_event_field_round_trips_as_in_memory(claw: ClawSessionService, app: str) -> None:
    full = adk.complete_event()
    reference, stored = await _run_both(claw, app, [adk.event("hi"), full, adk.state_event({"k": None})])
    assert stored.events == reference.events
    assert stored.events[1] == full
    assert stored.events[1].model_dump_json(exclude_none=True) == full.model_dump_json(exclude_none=True)
    assert stored.state == reference.state
    assert stored.last_update_time == reference.last_update_time == stored.events[-1].timestamp


async def test_tool_calls_and_parallel_results_as_in_memory(claw: ClawSessionService, app: str) -> None:
    calls = adk.types.Content(
        role="model",
        parts=[
            adk.types.Part(function_call=adk.types.FunctionCall(id=f"c{i}", name="tool", args={"i": i}))
            for i in range(3)
        ],
    )
    results = adk.types.Content(
        role="user",
        parts=[
            adk.types.Part(function_response=adk.types.FunctionResponse(id=f"c{i}", name="tool", response={"r": i}))
            for i in range(3)
        ],
    )
    script = [
        adk.event("go"),
        adk.Event(invocation_id="i", author="agent", content=calls, long_running_tool_ids={"c2"}),
        adk.Event(invocation_id="i", author="agent", content=results),
        adk.Event(invocation_id="i", author="agent", content=results),  # a long-running tool's later answer
        adk.event("done", role="model"),
    ]
    reference, stored = await _run_both(claw, app, script)
    assert stored.events == reference.events
    for n in (1, 2, 3, 4):
        config = adk.GetSessionConfig(num_recent_events=n)
        got = await claw.get_session(app_name=app, user_id="u", session_id="s", config=config)
        assert got is not None and got.events == reference.events[-n:]


async def test_a_late_answer_stays_where_it_was_written(
    claw: ClawSessionService, live: DaemonProcess, app: str
) -> None:
    """A long-running tool answered after other events: every read gives the events in the order
    appended (the daemon's own Load places the answer right after its call), whole, by
    ``num_recent_events`` and by ``after_timestamp``, as ADK's in-memory service does."""
    call = adk.types.Content(
        role="model", parts=[adk.types.Part(function_call=adk.types.FunctionCall(id="slow", name="approve", args={}))]
    )
    answer = adk.types.Content(
        role="user",
        parts=[
            adk.types.Part(
                function_response=adk.types.FunctionResponse(id="slow", name="approve", response={"ok": True})
            )
        ],
    )
    base = time.time()
    script = [
        adk.event("deploy?", ts=base),
        adk.Event(invocation_id="i", author="agent", content=call, long_running_tool_ids={"slow"}, timestamp=base + 1),
        adk.event("waiting for approval", role="model", ts=base + 2),
        adk.event("status?", ts=base + 3),
        adk.Event(invocation_id="i", author="agent", content=answer, timestamp=base + 4),
        adk.event("deployed", role="model", ts=base + 5),
    ]
    reference, stored = await _run_both(claw, app, script)
    assert [e.id for e in stored.events] == [e.id for e in reference.events] and stored.events == reference.events
    paired = [m.tool_call_id or "" for m in _raw(live, app, "u", "s").messages]
    assert paired[2] == "slow"  # the daemon's pairing order: the answer right after its call
    for n in range(1, len(script) + 1):
        got = await claw.get_session(
            app_name=app, user_id="u", session_id="s", config=adk.GetSessionConfig(num_recent_events=n)
        )
        assert got is not None and got.events == reference.events[-n:], n
    for k, e in enumerate(script):
        config = adk.GetSessionConfig(after_timestamp=e.timestamp)
        got = await claw.get_session(app_name=app, user_id="u", session_id="s", config=config)
        assert got is not None and got.events == reference.events[k:], k


async def test_a_stale_session_raises_adk_s_own_error_text(claw: ClawSessionService, app: str) -> None:
    """The text ADK's own database session service raises for a session modified since it was read."""
    import ast

    import google.adk.sessions as adk_sessions

    source = (Path(adk_sessions.__file__).parent / "database_session_service.py").read_text()
    texts = [
        ast.literal_eval(node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "_STALE_SESSION_ERROR_MESSAGE" for t in node.targets)
    ]
    assert len(texts) == 1
    await claw.create_session(app_name=app, user_id="u", session_id="s")
    mine = await claw.get_session(app_name=app, user_id="u", session_id="s")
    theirs = await claw.get_session(app_name=app, user_id="u", session_id="s")
    assert mine is not None and theirs is not None
    await claw.append_event(theirs, adk.event("theirs"))
    with pytest.raises(adk.StaleSessionError) as raised:
        await claw.append_event(mine, adk.event("mine"))
    assert str(raised.value) == texts[0]


# ---------------------------------------------------------------- what the daemon holds


def test_the_adapter_imports_only_the_client_and_its_extra() -> None:
    """``contrib/adk.py`` and its mapping import the client's own dependencies and what the ``adk``
    extra brings (google-adk, with google-genai and pydantic), nothing else."""
    import ast
    import sys
    import tomllib

    import claw_sessiond_client.contrib as contrib

    folder = Path(contrib.__file__).parent
    names: set[str] = set()
    for path in (folder / "adk.py", folder / "_adk_mapping.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    assert names - set(sys.stdlib_module_names) == {"claw_sessiond_client", "google", "pydantic_core"}
    with open(folder.parents[1] / "pyproject.toml", "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert extras["adk"] == ["google-adk==2.13.0"]


#: Any text, lone surrogates and control characters included.
NAMES = st.text(st.characters(codec=None, categories=None), max_size=100)


@given(st.tuples(NAMES, NAMES, NAMES), st.tuples(NAMES, NAMES, NAMES))
def test_names_give_valid_daemon_ids_distinct_per_triple(a: tuple[str, str, str], b: tuple[str, str, str]) -> None:
    for triple in (a, b):
        assert check_session_id(adk.session_key(*triple)) == adk.session_key(*triple)  # the daemon's own rule
        for name in triple:
            assert adk.name_of(adk.label_value(name)) == name
            assert len(adk.app_scope(name).encode()) <= 256 and len(adk.user_scope(name, name).encode()) <= 256
    assert (adk.session_key(*a) == adk.session_key(*b)) == (a == b)
    assert (adk.user_scope(*a[:2]) == adk.user_scope(*b[:2])) == (a[:2] == b[:2])
    assert (adk.session_key(*a) == adk.session_key(*a[:2], a[2] + "x")) is False


def _raw(live: DaemonProcess, app: str, user: str, sid: str) -> Any:
    with live.client() as client:
        return client.load(adk.session_key(app, user, sid), no_repair=True)


async def test_the_daemon_holds_each_event_verbatim_with_derived_roles(
    claw: ClawSessionService, live: DaemonProcess, app: str
) -> None:
    session = await claw.create_session(app_name=app, user_id="u/1", session_id="../s", state={"app:a": 1})
    full = adk.complete_event()
    answer = adk.Event(
        invocation_id="i",
        author="agent",
        content=adk.types.Content(
            role="user",
            parts=[
                adk.types.Part(
                    function_response=adk.types.FunctionResponse(id="call-1", name="weather", response={"t": 21})
                )
            ],
        ),
    )
    for e in (adk.event("hello"), full, answer, adk.state_event({"x": 1})):
        await claw.append_event(session, e)
    loaded = _raw(live, app, "u/1", "../s")
    assert loaded.session.labels == {"app": app, "user": "u/1", "session": "../s"}
    roles = [(m.role, m.client_id) for m in loaded.messages]
    assert roles == [
        ("user", session.events[0].id),
        ("assistant", full.id),
        ("tool", answer.id),
        ("other", session.events[3].id),
    ]
    assert [m.item for m in loaded.messages] == [e.model_dump_json(exclude_none=True).encode() for e in session.events]
    assert {m.format for m in loaded.messages} == {"adk.event"}
    call = loaded.messages[1].tool_calls[0]
    assert (call.id, call.name, json.loads(call.arguments), call.pending) == (
        "call-1",
        "weather",
        {"city": "Paris", "n": 2**60},
        True,
    )
    assert loaded.messages[1].content == "Checking the weather."  # the thought is not conversation text
    assert loaded.messages[2].tool_call_id == "call-1" and json.loads(loaded.messages[2].content) == {"t": 21}
    assert loaded.session.tool_policy.repair == "off"


async def test_names_any_string_and_the_label_limit(claw: ClawSessionService, app: str) -> None:
    odd = ["a/b", "..", "x\\y", "tab\there", "ünï ~%", "", "s" * 256]
    for i, name in enumerate(odd):
        created = await claw.create_session(app_name=app, user_id=name, session_id=f"{name}-{i}"[-256:])
        got = await claw.get_session(app_name=app, user_id=name, session_id=created.id)
        assert got == created
    listed = await claw.list_sessions(app_name=app)
    assert sorted(s.user_id for s in listed.sessions) == sorted(odd)
    with pytest.raises(ValueError, match="256"):
        await claw.create_session(app_name=app, user_id="u" * 257)


async def test_an_event_id_already_stored(claw: ClawSessionService, app: str) -> None:
    session = await claw.create_session(app_name=app, user_id="u", session_id="s")
    once = adk.event("once")
    await claw.append_event(session, once)
    await claw.append_event(session, copy.deepcopy(once))  # the same event again: stored once
    with pytest.raises(adk.AlreadyExistsError):
        await claw.append_event(session, adk.event("other", id=once.id))  # InMemorySessionService would keep both
    got = await claw.get_session(app_name=app, user_id="u", session_id="s")
    assert got is not None and got.events == [once]


async def test_a_session_object_made_elsewhere_is_checked_by_its_last_event(claw: ClawSessionService, app: str) -> None:
    """A ``Session`` this service did not return has no revision marker: as ADK's database service,
    the adapter accepts it while its last event is the stored session's last."""
    await claw.create_session(app_name=app, user_id="u", session_id="s")
    made = adk.Session(id="s", app_name=app, user_id="u")
    await claw.append_event(made, adk.event("one"))  # no events, none stored: current
    twin = adk.Session(id="s", app_name=app, user_id="u", events=list(made.events))
    await claw.append_event(made, adk.event("two"))
    with pytest.raises(adk.StaleSessionError):
        await claw.append_event(twin, adk.event("stale"))  # its last event is not the stored last
    with pytest.raises(adk.StaleSessionError):
        await claw.append_event(adk.Session(id="s", app_name=app, user_id="u"), adk.event("blind"))
    got = await claw.get_session(app_name=app, user_id="u", session_id="s")
    assert got is not None and [e.content.parts[0].text for e in got.events] == ["one", "two"]


async def test_sessions_reload_equal_after_the_daemon_is_killed(spawn_daemon: Any, workspace: Path) -> None:
    daemon: DaemonProcess = spawn_daemon()
    service = adk.ClawSessionService(address=daemon.address, autostart=False)
    session = await service.create_session(app_name="a", user_id="u", session_id="s", state={"app:x": 1, "y": 2})
    for i in range(20):
        await service.append_event(session, adk.event(f"m{i}", actions=adk.EventActions(state_delta={"user:n": i})))
    await service.append_event(session, adk.complete_event())
    before = await service.get_session(app_name="a", user_id="u", session_id="s")
    await service.close()
    daemon.kill()  # SIGKILL: no shutdown, the WAL as it is
    restarted: DaemonProcess = spawn_daemon()
    service = adk.ClawSessionService(address=restarted.address, autostart=False)
    try:
        after = await service.get_session(app_name="a", user_id="u", session_id="s")
        assert after == before and after is not None
        assert after.state == {
            "app:x": 1,
            "y": 2,
            "user:n": 19,
            "mood": "sunny",
            "app:units": "metric",
            "user:home": {"city": "Paris"},
        }
        assert len(after.events) == 21
    finally:
        await service.close()


def test_one_service_serves_several_event_loops(live: DaemonProcess, app: str) -> None:
    """ADK's sync ``Runner.run`` starts a new event loop per call: one client per loop."""
    service = adk.ClawSessionService(address=live.address, autostart=False)

    async def step(i: int) -> int:
        if i == 0:
            await service.create_session(app_name=app, user_id="u", session_id="s")
        got = await service.get_session(app_name=app, user_id="u", session_id="s")
        assert got is not None
        await service.append_event(got, adk.event(f"loop {i}"))
        await service.close()
        return len(got.events)  # the event just appended included

    assert [asyncio.run(step(i)) for i in range(3)] == [1, 2, 3]
    with SessionClient(address=live.address, autostart=False) as client:
        assert len(client.list_sessions(labels={"app": app})) == 1


# ---------------------------------------------------------------- a real ADK Runner


def _shape(session: Any) -> list[Any]:
    """What a run stored, without ids and times (fresh in every run)."""
    shape = []
    for e in session.events:
        parts = []
        for p in (e.content.parts or []) if e.content else []:
            if p.function_call:
                parts.append(("call", p.function_call.name, p.function_call.args))
            elif p.function_response:
                parts.append(("result", p.function_response.name, p.function_response.response))
            else:
                parts.append(("text", p.text))
        shape.append((e.author, e.content.role if e.content else None, parts, e.actions.state_delta))
    return shape


async def test_a_runner_stores_the_same_run_as_in_memory(claw: ClawSessionService, app: str) -> None:
    shapes = []
    for service in (adk.InMemorySessionService(), claw):
        await service.create_session(app_name=app, user_id="u", session_id="s", state={"user:city": "Oslo"})
        runner = adk.runner(service, app)
        message = adk.types.Content(role="user", parts=[adk.types.Part(text="Weather?")])
        events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
        assert events[-1].content.parts[0].text == "Clear in Oslo."
        stored = await service.get_session(app_name=app, user_id="u", session_id="s")
        assert stored is not None and stored.state["forecast"] == "Clear in Oslo."
        shapes.append(_shape(stored))
    assert shapes[0] == shapes[1]
    assert [s[0] for s in shapes[1]] == ["user", "forecaster", "forecaster", "forecaster"]


def test_the_sync_runner_each_call_on_its_own_loop(live: DaemonProcess, app: str) -> None:
    service = adk.ClawSessionService(address=live.address, autostart=False)
    asyncio.run(service.create_session(app_name=app, user_id="u", session_id="s"))
    runner = adk.runner(service, app)
    for _ in range(2):
        message = adk.types.Content(role="user", parts=[adk.types.Part(text="Weather?")])
        events = list(runner.run(user_id="u", session_id="s", new_message=message))
        assert events[-1].content.parts[0].text == "Clear in Oslo."
    stored = asyncio.run(service.get_session(app_name=app, user_id="u", session_id="s"))
    assert stored is not None and len(stored.events) == 8
    assert len(service._clients) == 1  # the clients of loops that ended were dropped, not kept
