"""The edit property's reference model and a real daemon on the sequences around a superseded repair.

A property run once saw the daemon accept a tool result the model refused as already answered;
its seed was lost. These are the sequences suspected (a call, the Load that repairs it, the late
real result that supersedes the repair, then an EditTail that removes the real result or the
repair, an erasing Clear, the result sent again), written out so that every run compares them:
after each step the daemon's answer must equal the model's, and every Load its projection.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.e2e.test_edit_property import Model, Real
from tests.helpers.daemon import DaemonProcess

CALL = {"role": "assistant", "content": "", "calls": ["c0"]}
LATE = {"role": "tool", "tool_call_id": "c0", "content": "late"}
AGAIN = {"role": "tool", "tool_call_id": "c0", "content": "again"}

#: Steps: ("append", batch) | ("edit", remove_last, after, replacements) | ("clear", erase) | ("load",)
SEQUENCES: dict[str, list[tuple[Any, ...]]] = {
    "remove the real result, then Load": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 1, 0, []),
        ("load",),
        ("load",),
        ("append", [AGAIN]),
        ("append", [AGAIN]),
        ("load",),
    ],
    "remove the real result, then send it again": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 1, 0, []),
        ("append", [AGAIN]),
        ("append", [AGAIN]),
        ("load",),
    ],
    "replace the real result in the edit": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 0, 1, [AGAIN]),
        ("append", [LATE]),
        ("edit", 1, 0, []),
        ("load",),
    ],
    "remove the repair": [
        ("append", [CALL]),
        ("load",),
        ("edit", 1, 0, []),
        ("append", [LATE]),
        ("append", [AGAIN]),
        ("edit", 1, 0, []),
        ("load",),
        ("append", [AGAIN]),
        ("load",),
    ],
    "remove the call with its result": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 2, 0, []),
        ("append", [LATE]),
        ("load",),
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("load",),
    ],
    "an erasing clear in between": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 1, 0, []),
        ("clear", True),
        ("append", [AGAIN]),
        ("load",),
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("append", [AGAIN]),
        ("load",),
    ],
    "a clear that keeps the log in between": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("clear", False),
        ("append", [CALL]),
        ("load",),
        ("edit", 1, 0, []),
        ("append", [LATE]),
        ("append", [AGAIN]),
        ("load",),
    ],
}


@pytest.fixture(scope="module")
def stub(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[pb_grpc.SessionServiceStub]:
    d = DaemonProcess(tmp_path_factory.mktemp("edit-supersede")).start()
    channel = grpc.insecure_channel(d.address)
    try:
        yield pb_grpc.SessionServiceStub(channel)
    finally:
        channel.close()
        d.stop()


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_the_model_and_the_daemon_agree(stub: pb_grpc.SessionServiceStub, name: str) -> None:
    model, real = Model(), Real(stub)
    sid = f"supersede-{uuid.uuid4().hex[:8]}"
    outcomes: list[str] = []
    for n, step in enumerate(SEQUENCES[name]):
        rid = f"{sid}-{n}"
        kind = step[0]
        if kind == "load":
            got, expected = real.load(sid), model.load(sid)
        elif kind == "append":
            got, expected = real.append(sid, step[1], rid), model.append(sid, step[1], rid)
        elif kind == "edit":
            args = (sid, step[1], step[2], step[3], 0, rid)
            got, expected = real.edit(*args), model.edit(*args)
        else:
            got, expected = real.clear(sid, step[1], rid), model.clear(sid, step[1], rid)
        assert got == expected, f"{name}, step {n} {step}: daemon {got}, model {expected}"
        if kind != "load":
            outcomes.append(expected[0] if expected[0] == "ok" else expected[1][1])
    # Each sequence sends a result the rules refuse (so the comparison covers a refusal too).
    assert "TOOL_CALL_ALREADY_ANSWERED" in outcomes or "UNKNOWN_TOOL_CALL" in outcomes, outcomes


def test_the_model_repairs_a_call_whose_superseding_result_an_edit_removed() -> None:
    """Guard: the model itself says the call is open again (a second repair), not still answered."""
    model = Model()
    model.append("s", [CALL], "1")
    assert model.load("s")[0] == [("c0", 1, 2)]
    model.append("s", [LATE], "2")
    model.edit("s", 1, 0, [], 0, "3")
    assert model.load("s")[0] == [("c0", 1, 5)]
    assert model.append("s", [AGAIN], "4") == ("ok", (6, 6, False))
    assert model.append("s", [AGAIN], "5") == ("err", ("FAILED_PRECONDITION", "TOOL_CALL_ALREADY_ANSWERED"))
