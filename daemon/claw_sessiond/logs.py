"""Daemon logging: one line per event, with its level, ready for journald.

A line is ``LEVEL logger event=name key=value ...`` on stderr. When stderr is
the journal (systemd sets ``$JOURNAL_STREAM`` to its ``device:inode``), each
line starts with an sd-daemon priority prefix (``<6>`` for info, ``<4>`` for
warning, ...; sd-daemon(3)), so ``journalctl -p warning`` filters by level.
Newlines inside a record (a traceback) are written as ``\\n``: one event is one
line, one journal entry.

What is logged is ids, counts, codes and sizes: never message content, tool
arguments or results, at any level (tests/test_logs.py plants a canary).
``--log-level`` applies to the daemon's own loggers; libraries log at
WARNING and above (aiosqlite's debug log would print SQL parameters).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import Final, TextIO

__all__ = ["LineFormatter", "configure", "stderr_is_journal"]

#: logging level → syslog priority (sd-daemon prefixes).
_PRIORITY: Final = {
    logging.DEBUG: 7,
    logging.INFO: 6,
    logging.WARNING: 4,
    logging.ERROR: 3,
    logging.CRITICAL: 2,
}
FORMAT: Final = "%(levelname)s %(name)s %(message)s"


class LineFormatter(logging.Formatter):
    """Formats a record as exactly one line, optionally with a ``<priority>`` prefix."""

    def __init__(self, *, priority_prefix: bool = False) -> None:
        super().__init__(FORMAT)
        self.priority_prefix = priority_prefix

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record).replace("\r", "\\r").replace("\n", "\\n")
        if self.priority_prefix:
            return f"<{_PRIORITY.get(record.levelno, 6)}>{text}"
        return text


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


def configure(level: str, env: Mapping[str, str]) -> None:
    """Send the daemon's logs to stderr, one line per event, at ``level`` (debug ... error)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LineFormatter(priority_prefix=stderr_is_journal(env)))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    # Libraries stay at WARNING: aiosqlite's debug log prints every statement with its parameters.
    root.setLevel(max(logging.WARNING, getattr(logging, level.upper())))
    logging.getLogger("claw_sessiond").setLevel(getattr(logging, level.upper()))
