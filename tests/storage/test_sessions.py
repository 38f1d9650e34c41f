"""Session state, labels, create, fork and update: the storage contract (every backend).

Requests are built as the service builds them (``validate_sessions``, ``validate.prepare_append``),
and what was stored is read back through the interface only: Load, export, listings, scope states.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.errors import (
    AlreadyExistsError,
    InvalidRequestError,
    PreconditionError,
    Reason,
    SequenceConflictError,
    SessionNotFoundError,
    ToolCallStateError,
)
from claw_sessiond.policy import ToolPolicy, policy_json
from claw_sessiond.state import MAX_LABELS, MAX_STATE_BYTES
from claw_sessiond.storage import Storage
from claw_sessiond.validate import prepare_append
from claw_sessiond.validate_sessions import prepare_create, prepare_fork, prepare_update
from tests.storage._support import (
    Stores,
    append,
    assistant,
    clear,
    event_types,
    export_lines,
    history,
    import_lines,
    renamed,
    result,
    snapshot,
    user,
)

WORKDIR = "/work/dir"


async def create(storage: Storage, sid: str, *, state: Any = None, request_id: str = "", **kw: Any) -> Any:
    job = prepare_create(
        sid,
        workdir=kw.pop("workdir", WORKDIR),
        state="" if state is None else json.dumps(state),
        labels=kw.pop("labels", {}),
        tool_policy=kw.pop("tool_policy", "{}"),
        request_id=request_id,
        trace_id="trace",
    )
    return await storage.create_session(job)


async def update(storage: Storage, sid: str, *deltas: tuple[str, Any], **kw: Any) -> Any:
    job = prepare_update(
        sid,
        state_deltas=[(scope, json.dumps(d)) for scope, d in deltas],
        set_labels=kw.pop("set_labels", {}),
        remove_labels=kw.pop("remove_labels", []),
        tool_policy=kw.pop("tool_policy", None),
        expected_last_position=kw.pop("expected", 0),
        request_id=kw.pop("request_id", ""),
        trace_id="trace",
    )
    return await storage.update_session(job)


async def fork(storage: Storage, src: str, sid: str, **kw: Any) -> Any:
    job = prepare_fork(
        src,
        sid,
        up_to_position=kw.pop("up_to", 0),
        workdir=kw.pop("workdir", ""),
        labels=kw.pop("labels", None),
        request_id=kw.pop("request_id", ""),
        trace_id="trace",
    )
    return await storage.fork_session(job)


async def append_with(storage: Storage, sid: str, *messages: Any, deltas: Any = (), expected: int = 0) -> Any:
    job = prepare_append(
        sid,
        list(messages),
        expected_last_position=expected,
        request_id="",
        workdir="",
        run_id="",
        trace_id="trace",
        max_message_bytes=1 << 20,
        max_batch_messages=1000,
        state_deltas=[(scope, json.dumps(d)) for scope, d in deltas],
    )
    return await storage.append(job)


async def state_of(storage: Storage, sid: str) -> Any:
    return json.loads((await storage.load(sid, WORKDIR, "t", repair=False)).session.settings.state)


async def scope(storage: Storage, name: str) -> Any:
    return json.loads((await storage.scope_states([name]))[0].state)


# ---------------------------------------------------------------- create


async def test_create_stores_an_empty_session_with_its_state_labels_and_policy(storage: Storage) -> None:
    made = await create(
        storage,
        "s",
        state={"a": 1, "b": {"c": [1, 2]}, "gone": None},
        labels={"app": "w", "user": "u"},
        tool_policy=policy_json(ToolPolicy("drop", True)),
    )
    s = made.session
    assert s.stored and s.last_position == 0 and s.message_count == 0 and not made.replayed
    assert json.loads(s.settings.state) == {"a": 1, "b": {"c": [1, 2]}}  # a top-level null means absent
    assert dict(s.settings.labels) == {"app": "w", "user": "u"}
    assert json.loads(s.settings.tool_policy) == {"repair": "drop", "allow_orphan_results": True}
    assert s.settings.incarnation and not s.settings.forked_from
    loaded = await storage.load("s", WORKDIR, "t")
    assert loaded.session.settings == s.settings and loaded.messages == []
    assert await event_types(storage, "s") == ["session_settings", "state"]


async def test_create_is_exclusive_and_a_refusal_writes_nothing(storage: Storage) -> None:
    await append(storage, "s", user("x"))
    before = await snapshot(storage, "s")
    with pytest.raises(AlreadyExistsError) as caught:
        await create(storage, "s", state={"a": 1})
    assert caught.value.reason == Reason.SESSION_EXISTS
    assert await snapshot(storage, "s") == before


async def test_create_replays_its_request_id_and_refuses_it_for_other_content(storage: Storage) -> None:
    first = await create(storage, "s", state={"a": 1}, request_id="r1")
    await update(storage, "s", ("", {"b": 2}))
    again = await create(storage, "s", state={"a": 1}, request_id="r1")
    assert again.replayed and again.trace_id == first.trace_id
    assert json.loads(again.session.settings.state) == {"a": 1, "b": 2}  # the session as it is now
    with pytest.raises(InvalidRequestError) as reused:
        await create(storage, "s", state={"a": 2}, request_id="r1")
    assert reused.value.reason == Reason.REQUEST_ID_REUSED
    with pytest.raises(AlreadyExistsError):
        await create(storage, "s", state={"a": 1})  # no request id: a new request


# ---------------------------------------------------------------- update


async def test_update_of_a_session_not_stored_is_not_found_and_writes_nothing(storage: Storage) -> None:
    before = await snapshot(storage, "nope")
    with pytest.raises(SessionNotFoundError):
        await update(storage, "nope", ("", {"a": 1}), set_labels={"k": "v"})
    assert await snapshot(storage, "nope") == before


async def test_update_applies_deltas_in_order_and_changes_labels_and_policy(storage: Storage) -> None:
    await create(storage, "s", state={"a": 1, "b": 2}, labels={"app": "w", "user": "u"})
    out = await update(
        storage,
        "s",
        ("", {"a": None, "c": [1]}),
        ("", {"c": {"d": True}, "b": 3}),
        set_labels={"app": "x", "tier": "gold"},
        remove_labels=["user"],
        tool_policy=policy_json(ToolPolicy("off")),
    )
    s = out.session.settings
    assert json.loads(s.state) == {"b": 3, "c": {"d": True}}
    assert dict(s.labels) == {"app": "x", "tier": "gold"}
    assert json.loads(s.tool_policy) == {"repair": "off"}
    assert (await storage.load("s", WORKDIR, "t")).session.settings == s
    types = await event_types(storage, "s")
    assert types == ["session_settings", "state", "state", "state", "session_settings"]


async def test_update_checks_the_expected_position_and_replays(storage: Storage) -> None:
    await append(storage, "s", user("x"), user("y"))
    with pytest.raises(SequenceConflictError):
        await update(storage, "s", ("", {"a": 1}), expected=1)
    assert await state_of(storage, "s") == {}
    first = await update(storage, "s", ("", {"n": 1}), expected=2, request_id="u1")
    again = await update(storage, "s", ("", {"n": 1}), expected=2, request_id="u1")
    assert again.replayed and not first.replayed
    assert await state_of(storage, "s") == {"n": 1}
    assert (await event_types(storage, "s")).count("state") == 1
    with pytest.raises(InvalidRequestError) as reused:
        await update(storage, "s", ("", {"n": 2}), request_id="u1")
    assert reused.value.reason == Reason.REQUEST_ID_REUSED


async def test_a_state_over_its_bound_refuses_the_whole_update(storage: Storage) -> None:
    await create(storage, "s", state={"a": "x" * 1000}, labels={"k": "v"})
    before = await snapshot(storage, "s")
    big = "y" * (MAX_STATE_BYTES // 2)
    with pytest.raises(InvalidRequestError) as caught:
        await update(storage, "s", ("", {"b": big}), ("", {"c": big}), set_labels={"other": "1"})
    assert caught.value.reason == Reason.FIELD_TOO_LARGE and "state_deltas[1]" in caught.value.message
    assert await snapshot(storage, "s") == before
    await update(storage, "s", ("", {"b": big}), ("", {"b": None, "c": big}))  # within the bound after each
    assert set(await state_of(storage, "s")) == {"a", "c"}


async def test_more_than_the_most_labels_is_refused(storage: Storage) -> None:
    await create(storage, "s", labels={f"k{i}": "v" for i in range(MAX_LABELS)})
    before = await snapshot(storage, "s")
    with pytest.raises(InvalidRequestError) as caught:
        await update(storage, "s", set_labels={"one-more": "v"})
    assert caught.value.reason == Reason.FIELD_TOO_LARGE
    assert await snapshot(storage, "s") == before
    await update(storage, "s", set_labels={"one-more": "v"}, remove_labels=["k0"])  # replaces one: fits
    assert len((await storage.load("s", WORKDIR, "t")).session.settings.labels) == MAX_LABELS


# ---------------------------------------------------------------- append's deltas, shared scopes


async def test_append_applies_its_deltas_in_its_transaction(storage: Storage) -> None:
    await append_with(storage, "s", user("a"), deltas=[("", {"turn": 1}), ("app:w", {"seen": 1})])
    assert await state_of(storage, "s") == {"turn": 1} and await scope(storage, "app:w") == {"seen": 1}
    before = await snapshot(storage, "s")
    with pytest.raises(SequenceConflictError):  # a refused append leaves every state as it was
        await append_with(storage, "s", user("b"), deltas=[("", {"turn": 2}), ("app:w", {"seen": 2})], expected=7)
    with pytest.raises(ToolCallStateError):
        await append_with(storage, "s", result("unknown"), deltas=[("", {"turn": 2})])
    with pytest.raises(InvalidRequestError):  # the delta itself refused: the messages are not written either
        await append_with(storage, "s", user("b"), deltas=[("", {"big": "z" * MAX_STATE_BYTES})])
    assert await snapshot(storage, "s") == before
    assert await state_of(storage, "s") == {"turn": 1} and await scope(storage, "app:w") == {"seen": 1}


async def test_a_scope_is_one_state_shared_by_every_session_that_names_it(storage: Storage) -> None:
    await append_with(storage, "a", user("x"), deltas=[("user:w/alice", {"lang": "fr", "n": 1})])
    await create(storage, "b")
    await update(storage, "b", ("user:w/alice", {"n": 2}), ("app:w", {"v": 1}))
    states = await storage.scope_states(["user:w/alice", "never", "app:w", "user:w/alice"])
    assert [(s.scope, json.loads(s.state)) for s in states] == [
        ("user:w/alice", {"lang": "fr", "n": 2}),
        ("never", {}),
        ("app:w", {"v": 1}),
        ("user:w/alice", {"lang": "fr", "n": 2}),
    ]
    assert states[0].updated_at and not states[1].updated_at
    assert await state_of(storage, "a") == {} and await state_of(storage, "b") == {}  # own states untouched


# ---------------------------------------------------------------- labels: listing, delete


async def test_list_sessions_by_labels_matches_all_given_exactly_and_pages(storage: Storage) -> None:
    for i in range(5):
        await create(storage, f"w-{i}", labels={"app": "w", "user": "alice" if i % 2 == 0 else "bob"})
    await create(storage, "other", labels={"app": "x", "user": "alice"})
    await create(storage, "plain")
    alice = await storage.list_sessions("", 100, None, {"app": "w", "user": "alice"})
    assert sorted(s.id for s in alice) == ["w-0", "w-2", "w-4"]
    assert await storage.count_sessions("", {"app": "w", "user": "alice"}) == 3
    assert await storage.count_sessions("", {"app": "w"}) == 5
    assert await storage.count_sessions("2", {"app": "w"}) == 1
    assert await storage.list_sessions("", 100, None, {"app": "W"}) == []  # exact values
    assert alice[0].labels == {"app": "w", "user": "alice"} and alice[0].created_at
    pages, after = [], None
    while True:  # keyset paging keeps the order and the filter
        page = await storage.list_sessions("", 2, after, {"app": "w"})
        pages.append([s.id for s in page])
        if len(page) < 2:
            break
        after = (page[-1].updated_at, page[-1].id)
    flat = [sid for page in pages for sid in page]
    assert flat == [s.id for s in await storage.list_sessions("", 100, None, {"app": "w"})] and len(flat) == 5


async def test_delete_and_retention_take_the_labels_with_the_session(storage: Storage) -> None:
    await create(storage, "a", labels={"app": "w"}, state={"k": 1})
    await create(storage, "b", labels={"app": "w"})
    await storage.delete("a")
    assert [s.id for s in await storage.list_sessions("", 10, None, {"app": "w"})] == ["b"]
    made = await create(storage, "a")  # the id again: nothing of the old one
    assert dict(made.session.settings.labels) == {} and made.session.settings.state == "{}"
    assert await storage.delete_if_not_updated_since("b", "9999-01-01T00:00:00.000000Z") > 0
    assert await storage.list_sessions("", 10, None, {"app": "w"}) == []
    assert await storage.count_sessions("", {"app": "w"}) == 0


# ---------------------------------------------------------------- fork


async def _source(storage: Storage) -> None:
    await create(
        storage, "src", state={"k": "v"}, labels={"app": "w"}, tool_policy=policy_json(ToolPolicy("synthesize", True))
    )
    await append(storage, "src", user("old"))
    await clear(storage, "src")  # position 2
    await append(storage, "src", user("q"), assistant("c1", "c2", text="calling"), result("c1", "one"))  # 3, 4, 5
    await storage.load("src", WORKDIR, "repair")  # c2 repaired at 6
    await append(storage, "src", user("next"), assistant("c3"), result("c3", "three"))  # 7, 8, 9


async def test_fork_copies_the_visible_entries_to_positions_from_1_with_lineage(storage: Storage) -> None:
    await _source(storage)
    src = await history(storage, await storage.load("src", WORKDIR, "t", repair=False))
    forked = await fork(storage, "src", "f", up_to=8, request_id="f1")
    assert forked.entries_copied == 6 and not forked.replayed
    s = forked.session
    assert (s.last_position, s.message_count, s.settings.forked_from, s.settings.forked_at_position) == (6, 6, "src", 8)
    assert json.loads(s.settings.state) == {"k": "v"} and dict(s.settings.labels) == {"app": "w"}
    assert json.loads(s.settings.tool_policy) == {"repair": "synthesize", "allow_orphan_results": True}
    got = await history(storage, await storage.load("f", WORKDIR, "t", repair=False))
    assert [m.position for m in got] == [1, 2, 3, 4, 5, 6]
    keep = ("role", "content", "tool_calls", "tool_call_id", "name", "synthetic_reason", "created_at", "trace_id")
    assert [[getattr(m, k) for k in keep] for m in got] == [[getattr(m, k) for k in keep] for m in src[:6]]
    assert got[3].synthetic_reason == "interrupted"  # the repair of c2 stays synthetic
    # c3's result lies beyond the fork: c3 is open in the fork (repairable: no run owns it)
    repaired = await storage.load("f", WORKDIR, "t")
    assert [(r.tool_call_id, r.assistant_position) for r in repaired.repairs] == [("c3", 6)]
    with pytest.raises(ToolCallStateError):  # c1 is answered in the fork too
        await append(storage, "f", result("c1", "again"))
    again = await fork(storage, "src", "f", up_to=8, request_id="f1")
    assert again.replayed and again.entries_copied == 6
    assert (await storage.load("src", WORKDIR, "t", repair=False)).session.last_position == 9  # source untouched


async def test_fork_of_everything_with_its_own_labels_and_workdir(storage: Storage) -> None:
    await _source(storage)
    forked = await fork(storage, "src", "f", labels={"app": "x"}, workdir="/else")
    assert forked.entries_copied == 7 and forked.session.settings.forked_at_position == 9
    assert dict(forked.session.settings.labels) == {"app": "x"} and forked.session.workdir == "/else"
    assert [s.id for s in await storage.list_sessions("", 10, None, {"app": "x"})] == ["f"]
    assert forked.session.usage.input_tokens == 0


async def test_fork_refusals_write_nothing(storage: Storage) -> None:
    await _source(storage)
    await create(storage, "taken")
    before = await snapshot(storage, "src", "taken", "new")
    with pytest.raises(SessionNotFoundError):
        await fork(storage, "missing", "new")
    with pytest.raises(AlreadyExistsError) as exists:
        await fork(storage, "src", "taken")
    assert exists.value.reason == Reason.SESSION_EXISTS
    with pytest.raises(InvalidRequestError) as beyond:
        await fork(storage, "src", "new", up_to=10)
    assert "up_to_position" in beyond.value.message
    assert await snapshot(storage, "src", "taken", "new") == before


async def test_a_fork_over_the_open_call_limit_is_refused(stores: Stores, tmp_path: Path) -> None:
    storage = await stores.open(tmp_path / "limited", max_open_tool_calls=2)
    # answered in the same append, so the source never holds more than the limit
    await append(storage, "src", assistant("a", "b", "c"), result("a"), result("b"), result("c"), assistant("d"))
    assert (await fork(storage, "src", "f1", up_to=3)).entries_copied == 3  # b, c open in the fork: 2 fit
    before = await snapshot(storage, "src", "f2")
    with pytest.raises(PreconditionError) as caught:
        await fork(storage, "src", "f2", up_to=1)  # a, b, c open: 3
    assert caught.value.reason == Reason.TOO_MANY_OPEN_CALLS
    assert await snapshot(storage, "src", "f2") == before


# ---------------------------------------------------------------- export and import


async def test_export_and_import_reproduce_state_labels_policy_and_lineage(stores: Stores, tmp_path: Path) -> None:
    one, two = await stores.open(tmp_path / "one"), await stores.open(tmp_path / "two")
    await _source(one)
    await update(one, "src", ("", {"k": None, "n": 2}), ("app:w", {"shared": 1}), set_labels={"user": "u"})
    await fork(one, "src", "f", up_to=5)
    for sid in ("src", "f"):
        lines = await export_lines(one, sid)
        assert await import_lines(two, lines) == len(lines) - 1
        assert await export_lines(two, sid) == lines
        a = (await one.load(sid, WORKDIR, "t", repair=False)).session.settings
        b = (await two.load(sid, WORKDIR, "t", repair=False)).session.settings
        assert (a.state, dict(a.labels), a.tool_policy, a.forked_from, a.forked_at_position) == (
            b.state,
            dict(b.labels),
            b.tool_policy,
            b.forked_from,
            b.forked_at_position,
        )
    assert sorted(s.id for s in await two.list_sessions("", 10, None, {"user": "u"})) == ["f", "src"]
    # a shared scope's delta stays in the log but is not applied again by an import
    assert (await two.scope_states(["app:w"]))[0].state == "{}"
    # a merge into a stored session folds the settings events of both, in event order
    await create(two, "merged", state={"local": True}, labels={"z": "1"})
    await import_lines(two, renamed(await export_lines(one, "src"), "merged"), "merge")
    merged = (await two.load("merged", WORKDIR, "t", repair=False)).session.settings
    assert json.loads(merged.state) == {"local": True, "n": 2}
    assert dict(merged.labels) == {"app": "w", "user": "u"}  # the last settings event wins


async def test_bad_settings_payloads_are_refused_on_import(storage: Storage) -> None:
    header = {"format": "claw-sessiond-export", "version": 1, "session_id": "s", "workdir": "/w", "events": 1}
    ts = "2026-01-02T03:04:05.000006Z"
    header |= {"created_at": ts, "updated_at": ts}
    event = {"event_id": 1, "session_id": "s", "position": None, "ts": ts, "trace_id": "t", "schema_version": 1}
    for event_type, payload in (
        ("state", {"delta": [1], "scope": ""}),
        ("state", {"delta": {}}),
        ("session_settings", {"labels": {"bad key": "v"}}),
        ("session_settings", {"tool_policy": {"repair": "sometimes"}}),
        ("session_settings", {"surprise": 1}),
    ):
        lines = [json.dumps(header), json.dumps({**event, "type": event_type, "payload": payload})]
        with pytest.raises(InvalidRequestError) as caught:
            await import_lines(storage, lines)
        assert caught.value.reason == Reason.INVALID_IMPORT, payload
    assert await storage.session_ids() == []
