"""Run-history commands for people: ``export``, ``import``, ``delete``, ``migrate-legacy``.

They talk to the workspace's running daemon through the client library (the
daemon stays the single writer) and register themselves in
:data:`claw_sessiond.cli.COMMANDS`. Exit codes: 0 ok, 1 failure (daemon
unreachable, session not found, refused or failed import, a legacy file in
conflict), 2 usage error. No SQL here, no grpc: only the client. Every line
for people goes through :func:`claw_sessiond.cli.termsafe.visible`; ``--json`` is
:func:`claw_sessiond.cli.termsafe.json_text`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, cast

from claw_sessiond_client import (
    DaemonUnavailableError,
    DeadlineError,
    SessionClient,
    SessiondError,
    SessionNotFoundError,
)

from . import legacy
from .cli import terminal
from .cli.connect import open_client, socket_path, stored_summary
from .cli.failure import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, error_json, fail_client, report_error
from .cli.offline import OfflineClient, OfflineError, add_offline_options
from .cli.options import Command
from .cli.output import json_document, print_json, say
from .cli.termsafe import json_safe, json_text, visible
from .errors import InvalidRequestError as DomainInvalidRequestError
from .export import is_header, parse_session

__all__: list[str] = []


def _usage(args: argparse.Namespace, text: str) -> int:
    return report_error(args, text, reason="USAGE", code=EXIT_USAGE)


# ---------------------------------------------------------------- export


def _export_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", nargs="?", default=None, help="session id (default: every session)")
    parser.add_argument("--output", "-o", default="-", help="file to write (mode 0600; default: standard output)")


def _terminal_line(line: str) -> str:
    # An export line printed on a terminal is re-spelt with termsafe's JSON escapes: the same JSON value
    # (import reads it back identically), but no C1, DEL or bidi control reaches the terminal raw.
    # Into a pipe or a file the daemon's bytes go unchanged.
    return json_safe(line)


def _export(args: argparse.Namespace) -> int:
    if args.offline is not True:
        try:
            with open_client(args.workspace, socket_path(args), timeout_s=None) as client:
                return _export_from(args, client)
        except DaemonUnavailableError as exc:
            if args.offline is False:
                return fail_client(args, exc)
    # No daemon answers (or --offline): the same lines, read-only under the workspace lock.
    try:
        with OfflineClient(args.workspace) as offline:
            say(f"claw-sessiond: no daemon running; read-only view of {offline.db}", err=True)
            return _export_from(args, cast(SessionClient, offline))
    except OfflineError as exc:
        return report_error(args, str(exc), reason="DAEMON_UNAVAILABLE")


def _export_from(args: argparse.Namespace, client: SessionClient) -> int:
    """Write the export; a DaemonUnavailableError before the first line propagates (the offline fallback)."""
    written = 0
    try:
        if args.output == "-":
            on_terminal = sys.stdout.isatty()
            for line in client.export(args.session):
                sys.stdout.write((_terminal_line(line) if on_terminal else line) + "\n")
                written += 1
            return EXIT_OK
        target = Path(args.output)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:  # mkstemp creates it 0600
                for line in client.export(args.session):
                    fh.write(line + "\n")
                    written += 1
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            os.unlink(tmp)
            raise
    except DaemonUnavailableError as exc:
        if written == 0:
            raise  # nothing was written yet: the caller may give the offline view instead
        return fail_client(args, exc)
    except SessiondError as exc:
        return fail_client(args, exc)
    except BrokenPipeError:  # the reader went away (| head): cli.main stops quietly
        raise
    except OSError as exc:
        return report_error(args, f"{args.output}: {exc.strerror}")
    return EXIT_OK


# ---------------------------------------------------------------- import

ImportStatus = Literal["imported", "invalid", "exists", "held_back", "refused", "unknown", "not_attempted"]
_IMPORT_STATUSES: Final[tuple[ImportStatus, ...]] = (
    "imported",
    "invalid",
    "exists",
    "held_back",
    "refused",
    "unknown",
    "not_attempted",
)


def _import_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="export file to import ('-' for standard input)")
    parser.add_argument(
        "--mode",
        choices=["refuse", "replace", "merge"],
        default="refuse",
        help="if a session exists: refuse (default), replace it, or merge in the events it lacks",
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (
        "The whole file is checked first (format, one block per session id, and with --mode refuse that no\n"
        "session exists yet): if any session fails, nothing is imported. Then the sessions are imported one\n"
        "by one, each all or nothing; one the daemon refuses is reported and the others still go in. Every\n"
        "session is reported: imported, invalid, exists, held_back (valid, not imported because another\n"
        "failed the check), refused (the daemon wrote nothing of it), unknown (the daemon stopped answering\n"
        "during its import: check with 'claw-sessiond ls') or not_attempted.\n"
        "Exit codes: 0 every session imported, 1 any session not imported, 2 usage error."
    )


def _lines(path: str) -> Iterator[str]:
    if path == "-":
        yield from sys.stdin
        return
    with open(path, encoding="utf-8") as fh:
        yield from fh


@dataclass
class _Block:
    """One session's block of an export file, and what became of it."""

    numbered: list[tuple[int, str]]  # (line number in the file, line)
    session_id: str | None = None
    status: ImportStatus = "not_attempted"
    reason: str = ""
    events_imported: int = 0

    @property
    def lines(self) -> list[str]:
        return [text for _, text in self.numbered]

    @property
    def span(self) -> tuple[int, int]:
        return self.numbered[0][0], self.numbered[-1][0]

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "session_id": self.session_id,
            "status": self.status,
            "events_imported": self.events_imported,
            "lines": list(self.span),
        }
        if self.reason:
            out["reason"] = self.reason
        return out


