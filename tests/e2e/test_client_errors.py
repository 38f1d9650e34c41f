"""Errors a person can act on, fast: what a new user meets when something is not right.

No daemon: an immediate ``DaemonUnavailableError`` naming the workspace and how
to start one (a held workspace lock still means "starting or stopping": retried).
A stopped daemon (real ``SIGSTOP``): ``DaemonNotRespondingError`` with its pid
within ``CONNECT_TIMEOUT_S``. Wrong argument types: ``TypeError`` naming the
field, before anything is sent. A closed client, or a daemon gone: every public
method of both clients raises only documented ``SessiondError`` subclasses. A
client-only install: auto-start falls back to ``claw-sessiond`` on ``PATH``, or
says the daemon is not installed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import inspect
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond_client import (
    AsyncSessionClient,
    ClientClosedError,
    DaemonNotRespondingError,
    DaemonUnavailableError,
    DeadlineError,
    InvalidRequestError,
    Message,
    SessionClient,
    SessiondError,
    ToolCall,
)
from claw_sessiond_client import _liveness as B
from claw_sessiond_client.install import install_hint
from tests.helpers.daemon import ROOT, DaemonProcess

HEADER = json.dumps({"format": "claw-sessiond-export", "version": 1, "session_id": "imp"})


pytestmark = pytest.mark.backend_neutral("the client library's own errors: no daemon, wrong types, closed clients")


def _claw(workspace: Path) -> Path:
    folder = workspace / ".claw"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


# ---------------------------------------------------------------- no daemon


@pytest.mark.smoke
def test_no_daemon_fails_at_once_naming_the_workspace(workspace: Path) -> None:
    # A client that never reached a daemon does not retry: with a 600 s retry window, the defect (retrying
    # within the window) would take ten minutes, so a generous sanity bound tells the two apart at any load.
    started = time.monotonic()
    with (
        SessionClient(workspace, autostart=False, retry_window_s=600) as client,
        pytest.raises(DaemonUnavailableError) as info,
    ):
        client.load("s")
    elapsed = time.monotonic() - started
    assert elapsed < 60, elapsed
    text = str(info.value)
    assert f"no claw-sessiond runs for {workspace}" in text
    assert f"no socket at {workspace / '.claw' / 'sessiond.sock'}" in text
    assert f"claw-sessiond serve --workspace {workspace}" in text and "autostart=True" in text
    assert info.value.metadata["workspace"] == str(workspace)


def test_no_daemon_fails_at_once_async(workspace: Path) -> None:
    async def main() -> float:
        started = time.monotonic()
        async with AsyncSessionClient(workspace, autostart=False) as client:
            with pytest.raises(DaemonUnavailableError, match="no claw-sessiond runs for"):
                await client.append("s", Message.user("hi"))
        return time.monotonic() - started

    assert asyncio.run(main()) < 2.0


def test_stale_socket_without_lock_holder_is_not_transient(workspace: Path) -> None:
    """A socket file left by a crashed daemon (connection refused) and a free lock: no daemon, say so at once."""
    path = _claw(workspace) / "sessiond.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))  # bound, never listening: connect() is refused
    (workspace / ".claw" / "sessiond.lock").write_text("999999\n")  # a pid, but nobody holds the flock
    started = time.monotonic()
    with SessionClient(workspace, autostart=False) as client, pytest.raises(DaemonUnavailableError) as info:
        client.stats()
    assert time.monotonic() - started < 2.0
    assert "left from a daemon that is gone" in str(info.value)


def test_address_only_names_the_workspace_without_autostart_hint(workspace: Path) -> None:
    path = _claw(workspace) / "sessiond.sock"
    with SessionClient(address=str(path), autostart=False) as client, pytest.raises(DaemonUnavailableError) as info:
        client.list_sessions()
    assert f"no claw-sessiond runs for {workspace}" in str(info.value)
    assert "autostart=True" not in str(info.value)


def test_held_lock_is_transient_and_retried_within_the_window(workspace: Path) -> None:
    """A daemon holding the lock without listening yet (starting, stopping) is waited for, boundedly."""
    lock = _claw(workspace) / "sessiond.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        assert B.lock_holder(lock) == os.getpid()
        started = time.monotonic()
        client = SessionClient(workspace, autostart=False, retry_window_s=1.0)
        with client, pytest.raises(DaemonUnavailableError) as info:
            client.load("s")
        elapsed = time.monotonic() - started
        assert 0.5 <= elapsed < 5.0, elapsed
        assert "no claw-sessiond runs" not in str(info.value)
    finally:
        os.close(fd)
    assert B.lock_holder(lock) is None


# ---------------------------------------------------------------- a stopped daemon


def test_stopped_daemon_is_reported_with_its_pid(daemon: DaemonProcess) -> None:
    """A stopped daemon, met by a new sync client, a new async one and one connected before the stop. Each waits
    out a deadline of its own on the one stopped daemon, so the three run at the same time (threads)."""
    assert daemon.proc is not None
    pid = daemon.proc.pid
    connected = SessionClient(daemon.workspace, autostart=False, timeout_s=1.0)
    connected.stats()  # an established connection, before the daemon stops

    def via_sync() -> None:
        started = time.monotonic()
        with (
            SessionClient(daemon.workspace, autostart=False) as client,
            pytest.raises(DaemonNotRespondingError) as info,
        ):
            client.load("s")
        elapsed = time.monotonic() - started
        assert elapsed < B.CONNECT_TIMEOUT_S + 2.0, elapsed
        assert isinstance(info.value, DeadlineError) and info.value.retryable  # a write may have committed: same id
        text = str(info.value)
        assert f"claw-sessiond pid {pid} for {daemon.workspace}" in text
        assert f"did not answer within {B.CONNECT_TIMEOUT_S:.1f} s" in text
        assert str(daemon.workspace / ".claw" / "sessiond.log") in text
        assert info.value.metadata["pid"] == str(pid)

    async def async_stats() -> None:
        async with AsyncSessionClient(daemon.workspace, autostart=False) as aclient:
            with pytest.raises(DaemonNotRespondingError, match=f"pid {pid}"):
                await aclient.stats()

    def via_async() -> None:
        started = time.monotonic()
        asyncio.run(async_stats())
        assert time.monotonic() - started < B.CONNECT_TIMEOUT_S + 2.0

    def via_connected() -> None:
        # A connection made before the stop: the call's own deadline, then a 1 s check, then no retry.
        started = time.monotonic()
        with pytest.raises(DaemonNotRespondingError, match=f"pid {pid}"):
            connected.stats()
        assert time.monotonic() - started < 1.0 + B.HUNG_CHECK_S + 2.0

    os.kill(pid, signal.SIGSTOP)
    try:
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            for done in [pool.submit(check) for check in (via_sync, via_async, via_connected)]:
                done.result()
    finally:
        os.kill(pid, signal.SIGCONT)
        connected.close()
    assert daemon.terminate() == 0


# ---------------------------------------------------------------- argument types


def test_tool_call_arguments_dict_is_encoded_as_compact_json(module_client: SessionClient, sid: str) -> None:
    call = ToolCall("c1", "bash", {"cmd": "ls", "lang": "é"})
    assert call.arguments == '{"cmd":"ls","lang":"é"}'
    assert ToolCall("c2", "x", [1, 2]).arguments == "[1,2]"
    module_client.append(sid, Message.assistant(tool_calls=[call]))
    stored = module_client.load(sid).messages[0].tool_calls[0]  # (the Load repairs the call with a result after it)
    assert stored.arguments == '{"cmd":"ls","lang":"é"}' and stored.args == {"cmd": "ls", "lang": "é"}


def test_wrong_types_raise_type_error_naming_the_field_before_sending(workspace: Path) -> None:
    """The client points at no daemon: a TypeError (not DaemonUnavailableError) proves nothing was sent."""
    with SessionClient(workspace, autostart=False) as client:
        cases: list[tuple[Callable[[], object], str]] = [
            (lambda: client.append("s", {"role": "user", "content": "hi"}), r"messages: .*Message\.user"),  # type: ignore[arg-type]
            (lambda: client.append("s", "hello"), "messages: expected a Message"),  # type: ignore[arg-type]
            (lambda: client.append("s", [Message.user("a"), {"role": "user"}]), r"messages\[1\]"),  # type: ignore[list-item]
            (lambda: client.append("s", Message("user", 5)), r"messages\[0\]\.content"),  # type: ignore[arg-type]
            (
                lambda: client.append("s", Message.assistant(tool_calls=[{"id": "c"}])),  # type: ignore[list-item]
                r"messages\[0\]\.tool_calls\[0\]: expected a ToolCall",
            ),
            (lambda: client.load(5), "session_id: expected str, got int"),  # type: ignore[arg-type]
            (lambda: client.append(b"s", Message.user("a")), "session_id"),  # type: ignore[arg-type]
            (lambda: client.append("s", Message.user("a"), expected_last_position="1"), "expected_last_position"),  # type: ignore[arg-type]
            (lambda: client.record_usage("s", input_tokens="5"), "input_tokens: expected int, got str"),  # type: ignore[arg-type]
            (lambda: client.record_usage("s", output_tokens=True), "output_tokens"),
            (lambda: client.record_event("s", "error", {"x": {1, 2}}), "payload"),
            (lambda: client.record_event("s", "error", "text"), "payload: expected dict"),  # type: ignore[arg-type]
            (lambda: client.list_sessions(limit="10"), "limit"),  # type: ignore[arg-type]
            (lambda: client.clear("s", request_id=7), "request_id"),  # type: ignore[arg-type]
            (lambda: client.clear("s", erase=1), "erase"),  # type: ignore[arg-type]
            (lambda: client.edit_tail("s", remove_last="1"), "remove_last"),  # type: ignore[arg-type]
            (lambda: client.edit_tail("s", replacements={"role": "user"}), "replacements: expected a Message"),  # type: ignore[arg-type]
            (lambda: client.import_lines(HEADER), "lines: expected an iterable of str"),
            (lambda: client.import_lines([HEADER, 5]), r"lines\[1\]"),  # type: ignore[list-item]
            (lambda: client.import_lines([HEADER], mode=1), "mode"),  # type: ignore[arg-type]
            (lambda: next(client.watch("s", after_position="0")), "after_position"),  # type: ignore[arg-type]
            (lambda: client.attach(3).__enter__(), "session_id"),  # type: ignore[arg-type]
        ]
        for call, pattern in cases:
            with pytest.raises(TypeError, match=pattern):
                call()
    with pytest.raises(TypeError, match=r"ToolCall\('c1'\)\.arguments: .*set"):
        ToolCall("c1", "bash", {1, 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ToolCall\.id"):
        ToolCall(1, "bash")  # type: ignore[arg-type]


# ---------------------------------------------------------------- every method: closed, daemon gone


def _sync_calls(client: SessionClient) -> dict[str, Callable[[], object]]:
    def attach() -> None:
        with client.attach("s"):
            pass

    return {
        "load": lambda: client.load("s"),
        "append": lambda: client.append("s", Message.user("hi")),
        "record_usage": lambda: client.record_usage("s", input_tokens=1),
        "clear": lambda: client.clear("s"),
        "edit_tail": lambda: client.edit_tail("s", remove_last=1),
        "record_event": lambda: client.record_event("s", "error", {"x": 1}),
        "list_sessions": lambda: client.list_sessions(),
        "usage": lambda: client.usage("s"),
        "delete": lambda: client.delete("s"),
        "end_run": lambda: client.end_run("r"),
        "export": lambda: list(client.export("s")),
        "import_lines": lambda: client.import_lines([HEADER]),
        "attach": attach,
        "watch": lambda: next(client.watch("s")),
        "stats": lambda: client.stats(),
        "list_sessions_page": lambda: client.list_sessions_page(),
        "backup": lambda: client.backup(io.BytesIO()),
        "search": lambda: client.search("hello"),
        "usage_report": lambda: client.usage_report(),
        "watch_all": lambda: next(client.watch_all()),
        "create_session": lambda: client.create_session("s"),
        "fork_session": lambda: client.fork_session("s", "t"),
        "update_session": lambda: client.update_session("s"),
        "scope_states": lambda: client.scope_states(["app:x"]),
        "load_items": lambda: client.load_items("s", "f"),
        "delete_entries": lambda: client.delete_entries("s", client_ids=["a"]),
    }


def _async_calls(client: AsyncSessionClient) -> dict[str, Callable[[], Awaitable[object]]]:
    async def attach() -> None:
        async with client.attach("s"):
            pass

    async def first(it: AsyncIterator[Any]) -> object:
        return await it.__anext__()

    async def export() -> object:
        return [line async for line in client.export("s")]

    async def stream() -> object:
        async with client.append_stream() as s:
            return await s.append("s", Message.user("hi"))

    return {
        "load": lambda: client.load("s"),
        "append": lambda: client.append("s", Message.user("hi")),
        "record_usage": lambda: client.record_usage("s", input_tokens=1),
        "clear": lambda: client.clear("s"),
        "edit_tail": lambda: client.edit_tail("s", remove_last=1),
        "record_event": lambda: client.record_event("s", "error", {"x": 1}),
        "list_sessions": lambda: client.list_sessions(),
        "usage": lambda: client.usage("s"),
        "delete": lambda: client.delete("s"),
        "end_run": lambda: client.end_run("r"),
        "export": export,
        "import_lines": lambda: client.import_lines([HEADER]),
        "attach": attach,
        "watch": lambda: first(client.watch("s")),
        "stats": lambda: client.stats(),
        "append_stream": stream,
        "list_sessions_page": lambda: client.list_sessions_page(),
        "backup": lambda: client.backup(io.BytesIO()),
        "search": lambda: client.search("hello"),
        "usage_report": lambda: client.usage_report(),
        "watch_all": lambda: first(client.watch_all()),
        "create_session": lambda: client.create_session("s"),
        "fork_session": lambda: client.fork_session("s", "t"),
        "update_session": lambda: client.update_session("s"),
        "scope_states": lambda: client.scope_states(["app:x"]),
        "load_items": lambda: client.load_items("s", "f"),
        "delete_entries": lambda: client.delete_entries("s", client_ids=["a"]),
    }


def _public_methods(cls: type) -> set[str]:
    return {name for name, value in inspect.getmembers(cls, callable) if not name.startswith("_") and name != "close"}


def test_the_lists_cover_every_public_method(workspace: Path) -> None:
    with SessionClient(workspace, autostart=False) as client:
        assert set(_sync_calls(client)) == _public_methods(SessionClient)

    async def main() -> None:
        async with AsyncSessionClient(workspace, autostart=False) as aclient:
            assert set(_async_calls(aclient)) == _public_methods(AsyncSessionClient)

    asyncio.run(main())


def _only_documented(call: Callable[[], object], expected: type[SessiondError]) -> None:
    try:
        call()
    except expected:
        return
    except BaseException as exc:  # the point: nothing undocumented escapes
        pytest.fail(f"{type(exc).__module__}.{type(exc).__name__} escaped: {exc}")
    pytest.fail(f"no {expected.__name__}")


@contextlib.contextmanager
def _timed(limit_s: float) -> Iterator[None]:
    started = time.monotonic()
    yield
    assert time.monotonic() - started < limit_s


def test_every_method_after_close_and_with_the_daemon_gone(spawn_daemon: Any, workspace: Path) -> None:
    daemon: DaemonProcess = spawn_daemon()
    client = SessionClient(workspace, autostart=False)
    client.stats()  # connected
    client.close()
    for call in _sync_calls(client).values():
        with _timed(2.0):
            _only_documented(call, ClientClosedError)

    async def closed_async() -> None:
        aclient = AsyncSessionClient(workspace, autostart=False)
        await aclient.stats()
        await aclient.close()
        for call in _async_calls(aclient).values():
            with _timed(2.0):
                await _only_documented_async(call, ClientClosedError)

    asyncio.run(closed_async())

    # The daemon gone: clients made while it ran (connected) and after. One that was served retries
    # within its retry window (the daemon may be restarting), so its window is kept short here. Each
    # call waits out that window on its own, so a client's calls run at the same time (threads).
    def gone(call: Callable[[], object]) -> None:
        with _timed(3.0):
            _only_documented(call, DaemonUnavailableError)

    live = SessionClient(workspace, autostart=False, retry_window_s=0.5)
    live.stats()
    assert daemon.terminate() == 0
    for client_now in (live, SessionClient(workspace, autostart=False)):
        calls = _sync_calls(client_now).values()
        with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
            for done in [pool.submit(gone, call) for call in calls]:
                done.result()
        client_now.close()

    async def gone_one(call: Callable[[], Awaitable[object]]) -> None:
        with _timed(3.0):
            await _only_documented_async(call, DaemonUnavailableError)

    async def gone_async() -> None:
        async with AsyncSessionClient(workspace, autostart=False) as aclient:
            await asyncio.gather(*(gone_one(call) for call in _async_calls(aclient).values()))

    asyncio.run(gone_async())


async def _only_documented_async(call: Callable[[], Awaitable[object]], expected: type[SessiondError]) -> None:
    try:
        await call()
    except expected:
        return
    except BaseException as exc:  # the point: nothing undocumented escapes
        pytest.fail(f"{type(exc).__module__}.{type(exc).__name__} escaped: {exc}")
    pytest.fail(f"no {expected.__name__}")


# ---------------------------------------------------------------- client-only install

CLIENT_ONLY = r"""
import sys
sys.path[:0] = sys.argv[2].split(":")
import importlib.util
assert importlib.util.find_spec("claw_sessiond") is None, "the daemon package must not be importable here"
from claw_sessiond_client import DaemonUnavailableError, SessionClient
try:
    with SessionClient(sys.argv[1]) as client:
        print("pid", client.stats()["pid"])
