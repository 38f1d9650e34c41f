"""The tool-call policy's invariants for random sequences, on a ``Storage`` in-process (both backends).

The operations, the invariants and the two ways to run them are in tests/helpers/policy_model.py; a few
examples also go through a real daemon (tests/e2e/test_policy_property.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from claw_sessiond.storage import Storage
from claw_sessiond_client import Message, ToolCall
from tests.helpers.figures import record
from tests.helpers.policy_model import (
    EVERY_RULE,
    Loaded,
    Seen,
    StorageSide,
    check_log,
    check_projection,
    operation,
    run_sequence,
)
from tests.helpers.tiers import scale

_TOTALS: dict[str, int] = {"sequences": 0}


@settings(
    max_examples=scale(100, 200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(operation, min_size=4, max_size=scale(16, 30)))
@example(ops=EVERY_RULE)
async def test_policy_invariants_hold_for_random_sequences(storage: Storage, ops: list[tuple[Any, ...]]) -> None:
    seen = await run_sequence(StorageSide(storage), ops)
    _TOTALS["sequences"] += 1
    for key, value in seen.counts.items():
        _TOTALS[key] = _TOTALS.get(key, 0) + value


def test_policy_property_figures(backend: str) -> None:
    """Runs after the property test of its backend (same module, file order): how much it exercised."""
    if _TOTALS["sequences"]:
        record("policy_property", **{k: float(v) for k, v in _TOTALS.items()}, violations=0)
        _TOTALS.clear()
        _TOTALS["sequences"] = 0


def test_the_invariants_can_fail() -> None:
    """Guard: a projection that shows a result away from its call, or a repaired pending call, is caught."""
    seen = Seen(pending={"p"})
    call = ToolCall("c", "t", "{}")
    misplaced = Loaded([Message.assistant("", [call]), Message.user("u"), Message.tool("c", "r")], [], 3)
    with pytest.raises(AssertionError, match="not right after"):
        check_projection(misplaced, seen, repaired=False)
    with pytest.raises(AssertionError, match="pending call was repaired"):
        check_log(
            [{"position": 1, "type": "repair", "payload": {"tool_call_id": "p"}}], Seen(repairs={1: "p"}, pending={"p"})
        )
    with pytest.raises(AssertionError, match="lost"):
        check_log([], Seen(messages={1: Message.user("u")}))