def _split_blocks(lines: list[str]) -> list[_Block]:
    """Blocks start at header lines; a line that is not JSON stays in its block (whose check then names it)."""
    blocks: list[_Block] = []
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        try:
            header = is_header(json.loads(line))
        except (ValueError, RecursionError):
            header = False
        if header or not blocks:
            blocks.append(_Block([]))
        blocks[-1].numbered.append((number, line))
    return blocks


def _check_block(block: _Block) -> None:
    """Validate a block with the daemon's own parser; set its session id, or status invalid and why."""
    try:  # name the session in the report even when its block is invalid
        named = json.loads(block.numbered[0][1]).get("session_id")
        block.session_id = named if isinstance(named, str) else None
    except (ValueError, RecursionError, AttributeError):
        block.session_id = None
    try:
        block.session_id = parse_session(block.lines).header.session_id
    except DomainInvalidRequestError as exc:
        block.status, block.reason = "invalid", exc.message
        line = exc.metadata.get("line", "")
        if line.isdigit() and 1 <= int(line) <= len(block.numbered) and exc.message.startswith("import line "):
            # The parser counts lines within the block; say which line of the file it means.
            block.reason = f"line {block.numbered[int(line) - 1][0]}: {exc.message.split(': ', 1)[1]}"


def _import_blocks(client: SessionClient, blocks: list[_Block], mode: str) -> None:
    """Check every block, then (only if all pass) import them one by one; each block ends with a status."""
    first_at: dict[str, _Block] = {}
    for block in blocks:
        _check_block(block)
        sid = block.session_id
        if block.status == "invalid" or sid is None:
            continue
        if sid in first_at:
            a, b = first_at[sid].span
            block.status, block.reason = "invalid", f"session {sid!r} is also in lines {a}-{b}: one block per session"
        else:
            first_at[sid] = block
            # Asked in every mode: the daemon must answer first.
            if stored_summary(client, sid) is not None and mode == "refuse":
                block.status = "exists"
                block.reason = f"session {sid!r} already exists; import with --mode replace (erase it first) or merge"
    if any(b.status != "not_attempted" for b in blocks):
        for block in blocks:
            if block.status == "not_attempted":
                block.status = "held_back"
                block.reason = "valid, but not imported: another session in the file failed the check"
        return
    for index, block in enumerate(blocks):
        try:
            (result,) = client.import_lines(block.lines, mode=mode)
        except (DaemonUnavailableError, DeadlineError) as exc:
            # No answer: the daemon may have committed this session before it went away, or not.
            block.status = "unknown"
            block.reason = f"{exc.message} (it may or may not have been imported: check with 'claw-sessiond ls')"
            for rest in blocks[index + 1 :]:
                rest.reason = "not attempted: the daemon stopped answering"
            return
        except SessiondError as exc:  # the daemon answered with a refusal: nothing of this session was written
            block.status, block.reason = "refused", exc.message
        else:
            block.status, block.events_imported = "imported", result.events_imported


