"""Runs that do not depend on the client's event loop (issue 16): blocked owners, confirmed ends, one report.

Real daemon on a real socket, real client processes, real ``SIGSTOP`` and
process exits. The bare gRPC stub is used where a client of another language
would do the same (the daemon's side must not rest on the Python client).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from claw_sessiond_client import Message, PreconditionError, Reason, ToolCall
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.clients import ClientProcesses, read_json, send
from tests.helpers.daemon import DaemonProcess, free_port, run_python
from tests.helpers.process import pid_alive, wait_for

LEASE_S = 1
#: Longer than the lease and than the old keepalive bound (max(lease, 2) s): a stop that used to lose the run.
BLOCKED_S = 4.0

OWNER = r"""
import json, os, sys
from claw_sessiond_client import Message, SessionClient, ToolCall
address, session = sys.argv[1], sys.argv[2]
client = SessionClient(address=address, autostart=False)
with client.attach(session, label="owner") as run:
    client.append(session, [
        Message.user("run the tests"),
        Message.assistant(tool_calls=[ToolCall("call_1", "bash", '{"cmd": "make test"}')]),
    ], run_id=run.run_id)
    print(json.dumps({"run_id": run.run_id, "pid": os.getpid(), "lease": run.lease_seconds,
                      "verified": run.pid_verified}), flush=True)
    sys.stdin.readline()  # the tool "runs" (the test stops this process meanwhile)
    r = client.append(session, Message.tool("call_1", "all tests passed"), run_id=run.run_id)
    print(json.dumps({"answered": r.last_position, "alive": run.alive}), flush=True)
    sys.stdin.readline()
"""

LOAD = r"""
import json, sys
from claw_sessiond_client import SessionClient
client = SessionClient(address=sys.argv[1], autostart=False)
r = client.load(sys.argv[2], "/tmp")
print(json.dumps({
    "in_flight": [[c.tool_call_id, c.run_id, c.owner_pid] for c in r.in_flight],
    "repairs": [x.tool_call_id for x in r.repairs],
    "messages": [[m.role, m.tool_call_id, m.synthetic_reason] for m in r.messages],
}))
"""

# Attaches, appends a call, then hands its connection's sockets to a child and exits without
# a word: the connection stays open (the child holds it), but the process that attached is gone.
HANDOFF = r"""
import json, os, subprocess, sys
from claw_sessiond_client import Message, SessionClient, ToolCall
address, session = sys.argv[1], sys.argv[2]
client = SessionClient(address=address, autostart=False)
with client.attach(session) as run:
    client.append(session, Message.assistant(tool_calls=[ToolCall("c1", "bash", "{}")]), run_id=run.run_id)
    fds = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                fds.append(int(name))
        except OSError:
            pass
    child = subprocess.Popen(["sleep", "60"], pass_fds=fds)
    print(json.dumps({"run_id": run.run_id, "verified": run.pid_verified, "child": child.pid}), flush=True)
    os._exit(0)  # no EndRun, no cancel: only the kernel knows this process is gone
