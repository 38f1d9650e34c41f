"""Calls naming a run on several daemons sharing one PostgreSQL database: PingRun and EditTail (SPEC §8).

A call naming a run gets the answer one daemon would give, whichever daemon it
reaches: a run attached on daemon A is live on daemon B too (B's PingRun is
passed on to A, which counts it as the run's ping), and it is not live once
A's lease is lost, whether A was SIGKILLed (B answers ``lease_lost``) or A's
lease expired on the database's clock before A's renewal loop noticed (A
answers ``lease_lost`` itself). A refused EditTail writes nothing. Real
daemons (``spawn_daemon``, stopped by pid at teardown), one database of the
throwaway server, raw gRPC calls so every answer's ErrorInfo is checked.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess
from tests.helpers.postgres import SHARED as POSTGRES
from tests.helpers.process import wait_for

pytestmark = pytest.mark.backend_neutral("starts two daemons on a PostgreSQL database it picks itself")


def _pair(tmp_path: Path, spawn_daemon: Any, lease_s: int) -> tuple[DaemonProcess, DaemonProcess, str]:
    """Daemons A and B on two workspaces and one database; and the database's name."""
    url = POSTGRES.database_for(str(tmp_path / "db"))
    daemons = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        daemons.append(spawn_daemon("--database", url, "--lease-s", str(lease_s), workspace_path=tmp_path / name))
    return daemons[0], daemons[1], url.split("/")[-1].split("?")[0]


def _refusal(call: Any) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """(code, ErrorInfo reason, metadata) of a call that must fail."""
    with pytest.raises(grpc.RpcError) as failed:
        call()
    status = rpc_status.from_call(failed.value)  # type: ignore[arg-type]
    assert status is not None, failed.value
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    return failed.value.code(), info.reason, dict(info.metadata)


def _ping_refusal(stub: Any, run_id: str) -> tuple[grpc.StatusCode, str, dict[str, str]] | None:
    """PingRun's refusal, or None while the call still goes through (until B sees the dropped connection)."""
    try:
        stub.PingRun(pb.PingRunRequest(run_id=run_id))
    except grpc.RpcError:
        return _refusal(lambda: stub.PingRun(pb.PingRunRequest(run_id=run_id)))
    return None


def _unknown_run(run_id: str, cause: str) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    return grpc.StatusCode.FAILED_PRECONDITION, "UNKNOWN_RUN", {"run_id": run_id, "cause": cause}


def _edit(stub: Any, session: str, run_id: str, text: str) -> Any:
    """EditTail naming ``run_id``: the last message becomes ``text``."""
    replacement = pb.Message(role=pb.ROLE_ASSISTANT, content=text)
    return stub.EditTail(
        pb.EditTailRequest(session_id=session, remove_last=1, replacements=[replacement], run_id=run_id, workdir="/tmp")
    )


def _last(stub: Any, session: str) -> tuple[int, str]:
    """(last position, content of the last message) of ``session`` as a Load without repair sees it."""
    pages = list(stub.Load(pb.LoadRequest(session_id=session, workdir="/tmp", no_repair=True)))
    return pages[0].session.last_position, [m for p in pages for m in p.messages][-1].content


def _call(stub: Any, session: str, run_id: str, call_id: str) -> Any:
    """Append naming ``run_id``: an assistant message with one tool call ``call_id``."""
    call = pb.ToolCall(id=call_id, name="bash", arguments="{}")
    message = pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[call])
    return stub.Append(pb.AppendRequest(session_id=session, messages=[message], run_id=run_id, workdir="/tmp"))


def _tool_results(stub: Any, session: str, call_id: str) -> list[Any]:
    """The tool results answering ``call_id`` as a repairing Load returns them."""
    pages = list(stub.Load(pb.LoadRequest(session_id=session, workdir="/tmp")))
    return [m for p in pages for m in p.messages if m.role == pb.ROLE_TOOL and m.tool_call_id == call_id]


def _seed(stub: Any, session: str) -> None:
    messages = [pb.Message(role=pb.ROLE_USER, content="hi"), pb.Message(role=pb.ROLE_ASSISTANT, content="draft")]
    stub.Append(pb.AppendRequest(session_id=session, messages=messages, workdir="/tmp"))


