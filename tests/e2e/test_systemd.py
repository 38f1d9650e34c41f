"""The systemd unit and the sd_notify protocol, without a running systemd.

* ``systemd-analyze verify`` must print nothing for the unit (it exits 0 even
  on a misspelled key, SPEC §7), in system and ``--user`` mode;
* ``systemd-analyze security --offline=yes`` must rate it 2.0 or better;
* a real daemon subprocess talks to a test-owned ``$NOTIFY_SOCKET`` (a Unix
  datagram socket): READY=1 only once the gRPC socket answers, STATUS= while
  starting, WATCHDOG=1 periodically when ``$WATCHDOG_USEC`` is set (and not
  otherwise), STOPPING=1 on SIGTERM, no READY=1 from a daemon that cannot start;
* the real daemon works inside the unit's sandbox as far as it can be built
  without systemd (read-only mounts but .claw/, seccomp filter, MDWE).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.daemon import ROOT, DaemonProcess, health_status

UNIT = ROOT / "systemd" / "claw-sessiond@.service"
MAX_EXPOSURE = 2.0

needs_systemd_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")


pytestmark = pytest.mark.backend_neutral("the unit file and the sd_notify protocol")


def _analyze(*args: str, cwd: Path, runtime_dir: Path) -> subprocess.CompletedProcess[str]:
    # --user needs a runtime dir to exist; nothing is started.
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime_dir), "SYSTEMD_LOG_COLOR": "0", "SYSTEMD_COLORS": "0"}
    return subprocess.run(
        ["systemd-analyze", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
    )


@pytest.fixture
def unit_dir(tmp_path: Path) -> Path:
    """A folder with the unit and an instance of it (systemd-analyze reads files by name)."""
    folder = tmp_path / "units"
    folder.mkdir()
    shutil.copy(UNIT, folder / UNIT.name)
    shutil.copy(UNIT, folder / "claw-sessiond@tmp-ws.service")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    return folder


@needs_systemd_analyze
@pytest.mark.parametrize("mode", [[], ["--user"]], ids=["system", "user"])
@pytest.mark.parametrize("name", [UNIT.name, "claw-sessiond@tmp-ws.service"])
def test_verify_prints_nothing(unit_dir: Path, mode: list[str], name: str) -> None:
    proc = _analyze("verify", *mode, f"./{name}", cwd=unit_dir, runtime_dir=unit_dir.parent / "run")
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout


@needs_systemd_analyze
def test_verify_check_catches_a_typo(unit_dir: Path) -> None:
    """The check above can fail: a misspelled key exits 0 but prints a warning."""
    text = UNIT.read_text().replace("ProtectSystem=", "ProtectSytem=")
    (unit_dir / "typo@.service").write_text(text)
    proc = _analyze("verify", "./typo@.service", cwd=unit_dir, runtime_dir=unit_dir.parent / "run")
    assert proc.returncode == 0
    assert "Unknown key 'ProtectSytem'" in proc.stdout


def _exposure(output: str) -> float:
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", output)
    assert match, output
    return float(match.group(1))


@needs_systemd_analyze
def test_security_exposure(unit_dir: Path) -> None:
    proc = _analyze("security", "--offline=yes", f"./{UNIT.name}", cwd=unit_dir, runtime_dir=unit_dir.parent / "run")
    assert _exposure(proc.stdout) <= MAX_EXPOSURE, proc.stdout
    # The check can fail: the same unit without its sandbox scores far worse.
    bare = UNIT.read_text().split("# Sandboxing.")[0] + "\n[Install]\nWantedBy=default.target\n"
    (unit_dir / "bare@.service").write_text(bare)
    proc = _analyze("security", "--offline=yes", "./bare@.service", cwd=unit_dir, runtime_dir=unit_dir.parent / "run")
    assert _exposure(proc.stdout) > 5.0, proc.stdout


@pytest.mark.smoke
def test_unit_runs_the_documented_command() -> None:
    text = UNIT.read_text()
    assert "Type=notify" in text
    assert "ExecStart=/usr/bin/env claw-sessiond serve --workspace %f" in text
    assert "ReadWritePaths=%f/.claw" in text
    assert "UMask=0077" in text
    assert "Restart=on-failure" in text


# ---------------------------------------------------------------- sd_notify


class NotifyListener:
    """A test-owned $NOTIFY_SOCKET: records (monotonic time, datagram lines)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.messages: list[tuple[float, list[str]]] = []

    def receive(self, timeout_s: float) -> list[str] | None:
        self.sock.settimeout(timeout_s)
        try:
            data = self.sock.recv(4096)
        except TimeoutError:
            return None
        lines = data.decode().split("\n")
        self.messages.append((time.monotonic(), lines))
        return lines

    def wait_for(self, key: str, timeout_s: float, proc: subprocess.Popen[bytes] | None = None) -> list[str]:
        """Receive until a datagram contains a line starting with ``key``; fail on timeout."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            lines = self.receive(min(0.5, max(0.01, end - time.monotonic())))
            if lines is not None and any(line.startswith(key) for line in lines):
                return lines
            if proc is not None and proc.poll() is not None and lines is None:
                pytest.fail(f"daemon exited with {proc.returncode} before sending {key}")
        pytest.fail(f"no {key} within {timeout_s}s; got {self.lines()}")

    def lines(self) -> list[str]:
        return [line for _, lines in self.messages for line in lines]

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def notify(tmp_path: Path) -> Iterator[NotifyListener]:
    listener = NotifyListener(tmp_path / "notify.sock")
    yield listener
    listener.close()


def test_ready_status_watchdog_stopping(spawn_daemon: object, workspace: Path, notify: NotifyListener) -> None:
    env = {"NOTIFY_SOCKET": str(notify.path), "WATCHDOG_USEC": "200000"}
    daemon: DaemonProcess = spawn_daemon(env=env, start=False)  # type: ignore[operator]
    proc = daemon.spawn()

    ready = notify.wait_for("READY=1", 20, proc)
    # At the moment READY=1 arrives, the socket must already answer.
    assert health_status(daemon.address) == "SERVING", "READY=1 sent before the socket answers"
    assert f"MAINPID={proc.pid}" in ready
    assert any(line.startswith("STATUS=serving on ") and str(daemon.socket_path) in line for line in ready)
    before_ready = [line for _, lines in notify.messages[:-1] for line in lines]
    assert any(line.startswith("STATUS=") for line in before_ready), notify.lines()
    assert "READY=1" not in before_ready

    # WATCHDOG=1 every WATCHDOG_USEC/2 = 0.1 s.
    started = time.monotonic()
    count = 0
    while time.monotonic() - started < 1.0:
        lines = notify.receive(0.5)
        if lines and "WATCHDOG=1" in lines:
            count += 1
    assert 5 <= count <= 15, f"{count} WATCHDOG=1 in 1 s with WATCHDOG_USEC=200000"

    proc.send_signal(signal.SIGTERM)
    stopping = notify.wait_for("STOPPING=1", 10)
    assert any(line.startswith("STATUS=stopping") for line in stopping)
    mark = len(notify.messages)
    assert proc.wait(20) == 0
    while notify.receive(0.2) is not None:
        pass
    after = [line for _, lines in notify.messages[mark:] for line in lines]
    assert "READY=1" not in after and "WATCHDOG=1" not in after, after


def test_no_watchdog_without_watchdog_usec(spawn_daemon: object, notify: NotifyListener) -> None:
    daemon: DaemonProcess = spawn_daemon(env={"NOTIFY_SOCKET": str(notify.path)}, start=False)  # type: ignore[operator]
    proc = daemon.spawn()
    notify.wait_for("READY=1", 20, proc)
    while notify.receive(0.6) is not None:
        pass
    assert "WATCHDOG=1" not in notify.lines()


def test_watchdog_for_another_pid_is_ignored(spawn_daemon: object, notify: NotifyListener) -> None:
    """WATCHDOG_PID names the process the watchdog is meant for (sd_watchdog_enabled(3))."""
    env = {"NOTIFY_SOCKET": str(notify.path), "WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"}
    daemon: DaemonProcess = spawn_daemon(env=env, start=False)  # type: ignore[operator]
    proc = daemon.spawn()
    notify.wait_for("READY=1", 20, proc)
    while notify.receive(0.6) is not None:
        pass
    assert "WATCHDOG=1" not in notify.lines()


def test_abstract_notify_socket(spawn_daemon: object, tmp_path: Path) -> None:
    """systemd may pass an abstract address ("@name")."""
    name = f"claw-sessiond-test-{os.getpid()}-{time.monotonic_ns()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    try:
        daemon: DaemonProcess = spawn_daemon(env={"NOTIFY_SOCKET": "@" + name}, start=False)  # type: ignore[operator]
        daemon.spawn()
        sock.settimeout(20)
        seen: list[str] = []
        while "READY=1" not in seen:
            seen += sock.recv(4096).decode().split("\n")
    finally:
        sock.close()


def test_no_ready_when_start_fails(spawn_daemon: object, notify: NotifyListener) -> None:
    """A second daemon for the same workspace cannot take the lock: exit 1, never READY=1."""
    spawn_daemon()  # type: ignore[operator]
    second: DaemonProcess = spawn_daemon(env={"NOTIFY_SOCKET": str(notify.path)}, start=False)  # type: ignore[operator]
    proc = second.spawn()
    assert proc.wait(20) == 1
    while notify.receive(0.2) is not None:
        pass
    assert "READY=1" not in notify.lines()
    assert "holds the lock" in second.log()
    failed = [line for line in notify.lines() if line.startswith("STATUS=failed: ")]
    assert failed and "holds the lock" in failed[-1], notify.lines()


# ---------------------------------------------------------------- the unit's sandbox, emulated

# A launcher that applies what the unit asks of the kernel for the process itself, then execs the
# daemon: ProtectSystem=strict + ProtectHome=read-only + ReadWritePaths=%f/.claw (a private mount
# namespace with every mount read-only but .claw/; needs root, else skipped), NoNewPrivileges=,
# MemoryDenyWriteExecute= (prctl PR_SET_MDWE, what systemd >= 254 uses), SystemCallFilter= +
# SystemCallErrorNumber= and RestrictAddressFamilies= (a libseccomp filter, as systemd builds
# it). Before exec it proves each one bites. PrivateTmp= is not emulated: the test workspace
# lives under /tmp.
_LAUNCHER = r"""
import ctypes, errno, json, mmap, os, socket, sys

