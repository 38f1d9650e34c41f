"""Auto-start: run a daemon for the workspace when none answers, and wait for one to come up.

The only part of the client that starts processes. Both clients call it the
same way (blocking: it spawns, and :class:`AutostartWait` only polls).
"""

from __future__ import annotations

import errno
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

from . import errors as E
from ._peer import trusted_uids
from .install import install_hint
from .paths import claw_dir, folder_problem, user_label

__all__ = [
    "AUTOSTART_IDLE_EXIT_S",
    "AUTOSTART_WAIT_S",
    "AutostartWait",
    "autostart_failure",
    "daemon_command",
    "spawn_daemon",
]


#: How long auto-start waits for a daemon to answer.
AUTOSTART_WAIT_S: Final = 20.0
#: An auto-started daemon stops after this long unused (``serve --idle-exit-s``), unless
#: ``$CLAW_SESSIOND_IDLE_EXIT_S`` says otherwise (the daemon reads it; 0: never).
AUTOSTART_IDLE_EXIT_S: Final = 600
#: Where an auto-started daemon's stdout/stderr go (tracebacks before its log is open); kept small.
_EARLY_OUTPUT: Final = "sessiond.stderr"
_EARLY_OUTPUT_MAX_BYTES: Final = 64 * 1024
#: Daemons this process started (kept so that collecting a client does not warn "still running").
_SPAWNED: list[subprocess.Popen[bytes]] = []


def daemon_command(workspace: Path) -> list[str]:
    """The daemon's command: ``python -m claw_sessiond`` in this interpreter, else ``claw-sessiond`` on PATH.

    A virtualenv holding only the ``claw-sessiond-client`` distribution has
    no ``claw_sessiond`` module; a daemon installed elsewhere (pipx, the
    system) is then found on ``PATH``.

    Raises:
        DaemonUnavailableError: neither exists: the daemon is not installed here.
    """
    try:
        found = importlib.util.find_spec("claw_sessiond") is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return [sys.executable, "-m", "claw_sessiond"]
    exe = shutil.which("claw-sessiond")
    if exe is not None:
        return [exe]
    raise E.DaemonUnavailableError(
        f"cannot start claw-sessiond for {workspace}: the daemon is not installed here (no module claw_sessiond "
        f"in {sys.executable}, no claw-sessiond command on PATH). Install it here: {install_hint()}; "
        f"then start it with: claw-sessiond serve --workspace {workspace} (or let autostart=True start it)",
        reason=E.Reason.DAEMON_UNAVAILABLE,
        metadata={"workspace": str(workspace)},
    )


def spawn_daemon(workspace: Path) -> subprocess.Popen[bytes]:
    """Start a daemon for ``workspace`` in the background (its own session).

    The daemon writes its log to ``.claw/sessiond.log`` itself (timestamped,
    rotated) and stops after :data:`AUTOSTART_IDLE_EXIT_S` unused; its
    stdout/stderr (a crash before the log is open) go to ``.claw/sessiond.stderr``.
    ``.claw/`` is refused if another user owns it or it is writable by others.
    Several clients may do this at once: the workspace lock lets exactly one
    daemon win; the others exit 1 and the clients connect to the winner.

    Raises:
        DaemonUnavailableError: the daemon cannot be started (not installed, no permission).
        UntrustedPeerError: ``.claw/`` belongs to another user or others can write in it.
    """
    folder = claw_dir(workspace)
    problem = folder_problem(folder, trusted_uids(workspace, folder / "sessiond.sock"))
    if problem is not None:
        raise E.UntrustedPeerError(f"refusing to start claw-sessiond: {problem}", reason=E.Reason.UNTRUSTED_PEER)
    argv = [*daemon_command(workspace), "serve", "--workspace", str(workspace)]
    argv += ["--log-file", str(folder / "sessiond.log")]
    if "CLAW_SESSIOND_IDLE_EXIT_S" not in os.environ:
        argv += ["--idle-exit-s", str(AUTOSTART_IDLE_EXIT_S)]
    log = folder / _EARLY_OUTPUT
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
        # O_NOFOLLOW: a link planted there must not make this append to another file.
        log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        if os.fstat(log_fd).st_size > _EARLY_OUTPUT_MAX_BYTES:
            os.ftruncate(log_fd, 0)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise E.DaemonUnavailableError(
                f"cannot start claw-sessiond for {workspace}: {log} is a symbolic link (owner "
                f"{user_label(log.lstat().st_uid)}); refusing to append the daemon's log to where it points"
            ) from exc
        raise E.DaemonUnavailableError(f"cannot start claw-sessiond for {workspace}: {exc}") from exc
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=log_fd,
            start_new_session=True,
            close_fds=True,
            cwd=str(workspace),
        )
        # The daemon outlives the client that started it: keep its Popen alive (no "still running"
        # ResourceWarning when a client is collected) and reap the ones that have exited.
        _SPAWNED[:] = [p for p in _SPAWNED if p.poll() is None]
        _SPAWNED.append(proc)
        return proc
    except OSError as exc:
        raise E.DaemonUnavailableError(f"cannot start claw-sessiond for {workspace}: {exc}") from exc
    finally:
        os.close(log_fd)


