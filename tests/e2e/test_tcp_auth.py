"""``--tcp`` needs the daemon's token (Harden item 4).

Every local user can connect to a loopback port, so before this the TCP
listener let any of them read, append and delete every session. Now every
call on the TCP port except the health check needs ``authorization: Bearer
<token>`` with the token the daemon writes to ``.claw/tcp-token`` (0600) at
each start; the Unix socket needs none (its 0700 folder is the credential).
Each test runs a real daemon subprocess and real clients; another uid is
probed through ``setpriv`` when the tests run as root.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

import claw_sessiond_client as claw
from claw_sessiond_client import AsyncSessionClient, Message, SessionClient
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from tests.helpers.cli import grpcurl_path
from tests.helpers.daemon import DaemonProcess, free_port
from tests.helpers.inspect import stored
from tests.helpers.process import is_root

NOBODY = 65534
PROBE = """
import sys
try:
    open(sys.argv[1]).read()
    print("read")
except OSError as exc:
    print(type(exc).__name__)
"""
SERVICE = pb.DESCRIPTOR.services_by_name["SessionService"]


pytestmark = pytest.mark.backend_neutral("the TCP listener's token check, made before any request reaches storage")


def token_of(workspace: Path) -> str:
    return (workspace / ".claw" / "tcp-token").read_text().strip()


def cert_of(workspace: Path) -> Path:
    return workspace / ".claw" / "tcp-cert.pem"


def tls_channel(address: str, workspace: Path) -> grpc.Channel:
    """A raw channel to the TCP port: TLS trusting the daemon's certificate (the port speaks nothing else)."""
    credentials = grpc.ssl_channel_credentials(root_certificates=cert_of(workspace).read_bytes())
    return grpc.secure_channel(address, credentials, options=(("grpc.ssl_target_name_override", "claw-sessiond"),))


@pytest.fixture
def tcp_daemon(spawn_daemon: Any) -> tuple[DaemonProcess, str]:
    port = free_port()
    d: DaemonProcess = spawn_daemon("--tcp", f"127.0.0.1:{port}")
    with d.client() as c:  # the owner, over the Unix socket, without any token
        c.append("victim", [Message.user("secret plan"), Message.assistant("ok")])
        c.record_usage("victim", input_tokens=7)
    return d, f"127.0.0.1:{port}"


def _request(method: Any) -> Any:
    """A request that would read or change 'victim' if it got through."""
    cls = getattr(pb, method.input_type.name)
    fields = {f.name for f in method.input_type.fields}
    kw: dict[str, Any] = {}
    if "session_id" in fields:
        kw["session_id"] = "victim"
    if "workdir" in fields:
        kw["workdir"] = "/"
    if method.name == "Append":
        kw["messages"] = [pb.Message(role=pb.ROLE_USER, content="injected")]
    if method.name == "RecordUsage":
        kw["input_tokens"] = 1000
    if method.name == "AppendStream":
        kw["appends"] = [pb.AppendRequest(session_id="victim", messages=[pb.Message(role=pb.ROLE_USER, content="x")])]
    if method.name == "Import":
        kw["lines"] = []
    return cls(**kw)


