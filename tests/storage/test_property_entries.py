"""Entries (items, metadata, client ids, entry usage, bounded Loads) on a ``Storage`` in-process, both backends,
against the reference model of tests/helpers/entries_model.py; a few sequences also go through a real daemon
(tests/e2e/test_property_entries.py).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond.storage import Storage
from tests.helpers.entries_model import InProcess, check_comparison_can_fail, operation, run_sequence
from tests.helpers.tiers import scale


@settings(
    max_examples=scale(40, 100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(operation, min_size=6, max_size=scale(20, 40)))
async def test_entries_match_the_reference_model(storage: Storage, ops: list[Any]) -> None:
    await run_sequence(InProcess(storage), ops)


async def test_the_comparison_can_fail(storage: Storage) -> None:
    await check_comparison_can_fail(InProcess(storage))