def _import(args: argparse.Namespace) -> int:
    if args.file != "-" and not Path(args.file).is_file():
        return _usage(args, f"{args.file}: no such file")
    try:
        blocks = _split_blocks(list(_lines(args.file)))
    except (OSError, UnicodeDecodeError) as exc:
        return report_error(args, f"{args.file}: {exc}")
    if not blocks:
        return report_error(args, f"{args.file}: no session to import (the file is empty)")
    try:
        with open_client(args.workspace, socket_path(args), timeout_s=None) as client:
            _import_blocks(client, blocks, args.mode)
    except SessiondError as exc:  # only the check talks to the daemon outside _import_blocks' own handling
        return fail_client(args, exc, prefix="nothing imported: ")
    counts = {s: sum(1 for b in blocks if b.status == s) for s in _IMPORT_STATUSES}
    summary = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)
    failed = counts["imported"] != len(blocks)
    if args.json:
        document: dict[str, Any] = {"sessions": [b.report() for b in blocks]}
        if failed:
            message = f"{len(blocks)} sessions in {args.file}: {summary}"
            document["error"] = error_json(message, reason="NOT_IMPORTED", code=EXIT_FAILURE)
        print_json(document)
    for block in blocks:
        if args.json:
            break
        if block.status == "imported":
            say(f"imported {block.session_id}: {block.events_imported} events")
        else:
            a, b = block.span
            name = block.session_id if block.session_id is not None else "(no session id)"
            say(f"claw-sessiond: error: {block.status} {name} (lines {a}-{b}): {block.reason}", err=True)
    if not failed:
        return EXIT_OK
    say(f"claw-sessiond: error: {len(blocks)} sessions in {args.file}: {summary}", err=True)
    return EXIT_FAILURE


# ---------------------------------------------------------------- delete


def _delete_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", help="session id to erase (every event, usage row and request record)")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask (scripts); required without a terminal")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (
        "On a terminal delete asks 'delete session X (N messages)? [y/N]'. Without a terminal it deletes\n"
        "nothing unless --yes is given (exit 2). To keep the session but empty its history: claw-sessiond clear.\n"
        "Exit codes: 0 deleted, 1 failure (daemon unreachable, not stored, answered no), 2 usage error."
    )


def _delete(args: argparse.Namespace) -> int:
    try:
        with open_client(args.workspace, socket_path(args), timeout_s=None) as client:
            stored = stored_summary(client, args.session)
            if stored is None:
                client.load(args.session, "/", repair=False)  # an invalid id gets the daemon's own message
                return report_error(args, f"session {args.session!r} is not stored", reason="NOT_STORED")
            if not args.yes:
                answer = terminal.confirm(visible(f"delete session {args.session} ({stored.message_count} messages)?"))
                if answer is None:
                    return report_error(
                        args,
                        f"not deleting {args.session!r} without confirmation: no terminal to ask on",
                        hint=f"claw-sessiond delete --yes {args.session}",
                        reason="CONFIRMATION_REQUIRED",
                        code=EXIT_USAGE,
                    )
                if not answer:
                    return report_error(args, "not deleted (answered no)", reason="DECLINED")
            count = client.delete(args.session)
    except SessiondError as exc:
        return fail_client(args, exc)
    if not count:  # deleted meanwhile by someone else
        return report_error(args, f"session {args.session!r} is not stored", reason="NOT_STORED")
    pending = bool(getattr(count, "erasure_pending", False))
    if args.json:
        out: dict[str, object] = {"session_id": args.session, "events_deleted": int(count)}
        if pending:  # only when true, so the usual reply keeps its two fields
            out["erasure_pending"] = True
        print_json(out)
    else:
        say(f"deleted {args.session}: {count} events")
    if pending:
        say(
            f"claw-sessiond: warning: {args.session!r} is deleted but its bytes are still in the database files "
            "(a reader holds an older snapshot); the daemon erases them as soon as it ends",
            err=True,
        )
    return EXIT_OK


# ---------------------------------------------------------------- migrate-legacy


def _migrate_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder", help="folder of legacy session files (.claw/sessions of the Go harness, .port_sessions of the port)"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="run every check the real run does (against the daemon) and report, import nothing",
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
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
        return _usage(args, f"{folder}: not a folder")
    files = sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
    reports: list[dict[str, Any]] = []
    current = ""
    migration: _Migration | None = None
    try:
        with (
            open_client(args.workspace, socket_path(args), timeout_s=None) as client,
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
    say(f"{len(files)} files: {summary}", err=True)
    return EXIT_FAILURE if counts["failed"] or counts["conflict"] else EXIT_OK


def _migrate_line(r: dict[str, Any]) -> str:
    detail = f"  {r['session_id']} ({r['kind']}, {r['messages']} messages)" if "session_id" in r else ""
    why = f": {r['reason']}" if "reason" in r else ""
    return f"{r['status']:<9} {r['file']}{detail}{why}"


EXPORT: Final = Command(
    "export",
    "export sessions as JSON Lines (format claw-sessiond-export v1)",
    add_offline_options(_export_args),
    _export,
)

IMPORT: Final = Command(
    "import",
    "import an export file: the whole file is checked first, then each session goes in all or nothing; "
    "every session is reported",
    _import_args,
    _import,
)

DELETE: Final = Command(
    "delete",
    "hard-delete a session (right to erasure); its bytes leave the files",
    _delete_args,
    _delete,
)

MIGRATE_LEGACY: Final = Command(
    "migrate-legacy",
    "import a folder of Go-harness or Python-port JSON session files (safe to re-run)",
    _migrate_args,
    _migrate,
)
