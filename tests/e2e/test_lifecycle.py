"""Daemon lifecycle: ``status`` and ``stop`` across workspaces, idle exit, and auto-start after an idle exit.

Every test points ``$XDG_RUNTIME_DIR`` at its own 0700 folder, so the registry
(``$XDG_RUNTIME_DIR/claw-sessiond/daemons/``) holds only this test's daemons.
Daemons are real subprocesses (some auto-started by the real client) and are
stopped by pid at teardown.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from claw_sessiond import lifecycle
from claw_sessiond_client import Message, SessionClient
from tests.helpers.cli import claw, on_pty
from tests.helpers.daemon import DaemonProcess
from tests.helpers.process import daemons_for, stop_pid


@pytest.fixture
def runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``$XDG_RUNTIME_DIR`` and ``$XDG_STATE_HOME`` for this test (inherited by auto-started daemons)."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return run


@pytest.fixture
def registry(runtime_dir: Path) -> Path:
    return runtime_dir / "claw-sessiond" / "daemons"


@pytest.fixture
def workspaces(tmp_path: Path) -> Iterator[list[Path]]:
    """Three workspaces (one of them deep); every daemon still serving one is stopped by pid at teardown."""
    deep = tmp_path / "projects" / ("a-rather-long-folder-name-" * 2) / "agent-workspace"
    made = [tmp_path / "ws1", tmp_path / "ws2", deep]
    for ws in made:
        ws.mkdir(parents=True)
    yield made
    for ws in made:
        for proc in daemons_for(ws):
            stop_pid(proc.pid)


def status_json(*args: str) -> dict[str, Any]:
    proc = claw("status", "--json", *args)
    assert proc.returncode in (0, 3), proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def wait_exit(proc: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    try:
        return proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        return None


def wait_gone(pid: int, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def lock_of(ws: Path) -> Path:
    return ws / ".claw" / "sessiond.lock"


# ---------------------------------------------------------------- status


def test_status_lists_every_daemon_of_the_user(runtime_dir: Path, workspaces: list[Path]) -> None:
    ws1, ws2, deep = workspaces
    daemons = [DaemonProcess(ws).start() for ws in (ws1, deep)]
    try:
        with daemons[0].client() as c:
            c.append("a", Message.user("x"))
            c.append("b", Message.user("y"))
        doc = status_json()
        assert doc["format"] == 1
        assert doc["registry"] == str(runtime_dir / "claw-sessiond" / "daemons")
        assert doc["searched"][1:] == [str(runtime_dir.parent / "state" / "claw-sessiond" / "daemons")]
        by_ws = {d["workspace"]: d for d in doc["daemons"]}
        assert set(by_ws) == {str(ws1), str(deep)}
        first = by_ws[str(ws1)]
        assert first["pid"] == daemons[0].proc.pid  # type: ignore[union-attr]
        assert first["sessions"] == 2 and by_ws[str(deep)]["sessions"] == 0
        assert first["socket"] == str(daemons[0].socket_path)
        assert by_ws[str(deep)]["socket"] == str(daemons[1].socket_path)
        assert 0 <= first["uptime_s"] < 120 and first["started_at"].endswith("Z")
        assert first["idle_exit_s"] == 0  # started by a person: never idles out

        text = claw("status")
        assert text.returncode == 0, text.stderr
        lines = text.stdout.splitlines()
        assert lines[0].split() == ["PID", "UPTIME", "SESSIONS", "WORKSPACE", "SOCKET", "STORE"]
        assert len(lines) == 3 and all(len(line) <= 80 for line in lines), text.stdout
        assert any(line.split()[0] == str(daemons[1].proc.pid) and "…" in line for line in lines)  # type: ignore[union-attr]

        one = status_json("--workspace", str(ws1))
        assert [d["pid"] for d in one["daemons"]] == [daemons[0].proc.pid]  # type: ignore[union-attr]
        missing = claw("status", "--workspace", str(ws2))
        assert missing.returncode == 3 and "no claw-sessiond running" in missing.stdout
    finally:
        for d in daemons:
            d.stop()
    assert [d.proc.returncode for d in daemons] == [0, 0]  # type: ignore[union-attr]
    none = claw("status")
    assert none.returncode == 0 and none.stdout.strip() == "no daemons running"
    assert list((runtime_dir / "claw-sessiond" / "daemons").glob("*.json")) == []  # removed at graceful stop


def test_stale_and_forged_records_are_ignored_and_never_signalled(registry: Path, workspaces: list[Path]) -> None:
    ws1, ws2, _ = workspaces
    killed = DaemonProcess(ws1).start()
    stale = lifecycle.record_path(registry, lock_of(ws1))
    assert stale.exists()
    killed.kill()  # SIGKILL: the record stays behind
    assert stale.exists()

    # A forged record naming a live process that is not a daemon (pid reuse, or planted): the lock is not held.
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (ws2 / ".claw").mkdir(mode=0o700)
        lock_of(ws2).write_text(f"{bystander.pid}\n")
        forged = lifecycle.Record(
            workspace=str(ws2),
            pid=bystander.pid,
            uid=os.getuid(),
            socket=str(ws2 / ".claw" / "sessiond.sock"),
            lock=str(lock_of(ws2)),
            started_at="2026-01-01T00:00:00.000Z",
            started_unix=time.time(),
            process_start=lifecycle.process_start_time(bystander.pid),
            idle_exit_s=0,
            log_file="",
            version="0",
        )
        forged_path = lifecycle.write_record(registry, forged)
        assert stat_mode(forged_path) == 0o600 and stat_mode(registry) == 0o700

        assert status_json()["daemons"] == []
        assert not stale.exists() and not forged_path.exists(), "stale records are cleaned"
        lifecycle.write_record(registry, forged)
        refused = claw("stop", "--workspace", str(ws2))
        assert refused.returncode == 3 and "no claw-sessiond is running" in refused.stderr
        assert bystander.poll() is None, "stop signalled a process that is not the lock holder"
        everything = claw("stop", "--all")
        assert everything.returncode == 0 and "no daemons running" in everything.stdout
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait(10)


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_unsafe_registry_folder_is_refused(runtime_dir: Path, registry: Path, workspaces: list[Path]) -> None:
    registry.mkdir(parents=True, mode=0o700)
    os.chmod(registry, 0o777)
    proc = claw("status")
    assert proc.returncode == 1 and "writable by group or others" in proc.stderr and str(registry) in proc.stderr
    # The daemon still serves (the workspace lock keeps it single) but does not register there.
    d = DaemonProcess(workspaces[0]).start()
    try:
        assert list(registry.iterdir()) == []
        assert "event=registry_unusable" in d.log()
    finally:
        d.stop()
    os.rmdir(registry)
    os.symlink(runtime_dir, registry)  # a link in place of the folder is refused too
    proc = claw("status")
    assert proc.returncode == 1 and "symbolic link" in proc.stderr


# ---------------------------------------------------------------- stop


def test_stop_all_asks_before_stopping_other_workspaces(registry: Path, workspaces: list[Path]) -> None:
    ws1, ws2 = workspaces[:2]
    daemons = [DaemonProcess(ws).start() for ws in (ws1, ws2)]
    try:
        run = on_pty("stop", "--all", cwd=ws1, answer=(b"[y/N]", b"n\n"))
        text = run.text()
        assert run.code == 0 and f"stop 2 daemons, of 1 other workspace ({ws2})? [y/N]" in text, text
        assert "nothing stopped" in text and "error" not in text
        assert all(d.proc.poll() is None for d in daemons)  # type: ignore[union-attr]
        assert claw("stop", "--workspace", str(ws2)).returncode == 0
        # only the current workspace's daemon: nothing to ask, no terminal needed
        alone = claw("stop", "--all", cwd=ws1)
        assert alone.returncode == 0 and f"stopped claw-sessiond pid {daemons[0].proc.pid}" in alone.stdout  # type: ignore[union-attr]
    finally:
        for d in daemons:
            d.stop()


@pytest.mark.smoke
def test_stop_one_workspace_then_all(registry: Path, workspaces: list[Path]) -> None:
    ws1 = workspaces[0]
    daemons = [DaemonProcess(ws).start() for ws in workspaces]
    try:
        first = daemons[0]
        proc = claw("stop", "--workspace", str(ws1))
        assert proc.returncode == 0, proc.stderr
        assert f"stopped claw-sessiond pid {first.proc.pid} for {ws1}" in proc.stdout  # type: ignore[union-attr]
        assert wait_exit(first.proc, 5) == 0  # type: ignore[arg-type]
        assert "event=stopped" in first.log()
        assert not first.socket_path.exists() and not lifecycle.lock_is_held(lock_of(ws1))
        again = claw("stop", "--workspace", str(ws1))
        assert again.returncode == 3 and f"no claw-sessiond is running for {ws1}" in again.stderr

        # other workspaces than the current folder's: --all asks, and without a terminal stops nothing
        refused = claw("stop", "--all", "--timeout", "10", cwd=ws1)
        assert refused.returncode == 2 and refused.stdout == "", refused.stderr
        assert "not stopping the daemons of 2 other workspaces without confirmation" in refused.stderr
        assert "Try: claw-sessiond stop --all --yes" in refused.stderr
        assert all(d.proc.poll() is None for d in daemons[1:])  # type: ignore[union-attr]
        proc = claw("stop", "--all", "--yes", "--timeout", "10", cwd=ws1)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count("stopped claw-sessiond pid") == 2
        assert [wait_exit(d.proc, 5) for d in daemons[1:]] == [0, 0]  # type: ignore[arg-type]
        assert list(registry.glob("*.json")) == []
    finally:
        for d in daemons:
            d.stop()


def test_stop_finds_a_daemon_without_a_record(registry: Path, workspaces: list[Path]) -> None:
    started = time.time()
    d = DaemonProcess(workspaces[0]).start()
    try:
        for record in registry.glob("*.json"):
            record.unlink()  # as if started by an older version
        assert claw("status").stdout.strip() == "no daemons running"
        (found,) = status_json("--workspace", str(workspaces[0]))["daemons"]  # through the lock file
        assert found["pid"] == d.proc.pid and found["sessions"] == 0  # type: ignore[union-attr]
        assert abs(found["uptime_s"] - (time.time() - started)) < 5
        proc = claw("stop", "--workspace", str(workspaces[0]))
        assert proc.returncode == 0, proc.stderr
        assert wait_exit(d.proc, 5) == 0  # type: ignore[arg-type]
    finally:
        d.stop()


# ---------------------------------------------------------------- idle exit


def test_idle_exit_waits_for_streams_and_runs(registry: Path, workspace: Path) -> None:
    # The idle window is set from this run's own `claw status` time (a Python start-up: seconds on a
    # loaded machine), so that several status calls land inside it: with a fixed 1 s window a slow
    # first call met a daemon already gone, and the test proved nothing.
    started = time.monotonic()
    status_json("--workspace", str(workspace))
    status_s = time.monotonic() - started
    idle_s = min(max(1.0, 3 * status_s), 20.0)
    d = DaemonProcess(workspace, "--idle-exit-s", f"{idle_s:.2f}").start()
    assert d.proc is not None
    try:
        with d.client() as c:
            c.append("s", Message.user("hi"))
            watched = c.watch("s")
            next(watched)
            time.sleep(idle_s + 0.6)
            assert d.proc.poll() is None, "an open Watch keeps the daemon"
            watched.close()
            with c.attach("s"):
                time.sleep(idle_s + 0.6)
                assert d.proc.poll() is None, "a live run keeps the daemon"
        ended = time.monotonic()
        # Looking (status: GetStats) keeps nothing alive: status calls one after another, each far
        # quicker than the window, would keep a daemon they counted as use running until the deadline.
        deadline = ended + 2 * idle_s + 8
        seen = 0
        while d.proc.poll() is None and time.monotonic() < deadline:
            seen += len(status_json("--workspace", str(workspace))["daemons"])
        gone_after = time.monotonic() - ended
        assert wait_exit(d.proc, 1) == 0, d.log()
        assert seen >= 1, f"no status call reached the daemon (window {idle_s:.1f} s, status {status_s:.1f} s)"
        assert gone_after < idle_s + 3 + 2 * status_s, f"status calls kept the idle daemon alive ({gone_after:.1f} s)"
        log = d.log()
        assert "event=idle_exit" in log and "event=stopped" in log
        assert not d.socket_path.exists() and not lifecycle.lock_is_held(workspace / ".claw" / "sessiond.lock")
        assert list(registry.glob("*.json")) == []
    finally:
        d.stop()


def test_autostarted_daemon_idles_out_and_the_client_starts_a_new_one(
    runtime_dir: Path, workspaces: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, default_ws, _ = workspaces
    with SessionClient(default_ws) as c:  # the default: --idle-exit-s 600 and a log file
        pid = int(c.stats()["pid"])
    cmd = psutil.Process(pid).cmdline()
    assert cmd[cmd.index("--idle-exit-s") + 1] == "600"
    assert cmd[cmd.index("--log-file") + 1] == str(default_ws / ".claw" / "sessiond.log")
    assert claw("stop", "--workspace", str(default_ws)).returncode == 0
    assert wait_gone(pid, 5)

    monkeypatch.setenv("CLAW_SESSIOND_IDLE_EXIT_S", "0.5")
    with SessionClient(ws) as c:
        c.append("s", Message.user("one"))
        first = int(c.stats()["pid"])
        assert wait_gone(first, 10), "the auto-started daemon did not idle out"
        c.append("s", Message.user("two"))  # nothing answers: a new daemon is started
        second = int(c.stats()["pid"])
        assert second != first
        assert [m.content for m in c.load("s", str(ws)).messages] == ["one", "two"]
    log = (ws / ".claw" / "sessiond.log").read_text()
    # The first daemon idled out before the second started; the second, idle 0.5 s after the last call, may have
    # idled out too by the time the log is read (a loaded machine: a CI run saw it).
    lines = log.splitlines()
    ready = [i for i, line in enumerate(lines) if "event=ready" in line]
    idle = [i for i, line in enumerate(lines) if "event=idle_exit " in line]
    assert len(ready) == 2 and len(idle) in (1, 2) and ready[0] < idle[0] < ready[1], log
    assert log.startswith("20") and "Traceback" not in log
    assert (ws / ".claw" / "sessiond.stderr").stat().st_mode & 0o777 == 0o600


def test_calls_racing_the_idle_exit_all_succeed(
    runtime_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calls that land just before, during or after an idle exit: the client retries or restarts; none fails."""
    monkeypatch.setenv("CLAW_SESSIOND_IDLE_EXIT_S", "0.6")
    pids = set()
    try:
        # Unary appends: an open append stream is use, so the default client's stream (finished
        # 0.5 s after its last append) would hold the daemon past these pauses; a streamed append
        # that meets a stopping daemon is re-sent through this same unary call
        # (tests/e2e/test_sync_plain_stream.py covers the stream's own idle exit and restarts).
        with SessionClient(workspace, retry_window_s=20, stream_appends=False) as c:
            for i, pause in enumerate([0.55, 0.6, 0.62, 0.58, 0.65, 0.6]):
                c.append("race", Message.user(f"m{i}"))
                pids.add(int(c.stats()["pid"]))
                time.sleep(pause)
            contents = [m.content for m in c.load("race", str(workspace)).messages]
        assert contents == [f"m{i}" for i in range(6)]
        assert len(pids) >= 2, "no call met an idle exit (timing too loose to test the race)"
    finally:
        for proc in daemons_for(workspace):
            stop_pid(proc.pid)


