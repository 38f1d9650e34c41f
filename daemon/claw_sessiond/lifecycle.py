"""Daemon lifecycle: the per-user registry of running daemons, liveness checks, and idle exit.

**Registry.** Each daemon, once READY, writes one small JSON record (format 1:
workspace, pid, process start time, socket, lock file, start time, idle-exit
setting) into a per-user folder, so that ``status`` and ``stop`` find every
daemon of this user without root and without scanning the disk:

- ``$XDG_RUNTIME_DIR/claw-sessiond/daemons/`` when ``$XDG_RUNTIME_DIR`` is set
  and is a folder owned by this uid;
- else ``${XDG_STATE_HOME:-~/.local/state}/claw-sessiond/daemons/``.

``status`` and ``stop`` read one more folder: the state folder when
``$XDG_RUNTIME_DIR`` is set, ``/run/user/<uid>/claw-sessiond/daemons/`` when it
is not; so a daemon started from a login session (or by systemd) is found
from a shell without ``$XDG_RUNTIME_DIR``, and the other way round. Folders
are created 0700. A registry folder (or its ``claw-sessiond`` parent)
that is a symbolic link, is owned by another uid, or is writable by group or
others is refused: another user could plant records there. Records are written
atomically (a fresh 0600 temporary file, then ``rename``, which never follows a
link at the target name) and read with ``O_NOFOLLOW``. The daemon removes its
record on a graceful stop; a killed daemon leaves one behind, which
:func:`live_daemons` deletes once it proves stale.

**Liveness.** A record is live only if the workspace lock is held (a
non-blocking ``flock`` attempt fails), the lock's holder is the record's pid
(``/proc/locks``, else the pid the holder wrote into the lock file), that pid
belongs to this uid, and its start time matches the record (so a reused pid is
never taken for the daemon). The shared-lock attempt is only made when the
recorded pid is alive, and is released at once.

**Idle exit** (``serve --idle-exit-s N``, N > 0). The daemon is idle when no
SessionService call or stream (Load, Watch, Attach, AppendStream, Export, ...)
is in progress, no run is live, and none has started or ended for N seconds;
it then stops exactly as on SIGTERM (exit 0, socket removed, lock released).
GetStats (``status``, ``stats``, ``doctor``), health checks and reflection do
not count as use: looking at a daemon does not keep it alive. The decision and
the switch to draining happen in one step on the event loop, so a call that
arrives afterwards gets UNAVAILABLE and the client starts a new daemon. The
handler wrapper that counts calls is ``rpc/idle.py``.

This module never opens the database and never signals a process (``stop`` is
in :mod:`claw_sessiond.cli.lifecycle`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final, Protocol

from . import __version__
from .logs import rfc3339_utc

__all__ = [
    "RECORD_FORMAT",
    "IdleClock",
    "Record",
    "RegistryError",
    "default_registry_dir",
    "holder_pid",
    "live_daemons",
    "lock_is_held",
    "open_registry",
    "process_start_time",
    "read_records",
    "record_path",
    "remove_record",
    "run",
    "search_dirs",
    "write_record",
]

_log = logging.getLogger("claw_sessiond.lifecycle")

RECORD_FORMAT: Final = 1
_MAX_RECORD_BYTES: Final = 64 * 1024


class RegistryError(Exception):
    """The registry folder is unsafe or unusable; the message names it."""


# ---------------------------------------------------------------- where


def _owned_private_dir(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


def default_registry_dir(env: Mapping[str, str]) -> Path:
    """The registry folder for this user (see the module docstring); nothing is created."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and _owned_private_dir(Path(runtime)):
        return Path(runtime) / "claw-sessiond" / "daemons"
    state = env.get("XDG_STATE_HOME", "")
    if not (state and os.path.isabs(state)):
        home = env.get("HOME") or os.path.expanduser("~")
        state = os.path.join(home, ".local", "state")
    return Path(state) / "claw-sessiond" / "daemons"


def search_dirs(env: Mapping[str, str]) -> list[Path]:
    """Every folder where this user's daemons may have registered, the default one first."""
    found = [default_registry_dir(env)]
    runtime = f"/run/user/{os.getuid()}" if not env.get("XDG_RUNTIME_DIR") else ""
    other = default_registry_dir({**env, "XDG_RUNTIME_DIR": runtime})
    return found if other in found else [*found, other]


