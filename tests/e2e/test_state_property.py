"""State deltas against the dict model of tests/helpers/state_model.py through a real daemon's client: a few
examples, so the gRPC edge and the client see the sequences too. The many examples run on a ``Storage``
in-process, both backends (tests/storage/test_state_property.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond_client import SessionClient
from tests.helpers.daemon import DaemonProcess
from tests.helpers.state_model import OPERATION, ClientSide, check_comparison_can_fail, run_sequence
from tests.helpers.tiers import scale


@pytest.fixture(scope="module")
def state_client(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionClient]:
    d = DaemonProcess(tmp_path_factory.mktemp("state-property")).start()
    try:
        with d.client() as c:
            yield c
    finally:
        d.stop()


@settings(
    max_examples=scale(5, 10),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(OPERATION, min_size=6, max_size=scale(20, 40)))
def test_state_deltas_match_a_dict_model(state_client: SessionClient, ops: list[tuple[Any, ...]]) -> None:
    asyncio.run(run_sequence(ClientSide(state_client), ops))


def test_the_model_comparison_can_fail(state_client: SessionClient) -> None:
    asyncio.run(check_comparison_can_fail(ClientSide(state_client)))