"""


@pytest.fixture
def procs() -> Iterator[ClientProcesses]:
    started = ClientProcesses()
    yield started
    started.stop()


@pytest.fixture
def live(spawn_daemon: Any) -> DaemonProcess:
    """A daemon with a 1 s lease: what used to drop a silent owner within 2 s."""
    d: DaemonProcess = spawn_daemon("--lease-s", str(LEASE_S))
    return d


def load_elsewhere(d: DaemonProcess, session: str) -> dict[str, Any]:
    """Load from a separate process."""
    return dict(json.loads(run_python(LOAD, d.address, session)))


def error_info(exc: grpc.RpcError) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """(code, ErrorInfo reason, ErrorInfo metadata) of a failed call."""
    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    assert status is not None, exc
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    return exc.code(), info.reason, dict(info.metadata)


def test_a_stopped_owner_keeps_its_run_and_stores_the_real_result(live: DaemonProcess, procs: ClientProcesses) -> None:
    owner = procs.start(OWNER, live.address, "s")
    info = read_json(owner)
    assert info["lease"] == 0 and info["verified"] is True  # Unix socket: no pings; the pid is the kernel's
    os.kill(owner.pid, signal.SIGSTOP)  # the tool "runs"; the process answers nothing, not even HTTP/2 pings
    stopped_at = time.monotonic()
    try:
        time.sleep(BLOCKED_S / 2)
        seen = load_elsewhere(live, "s")  # another process loads meanwhile
        assert seen["repairs"] == []
        assert seen["in_flight"] == [["call_1", info["run_id"], info["pid"]]]
        time.sleep(max(0.0, BLOCKED_S - (time.monotonic() - stopped_at)))
        with live.client() as c:
            assert c.stats()["active_runs"] == 1
            assert c.load("s", "/tmp").repairs == []
    finally:
        os.kill(owner.pid, signal.SIGCONT)
    send(owner, "answer")
    assert read_json(owner) == {"answered": 3, "alive": True}  # the real result is stored
    after = load_elsewhere(live, "s")
    assert after["repairs"] == [] and after["in_flight"] == []
    assert after["messages"][-1] == ["tool", "call_1", ""]  # the real result, not a synthetic one
    send(owner, "")
    assert owner.wait(10) == 0
    print(f"owner stopped {time.monotonic() - stopped_at:.1f}s (lease {LEASE_S}s): run kept, real result stored")


def test_an_owner_whose_process_is_gone_is_ended_before_any_repair(
    daemon: DaemonProcess, procs: ClientProcesses
) -> None:
    owner = procs.start(HANDOFF, daemon.address, "s")
    info = read_json(owner)
    child = int(info["child"])
    try:
        assert info["verified"] is True
        assert owner.wait(10) == 0
        assert pid_alive(child)  # holds the connection: the daemon sees no close
        with daemon.client() as c:
            r = c.load("s", "/tmp")  # the kernel says the owner is gone: repaired now
            assert [x.tool_call_id for x in r.repairs] == ["c1"] and r.in_flight == []
            with pytest.raises(PreconditionError) as gone:
                c.append("s", Message.tool("c1", "late"), run_id=info["run_id"])
            assert gone.value.reason == Reason.UNKNOWN_RUN
            assert gone.value.metadata == {"run_id": info["run_id"], "cause": "process_gone"}
            assert c.stats()["active_runs"] == 0
            with c.attach("s") as run:  # the session is free again
                assert run.alive
    finally:
        os.kill(child, signal.SIGKILL)
        wait_for(lambda: not pid_alive(child), 10, "the child holding the connection to exit")


def test_a_declared_pid_that_is_not_the_peer_is_not_verified(module_daemon: DaemonProcess, sid: str) -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        with grpc.insecure_channel(module_daemon.address) as channel:
            stub = pb_grpc.SessionServiceStub(channel)
            for pid, verified in ((sleeper.pid, False), (0, False), (os.getpid(), True)):
                call = stub.Attach(pb.AttachRequest(session_id=f"{sid}-{pid}", pid=pid))
                first = next(call)
                assert first.pid_verified is verified, pid
                stub.EndRun(pb.EndRunRequest(run_id=first.run_id))
                call.cancel()
    finally:
        sleeper.kill()
        sleeper.wait(10)


@pytest.mark.smoke
def test_end_run_is_confirmed_load_and_attach_right_after_see_the_run_gone(daemon: DaemonProcess) -> None:
    tries = 20
    with daemon.client() as c, grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        for i in range(tries):
            # The Python client: leaving the block ends the run with EndRun.
            with c.attach("py") as run:
                c.append("py", Message.assistant(tool_calls=[ToolCall(f"a{i}", "t", "{}")]), run_id=run.run_id)
            r = c.load("py", "/tmp")
            assert r.in_flight == [] and [x.tool_call_id for x in r.repairs] == [f"a{i}"], i
            with c.attach("py"):
                pass
            # Any client: EndRun, then Load and Attach at once.
            call = stub.Attach(pb.AttachRequest(session_id="raw", pid=os.getpid()))
            run_id = next(call).run_id
            tool_call = pb.ToolCall(id=f"b{i}", name="t", arguments="{}")
            assistant = pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[tool_call])
            stub.Append(pb.AppendRequest(session_id="raw", messages=[assistant], run_id=run_id, workdir="/tmp"))
            ended = stub.EndRun(pb.EndRunRequest(run_id=run_id))
            assert (ended.was_live, ended.session_id, ended.cause) == (True, "raw", "ended")
            first = next(iter(stub.Load(pb.LoadRequest(session_id="raw", workdir="/tmp"))))
            assert list(first.in_flight) == [] and [x.tool_call_id for x in first.repairs] == [f"b{i}"], i
            again = stub.Attach(pb.AttachRequest(session_id="raw", pid=os.getpid()))
            assert next(again).run_id != run_id
            retry = stub.EndRun(pb.EndRunRequest(run_id=run_id))  # idempotent: a retry is safe
            assert (retry.was_live, retry.cause) == (False, "ended")
            with pytest.raises(grpc.RpcError) as stream_end:
                next(call)
            assert error_info(stream_end.value)[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "UNKNOWN_RUN")
            call.cancel()
            again.cancel()
            wait_for(lambda: c.stats()["active_runs"] == 0, 10, "the cancelled stream's run to end")


def test_a_run_that_is_not_live_is_reported_one_way(daemon: DaemonProcess) -> None:
    def refusal(stub: Any, run_id: str) -> list[tuple[grpc.StatusCode | int, str, dict[str, str]]]:
        """How Append, AppendStream and PingRun report ``run_id``."""
        message = pb.Message(role=pb.ROLE_USER, content="x")
        append = pb.AppendRequest(session_id="s", messages=[message], run_id=run_id, workdir="/tmp")
        out: list[tuple[grpc.StatusCode | int, str, dict[str, str]]] = []
        with pytest.raises(grpc.RpcError) as unary:
            stub.Append(append)
        out.append(error_info(unary.value))
        reply = next(stub.AppendStream(iter([pb.AppendStreamRequest(appends=[append])]))).replies[0]
        out.append((reply.error.code, reply.error.reason, dict(reply.error.metadata)))
        with pytest.raises(grpc.RpcError) as ping:
            stub.PingRun(pb.PingRunRequest(run_id=run_id))
        out.append(error_info(ping.value))
        return out

    def expect(cause: str, run_id: str) -> list[tuple[grpc.StatusCode | int, str, dict[str, str]]]:
        meta = {"run_id": run_id, "cause": cause}
        code = grpc.StatusCode.FAILED_PRECONDITION
        return [(code, "UNKNOWN_RUN", meta), (code.value[0], "UNKNOWN_RUN", meta), (code, "UNKNOWN_RUN", meta)]

    with grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        never = uuid.uuid4().hex
        assert refusal(stub, never) == expect("unknown", never)

        call = stub.Attach(pb.AttachRequest(session_id="s", pid=os.getpid()))
        ended = next(call).run_id
        stub.EndRun(pb.EndRunRequest(run_id=ended))
        assert refusal(stub, ended) == expect("ended", ended)

        call = stub.Attach(pb.AttachRequest(session_id="s", pid=os.getpid()))
        closed = next(call).run_id
        call.cancel()
        with daemon.client() as c:
            wait_for(lambda: c.stats()["active_runs"] == 0, 10, "the cancelled run to end")
        assert refusal(stub, closed) == expect("stream_closed", closed)

        pinged = stub.Attach(pb.AttachRequest(session_id="s", pid=0, ping_timeout_seconds=1))
        silent = next(pinged)
        assert silent.ping_timeout_seconds == 1 and not silent.pid_verified
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as timed_out:
            next(pinged)  # nobody pings: the daemon ends the run and says so on its stream
        assert 0.9 <= time.monotonic() - started <= 5
        assert error_info(timed_out.value) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "UNKNOWN_RUN",
            {"run_id": silent.run_id, "cause": "ping_timeout"},
        )
        assert refusal(stub, silent.run_id) == expect("ping_timeout", silent.run_id)

        bad = stub.Attach(pb.AttachRequest(session_id="s", ping_timeout_seconds=86_401))
        with pytest.raises(grpc.RpcError) as refused:
            next(bad)
        assert error_info(refused.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_MESSAGE")
        with pytest.raises(grpc.RpcError) as empty:
            stub.EndRun(pb.EndRunRequest(run_id=""))
        assert error_info(empty.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_MESSAGE")

    with daemon.client() as c, pytest.raises(PreconditionError) as py:
        c.append("s", Message.user("x"), run_id=ended)
    assert (py.value.reason, py.value.metadata) == (Reason.UNKNOWN_RUN, {"run_id": ended, "cause": "ended"})


def test_pings_keep_a_run_that_asked_for_them_while_its_main_thread_blocks(
    module_daemon: DaemonProcess, sid: str
) -> None:
    code = r"""