def _check_dir(path: Path) -> None:
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise RegistryError(f"{path}: not a folder (a symbolic link or file is refused)")
    if info.st_uid != os.getuid():
        raise RegistryError(f"{path}: owned by uid {info.st_uid}, not {os.getuid()}; refusing to use it")
    if stat.S_IMODE(info.st_mode) & 0o022:
        raise RegistryError(
            f"{path}: writable by group or others (mode {stat.S_IMODE(info.st_mode):04o}); chmod 700 it"
        )


def open_registry(path: Path, *, create: bool) -> bool:
    """Check (and with ``create``, make) the registry folder; False if it does not exist.

    Raises:
        RegistryError: it, or its ``claw-sessiond`` parent, is unsafe (see the module docstring).
    """
    for folder in (path.parent, path):
        try:
            _check_dir(folder)
        except FileNotFoundError:
            if not create:
                return False
            try:
                folder.mkdir(mode=0o700, parents=True)
            except FileExistsError:
                pass
            except OSError as exc:
                raise RegistryError(f"{folder}: cannot create: {exc.strerror}") from exc
            _check_dir(folder)
    return True


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Record:
    """What a running daemon says about itself."""

    workspace: str
    pid: int
    uid: int
    socket: str
    lock: str
    started_at: str
    started_unix: float
    process_start: int
    idle_exit_s: float
    log_file: str
    version: str
    format: int = RECORD_FORMAT
    database: str = ""
    """The store it serves (``PostgreSQL host:port/database`` or the SQLite file); "" from an older daemon."""


def record_path(registry: Path, lock_path: Path) -> Path:
    """One record per workspace, named after its lock file."""
    digest = hashlib.sha256(os.fsencode(os.path.abspath(lock_path))).hexdigest()[:24]
    return registry / f"{digest}.json"


def process_start_time(pid: int) -> int:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat`` field 22); 0 if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return 0
    # The command name (field 2) is in parentheses and may hold spaces; fields resume after the last ")".
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return 0


def write_record(registry: Path, record: Record) -> Path:
    """Write ``record`` atomically (0600 temporary file, then rename); return its path.

    Raises:
        RegistryError: the folder is unsafe.
        OSError: the write failed.
    """
    open_registry(registry, create=True)
    target = record_path(registry, Path(record.lock))
    tmp = registry / f".{target.stem}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, json.dumps(asdict(record), sort_keys=True).encode() + b"\n")
    finally:
        os.close(fd)
    os.replace(tmp, target)
    return target


def remove_record(path: Path, pid: int) -> None:
    """Delete the record at ``path`` if it is still ``pid``'s."""
    record = _read_record(path)
    if record is not None and record.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _read_record(path: Path) -> Record | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > _MAX_RECORD_BYTES:
            return None
        data = json.loads(os.read(fd, _MAX_RECORD_BYTES))
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            return None
        # A key added later (with a default) may be missing from an older daemon's record.
        return Record(**{k: data[k] for k in Record.__dataclass_fields__ if k in data})
    except (OSError, ValueError, KeyError, TypeError):
        return None
    finally:
        os.close(fd)


def read_records(registry: Path) -> list[tuple[Path, Record | None]]:
    """Every ``*.json`` file in the registry with its record (None: unreadable or foreign).

    Raises:
        RegistryError: the folder is unsafe.
    """
    if not open_registry(registry, create=False):
        return []
    return [(p, _read_record(p)) for p in sorted(registry.glob("*.json"))]


# ---------------------------------------------------------------- liveness