def _call_every_method(address: str, workspace: Path, metadata: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Each SessionService RPC once, raw (no client library); method → status code name."""
    out = {}
    with tls_channel(address, workspace) as channel:
        for method in SERVICE.methods:
            path = f"/{SERVICE.full_name}/{method.name}"
            out_cls = getattr(pb, method.output_type.name)
            request = _request(method)
            kinds = (method.client_streaming, method.server_streaming)
            factory = {
                (False, False): channel.unary_unary,
                (False, True): channel.unary_stream,
                (True, False): channel.stream_unary,
                (True, True): channel.stream_stream,
            }[kinds]
            call = factory(
                path, request_serializer=type(request).SerializeToString, response_deserializer=out_cls.FromString
            )
            arg = iter([request]) if method.client_streaming else request
            try:
                result = call(arg, timeout=5, metadata=metadata)
                if method.server_streaming:
                    next(iter(result), None)
                    result.cancel()
                out[method.name] = "OK"
            except grpc.RpcError as exc:
                out[method.name] = exc.code().name
    return out


@pytest.mark.smoke
@pytest.mark.parametrize("metadata", [(), (("authorization", "Bearer wrong-token"),)], ids=["no-token", "wrong-token"])
def test_tcp_without_the_token_is_refused_and_touches_nothing(
    tcp_daemon: tuple[DaemonProcess, str], metadata: tuple[tuple[str, str], ...]
) -> None:
    d, address = tcp_daemon
    before = stored(d).snapshot()
    codes = _call_every_method(address, d.workspace, metadata)
    assert codes == {m.name: "UNAUTHENTICATED" for m in SERVICE.methods}, codes
    assert stored(d).snapshot() == before, "a refused call changed the database"
    # Reflection needs the token too; health stays open (it says only that a daemon serves).
    with tls_channel(address, d.workspace) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            list(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5))
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    # The Unix socket still needs no token, and the session is whole.
    with d.client() as c:
        assert [m.content for m in c.load("victim", "/").messages] == ["secret plan", "ok"]
    assert "tcp_unauthenticated" in d.log() and "INTERNAL" not in d.log()
    assert token_of(d.workspace) not in d.log()


def test_the_client_library_sends_the_token_and_names_a_refusal(
    tcp_daemon: tuple[DaemonProcess, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    d, address = tcp_daemon
    monkeypatch.delenv("CLAW_TOKEN", raising=False)
    # From the workspace's token file, which this (the owner's) process can read.
    with SessionClient(d.workspace, address=address, autostart=False) as c:
        assert c.load("victim", "/").session.usage.input_tokens == 7
        c.append("victim", Message.user("over tcp"))
    # Explicit token, and $CLAW_TOKEN (with the daemon's certificate: tls_cert, then $CLAW_TLS_CERT).
    with SessionClient(
        address=address, autostart=False, token=token_of(d.workspace), tls_cert=cert_of(d.workspace)
    ) as c:
        assert c.load("victim", "/").messages[-1].content == "over tcp"
    monkeypatch.setenv("CLAW_TLS_CERT", str(cert_of(d.workspace)))
    monkeypatch.setenv("CLAW_TOKEN", token_of(d.workspace))
    with SessionClient(address=address, autostart=False) as c:
        assert len(c.list_sessions()) == 1
    # An explicit workspace's file wins over a stale $CLAW_TOKEN.
    monkeypatch.setenv("CLAW_TOKEN", "stale")
    with SessionClient(d.workspace, address=address, autostart=False) as c:
        assert len(c.list_sessions()) == 1
    monkeypatch.delenv("CLAW_TOKEN")
    # Without one, or with a wrong one: a documented error with a reason, nothing written.
    for kw, problem in (({}, "missing"), ({"token": "nope"}, "mismatch")):
        with (
            SessionClient(address=address, autostart=False, retry_window_s=0, **kw) as c,
            pytest.raises(claw.UnauthenticatedError) as info,
        ):
            c.append("victim", Message.user("must not land"))
        assert info.value.reason == "UNAUTHENTICATED" and info.value.metadata["problem"] == problem
        assert "tcp-token" in info.value.message
    with d.client() as c:
        assert [m.content for m in c.load("victim", "/").messages][-1] == "over tcp"

    async def async_side() -> list[str]:
        async with AsyncSessionClient(d.workspace, address=address, autostart=False) as ac:
            await ac.append("victim", Message.user("async"))
            async with ac.append_stream() as stream:
                await stream.append("victim", Message.user("streamed"))
            return [m.content for m in (await ac.load("victim", "/")).messages]

    assert asyncio.run(async_side())[-2:] == ["async", "streamed"]


def test_a_new_token_at_each_start_and_clients_follow_it(tcp_daemon: tuple[DaemonProcess, str]) -> None:
    d, address = tcp_daemon
    first = token_of(d.workspace)
    with SessionClient(d.workspace, address=address, autostart=False) as c:
        c.append("victim", Message.user("before restart"))
        assert d.terminate() == 0
        d.start()
        assert token_of(d.workspace) != first
        c.append("victim", Message.user("after restart"))  # the same client re-reads the file
    with (
        SessionClient(
            address=address, autostart=False, token=first, tls_cert=cert_of(d.workspace), retry_window_s=0
        ) as old,
        pytest.raises(claw.UnauthenticatedError),
    ):
        old.load("victim", "/")


def test_the_token_file_is_private_and_never_followed(spawn_daemon: Any, workspace: Path, tmp_path: Path) -> None:
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    decoy = tmp_path / "decoy"
    decoy.write_text("untouched\n")
    (claw / "tcp-token").symlink_to(decoy)  # planted: the daemon must replace the link, not write through it
    d: DaemonProcess = spawn_daemon("--tcp", f"127.0.0.1:{free_port()}")
    info = (claw / "tcp-token").lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
    assert decoy.read_text() == "untouched\n"
    assert len(token_of(workspace)) >= 43
    assert [p.name for p in claw.iterdir() if p.name.startswith(".tcp-token")] == []  # no temporary left
    if not is_root():
        pytest.skip("the other-uid probe needs root (setpriv)")
    # Another uid cannot read it, even with every folder on the way opened up for it.
    opened = [workspace, *workspace.parents]
    modes = [(p, stat.S_IMODE(p.stat().st_mode)) for p in opened]
    try:
        for p, mode in modes:
            os.chmod(p, mode | 0o111)
        os.chmod(claw, 0o711)
        as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        r = subprocess.run(
            [*as_nobody, sys.executable, "-c", PROBE, str(claw / "tcp-token")],
            capture_output=True,
            text=True,
            timeout=30,
            cwd="/",
        )
    finally:
        os.chmod(claw, 0o700)
        for p, mode in reversed(modes):
            os.chmod(p, mode)
    assert r.stdout.strip() == "PermissionError", (r.stdout, r.stderr)
    assert d.proc is not None and d.proc.poll() is None


def test_grpcurl_with_the_bearer_header(tcp_daemon: tuple[DaemonProcess, str]) -> None:
    d, address = tcp_daemon
    grpcurl = grpcurl_path()
    method = "claw.sessiond.v1.SessionService/ListSessions"
    header = f"authorization: Bearer {token_of(d.workspace)}"
    tls = ["-cacert", str(cert_of(d.workspace))]
    ok = subprocess.run(
        [grpcurl, *tls, "-H", header, "-d", "{}", address, method], capture_output=True, text=True, timeout=60
    )
    assert ok.returncode == 0 and '"id": "victim"' in ok.stdout, ok.stdout + ok.stderr
    refused = subprocess.run([grpcurl, *tls, "-d", "{}", address, method], capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "Unauthenticated" in refused.stdout + refused.stderr, refused.stderr