@pytest.mark.parametrize("command", ["status", "stop"])
def test_help_names_the_exit_codes(command: str) -> None:
    proc = claw(command, "--help")
    assert proc.returncode == 0 and "--workspace" in proc.stdout
    assert "Exit codes: 0 ok, 1 failure" in proc.stdout and "3 no daemon running" in proc.stdout
    assert ("--json" if command == "status" else "--timeout") in proc.stdout


def test_a_daemon_registered_under_the_state_folder_is_found_too(
    runtime_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started from a shell without $XDG_RUNTIME_DIR, listed from one with it (and stopped from there)."""
    d = DaemonProcess(workspace, env={"XDG_RUNTIME_DIR": ""}).start()
    try:
        state = runtime_dir.parent / "state" / "claw-sessiond" / "daemons"
        assert len(list(state.glob("*.json"))) == 1
        assert [x["pid"] for x in status_json()["daemons"]] == [d.proc.pid]  # type: ignore[union-attr]
        assert claw("stop", "--workspace", str(workspace)).returncode == 0
        assert wait_exit(d.proc, 5) == 0  # type: ignore[arg-type]
    finally:
        d.stop()


def test_stop_reports_a_daemon_that_does_not_exit_in_time(registry: Path, workspace: Path) -> None:
    d = DaemonProcess(workspace).start()
    assert d.proc is not None
    os.kill(d.proc.pid, signal.SIGSTOP)  # cannot act on SIGTERM until continued
    try:
        started = time.monotonic()
        proc = claw("stop", "--workspace", str(workspace), "--timeout", "1")
        assert proc.returncode == 1 and f"pid {d.proc.pid}" in proc.stderr and "did not exit within 1s" in proc.stderr
        assert time.monotonic() - started < 10
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
        assert wait_exit(d.proc, 15) == 0, "the SIGTERM sent by stop takes effect once the daemon runs again"
        d.stop()