import json, sys, time
from claw_sessiond_client import Message, SessionClient, ToolCall
client = SessionClient(address=sys.argv[1], autostart=False)
session = sys.argv[2]
with client.attach(session, ping_timeout_s=1) as run:
    client.append(session, Message.assistant(tool_calls=[ToolCall("c", "t", "{}")]), run_id=run.run_id)
    time.sleep(3)  # blocks for the ping timeout twice, and the daemon's 0.25 s checks; the ping thread keeps the run
    r = client.append(session, Message.tool("c", "done"), run_id=run.run_id)
    print(json.dumps({"ping": run.ping_timeout_s, "answered": r.last_position, "alive": run.alive}))
"""
    assert json.loads(run_python(code, module_daemon.address, sid)) == {"ping": 1, "answered": 2, "alive": True}


def test_over_tcp_a_stopped_owner_is_dropped_within_the_lease(spawn_daemon: Any, procs: ClientProcesses) -> None:
    port = free_port()
    d: DaemonProcess = spawn_daemon("--lease-s", "2", "--tcp", f"127.0.0.1:{port}")
    token = (d.workspace / ".claw" / "tcp-token").read_text().strip()
    cert = str(d.workspace / ".claw" / "tcp-cert.pem")  # TCP clients trust only the daemon's certificate
    owner = procs.start(OWNER, f"127.0.0.1:{port}", "s", env={"CLAW_TOKEN": token, "CLAW_TLS_CERT": cert})
    info = read_json(owner)
    assert info["lease"] == 2 and info["verified"] is False  # TCP: pings are the last resort
    os.kill(owner.pid, signal.SIGSTOP)
    stopped_at = time.monotonic()
    with d.client() as c:
        wait_for(lambda: c.stats()["active_runs"] == 0, 2 + 3, "the TCP keepalive to drop the stopped owner")
        detected_s = time.monotonic() - stopped_at
        assert [x.tool_call_id for x in c.load("s", "/tmp").repairs] == ["call_1"]
        with pytest.raises(PreconditionError) as gone:
            c.append("s", Message.user("x"), run_id=info["run_id"])
        assert gone.value.metadata["cause"] == "stream_closed"
    print(f"SIGSTOPped owner over TCP (lease 2s): dropped after {detected_s:.2f}s")


def test_daemon_stop_ends_runs_with_the_same_report(spawn_daemon: Any) -> None:
    d: DaemonProcess = spawn_daemon()
    channel = grpc.insecure_channel(d.address)
    try:
        stub = pb_grpc.SessionServiceStub(channel)
        call = stub.Attach(pb.AttachRequest(session_id="s", pid=os.getpid()))
        run_id = next(call).run_id
        assert d.proc is not None
        d.proc.send_signal(signal.SIGTERM)
        with pytest.raises(grpc.RpcError) as stopped:
            next(call)
        assert error_info(stopped.value) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "UNKNOWN_RUN",
            {"run_id": run_id, "cause": "daemon_stopping"},
        )
        assert d.proc.wait(20) == 0
    finally:
        channel.close()
    # A restarted daemon knows nothing of the old run: the same code, cause "unknown".
    again: DaemonProcess = spawn_daemon()
    with again.client() as c, pytest.raises(PreconditionError) as old:
        c.append("s", Message.user("x"), run_id=run_id)
    assert old.value.metadata == {"run_id": run_id, "cause": "unknown"}
