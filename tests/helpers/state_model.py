"""Random sequences of state deltas, and the dict model they must agree with.

The model is a few lines of Python dicts written from the proto's comments (StateDelta: each
key set to its value, a null removes it; top-level keys only; a shared scope is one state for
every session; a refused request changes nothing; a retried request id changes nothing), not
from the daemon's code. Hypothesis draws creates, appends with deltas (some refused by their
expected position), updates (some of sessions never stored), retries and reads over two
sessions and two scopes; after every step the answer must be the model's, and every
read must return exactly the model's states.

The sequences run on a ``Storage`` in-process, both backends, with many examples
(tests/storage/test_state_property.py, :class:`InProcess`: each request built as the daemon's service
builds it from the client's request), and through a real daemon's client with a few
(tests/e2e/test_state_property.py, :class:`ClientSide`). A refusal is compared by its status code.
"""

from __future__ import annotations

import itertools
import json
import uuid
from typing import Any, Protocol

from hypothesis import strategies as st

from claw_sessiond.errors import SessiondError
from claw_sessiond.model import Message as StoredMessage
from claw_sessiond.rpc.convert import policy_text_of
from claw_sessiond.rpc.edge import status_for
from claw_sessiond.storage import Storage
from claw_sessiond.validate_sessions import check_scopes, prepare_create, prepare_update
from claw_sessiond_client import (
    AlreadyExistsError,
    Message,
    SequenceConflictError,
    SessionClient,
    SessionNotFoundError,
    StateDelta,
)
from claw_sessiond_client._requests import deltas_pb, json_object
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from tests.storage._support import job

VALUES = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.text(alphabet="xyzé😀", max_size=3),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from("pq"), st.one_of(st.none(), st.integers(0, 3)), max_size=2),
)
DELTA = st.dictionaries(st.sampled_from("abcd"), VALUES, max_size=3)
SCOPE = st.sampled_from(["", "", "app", "user"])
DELTAS = st.lists(st.tuples(SCOPE, DELTA), max_size=3)
WHICH = st.integers(0, 1)
OPERATION = st.one_of(
    st.tuples(st.just("create"), WHICH, DELTA),
    st.tuples(st.just("append"), WHICH, DELTAS, st.booleans()),  # the flag: refused by its expected position
    st.tuples(st.just("update"), WHICH, DELTAS),
    st.tuples(st.just("retry"), WHICH),
    st.tuples(st.just("read"), WHICH),
)


def applied(state: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in state.items() if k not in delta}
    out.update({k: v for k, v in delta.items() if v is not None})
    return out


class Model:
    """Per session: its state (absent: not stored) and last position; per scope: its state."""

    def __init__(self) -> None:
        self.states: dict[str, dict[str, Any]] = {}
        self.last: dict[str, int] = {}
        self.scopes: dict[str, dict[str, Any]] = {}

    def apply(self, sid: str, deltas: list[tuple[str, dict[str, Any]]]) -> None:
        for scope, delta in deltas:
            if scope:
                self.scopes[scope] = applied(self.scopes.get(scope, {}), delta)
            else:
                self.states[sid] = applied(self.states.get(sid, {}), delta)


Deltas = list[tuple[str, dict[str, Any]]]  # (scope name, delta); scope "" is the session's own state
Outcome = tuple[str, Any]  # ("ok", value) or ("err", status code name)


