"""``--tcp`` proves the daemon to the client: TLS pinned to the certificate in ``.claw/tcp-cert.pem``.

While the daemon is down, any local user may bind its port. Before, the client sent that user its
token and its messages in plaintext, and took the empty reply of a server that accepts anything as
a successful append (positions 0). Now the TCP port speaks TLS only, with a certificate the daemon
makes at each start (its key never leaves the daemon's memory); clients trust that certificate alone
and send nothing but a TLS ClientHello before the handshake has proven the listener holds its key.
And an append reply without the positions of what it wrote is an error, never a result.

Each test runs a real daemon and real clients (Python sync and asyncio; the TypeScript client from
its build, when built); the impostor runs as another uid through ``setpriv`` when the tests run as root.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

import claw_sessiond_client as claw
from claw_sessiond_client import AsyncSessionClient, Message, SessionClient
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from tests.helpers.cli import grpcurl_path
from tests.helpers.daemon import DaemonProcess, free_port
from tests.helpers.process import is_root

pytestmark = pytest.mark.backend_neutral("the TCP listener's TLS, settled before any request reaches storage")

ROOT = Path(__file__).resolve().parents[2]
IMPOSTOR = ROOT / "tests" / "helpers" / "impostor.py"
TS_INDEX = ROOT / "clients" / "typescript" / "dist" / "src" / "index.js"
NOBODY = 65534
SECRET = "the launch codes are 0000"
#: The TypeScript client, run by node: one append (or, with ``usage``, one RecordUsage), then what it raised
#: (or returned) as JSON.
TS_APPEND = """
const c = require(process.argv[1]);
const opts = JSON.parse(process.argv[2]);
(async () => {
  const client = new c.SessionClient({ autostart: false, timeoutMs: 3000, retryWindowMs: 0, ...opts });
  try {
    if (opts.usage) {
      const u = await client.recordUsage("victim", { inputTokens: 5 });
      console.log(JSON.stringify({ ok: true, input: u.usage.inputTokens }));
      process.exit(0);
    }
    const writer = opts.stream ? await client.appendStream() : undefined;  // AppendStream, or unary Append
    const r = writer
      ? await writer.append("victim", [c.user(process.argv[3])])
      : await client.append("victim", [c.user(process.argv[3])]);
    writer?.close();
    console.log(JSON.stringify({ ok: true, first: r.firstPosition, last: r.lastPosition }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, name: e.name, reason: e.reason, message: e.message }));
  } finally {
    client.close();
  }
  process.exit(0); // grpc-js keeps a connection attempt to a listener that never answers the handshake
})();
"""


def _ts_append(opts: dict[str, Any], content: str) -> dict[str, Any]:
    proc = subprocess.run(
        ["node", "-e", TS_APPEND, str(TS_INDEX), json.dumps(opts), content],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
        env={k: v for k, v in os.environ.items() if k not in ("CLAW_TOKEN", "CLAW_TLS_CERT")},
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _ts_built() -> bool:
    """The TypeScript client is built (scripts/setup-tests). Under ``CLAW_FULL=1`` (CI) it must be: its
    parts of these tests may not drop out silently."""
    if os.environ.get("CLAW_FULL") == "1":
        assert TS_INDEX.exists(), "the TypeScript client is not built: run scripts/setup-tests"
    return TS_INDEX.exists()


class Impostor:
    """The impostor process (another uid when root) on ``port``, recording into ``out``; stopped by pid."""

    def __init__(self, kind: str, port: int) -> None:
        # Its own folder in /tmp (the test's tmp_path is private to root), owned by the other uid.
        self.folder = Path(tempfile.mkdtemp(prefix="claw-impostor-"))
        if is_root():
            os.chown(self.folder, NOBODY, NOBODY)
        self.out = self.folder / f"captured-{kind}"
        as_other = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if is_root() else []
        self.proc = subprocess.Popen(
            # -I: the script's folder (tests/helpers, whose inspect.py would shadow the stdlib's) is not on the path
            [*as_other, sys.executable, "-I", str(IMPOSTOR), kind, str(port), str(self.out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd="/",
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until bound (or the process ended)
        if line.strip() != "listening":
            why = self.proc.stderr.read() if self.proc.stderr and self.proc.poll() is not None else line
            self.stop()  # its folder too: the caller never got this object to stop
            pytest.fail(f"the impostor did not start: {why}")

    def captured(self) -> bytes:
        try:
            return self.out.read_bytes()
        except FileNotFoundError:  # nothing arrived
            return b""

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def impostors() -> Iterator[list[Impostor]]:
    started: list[Impostor] = []
    yield started
    for imp in started:
        imp.stop()


def _tcp_daemon(spawn_daemon: Any) -> tuple[DaemonProcess, str]:
    port = free_port()
    d: DaemonProcess = spawn_daemon("--tcp", f"127.0.0.1:{port}")
    with d.client() as c:
        c.append("victim", Message.user("first"))
    return d, f"127.0.0.1:{port}"


def _stored(d: DaemonProcess) -> list[str]:
    with d.client() as c:
        return [m.content for m in c.load("victim", "/").messages]


@pytest.mark.parametrize("kind", ["raw", "grpc"])
def test_an_impostor_on_the_port_gets_no_token_and_no_message(
    spawn_daemon: Any, impostors: list[Impostor], kind: str
) -> None:
    d, address = _tcp_daemon(spawn_daemon)
    claw_dir = d.workspace / ".claw"
    token = (claw_dir / "tcp-token").read_text().strip()
    # The normal path: TLS with the pinned certificate, then the token.
    # It retries a failed call as after a restart, and checks the listener again before the retry.
    long_lived = SessionClient(d.workspace, address=address, autostart=False, retry_window_s=3, timeout_s=3)
    try:
        assert long_lived.append("victim", Message.user("over tls")).last_position == 2
        assert d.terminate() == 0  # the daemon is down; its certificate and token stay in .claw/
        imp = Impostor(kind, int(address.rpartition(":")[2]))
        impostors.append(imp)

        refused: list[claw.SessiondError] = []
        for client in (
            long_lived,  # a client that talked to the real daemon before
            SessionClient(d.workspace, address=address, autostart=False, retry_window_s=0, timeout_s=3),
            SessionClient(
                address=address,
                autostart=False,
                retry_window_s=0,
                timeout_s=3,
                token=token,
                tls_cert=claw_dir / "tcp-cert.pem",
            ),
        ):
            with pytest.raises((claw.UntrustedPeerError, claw.DaemonNotRespondingError)) as info:
                client.append("victim", Message.user(SECRET))
            refused.append(info.value)

        async def async_side() -> claw.SessiondError:
            async with AsyncSessionClient(
                d.workspace, address=address, autostart=False, retry_window_s=0, timeout_s=3
            ) as ac:
                with pytest.raises((claw.UntrustedPeerError, claw.DaemonNotRespondingError)) as info:
                    await ac.append("victim", Message.user(SECRET))
                return info.value

        refused.append(asyncio.run(async_side()))
    finally:
        long_lived.close()
    for err in refused:
        assert "nothing was sent" in err.message and address in err.message, err.message
    if kind == "grpc":  # a plaintext server: the handshake fails at once, naming the failure
        assert all(isinstance(e, claw.UntrustedPeerError) for e in refused), [e.message for e in refused]
    if _ts_built():
        ts = _ts_append({"workspace": str(d.workspace), "address": address}, SECRET)
        assert ts["ok"] is False and ts["name"] in ("UntrustedPeerError", "DeadlineError"), ts
        assert "nothing was sent" in ts["message"], ts
    captured = imp.captured()
    assert token.encode() not in captured and SECRET.encode() not in captured and b"authorization" not in captured
    if kind == "raw":  # what arrived is TLS ClientHellos: handshake records (0x16), TLS 1.x
        conns = [c for c in captured.split(b"<conn>") if c]
        assert conns and all(c.startswith(b"\x16\x03") for c in conns), captured[:200]
        assert b"claw.sessiond" not in captured and b"Append" not in captured
    else:
        assert captured == b"", captured[:500]  # not one call reached the server
    # The impostor is real: a plaintext caller (what clients did before) is captured, and answered "success".
    if kind == "raw":
        with socket.create_connection(("127.0.0.1", int(address.rpartition(":")[2])), timeout=5) as s:
            s.sendall(b"control " + token.encode())
        for _ in range(100):  # bounded wait for the impostor's thread to record it
            if token.encode() in imp.captured():
                break
            time.sleep(0.05)
        assert token.encode() in imp.captured()
    else:
        with grpc.insecure_channel(address) as channel:
            reply = channel.unary_unary(
                "/claw.sessiond.v1.SessionService/Append",
                request_serializer=pb.AppendRequest.SerializeToString,
                response_deserializer=pb.AppendResponse.FromString,
            )(
                pb.AppendRequest(session_id="victim", messages=[pb.Message(role=pb.ROLE_USER, content="control")]),
                metadata=(("authorization", f"Bearer {token}"),),
                timeout=5,
            )
        assert reply.first_position == 0 and b"control" in imp.captured() and token.encode() in imp.captured()
    # The daemon comes back with a new certificate; the long-lived kind of client follows it.
    imp.stop()
    old_cert = (claw_dir / "tcp-cert.pem").read_bytes()
    d.start()
    assert (claw_dir / "tcp-cert.pem").read_bytes() != old_cert
    assert SECRET not in _stored(d) and _stored(d) == ["first", "over tls"]


@pytest.mark.smoke
def test_a_restarted_daemon_with_a_new_certificate_is_followed(spawn_daemon: Any) -> None:
    d, address = _tcp_daemon(spawn_daemon)
    cert = d.workspace / ".claw" / "tcp-cert.pem"
    first = cert.read_bytes()
    with SessionClient(d.workspace, address=address, autostart=False) as c:
        c.append("victim", Message.user("before"))
        assert d.terminate() == 0
        d.start()
        assert cert.read_bytes() != first
        c.append("victim", Message.user("after"))  # rereads the certificate, new channel

    async def async_side() -> None:
        async with AsyncSessionClient(d.workspace, address=address, autostart=False) as ac:
            await ac.append("victim", Message.user("async before"))
            assert d.terminate() == 0
            d.start()
            await ac.append("victim", Message.user("async after"))

    asyncio.run(async_side())
    if _ts_built():
        ts = _ts_append({"workspace": str(d.workspace), "address": address}, "typescript")
        assert ts == {"ok": True, "first": 6, "last": 6}, ts
    assert _stored(d) == ["first", "before", "after", "async before", "async after"] + (
        ["typescript"] if _ts_built() else []
    )


def test_a_copy_of_an_old_certificate_is_refused_by_the_new_daemon(spawn_daemon: Any, tmp_path: Path) -> None:
    """A client holding a stale pin (its own copy, not the workspace's file) refuses the new daemon too."""
    d, address = _tcp_daemon(spawn_daemon)
    copy = tmp_path / "pinned.pem"
    copy.write_bytes((d.workspace / ".claw" / "tcp-cert.pem").read_bytes())
    token = (d.workspace / ".claw" / "tcp-token").read_text().strip()
    with SessionClient(address=address, autostart=False, token=token, tls_cert=copy) as c:
        c.append("victim", Message.user("pinned"))
    assert d.terminate() == 0
    d.start()
    new_token = (d.workspace / ".claw" / "tcp-token").read_text().strip()
    with (
        SessionClient(address=address, autostart=False, token=new_token, tls_cert=copy, retry_window_s=0) as c,
        pytest.raises(claw.UntrustedPeerError) as info,
    ):
        c.append("victim", Message.user("must not land"))
    assert "did not prove it is the daemon" in info.value.message
    # Without any certificate a TCP client refuses before connecting.
    with (
        SessionClient(address=address, autostart=False, token=new_token, retry_window_s=0) as c,
        pytest.raises(claw.UntrustedPeerError) as none,
    ):
        c.append("victim", Message.user("must not land"))
    assert "no certificate" in none.value.message and "CLAW_TLS_CERT" in none.value.message
    if _ts_built():
        ts = _ts_append({"address": address, "token": new_token}, "must not land")
        assert ts["ok"] is False and ts["name"] == "UntrustedPeerError" and "no certificate" in ts["message"], ts
        ts = _ts_append({"address": address, "token": new_token, "tlsCert": str(copy)}, "must not land")
        assert ts["ok"] is False and ts["name"] == "UntrustedPeerError", ts
    assert _stored(d) == ["first", "pinned"]


def test_grpcurl_with_the_pinned_certificate(spawn_daemon: Any) -> None:
    d, address = _tcp_daemon(spawn_daemon)
    claw_dir = d.workspace / ".claw"
    header = f"authorization: Bearer {(claw_dir / 'tcp-token').read_text().strip()}"
    method = "claw.sessiond.v1.SessionService/ListSessions"
    cacert = ["-cacert", str(claw_dir / "tcp-cert.pem")]
    for target in (address, address.replace("127.0.0.1", "localhost")):
        extra = [] if target == address else ["-servername", "claw-sessiond"]  # the certificate names 127.0.0.1
        ok = subprocess.run(
            [grpcurl_path(), *cacert, *extra, "-H", header, "-d", "{}", target, method],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ok.returncode == 0 and '"id": "victim"' in ok.stdout, ok.stdout + ok.stderr
    plaintext = subprocess.run(
        # -connect-timeout: it waits out its whole connect timeout (10 s unless given) for the HTTP/2 answer that
        # a TLS port never sends; 3 s is ample for a port that would speak plaintext.
        [grpcurl_path(), "-plaintext", "-connect-timeout", "3", "-H", header, "-d", "{}", address, method],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert plaintext.returncode != 0  # the port speaks TLS only


# -- an empty or malformed reply is never success

EMPTY = pb.AppendResponse()


def _fake_daemon(folder: Path) -> tuple[grpc.Server, Path]:
    """A gRPC server on a private Unix socket (the caller's own) that answers every Append with an empty
    reply, every AppendStream request with a reply holding neither a result nor an error, and RecordUsage
    with a reply without totals."""

    def append(_request: bytes, _context: object) -> bytes:
        return EMPTY.SerializeToString()

    def append_stream(requests: Iterator[bytes], _context: object) -> Iterator[bytes]:
        for raw in requests:
            n = len(pb.AppendStreamRequest.FromString(raw).appends)
            yield pb.AppendStreamResponse(replies=[pb.AppendReply() for _ in range(n)]).SerializeToString()

    def empty(_request: bytes, _context: object) -> bytes:
        return b""

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "claw.sessiond.v1.SessionService",
                {
                    "Append": grpc.unary_unary_rpc_method_handler(append),
                    "AppendStream": grpc.stream_stream_rpc_method_handler(append_stream),
                    "RecordUsage": grpc.unary_unary_rpc_method_handler(empty),
                },
            ),
            grpc.method_handlers_generic_handler(
                "grpc.health.v1.Health", {"Check": grpc.unary_unary_rpc_method_handler(empty)}
            ),
        )
    )
    folder.mkdir(mode=0o700)
    sock = folder / "fake.sock"
    assert server.add_insecure_port(f"unix:{sock}") != 0
    server.start()
    return server, sock


