"""``doctor``: check the daemon, the database and the permissions of ``.claw/``.

With the daemon running, doctor asks it (GetStats) and reads the database
read-only beside it (a ``mode=ro`` connection can never write). With the
daemon down it first takes the daemon's own lock (``.claw/sessiond.lock``),
so it can never run beside a daemon as a second writer, and no daemon can
start while it looks. Each check is ok, warn (worth knowing) or fail; any
fail exits 1 (``--json``: ``"ok": false`` and an error with reason
``CHECK_FAILED``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import stat
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from claw_sessiond_client import DaemonUnavailableError, SessiondError
from claw_sessiond_client.paths import claw_dir

from .. import schema
from ..errors import CorruptDatabaseError
from . import terminal
from .connect import open_client, socket_path
from .failure import EXIT_FAILURE, EXIT_OK, error_json
from .options import Command, set_epilog
from .output import print_json
from .termsafe import visible

__all__ = ["DOCTOR", "doctor"]

_EXIT_CODES: Final = "Exit codes: 0 ok, 1 failure (daemon unreachable, not found, check failed), 2 usage error."


class _Report:
    """Checks and their outcomes: ok, warn (worth knowing) or fail (exit 1)."""

    def __init__(self) -> None:
        self.checks: list[dict[str, str]] = []

    def add(self, name: str, status: str, detail: str) -> None:
        self.checks.append({"check": name, "status": status, "detail": detail})

    def extend(self, checks: list[tuple[str, str, str]]) -> None:
        for name, status, detail in checks:
            self.add(name, status, detail)


@contextlib.contextmanager
def _held_lock(path: Path) -> Iterator[int]:
    from ..server import acquire_lock

    fd = acquire_lock(path)
    try:
        yield fd
    finally:
        os.close(fd)


# ---------------------------------------------------------------- the storage check (raw sqlite3)
#
# The one place doctor reads the database itself. It is to be replaced by one call to storage's own
# check (storage.check_storage), which will answer the same three questions for any backend.

_SQLITE_HEADER: Final = b"SQLite format 3\x00"


def _check_storage(db: Path) -> list[tuple[str, str, str]]:
    """Header, quick_check and schema version of ``db``, on a read-only connection: (check, status, detail)s."""
    checks: list[tuple[str, str, str]] = []
    if not db.exists():
        return [("database", "warn", f"{db} does not exist yet (created at the daemon's first start)")]
    with open(db, "rb") as fh:
        header = fh.read(16)
    if db.stat().st_size and header != _SQLITE_HEADER:
        return [("database", "fail", f"{db}: not an SQLite database (bad header)")]
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        return [("database", "fail", f"{db}: cannot open read-only: {exc}")]
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
        if rows == ["ok"]:
            checks.append(("quick_check", "ok", "ok"))
        else:
            checks.append(("quick_check", "fail", "; ".join(rows[:5])))
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        try:
            pending = schema.pending(conn)
        except CorruptDatabaseError as exc:
            checks.append(("schema_version", "fail", f"{version}: {exc.message}"))
        else:
            if pending:
                names = ", ".join(m.name for m in pending)
                checks.append(("schema_version", "warn", f"{version}; the daemon will migrate at start: {names}"))
            else:
                checks.append(("schema_version", "ok", str(version)))
    except sqlite3.Error as exc:
        checks.append(("quick_check", "fail", f"{getattr(exc, 'sqlite_errorname', '') or 'error'}: {exc}"))
    finally:
        conn.close()
    return checks


# ---------------------------------------------------------------- end of the storage check


def _check_permissions(report: _Report, folder: Path) -> None:
    loose = []
    for path in [folder, *sorted(p for p in folder.iterdir() if p.name.startswith(("sessions.db", "sessiond.")))]:
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(path.lstat().st_mode)
            if mode & 0o077:
                loose.append(f"{path.name} {mode:04o}")
    if loose:
        report.add("permissions", "fail", "readable by other users: " + ", ".join(loose) + " (chmod go= them)")
    else:
        report.add("permissions", "ok", f"{folder} and its files are private to uid {os.getuid()}")


def _add_doctor(parser: argparse.ArgumentParser) -> None:
    set_epilog(
        parser,
        "With the daemon running, doctor asks it (stats) and reads the database read-only. With the daemon "
        "down it first takes the daemon's lock (.claw/sessiond.lock), so no daemon can start while it looks, and "
        "opens the database read-only. It checks: daemon reachable, schema version, PRAGMA quick_check, and "
        "that .claw/ and its files are private (no group or other permissions).",
        _EXIT_CODES,
    )


def doctor(args: argparse.Namespace) -> int:
    """Check the daemon, the database and permissions."""
    workspace = Path(os.path.abspath(args.workspace))
    folder = claw_dir(workspace)
    report = _Report()
    sock = socket_path(args)
    # SQLite may create -wal/-shm beside the database even for a read-only connection: keep them private.
    os.umask(0o077)
    if not folder.is_dir():
        report.add("workspace", "fail", f"{folder} does not exist: no daemon has run for {workspace}")
        return _finish(args, report)
    daemon_up = False
    try:
        with open_client(args.workspace, sock) as client:
            figures = client.stats().values
        daemon_up = True
        report.add("daemon", "ok", f"pid {figures['pid']} answers on {sock} (version {figures['version']})")
        report.add("daemon_schema_version", "ok", str(figures["schema_version"]))
    except SessiondError as exc:
        detail = "not running" if isinstance(exc, DaemonUnavailableError) else str(exc)
        report.add("daemon", "warn", f"no daemon answers on {sock} ({detail}); checked offline under its lock")
    if daemon_up:
        # Reading beside a live daemon is safe: a mode=ro connection can never write.
        report.extend(_check_storage(folder / "sessions.db"))
    else:
        from ..server import StartupError

        try:
            with _held_lock(folder / "sessiond.lock"):
                report.extend(_check_storage(folder / "sessions.db"))
        except StartupError as exc:
            report.add("lock", "fail", f"{exc} but it does not answer on {sock}")
    _check_permissions(report, folder)
    return _finish(args, report)


def _finish(args: argparse.Namespace, report: _Report) -> int:
    failed = [c["check"] for c in report.checks if c["status"] == "fail"]
    if args.json:
        document: dict[str, Any] = {"ok": not failed, "checks": report.checks}
        if failed:
            message = f"check failed: {', '.join(failed)}"
            document["error"] = error_json(message, reason="CHECK_FAILED", code=EXIT_FAILURE)
        print_json(document)
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        room = terminal.width()
        for c in report.checks:
            text = visible(f"{marks[c['status']]}  {c['check']}: {c['detail']}")
            print("\n".join(textwrap.wrap(text, room, subsequent_indent=" " * 6, break_on_hyphens=False)))
    return EXIT_FAILURE if failed else EXIT_OK


DOCTOR: Final = Command(
    "doctor",
    "check the daemon, the database (quick_check, schema) and permissions",
    _add_doctor,
    doctor,
)