cfg = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
fs_proofs = []
if cfg["writable"] is not None:
    # ProtectSystem=strict + ProtectHome=read-only + ReadWritePaths=: a private mount namespace
    # where every mount is read-only except /dev, /proc, /sys and the writable paths.
    MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
    mount = libc.mount
    mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    assert libc.unshare(0x00020000) == 0, "unshare(CLONE_NEWNS) failed"
    assert mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0
    targets = [line.split()[4] for line in open("/proc/self/mountinfo")]
    for target in targets:
        if target.split("/")[1] in ("proc", "sys", "dev"):
            continue
        if mount(None, target.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None) != 0:
            raise OSError(ctypes.get_errno(), f"remount {target} read-only")
    for path in cfg["writable"]:
        assert mount(path.encode(), path.encode(), None, MS_BIND, None) == 0, path
        assert mount(None, path.encode(), None, MS_REMOUNT | MS_BIND, None) == 0, path
    try:
        open(os.path.join(cfg["workspace"], "probe"), "w")
    except OSError as exc:
        fs_proofs.append(f"workspace={errno.errorcode[exc.errno]}")
    for path in cfg["writable"]:
        probe = os.path.join(path, "probe")
        open(probe, "w").close()
        os.unlink(probe)
        fs_proofs.append(f"{os.path.basename(path)}=rw")
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
if cfg["mdwe"]:
    assert libc.prctl(65, 1, 0, 0, 0) == 0, "PR_SET_MDWE refused"  # PR_MDWE_REFUSE_EXEC_GAIN

class Cmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]

sc = ctypes.CDLL("libseccomp.so.2")
sc.seccomp_init.restype = ctypes.c_void_p
sc.seccomp_init.argtypes = [ctypes.c_uint32]
sc.seccomp_rule_add_array.argtypes = [
    ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(Cmp)
]
sc.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
sc.seccomp_load.argtypes = [ctypes.c_void_p]
ALLOW = 0x7FFF0000
ERRNO = lambda e: 0x00050000 | (e & 0xFFFF)
ctx = sc.seccomp_init(ERRNO(cfg["errno"]))
assert ctx
socket_nr = sc.seccomp_syscall_resolve_name(b"socket")
for name in cfg["allow"]:
    nr = sc.seccomp_syscall_resolve_name(name.encode())
    if nr < 0 or (nr == socket_nr and cfg["families"]):
        continue  # not on this architecture / socket() is filtered by family below
    assert sc.seccomp_rule_add_array(ctx, ALLOW, nr, 0, None) == 0, name
if cfg["families"]:
    (family,) = cfg["families"]  # one family: "== it" allowed, "!= it" EAFNOSUPPORT (as systemd does)
    assert sc.seccomp_rule_add_array(ctx, ALLOW, socket_nr, 1, (Cmp * 1)(Cmp(0, 4, family, 0))) == 0
    assert sc.seccomp_rule_add_array(ctx, ERRNO(errno.EAFNOSUPPORT), socket_nr, 1, (Cmp * 1)(Cmp(0, 1, family, 0))) == 0
assert sc.seccomp_load(ctypes.c_void_p(ctx)) == 0, "seccomp_load failed"

proofs = fs_proofs
try:
    os.chroot("/")
except PermissionError:
    proofs.append("chroot=EPERM")
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
except OSError as exc:
    proofs.append(f"AF_INET={errno.errorcode[exc.errno]}")
try:
    mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
except OSError as exc:
    proofs.append(f"wx_mmap={errno.errorcode[exc.errno]}")