def test_an_empty_append_reply_is_an_error_not_positions_0(tmp_path: Path) -> None:
    server, sock = _fake_daemon(tmp_path / "fake")
    try:
        for stream_appends in (False, True):
            with (
                SessionClient(address=str(sock), autostart=False, stream_appends=stream_appends) as c,
                pytest.raises(claw.InternalError) as info,
            ):
                c.append("victim", [Message.user("a"), Message.user("b")])
            assert "malformed" in info.value.message and "not known to be stored" in info.value.message
        with SessionClient(address=str(sock), autostart=False) as c, pytest.raises(claw.InternalError) as usage:
            c.record_usage("victim", input_tokens=5)
        assert "not known to be recorded" in usage.value.message

        async def async_side(stream_appends: bool) -> claw.SessiondError:
            async with AsyncSessionClient(address=str(sock), autostart=False, stream_appends=stream_appends) as ac:
                with pytest.raises(claw.InternalError) as info:
                    await ac.append("victim", Message.user("a"))
                return info.value

        for stream_appends in (False, True):
            assert "malformed" in asyncio.run(async_side(stream_appends)).message
        if _ts_built():
            for stream in (False, True):
                ts = _ts_append({"socket": str(sock), "stream": stream}, "a")
                assert ts["ok"] is False and ts["name"] == "InternalError" and "malformed" in ts["message"], ts
            ts = _ts_append({"socket": str(sock), "usage": True}, "")
            assert (
                ts["ok"] is False and ts["name"] == "InternalError" and "not known to be recorded" in ts["message"]
            ), ts
    finally:
        server.stop(0)


