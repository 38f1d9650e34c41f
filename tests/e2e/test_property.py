"""The reference model of SPEC §2-§4 (tests/helpers/history_model.py) against a real daemon, through the
generated stub: a few examples, so the gRPC edge sees the sequences too. The many examples run on a
``Storage`` in-process, both backends (tests/storage/test_property.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess
from tests.helpers.history_model import Real, check_comparison_can_fail, operation, run_sequence
from tests.helpers.tiers import scale


@pytest.fixture(scope="module")
def daemon_stub(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[pb_grpc.SessionServiceStub]:
    d = DaemonProcess(tmp_path_factory.mktemp("property")).start()
    channel = grpc.insecure_channel(d.address)
    try:
        yield pb_grpc.SessionServiceStub(channel)
    finally:
        channel.close()
        d.stop()


@settings(
    max_examples=scale(5, 10),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(operation, min_size=8, max_size=scale(25, 50)))
def test_daemon_matches_the_reference_model(
    daemon_stub: pb_grpc.SessionServiceStub, ops: list[tuple[Any, ...]]
) -> None:
    asyncio.run(run_sequence(Real(daemon_stub), ops))


def test_the_model_comparison_can_fail(daemon_stub: pb_grpc.SessionServiceStub) -> None:
    asyncio.run(check_comparison_can_fail(Real(daemon_stub)))