def test_ping_and_edit_tail_reach_a_run_attached_on_another_daemon(tmp_path: Path, spawn_daemon: Any) -> None:
    # A long lease: only A's killed connection can explain B's lease_lost at the end.
    a, b, _ = _pair(tmp_path, spawn_daemon, lease_s=30)
    assert a.proc is not None
    with grpc.insecure_channel(a.address) as ca, grpc.insecure_channel(b.address) as cb:
        on_a, on_b = pb_grpc.SessionServiceStub(ca), pb_grpc.SessionServiceStub(cb)
        _seed(on_b, "s")
        _seed(on_b, "other")
        stream = on_a.Attach(pb.AttachRequest(session_id="s", pid=0, ping_timeout_seconds=2))
        run_id = next(stream).run_id
        try:
            # Pinged through B alone, for twice its ping bound: A counts B's pings, so the run stays live.
            began = time.monotonic()
            while time.monotonic() - began < 4.0:
                assert on_b.PingRun(pb.PingRunRequest(run_id=run_id)).ping_timeout_seconds == 0  # the owner's to know
                time.sleep(0.4)
            assert on_a.GetStats(pb.GetStatsRequest()).active_runs == 1
            assert on_a.PingRun(pb.PingRunRequest(run_id=run_id)).ping_timeout_seconds == 2

            # EditTail on B naming A's live run of the session goes ahead; of another session it is refused.
            _edit(on_b, "s", run_id, "better")
            assert _last(on_b, "s")[1] == "better"
            other = _last(on_b, "other")
            assert _refusal(lambda: _edit(on_b, "other", run_id, "no")) == _unknown_run(run_id, "other_session")
            assert _last(on_b, "other") == other
            never = uuid.uuid4().hex
            assert _refusal(lambda: on_b.PingRun(pb.PingRunRequest(run_id=never))) == _unknown_run(never, "unknown")

            # Append on B naming A's live run: accepted, and its open call is A's run's (B's Load leaves it open).
            on_a.PingRun(pb.PingRunRequest(run_id=run_id))  # within its 2 s bound on a loaded machine
            _call(on_b, "s", run_id, "c_b")
            assert _tool_results(on_b, "s", "c_b") == []
            assert _refusal(lambda: _call(on_b, "other", run_id, "c_o")) == _unknown_run(run_id, "other_session")
            assert _refusal(lambda: _call(on_b, "s", never, "c_n")) == _unknown_run(never, "unknown")
            assert _refusal(lambda: _edit(on_b, "s", never, "no")) == _unknown_run(never, "unknown")

            # A killed: its lock goes with its connection, and B says so at once; the edit writes nothing.
            os.kill(a.proc.pid, signal.SIGKILL)
            a.proc.wait(10)
            before = _last(on_b, "s")
            killed = time.monotonic()
            wait_for(
                lambda: _ping_refusal(on_b, run_id) == _unknown_run(run_id, "lease_lost"),
                10,
                "B to see A's run as lost",
            )
            print(f"\nA SIGKILLed: B answered lease_lost {(time.monotonic() - killed) * 1000:.0f} ms after A's exit")
            assert _refusal(lambda: _edit(on_b, "s", run_id, "late")) == _unknown_run(run_id, "lease_lost")
            assert _refusal(lambda: _call(on_b, "s", run_id, "c_late")) == _unknown_run(run_id, "lease_lost")
            assert _last(on_b, "s") == before
            # A's run is over: B's next Load repairs the call appended through B, once.
            (result,) = _tool_results(on_b, "s", "c_b")
            assert result.synthetic.reason, result
            assert len(_tool_results(on_b, "s", "c_b")) == 1
        finally:
            stream.cancel()


def test_the_owner_whose_lease_expired_refuses_a_ping_and_an_edit_at_once(tmp_path: Path, spawn_daemon: Any) -> None:
    # A long lease, so A's own renewal does not notice first: the database's answer must decide.
    a, b, db = _pair(tmp_path, spawn_daemon, lease_s=60)
    assert a.proc is not None
    with grpc.insecure_channel(a.address) as ca, grpc.insecure_channel(b.address) as cb:
        on_a, on_b = pb_grpc.SessionServiceStub(ca), pb_grpc.SessionServiceStub(cb)
        _seed(on_a, "s")
        stream = on_a.Attach(pb.AttachRequest(session_id="s", pid=0))
        run_id = next(stream).run_id
        try:
            assert on_a.PingRun(pb.PingRunRequest(run_id=run_id)).ping_timeout_seconds == 0
            # A's lease runs out on the database's clock (as if A had hung for an hour).
            POSTGRES.server().psql(
                f"UPDATE claw_sessiond.daemons SET heartbeat_at = now() - interval '1 hour' WHERE pid = {a.proc.pid}",
                db,
            )
            before = _last(on_a, "s")
            for stub in (on_a, on_b):  # the owner and any other daemon give the one answer
                assert _refusal(lambda s=stub: s.PingRun(pb.PingRunRequest(run_id=run_id))) == _unknown_run(
                    run_id, "lease_lost"
                )
                assert _refusal(lambda s=stub: _edit(s, "s", run_id, "late")) == _unknown_run(run_id, "lease_lost")
            assert _last(on_b, "s") == before
        finally:
            stream.cancel()
