"""The tool-call policy's property through a real daemon and its client: a few examples, so the gRPC edge and
the client see the sequences too.

The many examples run on a ``Storage`` in-process, both backends (tests/storage/test_policy_property.py); the
operations and the invariants are in tests/helpers/policy_model.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from claw_sessiond_client import SessionClient
from tests.helpers.daemon import DaemonProcess
from tests.helpers.policy_model import EVERY_RULE, ClientSide, operation, run_sequence
from tests.helpers.tiers import scale


@pytest.fixture(scope="module")
def policy_client(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionClient]:
    d = DaemonProcess(tmp_path_factory.mktemp("policy-property")).start()
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
@given(ops=st.lists(operation, min_size=4, max_size=scale(16, 30)))
@example(ops=EVERY_RULE)
def test_policy_invariants_hold_through_the_daemon(policy_client: SessionClient, ops: list[tuple[Any, ...]]) -> None:
    asyncio.run(run_sequence(ClientSide(policy_client), ops))
