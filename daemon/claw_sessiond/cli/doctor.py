"""``doctor``: check the daemon, the database and the permissions of ``.claw/``.

With the daemon running, doctor asks it (GetStats) and reads the database
read-only beside it (a ``mode=ro`` connection can never write). With the
daemon down it first takes the daemon's own lock (``.claw/sessiond.lock``),
so it can never run beside a daemon as a second writer, and no daemon can
start while it looks. Each check is ok, warn (worth knowing) or fail; any
fail exits 1 (``--json``: ``"ok": false`` and an error with reason
``CHECK_FAILED``).

With a PostgreSQL database configured for the workspace (``CLAW_DATABASE_URL`` or ``database`` in
``.claw/config.toml``, as the daemon reads them) the database checks are of that database
(``database``: it answers, named ``host:port/database as user``, never with the password; ``schema_version``
against this build's; ``durability``: ``fsync``, ``full_page_writes``, ``synchronous_commit``; ``privileges``
the daemon needs on the schema), never of a SQLite file left in ``.claw/``. They only read: nothing is
migrated or written.

With the daemon down, ``.claw/`` must first pass ``serve``'s checks (:mod:`claw_sessiond.claw_dir`);
one it fails is the ``workspace`` check, failed with ``serve``'s message. A ``config.toml`` or
credential file that holds a database password and that others may read fails the ``database``
check with ``serve``'s refusal, and ``permissions`` lists ``config.toml`` with the other files of
``.claw/`` that are not private.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import textwrap
from pathlib import Path
from typing import Any, Final

from claw_sessiond_client import DaemonUnavailableError, SessiondError
from claw_sessiond_client.paths import claw_dir

from ..config import describe_store
from . import terminal
from .connect import open_client, socket_path
from .failure import EXIT_FAILURE, EXIT_OK, error_json
from .offline import configured_database
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


def _check_storage(db: Path, url: str = "") -> list[tuple[str, str, str]]:
    """The storage's own checks of ``db`` (read-only, safe beside a live daemon), or of the PostgreSQL
    database at ``url``: (check, status, detail)s."""
    from ..storage import check_storage  # here: the storage code loads only for the check that reads it

    if url:
        return _check_postgres(url)
    return [(c.name, c.status, c.detail) for c in check_storage(db)]


def _check_postgres(url: str) -> list[tuple[str, str, str]]:
    """The PostgreSQL database's checks (``database``, ``schema_version``, ``durability``, ``privileges``):
    read-only, nothing migrated; no line holds the password."""
    import asyncio

    from ..storage import check_url

    return [(c.name, c.status, c.detail) for c in asyncio.run(check_url(url))]


def _check_permissions(report: _Report, folder: Path) -> None:
    loose = []
    names = ("sessions.db", "sessiond.", "config.toml")  # config.toml may name a password (see serve's refusal)
    for path in [folder, *sorted(p for p in folder.iterdir() if p.name.startswith(names))]:
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
        "that .claw/ and its files are private (no group or other permissions). With a PostgreSQL database "
        "configured (CLAW_DATABASE_URL, database in .claw/config.toml) it checks that database instead: it "
        "answers (host, never the password), its schema version against this build's, the durability settings "
        "(fsync, full_page_writes, synchronous_commit) and the privileges the daemon needs.",
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
    url, problem = configured_database(workspace)
    if problem:  # serve refuses to start with it (a password file others may read, included)
        report.add("database", "fail", problem)
        _check_permissions(report, folder)
        return _finish(args, report)
    report.add("backend", "ok", describe_store(url, folder / "sessions.db"))
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
        report.extend(_check_storage(folder / "sessions.db", url))
    else:
        from ..claw_dir import claimed_workspace
        from ..errors import LockHeldError, StartupError

        try:
            with claimed_workspace(folder, create=False):  # serve's checks of .claw/, then its lock
                report.extend(_check_storage(folder / "sessions.db", url))
        except LockHeldError as exc:
            report.add("lock", "fail", f"{exc} but it does not answer on {sock}")
        except StartupError as exc:  # serve would refuse this .claw/ with the same message
            report.add("workspace", "fail", str(exc))
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
