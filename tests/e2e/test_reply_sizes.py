"""Replies fit a default gRPC client whatever ``--max-message-bytes`` says (issue 16, item 6).

A daemon that accepts the largest messages it may (``--max-message-bytes``
at its ceiling, 4 MiB - 64 KiB) still sends every Load, Watch and Export
reply under 4 MiB (gRPC's default receive limit), so a client built from the
proto with default channel options (not this project's client) reads
sessions of several 3 MiB messages, and the daemon logs no error. A setting
above the ceiling (flag or environment) is one configuration line, exit 2:
it would accept texts no reply could carry.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from claw_sessiond.config import MAX_MESSAGE_BYTES_CEILING
from claw_sessiond_client import Message
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess

MIB = 1024 * 1024
#: gRPC's default receive limit, the one a client built from the proto alone has.
DEFAULT_RECEIVE = 4 * MIB
COUNT = 4


@pytest.fixture
def big(spawn_daemon: Any) -> DaemonProcess:
    d: DaemonProcess = spawn_daemon("--max-message-bytes", str(MAX_MESSAGE_BYTES_CEILING))
    with d.client() as c:
        for i in range(COUNT):
            c.append("big", Message.user(chr(ord("a") + i) * (3 * MIB)))
        assert c.load("big", "/tmp").session.last_position == COUNT
    return d


def test_load_watch_and_export_replies_stay_under_the_default_receive_limit(big: DaemonProcess) -> None:
    with grpc.insecure_channel(big.address) as channel:  # default options: 4 MiB receive limit
        stub = pb_grpc.SessionServiceStub(channel)

        chunks = list(stub.Load(pb.LoadRequest(session_id="big", workdir="/tmp"), timeout=60))
        assert chunks[-1].done
        assert max(c.ByteSize() for c in chunks) < DEFAULT_RECEIVE
        contents = [m.content for c in chunks for m in c.messages]
        assert [(len(t), t[0]) for t in contents] == [(3 * MIB, chr(ord("a") + i)) for i in range(COUNT)]

        events = []
        for reply in stub.Watch(pb.WatchRequest(session_id="big"), timeout=60):
            assert reply.ByteSize() < DEFAULT_RECEIVE
            events.append(reply.position)
            if len(events) == COUNT:
                break
        assert events == list(range(1, COUNT + 1))

        events = []  # in batches: each 3 MiB entry travels alone, under the limit
        for reply in stub.Watch(pb.WatchRequest(session_id="big", batch=True), timeout=60):
            assert reply.ByteSize() < DEFAULT_RECEIVE
            events.extend(e.position for e in reply.events)
            if len(events) >= COUNT:
                break
        assert events == list(range(1, COUNT + 1))

        lines = list(stub.Export(pb.ExportRequest(session_id="big"), timeout=60))
        assert len(lines) == COUNT + 1  # the header and one line per event
        assert max(r.ByteSize() for r in lines) < DEFAULT_RECEIVE

    # A client whose limit is below one entry fails on its side; the daemon shrugs it off.
    small = [("grpc.max_receive_message_length", 2 * MIB)]
    with grpc.insecure_channel(big.address, options=small) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            list(stub.Load(pb.LoadRequest(session_id="big", workdir="/tmp"), timeout=60))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    with big.client() as c:
        assert c.load("big", "/tmp").session.last_position == COUNT  # still serving

    big.stop()
    log = big.log()
    assert " ERROR " not in log and "Traceback" not in log, log


@pytest.mark.backend_neutral("the configuration is refused before any store is opened")
def test_a_max_message_bytes_above_what_a_reply_can_carry_is_one_configuration_line(workspace: Path) -> None:
    assert MAX_MESSAGE_BYTES_CEILING == 4_128_768  # 4 MiB (a default client's receive limit) - 64 KiB
    over = str(MAX_MESSAGE_BYTES_CEILING + 1)
    for args, env in (
        (["--max-message-bytes", over], {}),
        (["--max-message-bytes", str(16 * MIB), "--max-entry-bytes", str(32 * MIB)], {}),
        ([], {"CLAW_SESSIOND_MAX_MESSAGE_BYTES": over}),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(workspace), *args],
            capture_output=True,
            text=True,
            timeout=90,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
        )
        out = done.stdout + done.stderr
        assert done.returncode == 2, out
        assert out.startswith("claw-sessiond: configuration error: max_message_bytes: must be at most 4128768"), out
        assert out.count("\n") == 1 and "Traceback" not in out, out
    assert not (workspace / ".claw" / "sessions.db").exists()  # refused before anything was opened
