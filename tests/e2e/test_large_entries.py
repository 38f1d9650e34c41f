"""Large items (issue 14's size story): a session of many multi-MiB items loads, watches, exports and imports.

Load replies stay at most ~1 MiB each (an entry larger than that alone in its
reply), so a client's memory per reply is bounded by the largest entry, not
by the session; an entry of the full default limit (16 MiB) goes through in
one request and comes back whole.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os

import grpc
import pytest

from claw_sessiond.rpc.service import LOAD_CHUNK_BYTES
from claw_sessiond_client import Message
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess

MIB = 1024 * 1024
ITEMS = 20


def _items() -> list[bytes]:
    return [bytes([i]) * 16 + os.urandom(3 * MIB - 16) for i in range(ITEMS)]


def _digest(items: list[bytes]) -> list[str]:
    return [hashlib.sha256(i).hexdigest() for i in items]


def test_twenty_items_of_three_mib_load_watch_and_export(module_daemon: DaemonProcess, sid: str) -> None:
    daemon, workspace, items = module_daemon, module_daemon.workspace, _items()
    with daemon.client(timeout_s=120) as c:
        for k in range(0, ITEMS, 5):  # 15 MiB a request
            c.append(
                sid,
                [Message.user(f"shot {i}", format="image.png", item=items[i]) for i in range(k, k + 5)]
                + [Message.assistant(f"seen {k}")],
            )
        loaded = c.load(sid, str(workspace))
        assert _digest([m.item for m in loaded.messages if m.item]) == _digest(items)
        assert len(loaded.messages) == ITEMS + ITEMS // 5 and loaded.complete

        tail = c.load(sid, str(workspace), last=3)
        assert [m.content for m in tail.messages] == ["shot 18", "shot 19", "seen 15"]
        assert tail.messages[1].item == items[19] and not tail.complete

        watched: list[bytes] = []
        for event in c.watch(sid):
            assert event.message is not None
            if event.message.item:
                watched.append(event.message.item)
            if event.position == ITEMS + ITEMS // 5:
                break
        assert _digest(watched) == _digest(items)

        lines = list(c.export(sid))
        exported = [base64.b64decode(e["item_b64"]) for e in map(json.loads, lines[1:]) if "item_b64" in e]
        assert _digest(exported) == _digest(items)

        # Import takes a session in one request (at most --max-request-bytes): a part of it here.
        part = [json.loads(line) for line in lines[:8]]
        part[0]["events"] = 7
        copied = f"{sid}-part"
        c.import_lines([json.dumps(e).replace(f'"session_id": "{sid}"', f'"session_id": "{copied}"') for e in part])
        assert _digest([m.item for m in c.load(copied, str(workspace)).messages if m.item]) == _digest(items[:6])


def test_load_replies_stay_near_a_mib_and_a_large_entry_travels_alone(module_daemon: DaemonProcess, sid: str) -> None:
    daemon, workspace = module_daemon, module_daemon.workspace
    with daemon.client(timeout_s=60) as c:
        c.append(sid, [Message.user("small " + "x" * 2000) for _ in range(700)])
        c.append(sid, Message.other("image.png", os.urandom(3 * MIB)))
        c.append(sid, [Message.user("after " + "y" * 2000) for _ in range(700)])
    options = [("grpc.max_receive_message_length", 64 * MIB)]
    with grpc.insecure_channel(daemon.address, options=options) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        chunks = list(stub.Load(pb.LoadRequest(session_id=sid, workdir=str(workspace)), timeout=60))
    assert chunks[-1].done and sum(len(ch.messages) for ch in chunks) == 1401
    for chunk in chunks:
        if any(m.item for m in chunk.messages):
            assert len(chunk.messages) == 1  # the large entry alone
        else:
            assert chunk.ByteSize() <= LOAD_CHUNK_BYTES + 64 * 1024
    assert len(chunks) >= 5  # about 1.4 MB of small entries on each side of the large one


@pytest.mark.smoke
def test_one_entry_of_the_full_default_limit_goes_through(module_daemon: DaemonProcess, sid: str) -> None:
    daemon, workspace, item = module_daemon, module_daemon.workspace, os.urandom(16 * MIB)
    with daemon.client(timeout_s=120) as c:
        c.append(sid, Message.other("raw", item, client_id="the-one"))
        got = c.load(sid, str(workspace)).messages
        assert [(m.client_id, hashlib.sha256(m.item).digest()) for m in got] == [
            ("the-one", hashlib.sha256(item).digest())
        ]
        (line,) = list(c.export(sid))[1:]
        assert base64.b64decode(json.loads(line)["item_b64"]) == item
