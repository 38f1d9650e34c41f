"""Daemon logging: one line per event, with its time and level, ready for journald.

A line is ``2026-12-03T07:40:01.123Z LEVEL logger event=name key=value ...``
(RFC 3339, UTC, milliseconds) on stderr, or in the file named by
``serve --log-file``. When stderr is the journal (systemd sets
``$JOURNAL_STREAM`` to its ``device:inode``), the time is left out (journald
stamps every entry) and each line starts with an sd-daemon priority prefix
(``<6>`` for info, ``<4>`` for warning, ...; sd-daemon(3)), so
``journalctl -p warning`` filters by level. Newlines inside a record (a
traceback) are written as ``\\n``: one event is one line, one journal entry.

A log file (auto-started daemons get ``.claw/sessiond.log``) is opened by the
daemon itself: append-only, mode 0600, never through a symbolic link. It is
rotated when the next line would take it past ``--log-max-bytes`` (default
10 MiB; 0: never): ``sessiond.log`` becomes ``sessiond.log.1``, ``.1``
becomes ``.2`` and so on, keeping ``--log-backups`` old files (default 3; 0:
the file is simply started afresh). A file that another process already
rotated (it no longer has the name) is reopened, not rotated again.

What is logged is ids, counts, codes and sizes: never message content, tool
arguments or results, at any level (tests/e2e/test_logs.py plants a canary).
``--log-level`` applies to the daemon's own loggers; libraries log at
WARNING and above (aiosqlite's debug log would print SQL parameters).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final, TextIO

__all__ = [
    "DEFAULT_LOG_BACKUPS",
    "DEFAULT_LOG_MAX_BYTES",
    "LineFormatter",
    "RotatingLogFile",
    "configure",
    "log_startup_failure",
    "rfc3339_utc",
    "stderr_is_journal",
]

DEFAULT_LOG_MAX_BYTES: Final = 10 * 1024 * 1024
DEFAULT_LOG_BACKUPS: Final = 3

#: logging level → syslog priority (sd-daemon prefixes).
_PRIORITY: Final = {
    logging.DEBUG: 7,
    logging.INFO: 6,
    logging.WARNING: 4,
    logging.ERROR: 3,
    logging.CRITICAL: 2,
}
FORMAT: Final = "%(levelname)s %(name)s %(message)s"


def rfc3339_utc(seconds: float) -> str:
    """``2026-12-03T07:40:01.123Z`` for a Unix time (UTC, milliseconds)."""
    millis = int(seconds * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000)) + f".{millis % 1000:03d}Z"


class LineFormatter(logging.Formatter):
    """Formats a record as exactly one line: with a ``<priority>`` prefix for the journal, else with the time."""

    def __init__(self, *, priority_prefix: bool = False, timestamp: bool | None = None) -> None:
        super().__init__(FORMAT)
        self.priority_prefix = priority_prefix
        self.timestamp = not priority_prefix if timestamp is None else timestamp

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record).replace("\r", "\\r").replace("\n", "\\n")
        if self.timestamp:
            text = f"{rfc3339_utc(record.created)} {text}"
        if self.priority_prefix:
            return f"<{_PRIORITY.get(record.levelno, 6)}>{text}"
        return text


def _open_log(path: Path) -> int:
    # O_NOFOLLOW: a symbolic link planted at the log's name must not redirect the daemon's writes.
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except OSError:
        os.close(fd)
        raise
    return fd


class RotatingLogFile(logging.Handler):
    """Appends formatted lines to ``path``, rotating it at ``max_bytes`` (see the module docstring).

    Raises:
        OSError: the file cannot be opened (missing folder, a symbolic link, no permission).
    """

    def __init__(self, path: Path, max_bytes: int = DEFAULT_LOG_MAX_BYTES, backups: int = DEFAULT_LOG_BACKUPS) -> None:
        super().__init__()
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self._io = threading.Lock()
        self._fd = _open_log(path)
        self._size = os.fstat(self._fd).st_size

    def emit(self, record: logging.LogRecord) -> None:
        try:
            data = (self.format(record) + "\n").encode("utf-8", "backslashreplace")
            with self._io:
                if self.max_bytes and self._size and self._size + len(data) > self.max_bytes:
                    self._rotate()
                os.write(self._fd, data)
                self._size += len(data)
        except Exception:
            self.handleError(record)

    def _rotate(self) -> None:
        try:
            ours = os.fstat(self._fd)
            current = os.lstat(self.path)
            still_named = (ours.st_dev, ours.st_ino) == (current.st_dev, current.st_ino)
        except FileNotFoundError:
            still_named = False
        if still_named:
            if self.backups:
                for n in range(self.backups - 1, 0, -1):
                    older = self.path.with_name(f"{self.path.name}.{n}")
                    if os.path.lexists(older):
                        os.replace(older, self.path.with_name(f"{self.path.name}.{n + 1}"))
                os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
            else:
                os.unlink(self.path)
        os.close(self._fd)
        self._fd = _open_log(self.path)
        self._size = os.fstat(self._fd).st_size

    def close(self) -> None:
        with self._io:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
        super().close()


def stderr_is_journal(env: Mapping[str, str], stream: TextIO | None = None) -> bool:
    """True if ``stream`` (stderr) is the journal stream systemd named in ``$JOURNAL_STREAM``."""
    value = env.get("JOURNAL_STREAM", "")
    dev, sep, ino = value.partition(":")
    if not sep or not dev.isdigit() or not ino.isdigit():
        return False
    try:
        st = os.fstat((stream or sys.stderr).fileno())
    except (OSError, ValueError):
        return False
    return st.st_dev == int(dev) and st.st_ino == int(ino)


def configure(
    level: str,
    env: Mapping[str, str],
    log_file: Path | None = None,
    max_bytes: int = DEFAULT_LOG_MAX_BYTES,
    backups: int = DEFAULT_LOG_BACKUPS,
) -> None:
    """Send the daemon's logs to stderr (or ``log_file``), one line per event, at ``level`` (debug ... error).

    Raises:
        OSError: ``log_file`` cannot be opened.
    """
    handler: logging.Handler
    if log_file is not None:
        handler = RotatingLogFile(log_file, max_bytes, backups)
        handler.setFormatter(LineFormatter(timestamp=True))
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(LineFormatter(priority_prefix=stderr_is_journal(env)))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    # Libraries stay at WARNING: aiosqlite's debug log prints every statement with its parameters.
    root.setLevel(max(logging.WARNING, getattr(logging, level.upper())))
    logging.getLogger("claw_sessiond").setLevel(getattr(logging, level.upper()))


def log_startup_failure(text: str) -> None:
    """Put a start-up failure into the log file too (stderr gets it anyway), for ``last log line: ...``."""
    if any(isinstance(h, RotatingLogFile) for h in logging.getLogger().handlers):
        logging.getLogger("claw_sessiond.server").error("event=startup_failed error=%s", text)