except DaemonUnavailableError as exc:
    print("error", exc)
"""


def _client_only(workspace: Path, path_env: str) -> str:
    """Run a client in an interpreter that sees the client package and its dependencies, not the daemon's."""
    paths = [str(ROOT / "clients" / "python"), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    proc = subprocess.run(
        [sys.executable, "-S", "-c", CLIENT_ONLY, str(workspace), ":".join(dict.fromkeys(paths))],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": path_env, "HOME": os.environ.get("HOME", "/"), "CLAW_SESSIOND_IDLE_EXIT_S": "30"},
        cwd=str(workspace),
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_client_only_install_without_daemon_says_it_is_not_installed(workspace: Path, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    started = time.monotonic()
    out = _client_only(workspace, str(empty))
    assert time.monotonic() - started < 30
    assert out.startswith("error cannot start claw-sessiond"), out
    assert "the daemon is not installed here" in out and install_hint() in out
    assert f"claw-sessiond serve --workspace {workspace}" in out


def test_client_only_install_starts_the_daemon_from_path(workspace: Path) -> None:
    command = shutil.which("claw-sessiond", path=str(Path(sys.executable).parent))
    if command is None:
        pytest.skip("no claw-sessiond command beside this interpreter")
    out = _client_only(workspace, f"{Path(command).parent}:/usr/bin:/bin")
    assert out.startswith("pid "), out
    pid = int(out.split()[1])
    assert int((workspace / ".claw" / "sessiond.lock").read_text().strip()) == pid
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while B.lock_holder(workspace / ".claw" / "sessiond.lock") is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert B.lock_holder(workspace / ".claw" / "sessiond.lock") is None


def test_close_from_another_thread_ends_a_watch_with_client_closed(module_daemon: DaemonProcess, sid: str) -> None:
    client = SessionClient(module_daemon.workspace, autostart=False)
    client.load(sid)
    closer = threading.Timer(0.5, client.close)
    closer.start()
    try:
        with _timed(5.0), pytest.raises(ClientClosedError):
            for _event in client.watch(sid):
                pass
    finally:
        closer.join(5)


def test_load_from_a_deleted_current_folder_is_an_invalid_request(workspace: Path, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    here = os.getcwd()
    os.chdir(gone)
    try:
        gone.rmdir()
        with SessionClient(workspace, autostart=False) as client, pytest.raises(InvalidRequestError, match="workdir"):
            client.load("s")
    finally:
        os.chdir(here)
