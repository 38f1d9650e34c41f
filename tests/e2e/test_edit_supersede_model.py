"""Two of the written-out sequences around a superseded repair (tests/helpers/edit_model.py, ``SEQUENCES``)
through a real daemon's generated stub, so the gRPC edge sees them too; all of them run on a ``Storage``
in-process, both backends (tests/storage/test_edit_supersede_model.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import grpc
import pytest

from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess
from tests.helpers.edit_model import Real
from tests.helpers.edit_sequences import run_written_out


@pytest.fixture(scope="module")
def stub(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[pb_grpc.SessionServiceStub]:
    d = DaemonProcess(tmp_path_factory.mktemp("edit-supersede")).start()
    channel = grpc.insecure_channel(d.address)
    try:
        yield pb_grpc.SessionServiceStub(channel)
    finally:
        channel.close()
        d.stop()


@pytest.mark.parametrize("name", ["remove the real result, then Load", "an erasing clear in between"])
def test_the_model_and_the_daemon_agree(stub: pb_grpc.SessionServiceStub, name: str) -> None:
    asyncio.run(run_written_out(Real(stub), name))