def test_the_certificate_is_private_never_written_through_a_link_and_the_key_is_nowhere(
    spawn_daemon: Any, workspace: Path, tmp_path: Path
) -> None:
    claw_dir = workspace / ".claw"
    claw_dir.mkdir(mode=0o700)
    decoy = tmp_path / "decoy"
    decoy.write_text("untouched\n")
    (claw_dir / "tcp-cert.pem").symlink_to(decoy)  # planted: replaced, never written through
    d: DaemonProcess = spawn_daemon("--tcp", f"127.0.0.1:{free_port()}")
    info = (claw_dir / "tcp-cert.pem").lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
    assert decoy.read_text() == "untouched\n"
    assert (claw_dir / "tcp-cert.pem").read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert [p.name for p in claw_dir.iterdir() if p.name.startswith(".tcp-cert.pem")] == []  # no temporary left
    # The key exists only in the daemon's memory: no file of the workspace and no log line holds it.
    for path in [*claw_dir.iterdir(), *workspace.iterdir()]:
        if path.is_file() and not path.is_symlink():
            assert b"PRIVATE KEY" not in path.read_bytes(), path
    assert "PRIVATE KEY" not in d.log() and "cert_file=" in d.log()


def test_a_certificate_in_a_claw_folder_others_can_write_is_not_trusted(spawn_daemon: Any) -> None:
    """Whoever can write in ``.claw/`` could plant a certificate of their own: such a folder gives no pin."""
    d, address = _tcp_daemon(spawn_daemon)
    claw_dir = d.workspace / ".claw"
    os.chmod(claw_dir, 0o777)
    try:
        with (
            SessionClient(d.workspace, address=address, autostart=False, retry_window_s=0) as c,
            pytest.raises(claw.UntrustedPeerError) as info,
        ):
            c.append("victim", Message.user("must not land"))
        ts = _ts_append({"workspace": str(d.workspace), "address": address}, "must not land") if _ts_built() else None
    finally:
        os.chmod(claw_dir, 0o700)
    if ts is not None:
        assert ts["ok"] is False and ts["name"] == "UntrustedPeerError" and "writable by others" in ts["message"], ts
    assert "writable" in info.value.message or "write" in info.value.message, info.value.message
    assert "nothing was sent" in info.value.message
    with SessionClient(d.workspace, address=address, autostart=False) as c:  # a private .claw again: trusted
        c.append("victim", Message.user("lands"))
    assert _stored(d) == ["first", "lands"]