class AutostartWait:
    """How long a client that started a daemon keeps waiting for one to answer.

    Until :data:`AUTOSTART_WAIT_S` has passed, unless it is hopeless: the
    daemon this client spawned has exited and no live process is named in
    ``.claw/sessiond.lock`` (the winner of the lock writes its pid there right
    after taking it) for half a second. Then no daemon is coming (corrupt
    database, not installed, ...) and the client says so at once instead of
    waiting the full timeout. A daemon spawned by another client that won the
    lock keeps its pid there, so losing the race is never mistaken for failure.

    The first time it looks hopeless, one more daemon is spawned: the one
    this client had found still running may have been dying (a killed
    multi-threaded process is reaped only once all its threads are gone).
    A spawned daemon that exited 0 came up and stopped again (an idle exit
    before this client got connected, or a stop): it is simply started again,
    a few times at most.
    """

    def __init__(self, workspace: Path, proc: subprocess.Popen[bytes] | None) -> None:
        self.workspace = workspace
        self.proc = proc
        self.deadline = time.monotonic() + AUTOSTART_WAIT_S
        self._gone_since: float | None = None
        self._respawned = False
        self._clean_exits = 0

    def expired(self) -> bool:
        """The full wait is over."""
        return time.monotonic() >= self.deadline

    def hopeless(self) -> bool:
        """No daemon is starting or running for the workspace (checked for 0.5 s)."""
        if self._starting():
            self._gone_since = None
            return False
        if self.proc is not None and self.proc.poll() == 0 and self._clean_exits < 3:
            self._clean_exits += 1
            self._gone_since = None
            self.proc = spawn_daemon(self.workspace)
            return False
        now = time.monotonic()
        if self._gone_since is None:
            self._gone_since = now
        if now - self._gone_since < 0.5:
            return False
        if not self._respawned:
            self._respawned = True
            self._gone_since = None
            self.proc = spawn_daemon(self.workspace)
            return False
        return True

    def _starting(self) -> bool:
        if self.proc is None or self.proc.poll() is None:
            return True
        try:
            text = (claw_dir(self.workspace) / "sessiond.lock").read_text().strip()
        except OSError:
            return False
        if not text.isdigit() or int(text) == self.proc.pid:
            return False
        try:
            os.kill(int(text), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def autostart_failure(workspace: Path, proc: subprocess.Popen[bytes] | None) -> E.DaemonUnavailableError:
    """The error to raise when auto-start did not produce a reachable daemon.

    It quotes the last line of whichever was written last: the daemon's log
    (a start-up failure is logged there) or its early output (a crash before
    the log was open).
    """
    log = claw_dir(workspace) / "sessiond.log"
    tail, newest = "", -1.0
    for path in (log, claw_dir(workspace) / _EARLY_OUTPUT):
        try:
            mtime = path.stat().st_mtime
            lines = path.read_text(errors="replace").strip().splitlines()
        except OSError:
            continue
        if lines and mtime >= newest:
            tail, newest = lines[-1], mtime
    code = proc.poll() if proc is not None else None
    detail = f" (daemon exited with {code})" if code not in (None, 0) else ""
    return E.DaemonUnavailableError(
        f"claw-sessiond for {workspace} did not come up{detail or f' within {AUTOSTART_WAIT_S:.0f}s'}; "
        f"last log line: {tail or '(none)'}; see {log}"
    )
