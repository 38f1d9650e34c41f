"""Import and Delete take no request id: the proto says a retry is safe without one, and here it is.

A client whose reply was lost sends the same Import or Delete again. Each
converges to the state one call leaves (DeleteRequest and ImportRequest in
the proto): a second Delete answers OK with ``events_deleted`` 0; a second
Import in mode refuse writes nothing and answers FAILED_PRECONDITION /
SESSION_EXISTS; in mode merge it writes nothing and answers
``events_imported`` 0; in mode replace it writes the same history again.
After each retry the stored history is what one call left. Raw stubs with
default channel options (a client written from the proto alone), a real
daemon.
"""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from claw_sessiond_client import Message, ToolCall
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess

SID = "retried"


def _history(stub: pb_grpc.SessionServiceStub) -> list[tuple[int, str, str]]:
    chunks = list(stub.Load(pb.LoadRequest(session_id=SID, workdir="/tmp"), timeout=30))
    return [(m.position, pb.Role.Name(m.role), m.content) for c in chunks for m in c.messages]


def _reason(err: grpc.RpcError) -> str:
    status: status_pb2.Status | None = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    return info.reason


@pytest.mark.smoke
@pytest.mark.both_backends("Delete and Import write through the shared sequences on either backend")
def test_a_retried_delete_or_import_leaves_what_one_call_left(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.append(SID, Message.user("hello"), request_id="r1")
        c.append(SID, Message.assistant("", tool_calls=[ToolCall("t1", "ls", "{}")]), request_id="r2")
        c.append(SID, Message.tool("t1", "a.txt"), request_id="r3")
        c.record_usage(SID, input_tokens=5, output_tokens=7, request_id="u1")
    with grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        one = _history(stub)
        assert [p for p, _r, _t in one] == [1, 2, 3]
        lines = [r.line for r in stub.Export(pb.ExportRequest(session_id=SID), timeout=30)]

        first = stub.Delete(pb.DeleteRequest(session_id=SID), timeout=30)
        again = stub.Delete(pb.DeleteRequest(session_id=SID), timeout=30)
        assert first.events_deleted >= 4 and again.events_deleted == 0 and not again.erasure_pending
        assert _history(stub) == []

        refuse = pb.ImportRequest(lines=lines)
        assert stub.Import(refuse, timeout=30).events_imported == len(lines) - 1
        try:
            stub.Import(refuse, timeout=30)
            raise AssertionError("a second Import in mode refuse was accepted")
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and _reason(err) == "SESSION_EXISTS", err
        assert _history(stub) == one

        merge = pb.ImportRequest(lines=lines, mode=pb.IMPORT_MODE_MERGE)
        stub.Delete(pb.DeleteRequest(session_id=SID), timeout=30)
        assert stub.Import(merge, timeout=30).events_imported == len(lines) - 1
        assert stub.Import(merge, timeout=30).events_imported == 0
        assert _history(stub) == one

        replace = pb.ImportRequest(lines=lines, mode=pb.IMPORT_MODE_REPLACE)
        assert stub.Import(replace, timeout=30).events_imported == len(lines) - 1
        assert stub.Import(replace, timeout=30).events_imported == len(lines) - 1
        assert _history(stub) == one
    with daemon.client() as c:
        totals = c.load(SID, "/tmp").session.usage
        assert (totals.input_tokens, totals.output_tokens) == (5, 7)  # the usage event is stored once