print("sandbox-proofs " + " ".join(proofs), file=sys.stderr, flush=True)
os.execvp(sys.argv[2], sys.argv[2:])  # the unit's ExecStart=, %f substituted
"""


def _syscall_groups() -> dict[str, list[str]]:
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, timeout=30).stdout
    groups: dict[str, list[str]] = {}
    current: list[str] = []
    for line in out.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif line.strip() and not line.strip().startswith("#") and line.startswith(" "):
            current.append(line.strip())
    return groups


def _expand(names: list[str], groups: dict[str, list[str]]) -> set[str]:
    out: set[str] = set()
    for name in names:
        out |= _expand(groups[name], groups) if name.startswith("@") else {name}
    return out


def unit_sandbox() -> dict[str, object]:
    """The unit's kernel-level restrictions, read from the unit file itself."""
    settings: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            settings.setdefault(key.strip(), []).append(value.strip())
    groups = _syscall_groups()
    allow: set[str] = set()
    for value in settings["SystemCallFilter"]:
        if value.startswith("~"):
            allow -= _expand(value[1:].split(), groups)
        else:
            allow |= _expand(value.split(), groups)
    families = [getattr(socket, f) for f in settings["RestrictAddressFamilies"][0].split()]
    assert settings["NoNewPrivileges"] == ["yes"]
    return {
        "allow": sorted(allow),
        "errno": getattr(__import__("errno"), settings["SystemCallErrorNumber"][0]),
        "families": families,
        "mdwe": settings["MemoryDenyWriteExecute"] == ["yes"],
    }


def _can_unshare_mounts() -> bool:
    """Root with CAP_SYS_ADMIN can emulate ProtectSystem=strict in a private mount namespace."""
    return shutil.which("unshare") is not None and (
        subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=30).returncode == 0
    )


def _mdwe_supported() -> bool:
    probe = "import ctypes; l = ctypes.CDLL(None); raise SystemExit(0 if l.prctl(65, 1, 0, 0, 0) == 0 else 1)"
    return subprocess.run([sys.executable, "-c", probe], timeout=30).returncode == 0


@needs_systemd_analyze
def test_daemon_works_in_the_units_seccomp_sandbox_and_mdwe(
    workspace: Path, tmp_path: Path, notify: NotifyListener
) -> None:
    try:
        ctypes.CDLL("libseccomp.so.2")
    except OSError:
        pytest.skip("libseccomp.so.2 not installed")
    if not _mdwe_supported():
        pytest.skip("kernel without PR_SET_MDWE (Linux < 6.3)")
    sandbox = unit_sandbox()
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)  # what the unit's ExecStartPre=+mkdir does, before the sandbox
    sandbox["workspace"] = str(workspace)
    sandbox["writable"] = [str(claw)] if _can_unshare_mounts() else None
    assert "execve" in sandbox["allow"] and "chroot" not in sandbox["allow"]  # type: ignore[operator]
    log_path = tmp_path / "sandboxed.log"
    daemon = DaemonProcess(workspace)
    # Run the unit's own ExecStart= (/usr/bin/env claw-sessiond serve --workspace %f), with this
    # venv's bin/ first on PATH as the unit's Environment=PATH= would have ~/.local/bin.
    (exec_start,) = (line.split("=", 1)[1] for line in UNIT.read_text().splitlines() if line.startswith("ExecStart="))
    argv = shlex.split(exec_start.replace("%f", str(workspace)))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.update(NOTIFY_SOCKET=str(notify.path), WATCHDOG_USEC="200000")  # Type=notify, WatchdogSec=
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, json.dumps(sandbox), *argv],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=workspace,
            env=env,
        )
    try:
        end = time.monotonic() + 30
        while health_status(daemon.address) != "SERVING":
            assert proc.poll() is None, f"sandboxed daemon exited {proc.returncode}:\n{log_path.read_text()}"
            assert time.monotonic() < end, log_path.read_text()
            time.sleep(0.05)
        with SessionClient(address=daemon.address, autostart=False) as client:
            client.append("s", [Message.user("hi"), Message.assistant(tool_calls=[ToolCall("c1", "bash", "{}")])])
            client.record_usage("s", input_tokens=5, cost_micros=10, currency="USD")
            loaded = client.load("s", str(workspace))
            assert [r.tool_call_id for r in loaded.repairs] == ["c1"]
            assert client.stats()["sessions"] == 1
        notify.wait_for("READY=1", 10)
        notify.wait_for("WATCHDOG=1", 5)
        proc.send_signal(signal.SIGTERM)
        notify.wait_for("STOPPING=1", 10)
        assert proc.wait(30) == 0, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    log = log_path.read_text()
    proofs = "chroot=EPERM AF_INET=EAFNOSUPPORT wx_mmap=EACCES"
    if sandbox["writable"] is not None:
        proofs = "workspace=EROFS .claw=rw " + proofs
    assert f"sandbox-proofs {proofs}" in log, log
    assert not (workspace / "probe").exists()
    assert "Traceback" not in log and "event=stopped" in log, log
