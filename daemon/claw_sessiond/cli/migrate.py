"""``migrate-legacy``: import a folder of session files written by the Go harness or the Python port.

Each file is converted (:mod:`claw_sessiond.legacy`) and checked, then
compared with what is stored under its session id: absent, it is imported;
present with this file's events, it is skipped (safe to re-run); present with
other content, it is a conflict and nothing is written. ``--dry-run`` does
every check against the daemon and leaves out only the import. Exit codes:
0 ok, 1 any file failed or conflicts, 2 usage error.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from claw_sessiond_client import DaemonUnavailableError, DeadlineError, SessiondError, SessionNotFoundError

from .connect import open_client, socket_path
from .failure import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, fail_client, report_error
from .options import Command
from .output import counted, json_document, say
from .termsafe import json_text, visible

if TYPE_CHECKING:
    from claw_sessiond_client import SessionClient


__all__ = ["MIGRATE_LEGACY"]


def _migrate_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder",
        metavar="FOLDER",
        help="folder of legacy session files (.claw/sessions of the Go harness, .port_sessions of the port)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="run every check the real run does (against the daemon) and report, import nothing",
    )
    parser.epilog = (
        "Each file is converted and checked (the daemon's export parser, tool results answer known calls),\n"
        "then compared with what is stored under its session id: absent, it is imported (--dry-run: reported\n"
        "'converted'); present with this file's events, it is 'skipped' (already imported); present with\n"
        "other content, or claimed by an earlier file of the folder with other content, it is a 'conflict'\n"
        "and nothing is written. --dry-run does the same checks and leaves out only the import.\n"
        '--json writes JSON Lines: one document per file as it is handled, each with "format": 1.\n'
        "Exit codes: 0 ok, 1 any file failed or conflicts, 2 usage error."
    )


def _mtime(path: Path) -> str:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _holds(stored: list[str], converted: list[str]) -> bool:
    """True if a stored session is this conversion: same creation time, and its events start with the file's.

    The stored session may have grown since (a repair at the first Load, an agent that resumed it), so
    the file's events are compared as a prefix; events carry the file's digest in their trace id.
    """
    if not stored:
        return False
    have, want = json.loads(stored[0]), json.loads(converted[0])
    events = [json.loads(line) for line in converted[1:]]
    return (
        have.get("session_id") == want["session_id"]
        and have.get("created_at") == want["created_at"]
        and [json.loads(line) for line in stored[1 : 1 + len(events)]] == events
    )


def _stored_lines(client: SessionClient, session_id: str) -> list[str]:
    try:
        return list(client.export(session_id))
    except SessionNotFoundError:
        return []


class _Migration:
    """One pass over a folder. The dry run and the real run share every step but the final import."""

    def __init__(self, client: SessionClient, *, write: bool) -> None:
        self.client = client
        self.write = write
        self.claimed: dict[str, tuple[str, list[str]]] = {}  # session id → (file, lines) of this run
        self.in_doubt = ""  # a file whose import got no answer (the daemon went away during the call)

    def one(self, path: Path) -> dict[str, Any]:
        from .. import legacy  # here: the converter loads the daemon's event model

        report: dict[str, Any] = {"file": path.name}
        try:
            converted = legacy.convert(path.read_bytes(), fallback_id=path.stem, fallback_time=_mtime(path))
        except (legacy.LegacyError, OSError) as exc:
            return {**report, "status": "failed", "reason": str(exc)}
        sid = converted.session_id
        report.update(session_id=sid, kind=converted.kind, messages=converted.messages)
        earlier = self.claimed.get(sid)
        if earlier is not None:
            other, lines = earlier
            if _holds(lines, converted.lines):
                return {**report, "status": "skipped", "reason": f"same session as {other} (already handled)"}
            return {**report, "status": "conflict", "reason": f"session id {sid!r} is also used by {other}"}
        stored = _stored_lines(self.client, sid)
        if stored:
            self.claimed[sid] = (f"the stored session {sid!r}", stored)
            if _holds(stored, converted.lines):
                return {**report, "status": "skipped", "reason": "already imported (the session exists)"}
            return {
                **report,
                "status": "conflict",
                "reason": f"session id {sid!r} is already stored with different content; nothing imported "
                "(export or delete the stored session, or give the file another id)",
            }
        self.claimed[sid] = (path.name, converted.lines)
        if not self.write:
            return {**report, "status": "converted"}
        try:
            self.client.import_lines(converted.lines, mode="refuse")
        except (DaemonUnavailableError, DeadlineError):
            self.in_doubt = path.name
            raise
        except SessiondError as exc:
            return {**report, "status": "failed", "reason": exc.message}
        return {**report, "status": "imported"}


def _migrate(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    folder = Path(args.folder)
    if not folder.is_dir():
        return report_error(args, f"{folder}: not a folder", reason="USAGE", code=EXIT_USAGE)
    files = sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
    reports: list[dict[str, Any]] = []
    current = ""
    migration: _Migration | None = None
    try:
        with (
            open_client(args.workspace, socket_path(args), timeout_s=None, writes=True) as client,
            Progress(
                TextColumn("migrating"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}", markup=False),
                console=Console(stderr=True, markup=False, emoji=False, highlight=False),
                transient=True,
            ) as progress,
        ):
            migration = _Migration(client, write=not args.dry_run)
            task = progress.add_task("", total=len(files))
            for path in files:
                current = path.name
                progress.update(task, description=visible(path.name))
                reports.append(migration.one(path))
                progress.advance(task)
    except SessiondError as exc:
        for r in reports:  # what was done before the daemon went away is still reported
            say(json_text(json_document(r)) if args.json else _migrate_line(r))
        if migration is not None and migration.in_doubt:
            say(
                f"claw-sessiond: error: stopped at {current}: the daemon did not answer its import, which may or "
                "may not have happened (check with 'claw-sessiond ls')",
                err=True,
            )
        elif current:
            say(f"claw-sessiond: error: stopped at {current}: nothing imported from it", err=True)
        return fail_client(args, exc)
    for r in reports:
        say(json_text(json_document(r)) if args.json else _migrate_line(r))
    statuses = ("imported", "skipped", "conflict", "failed", "converted")
    counts = {s: sum(1 for r in reports if r["status"] == s) for s in statuses}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n or s not in ("converted", "conflict"))
    say(f"{counted(len(files), 'file')}: {summary}", err=True)
    return EXIT_FAILURE if counts["failed"] or counts["conflict"] else EXIT_OK


def _migrate_line(r: dict[str, Any]) -> str:
    detail = f"  {r['session_id']} ({r['kind']}, {counted(r['messages'], 'message')})" if "session_id" in r else ""
    why = f": {r['reason']}" if "reason" in r else ""
    return f"{r['status']:<9} {r['file']}{detail}{why}"


MIGRATE_LEGACY: Final = Command(
    "migrate-legacy",
    "import a folder of Go-harness or Python-port JSON session files (safe to re-run)",
    _migrate_args,
    _migrate,
)
