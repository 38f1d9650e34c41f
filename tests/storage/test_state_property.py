"""State deltas (a session's own state and shared scopes) on a ``Storage`` in-process, both backends, against the
dict model of tests/helpers/state_model.py; a few sequences also go through a real daemon
(tests/e2e/test_state_property.py).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond.storage import Storage
from tests.helpers.figures import record
from tests.helpers.state_model import COUNTS, OPERATION, InProcess, check_comparison_can_fail, run_sequence
from tests.helpers.tiers import scale


@settings(
    max_examples=scale(100, 200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(OPERATION, min_size=6, max_size=scale(20, 40)))
async def test_state_deltas_match_a_dict_model(storage: Storage, ops: list[tuple[Any, ...]]) -> None:
    await run_sequence(InProcess(storage), ops)


def test_state_model_figures(backend: str) -> None:
    """Runs after the property of its backend (same module, file order): how much was compared."""
    if COUNTS["sequences"]:
        record("state_property", **{k: float(v) for k, v in COUNTS.items()})
        COUNTS.update(dict.fromkeys(COUNTS, 0))


async def test_the_model_comparison_can_fail(storage: Storage) -> None:
    await check_comparison_can_fail(InProcess(storage))