class Side(Protocol):
    """Where the operations go: :class:`ClientSide` (a daemon) or :class:`InProcess` (a storage)."""

    async def create(self, sid: str, state: dict[str, Any]) -> Outcome:
        """("ok", the session's state)."""
        ...

    async def append(self, sid: str, deltas: Deltas, rid: str, expected: int) -> Outcome:
        """("ok", (last position, replayed))."""
        ...

    async def update(self, sid: str, deltas: Deltas) -> Outcome:
        """("ok", the session's state)."""
        ...

    async def read(self, sid: str, scopes: list[str]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """The session's state and the scopes' states (a Load that repairs nothing)."""
        ...

    async def scope_states(self, scopes: list[str]) -> dict[str, dict[str, Any]]: ...


#: The client's refusals, by the status code the daemon sends with each.
_CODES = {AlreadyExistsError: "ALREADY_EXISTS", SequenceConflictError: "ABORTED", SessionNotFoundError: "NOT_FOUND"}


class ClientSide:
    """Through a real daemon, with its sync client."""

    def __init__(self, client: SessionClient) -> None:
        self.c = client

    async def create(self, sid: str, state: dict[str, Any]) -> Outcome:
        try:
            return ("ok", self.c.create_session(sid, state=state).state)
        except (AlreadyExistsError, SessionNotFoundError, SequenceConflictError) as exc:
            return ("err", _CODES[type(exc)])

    async def append(self, sid: str, deltas: Deltas, rid: str, expected: int) -> Outcome:
        wire = [StateDelta(d, s) for s, d in deltas]
        try:
            r = self.c.append(
                sid, Message.user("x"), expected_last_position=expected, request_id=rid, state_deltas=wire
            )
        except (AlreadyExistsError, SessionNotFoundError, SequenceConflictError) as exc:
            return ("err", _CODES[type(exc)])
        return ("ok", (r.last_position, r.replayed))

    async def update(self, sid: str, deltas: Deltas) -> Outcome:
        try:
            return ("ok", self.c.update_session(sid, state_deltas=[StateDelta(d, s) for s, d in deltas]).state)
        except (AlreadyExistsError, SessionNotFoundError, SequenceConflictError) as exc:
            return ("err", _CODES[type(exc)])

    async def read(self, sid: str, scopes: list[str]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        loaded = self.c.load(sid, "/w", repair=False, scopes=scopes)
        return loaded.session.state, dict(loaded.scope_states)

    async def scope_states(self, scopes: list[str]) -> dict[str, dict[str, Any]]:
        return dict(self.c.scope_states(scopes))


def _wire_deltas(deltas: Deltas) -> list[tuple[str, str]]:
    """The deltas as the client encodes them and the service hands them on."""
    return [(d.scope, d.delta) for d in deltas_pb([StateDelta(d, s) for s, d in deltas])]


class InProcess:
    """The same operations on a ``Storage``, each request as the daemon's service builds it."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def create(self, sid: str, state: dict[str, Any]) -> Outcome:
        try:
            create = prepare_create(
                sid,
                workdir="",
                state=json_object(state, "state"),
                labels={},
                tool_policy=policy_text_of(pb.ToolPolicy()),  # type: ignore[arg-type]
                request_id="",
                trace_id="trace",
            )
            r = await self.storage.create_session(create)
        except SessiondError as exc:
            return ("err", status_for(exc).name)
        return ("ok", json.loads(r.session.settings.state))

    async def append(self, sid: str, deltas: Deltas, rid: str, expected: int) -> Outcome:
        try:
            r = await self.storage.append(
                job(
                    sid,
                    StoredMessage("user", "x"),
                    expected=expected,
                    request_id=rid,
                    state_deltas=_wire_deltas(deltas),
                )
            )
        except SessiondError as exc:
            return ("err", status_for(exc).name)
        return ("ok", (r.last_position, r.replayed))

    async def update(self, sid: str, deltas: Deltas) -> Outcome:
        try:
            update = prepare_update(
                sid,
                state_deltas=_wire_deltas(deltas),
                set_labels={},
                remove_labels=[],
                tool_policy=None,
                expected_last_position=0,
                request_id="",
                trace_id="trace",
            )
            r = await self.storage.update_session(update)
        except SessiondError as exc:
            return ("err", status_for(exc).name)
        return ("ok", json.loads(r.session.settings.state))

    async def read(self, sid: str, scopes: list[str]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        loaded = await self.storage.load(sid, "/w", "trace", repair=False)
        return json.loads(loaded.session.settings.state), await self.scope_states(scopes) if scopes else {}

    async def scope_states(self, scopes: list[str]) -> dict[str, dict[str, Any]]:
        return {s.scope: json.loads(s.state) for s in await self.storage.scope_states(check_scopes(scopes))}


#: What the comparisons covered, summed over the sequences (a test reports them as figures).
COUNTS = {"sequences": 0, "operations": 0, "reads_compared": 0, "refusals_compared": 0}


async def run_sequence(side: Side, ops: list[tuple[Any, ...]]) -> None:
    """Every operation on the side and on a new model, on two new sessions and two new scopes."""
    model = Model()
    prefix = uuid.uuid4().hex[:10]
    sids = [f"st-{prefix}-a", f"st-{prefix}-b"]
    scope_names = {"": "", "app": f"app:{prefix}", "user": f"user:{prefix}/u"}
    shared = [scope_names["app"], scope_names["user"]]
    rids = (f"{prefix}-{n}" for n in itertools.count())
    last: dict[str, tuple[Deltas, str]] = {}

    def named(deltas: Deltas) -> Deltas:
        return [(scope_names[s], d) for s, d in deltas]

    for op in ops:
        kind, sid = op[0], sids[op[1]]
        if kind == "create":
            got = await side.create(sid, op[2])
            if sid in model.states:
                assert got == ("err", "ALREADY_EXISTS"), got
                COUNTS["refusals_compared"] += 1
            else:
                model.states[sid], model.last[sid] = applied({}, op[2]), 0
                assert got == ("ok", model.states[sid]), got
        elif kind == "append":
            deltas, refused = named(op[2]), op[3]
            rid = next(rids)
            got = await side.append(sid, deltas, rid, 99 if refused else 0)
            if refused:
                assert got == ("err", "ABORTED"), got
                COUNTS["refusals_compared"] += 1
            else:
                model.states.setdefault(sid, {})
                model.last[sid] = model.last.get(sid, 0) + 1
                assert got == ("ok", (model.last[sid], False)), got
                model.apply(sid, deltas)
                last[sid] = (deltas, rid)
        elif kind == "update":
            deltas = named(op[2])
            got = await side.update(sid, deltas)
            if sid not in model.states:
                assert got == ("err", "NOT_FOUND"), got
                COUNTS["refusals_compared"] += 1
            else:
                model.apply(sid, deltas)
                assert got == ("ok", model.states[sid]), got
        elif kind == "retry":
            if sid not in last:
                continue
            deltas, rid = last[sid]
            got = await side.append(sid, deltas, rid, 0)
            assert got[0] == "ok" and got[1][1], f"a retried append was not replayed: {got}"
        else:
            state, scopes = await side.read(sid, shared)
            assert state == model.states.get(sid, {})
            assert scopes == {name: model.scopes.get(name, {}) for name in shared}
            COUNTS["reads_compared"] += 1
        COUNTS["operations"] += 1
    for sid in sids:
        assert (await side.read(sid, []))[0] == model.states.get(sid, {})
    assert await side.scope_states(shared) == {name: model.scopes.get(name, {}) for name in shared}
    COUNTS["sequences"] += 1


async def check_comparison_can_fail(side: Side) -> None:
    """Guard: a model that merges nested objects (not whole values) must disagree with ``side``."""
    sid = f"st-guard-{uuid.uuid4().hex[:8]}"
    assert (await side.create(sid, {"a": {"x": 1}}))[0] == "ok"
    got = await side.update(sid, [("", {"a": {"y": 2}})])
    merged_model = {"a": {"x": 1, "y": 2}}
    assert got != ("ok", merged_model) and got == ("ok", {"a": {"y": 2}})