def lock_is_held(lock_path: Path) -> bool:
    """True if some process holds the flock on ``lock_path`` (a shared attempt fails)."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def holder_pid(lock_path: Path) -> int:
    """The pid holding the exclusive flock on ``lock_path`` (0 if unknown).

    ``/proc/locks`` names the holder exactly; where it cannot be read (or the
    file system reports another device there), the pid the holder wrote into
    the file is used.
    """
    try:
        info = os.stat(lock_path, follow_symlinks=False)
    except OSError:
        return 0
    wanted = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        with open("/proc/locks") as fh:
            for line in fh:
                parts = line.split()
                # "1: FLOCK  ADVISORY  WRITE 30604 fe:00:2147972 0 EOF" (a "->" marks a waiter)
                if len(parts) >= 6 and parts[1] == "FLOCK" and parts[3] == "WRITE" and parts[5] == wanted:
                    return int(parts[4])
    except (OSError, ValueError):
        pass
    try:
        text = lock_path.read_text().strip()
    except OSError:
        return 0
    return int(text) if text.isdigit() else 0


def _process_uid(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_live(record: Record) -> bool:
    """True if ``record``'s daemon is running (see the module docstring)."""
    if record.pid <= 0 or record.uid != os.getuid() or not _pid_alive(record.pid):
        return False
    uid = _process_uid(record.pid)
    if uid is not None and uid != os.getuid():
        return False
    if record.process_start and process_start_time(record.pid) != record.process_start:
        return False
    lock = Path(record.lock)
    return lock_is_held(lock) and holder_pid(lock) == record.pid


def live_daemons(registry: Path, *, clean: bool = True) -> list[Record]:
    """The live daemons in the registry, oldest first; stale records are deleted when ``clean``.

    Raises:
        RegistryError: the folder is unsafe.
    """
    live = []
    for path, record in read_records(registry):
        if record is not None and is_live(record):
            live.append(record)
        elif clean and record is not None:
            remove_record(path, record.pid)  # re-read first: a new daemon may just have written its own
        elif clean and _is_stale_junk(path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    if clean:
        for tmp in registry.glob(".*.tmp"):  # a daemon killed between writing and renaming its record
            if _is_stale_junk(tmp):
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
    return sorted(live, key=lambda r: r.started_unix)


def _is_stale_junk(path: Path) -> bool:
    # An unreadable record of ours that has not changed for a minute (a half-written file from a crash).
    try:
        info = path.lstat()
    except OSError:
        return False
    return info.st_uid == os.getuid() and stat.S_ISREG(info.st_mode) and time.time() - info.st_mtime > 60


# ---------------------------------------------------------------- idle tracking


class IdleClock(Protocol):
    """Tells how long the daemon has been unused (the RPC layer's call counter, ``rpc/idle.py``)."""

    def idle_for(self) -> float:
        """Seconds without use (0 while a call, stream or run is live)."""
        ...


# ---------------------------------------------------------------- the daemon's task


async def run(
    *,
    workspace: Path,
    socket_path: Path,
    lock_path: Path,
    registry: Path | None,
    idle_exit_s: float,
    log_file: Path | None,
    database: str = "",
    tracker: IdleClock | None,
    begin_drain: Callable[[], None],
    stop: Callable[[], None],
) -> None:
    """Register the running daemon, and stop it when idle (``idle_exit_s`` > 0); remove the record when cancelled.

    ``begin_drain`` must make new calls fail with UNAVAILABLE; it is called in
    the same step as the idle decision, then ``stop`` starts the usual graceful stop.
    """
    path: Path | None = None
    if registry is not None:
        now = time.time()
        record = Record(
            workspace=str(workspace),
            pid=os.getpid(),
            uid=os.getuid(),
            socket=str(socket_path),
            lock=str(lock_path),
            started_at=rfc3339_utc(now),
            started_unix=now,
            process_start=process_start_time(os.getpid()),
            idle_exit_s=idle_exit_s,
            log_file=str(log_file or ""),
            version=__version__,
            database=database,
        )
        try:
            path = write_record(registry, record)
        except (RegistryError, OSError) as exc:
            # status/stop will not list this daemon; it still serves (the lock keeps it single).
            _log.warning("event=registry_unusable error=%s", exc)
    try:
        if idle_exit_s > 0 and tracker is not None:
            _log.info("event=idle_exit_on idle_exit_s=%s", idle_exit_s)
            while True:
                idle = tracker.idle_for()
                if idle >= idle_exit_s:
                    begin_drain()
                    _log.info("event=idle_exit idle_s=%.1f", idle)
                    stop()
                    break
                await asyncio.sleep(min(1.0, max(0.05, idle_exit_s - idle)))
        await asyncio.Event().wait()  # until cancelled at stop
    finally:
        if path is not None:
            remove_record(path, os.getpid())
