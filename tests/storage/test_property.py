"""Random operation sequences on a ``Storage`` in-process (both backends) against the reference model of
SPEC §2-§4 (tests/helpers/history_model.py); a few also go through a real daemon (tests/e2e/test_property.py).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond.storage import Storage
from tests.helpers.figures import record
from tests.helpers.history_model import COUNTS, InProcess, check_comparison_can_fail, operation, run_sequence
from tests.helpers.tiers import scale


@settings(
    max_examples=scale(50, 100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(operation, min_size=8, max_size=scale(25, 50)))
async def test_storage_matches_the_reference_model(storage: Storage, ops: list[tuple[Any, ...]]) -> None:
    await run_sequence(InProcess(storage), ops)


def test_model_figures(backend: str) -> None:
    """Runs after the model test of its backend (same module, file order): report how much was compared."""
    if COUNTS["sequences"]:
        record("property", **{k: float(v) for k, v in COUNTS.items()}, divergences=0)
        COUNTS.update(dict.fromkeys(COUNTS, 0))


async def test_the_model_comparison_can_fail(storage: Storage) -> None:
    await check_comparison_can_fail(InProcess(storage))
