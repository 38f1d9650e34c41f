"""``status`` and ``stop``: find this user's running daemons and stop them gracefully.

Both read the per-user registry (:mod:`claw_sessiond.lifecycle`); records whose
daemon is gone are deleted as they are found. Neither ever starts a daemon.

``status`` lists every daemon of this user (workspace, pid, uptime, sessions,
socket), or with ``--workspace`` just that workspace's. The session count
comes from each daemon's GetStats, which does not reset its idle clock.

``stop`` sends SIGTERM to the process that holds the workspace lock, after
checking that it is the recorded daemon (same pid, same uid, same process
start time, holder of the lock), through a pidfd so that a pid reused in the
meantime is never signalled; then it waits (``--timeout``, default 15 s) until
the process has exited. A workspace whose daemon has no record (started by an
older version, or the registry was unusable) is found through its lock file.

Exit codes: 0 ok (``status`` with no daemons at all prints "no daemons
running" and exits 0); 1 failure (a daemon did not stop in time, the registry
folder is unsafe); 2 usage error; 3 the named workspace has no daemon running
(``status --workspace W``, ``stop``; like ``systemctl status``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from claw_sessiond_client import SessiondError
from claw_sessiond_client.paths import claw_dir, default_socket_path

from ..config import environ
from ..logs import rfc3339_utc
from . import terminal
from .connect import STATUS_TIMEOUT_S, open_client
from .failure import EXIT_FAILURE, EXIT_NOT_RUNNING, EXIT_OK, EXIT_USAGE, declined, print_error, report_error
from .options import Command, set_epilog
from .output import counted, print_json

if TYPE_CHECKING:
    from .. import lifecycle

# The daemons' registry (:mod:`claw_sessiond.lifecycle`, which loads asyncio) is imported by the functions
# that read it, so that every other command's --help does not load it.

__all__ = ["STATUS", "STOP", "status", "stop"]

STATUS_FORMAT: Final = 1
DEFAULT_STOP_TIMEOUT_S: Final = 15.0
_WIDTH: Final = 80
_EXIT_CODES: Final = (
    "Exit codes: 0 ok, 1 failure (a daemon did not stop in time, unsafe registry folder), 2 usage error, "
    "3 no daemon running for the named workspace."
)


@dataclass(frozen=True)
class _Daemon:
    """A live daemon as ``status`` shows it."""

    record: lifecycle.Record
    sessions: int | None

    def json(self, now: float) -> dict[str, Any]:
        r = self.record
        return {
            "workspace": r.workspace,
            "pid": r.pid,
            "started_at": r.started_at,
            "uptime_s": round(max(0.0, now - r.started_unix), 3),
            "sessions": self.sessions,
            "socket": r.socket,
            "idle_exit_s": r.idle_exit_s,
            "log_file": r.log_file or None,
            "version": r.version,
            "database": r.database or None,
        }


def _registries() -> list[Path]:
    from .. import lifecycle

    return lifecycle.search_dirs(environ())


def _fail(message: str, code: int = EXIT_FAILURE, args: argparse.Namespace | None = None) -> int:
    """Say why on stderr; with ``args`` (and ``--json``) also as the JSON error document on stdout."""
    if args is not None:
        return report_error(args, message, reason="NOT_RUNNING" if code == EXIT_NOT_RUNNING else "FAILED", code=code)
    print_error(message, escape=False)  # the registry's paths as recorded
    return code


def _named_workspace(args: argparse.Namespace) -> Path | None:
    return Path(os.path.abspath(args.workspace)) if args.workspace is not None else None


def _lock_of(workspace: Path) -> Path:
    return claw_dir(workspace) / "sessiond.lock"


def _same_file(a: str, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == str(b)


def _find(registries: list[Path], workspace: Path | None) -> tuple[list[lifecycle.Record], list[str]]:
    """Live daemons (all, or ``workspace``'s) and the problems met (unsafe registry folders).

    A daemon without a record is found by its workspace's lock file.
    """
    from .. import lifecycle

    live: list[lifecycle.Record] = []
    problems = []
    for registry in registries:
        try:
            live += [r for r in lifecycle.live_daemons(registry) if r.pid not in {x.pid for x in live}]
        except lifecycle.RegistryError as exc:
            problems.append(str(exc))
    live.sort(key=lambda r: r.started_unix)
    return _narrow(live, workspace), problems


def _narrow(live: list[lifecycle.Record], workspace: Path | None) -> list[lifecycle.Record]:
    if workspace is None:
        return live
    lock = _lock_of(workspace)
    found = [r for r in live if _same_file(r.lock, lock)]
    if not found:
        unregistered = _unregistered(workspace)
        found = [unregistered] if unregistered is not None else []
    return found


def _unregistered(workspace: Path) -> lifecycle.Record | None:
    """A daemon holding ``workspace``'s lock that is not in the registry (pid, uid and command line checked)."""
    from .. import lifecycle

    lock = _lock_of(workspace)
    if not lifecycle.lock_is_held(lock):
        return None
    pid = lifecycle.holder_pid(lock)
    if pid <= 0:
        return None
    try:
        if os.stat(f"/proc/{pid}").st_uid != os.getuid():
            return None
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    if not any(b"claw_sessiond" in part or b"claw-sessiond" in part for part in cmdline):
        return None
    ticks = lifecycle.process_start_time(pid)
    started = _boot_time() + ticks / os.sysconf("SC_CLK_TCK") if ticks else time.time()
    return lifecycle.Record(
        workspace=str(workspace),
        pid=pid,
        uid=os.getuid(),
        socket=str(default_socket_path(workspace, environ().get("XDG_RUNTIME_DIR"))),
        lock=str(lock),
        started_at=rfc3339_utc(started),
        started_unix=started,
        process_start=ticks,
        idle_exit_s=0.0,
        log_file="",
        version="",
    )


def _boot_time() -> float:
    with contextlib.suppress(OSError, ValueError), open("/proc/stat") as fh:
        for line in fh:
            if line.startswith("btime "):
                return float(line.split()[1])
    return 0.0


def _sessions(record: lifecycle.Record) -> int | None:
    if not record.socket:
        return None
    try:
        with open_client(None, Path(record.socket), timeout_s=STATUS_TIMEOUT_S) as client:
            return int(client.stats()["sessions"])
    except (SessiondError, KeyError, ValueError, TypeError):
        return None


# ---------------------------------------------------------------- status


def _add_status(parser: argparse.ArgumentParser) -> None:
    # --workspace (added by cli for every command) narrows status to one workspace only when given.
    parser.set_defaults(workspace=None, find_workspace=False)  # no --workspace: every daemon
    set_epilog(
        parser,
        "Lists every claw-sessiond of this user, found in the per-user registry "
        "($XDG_RUNTIME_DIR/claw-sessiond/daemons/, or ~/.local/state/claw-sessiond/daemons/); records of "
        "daemons that are gone are deleted. Looking does not keep an idle daemon alive.",
        _EXIT_CODES,
    )


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def _fit(text: str, width: int) -> str:
    """Shorten a path from the left: ``…/deep/folder``."""
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


def _clip_end(text: str, width: int) -> str:
    """Shorten from the right: ``pg host:54…`` (the kind of store stays in view)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _short_socket(record: lifecycle.Record) -> str:
    inside = os.path.join(record.workspace, "")
    return record.socket[len(inside) :] if record.socket.startswith(inside) else record.socket or "?"


def _short_workspace(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("", "/") and (path + "/").startswith(home + "/") else path


def _short_store(record: lifecycle.Record) -> str:
    """``sqlite``, ``pg host:port/database``, or ``?`` (a daemon of a version that did not say)."""
    if not record.database:
        return "?"
    return "sqlite" if "SQLite" in record.database else "pg " + record.database.removeprefix("PostgreSQL ")


def _render(daemons: list[_Daemon], now: float) -> None:
    rows = [
        [
            str(d.record.pid),
            _duration(now - d.record.started_unix),
            "?" if d.sessions is None else str(d.sessions),
            _short_workspace(d.record.workspace),
            _short_socket(d.record),
            _short_store(d.record),
        ]
        for d in daemons
    ]
    head = ["PID", "UPTIME", "SESSIONS", "WORKSPACE", "SOCKET", "STORE"]
    fixed = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(3)]
    room = _WIDTH - 1 - sum(fixed) - 2 * 5  # one column spare; five gaps of two spaces
    store_w = min(max(len(head[5]), *(len(r[5]) for r in rows)), max(len(head[5]), room // 4))
    room -= store_w
    sock_w = min(max(len(head[4]), *(len(r[4]) for r in rows)), max(len(head[4]), room // 2))
    ws_w = min(max(len(head[3]), *(len(r[3]) for r in rows)), room - sock_w)
    for row in [head, *rows]:
        cells = [row[0].rjust(fixed[0]), row[1].rjust(fixed[1]), row[2].rjust(fixed[2])]
        cells += [_fit(row[3], ws_w).ljust(ws_w), _fit(row[4], sock_w).ljust(sock_w), _clip_end(row[5], store_w)]
        print("  ".join(cells).rstrip())


def status(args: argparse.Namespace) -> int:
    """List running daemons."""
    workspace = _named_workspace(args)
    registries = _registries()
    records, problems = _find(registries, workspace)
    for problem in problems:
        _fail(problem)
    now = time.time()
    daemons = [_Daemon(r, _sessions(r)) for r in records]
    if args.json:
        doc: dict[str, Any] = {
            "format": STATUS_FORMAT,
            "registry": str(registries[0]),
            "searched": [str(r) for r in registries],
            "daemons": [d.json(now) for d in daemons],
        }
        if workspace is not None:
            doc["workspace"] = str(workspace)
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    elif daemons:
        _render(daemons, now)
    elif workspace is not None:
        print(f"no claw-sessiond running for {workspace}")
    else:
        print("no daemons running")
    if problems:
        return EXIT_FAILURE
    if workspace is not None and not daemons:
        return EXIT_NOT_RUNNING
    return EXIT_OK


# ---------------------------------------------------------------- stop


def _add_stop(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--all", action="store_true", help="stop every daemon of this user (ignores --workspace)")
    parser.add_argument(
        "--yes", "-y", action="store_true", help="with --all: do not ask before stopping other workspaces' daemons"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_STOP_TIMEOUT_S,
        metavar="S",
        help=f"seconds to wait for each daemon to exit (default {DEFAULT_STOP_TIMEOUT_S:g})",
    )
    set_epilog(
        parser,
        "Sends SIGTERM to the daemon that holds the workspace lock (checked: recorded pid, this uid, same "
        "process start time) and waits until it has exited: in-flight calls finish, the WAL is checkpointed, "
        "the socket is removed and the lock released. Without --all, stops the daemon of --workspace "
        "(default: the current folder). --all asks first when it would stop daemons of other workspaces than "
        "this one (on a terminal; without one it stops nothing and exits 2 unless --yes).",
        _EXIT_CODES,
    )


@contextlib.contextmanager
def _pidfd(pid: int) -> Iterator[int | None]:
    try:
        fd: int | None = os.pidfd_open(pid)
    except ProcessLookupError:
        raise
    except (AttributeError, OSError):
        fd = None  # no pidfd support: fall back to kill() and polling
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _still_the_daemon(record: lifecycle.Record) -> bool:
    from .. import lifecycle

    if record.process_start and lifecycle.process_start_time(record.pid) != record.process_start:
        return False
    lock = Path(record.lock)
    return lifecycle.lock_is_held(lock) and lifecycle.holder_pid(lock) == record.pid


def _exited(pid: int, fd: int | None, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if fd is not None:
            if select.select([fd], [], [], max(0.0, min(left, 0.5)))[0]:
                return True
        else:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            time.sleep(max(0.0, min(left, 0.05)))
        if time.monotonic() >= deadline:
            return False


def _stop_one(record: lifecycle.Record, timeout_s: float) -> tuple[bool, str]:
    """SIGTERM the daemon and wait; (stopped, message)."""
    started = time.monotonic()
    try:
        with _pidfd(record.pid) as fd:
            # Checked after the pidfd is open: the pidfd keeps naming this process even if the pid is reused.
            if not _still_the_daemon(record):
                return True, f"claw-sessiond pid {record.pid} for {record.workspace} had already stopped"
            if fd is not None:
                signal.pidfd_send_signal(fd, signal.SIGTERM)
            else:
                os.kill(record.pid, signal.SIGTERM)
            if not _exited(record.pid, fd, timeout_s):
                return False, (
                    f"claw-sessiond pid {record.pid} for {record.workspace} did not exit within {timeout_s:g}s "
                    f"(still finishing calls?); run stop again, or kill -9 {record.pid} as a last resort"
                )
    except ProcessLookupError:
        return True, f"claw-sessiond pid {record.pid} for {record.workspace} had already stopped"
    took = time.monotonic() - started
    return True, f"stopped claw-sessiond pid {record.pid} for {record.workspace} ({took:.1f}s)"


def _confirm_others(args: argparse.Namespace, records: list[lifecycle.Record]) -> int | None:
    """``stop --all``: ask before stopping daemons of other workspaces than the current one; None to go on,
    else the exit code (declined: 0, nothing stopped; no terminal to ask on: 2)."""
    here = os.path.abspath(args.workspace) if args.workspace else None
    others = sorted({r.workspace for r in records if os.path.abspath(r.workspace) != here})
    if not others:
        return None
    question = (
        f"stop {counted(len(records), 'daemon')}, of {counted(len(others), 'other workspace')} ({', '.join(others)})?"
    )
    answer = terminal.confirm(question)
    if answer is None:
        return report_error(
            args,
            f"not stopping the daemons of {counted(len(others), 'other workspace')} without confirmation: "
            "no terminal to ask on",
            hint="claw-sessiond stop --all --yes",
            reason="CONFIRMATION_REQUIRED",
            code=EXIT_USAGE,
        )
    if not answer:
        return declined(args, "nothing stopped", {"stopped": [], "failed": []})
    return None


def stop(args: argparse.Namespace) -> int:
    """Stop daemons gracefully."""
    as_json = bool(getattr(args, "json", False))
    if args.timeout <= 0:
        return _fail(f"--timeout must be positive (got {args.timeout})", 2, args)
    workspace = None if args.all else Path(os.path.abspath(args.workspace))
    records, problems = _find(_registries(), workspace)
    for problem in problems:
        _fail(problem)
    if not records and problems:
        return _fail("; ".join(problems), EXIT_FAILURE, args) if as_json else EXIT_FAILURE
    if not records:
        if workspace is None:
            if as_json:
                print_json({"stopped": [], "failed": []})
            else:
                print("no daemons running")
            return EXIT_OK
        return _fail(f"no claw-sessiond is running for {workspace}", EXIT_NOT_RUNNING, args)
    if workspace is None and not args.yes:
        asked = _confirm_others(args, records)
        if asked is not None:
            return asked
    code = EXIT_FAILURE if problems else EXIT_OK
    stopped: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for record in records:
        ok, message = _stop_one(record, args.timeout)
        entry = {"workspace": record.workspace, "pid": record.pid, "message": message}
        if ok:
            stopped.append(entry)
            if not as_json:
                print(message)
        else:
            failed.append(entry)
            code = _fail(message)
    if as_json:
        print_json({"stopped": stopped, "failed": failed})
    return code


STATUS: Final = Command(
    "status",
    "list this user's running daemons (workspace, pid, uptime, sessions, socket)",
    _add_status,
    status,
)

STOP: Final = Command(
    "stop",
    "stop a workspace's daemon (or --all) gracefully and wait until it has exited",
    _add_stop,
    stop,
)
