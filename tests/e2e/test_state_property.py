"""Property test: random sequences of state deltas against a real daemon and a dict model.

The model is a few lines of Python dicts written from the proto's comments (StateDelta: each
key set to its value, a null removes it; top-level keys only; a shared scope is one state for
every session; a refused request changes nothing; a retried request id changes nothing), not
from the daemon's code. Hypothesis draws creates, appends with deltas (some refused by their
expected position), updates (some of sessions never stored), retries and reads over two
sessions and two scopes; after every step the daemon must answer as the model does, and every
read must return exactly the model's states.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond_client import (
    AlreadyExistsError,
    Message,
    SequenceConflictError,
    SessionClient,
    SessionNotFoundError,
    StateDelta,
)
from tests.helpers.daemon import DaemonProcess, scale
from tests.helpers.figures import record

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


@pytest.fixture(scope="module")
def state_client(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionClient]:
    d = DaemonProcess(tmp_path_factory.mktemp("state-property")).start()
    try:
        with d.client() as c:
            yield c
    finally:
        d.stop()


_COUNTS = {"sequences": 0, "operations": 0, "reads_compared": 0, "refusals_compared": 0}


@settings(
    max_examples=scale(100, 400),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(OPERATION, min_size=6, max_size=scale(20, 40)))
def test_state_deltas_match_a_dict_model(state_client: SessionClient, ops: list[tuple[Any, ...]]) -> None:
    c, model = state_client, Model()
    prefix = uuid.uuid4().hex[:10]
    sids = [f"st-{prefix}-a", f"st-{prefix}-b"]
    scope_names = {"": "", "app": f"app:{prefix}", "user": f"user:{prefix}/u"}
    rids = (f"{prefix}-{n}" for n in itertools.count())
    last: dict[str, tuple[list[tuple[str, dict[str, Any]]], str]] = {}

    def named(deltas: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
        return [(scope_names[s], d) for s, d in deltas]

    def wire(deltas: list[tuple[str, dict[str, Any]]]) -> list[StateDelta]:
        return [StateDelta(d, s) for s, d in deltas]

    for op in ops:
        kind, sid = op[0], sids[op[1]]
        if kind == "create":
            if sid in model.states:
                with pytest.raises(AlreadyExistsError):
                    c.create_session(sid, state=op[2])
                _COUNTS["refusals_compared"] += 1
            else:
                got = c.create_session(sid, state=op[2])
                model.states[sid], model.last[sid] = applied({}, op[2]), 0
                assert got.state == model.states[sid]
        elif kind == "append":
            deltas, refused = named(op[2]), op[3]
            rid = next(rids)
            if refused:
                with pytest.raises(SequenceConflictError):
                    c.append(
                        sid, Message.user("x"), expected_last_position=99, request_id=rid, state_deltas=wire(deltas)
                    )
                _COUNTS["refusals_compared"] += 1
            else:
                result = c.append(sid, Message.user("x"), request_id=rid, state_deltas=wire(deltas))
                model.states.setdefault(sid, {})
                model.last[sid] = model.last.get(sid, 0) + 1
                assert result.last_position == model.last[sid]
                model.apply(sid, deltas)
                last[sid] = (deltas, rid)
        elif kind == "update":
            deltas = named(op[2])
            if sid not in model.states:
                with pytest.raises(SessionNotFoundError):
                    c.update_session(sid, state_deltas=wire(deltas))
                _COUNTS["refusals_compared"] += 1
            else:
                model.apply(sid, deltas)
                assert c.update_session(sid, state_deltas=wire(deltas)).state == model.states[sid]
        elif kind == "retry":
            if sid not in last:
                continue
            deltas, rid = last[sid]
            assert c.append(sid, Message.user("x"), request_id=rid, state_deltas=wire(deltas)).replayed
        else:
            loaded = c.load(sid, "/w", repair=False, scopes=[scope_names["app"], scope_names["user"]])
            assert loaded.session.state == model.states.get(sid, {})
            assert loaded.scope_states == {
                scope_names["app"]: model.scopes.get(scope_names["app"], {}),
                scope_names["user"]: model.scopes.get(scope_names["user"], {}),
            }
            _COUNTS["reads_compared"] += 1
        _COUNTS["operations"] += 1
    for sid in sids:
        assert c.load(sid, "/w", repair=False).session.state == model.states.get(sid, {})
    assert c.scope_states(list(scope_names.values())[1:]) == {
        name: model.scopes.get(name, {}) for name in list(scope_names.values())[1:]
    }
    _COUNTS["sequences"] += 1


def test_state_model_figures() -> None:
    """Runs after the property (same module, file order): how much was compared."""
    if _COUNTS["sequences"]:
        record("state_property", **{k: float(v) for k, v in _COUNTS.items()})


def test_the_model_comparison_can_fail(state_client: SessionClient) -> None:
    """Guard: a model that merges nested objects (not whole values) must disagree with the daemon."""
    c = state_client
    c.create_session("guard", state={"a": {"x": 1}})
    got = c.update_session("guard", state_deltas=[StateDelta({"a": {"y": 2}})]).state
    merged_model = {"a": {"x": 1, "y": 2}}
    assert got != merged_model and got == {"a": {"y": 2}}
