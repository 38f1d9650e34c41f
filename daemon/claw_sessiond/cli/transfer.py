"""Moving sessions in and out: ``export`` and ``import`` (format claw-sessiond-export v1, JSON Lines).

Both go through the workspace's daemon (the single writer); ``export`` with no
daemon answering gives the same lines from the read-only view
(:mod:`claw_sessiond.cli.offline`). ``import`` checks the whole file with the
daemon's own parser first, then imports session by session and reports every
one. Exit codes: 0 ok, 1 failure (daemon unreachable, session not found,
refused or failed import), 2 usage error. No SQL here, no grpc: only the
client. Every line for people goes through
:func:`claw_sessiond.cli.termsafe.visible`; ``--json`` is
:func:`claw_sessiond.cli.termsafe.json_text`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, cast

from claw_sessiond_client import DaemonUnavailableError, DeadlineError, SessiondError

from ..errors import InvalidRequestError as DomainInvalidRequestError
from .connect import open_client, socket_path, stored_summary
from .failure import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, error_json, fail_client, report_error
from .offline import OfflineClient, OfflineError, add_offline_options
from .options import Command, set_epilog
from .output import counted, print_json, say
from .termsafe import json_safe

if TYPE_CHECKING:
    from claw_sessiond_client import SessionClient


__all__ = ["EXPORT", "IMPORT"]


# ---------------------------------------------------------------- export


def _export_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "session", nargs="?", default=None, metavar="SESSION", help="session id (default: every session)"
    )
    parser.add_argument(
        "--output", "-o", default="-", metavar="FILE", help="file to write (mode 0600; default: standard output)"
    )
    set_epilog(
        parser,
        "Per session a header line, then one line per event of its log (docs/history.md). With -o the lines go "
        "to a temporary file beside FILE, renamed into place once all are written and synced. On a terminal "
        "control characters are shown escaped (the same JSON). With no daemon answering, the lines are read "
        "read-only under the workspace lock (--offline, --no-offline).",
        "Exit codes: 0 ok, 1 failure (daemon unreachable, not stored, FILE not written), 2 usage error.",
    )


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
            return _export_from(args, cast("SessionClient", offline))
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
    parser.add_argument("file", metavar="FILE", help="export file to import ('-' for standard input)")
    parser.add_argument(
        "--mode",
        choices=["refuse", "replace", "merge"],
        default="refuse",
        help="if a session exists: refuse (default), replace it, or merge in the events it lacks",
    )
    parser.epilog = (
        "The whole file is checked first (format, one block per session id, and with --mode refuse that no\n"
        "session exists yet): if any session fails, nothing is imported. Then the sessions are imported one\n"
        "by one, each all or nothing; one the daemon refuses is reported and the others still go in. Every\n"
        "session is reported: imported, invalid, exists, held_back (valid, not imported because another\n"
        "failed the check), refused (the daemon wrote nothing of it), unknown (the daemon stopped answering\n"
        "during its import: check with 'claw-sessiond ls') or not_attempted.\n\n"
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
    from ..export import is_header  # here: the export codec loads for an import only

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
    from ..export import parse_session

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
        return report_error(args, f"{args.file}: no such file", reason="USAGE", code=EXIT_USAGE)
    try:
        blocks = _split_blocks(list(_lines(args.file)))
    except (OSError, UnicodeDecodeError) as exc:
        return report_error(args, f"{args.file}: {exc}")
    if not blocks:
        return report_error(args, f"{args.file}: no session to import (the file is empty)")
    try:
        with open_client(args.workspace, socket_path(args), timeout_s=None, writes=True) as client:
            _import_blocks(client, blocks, args.mode)
    except SessiondError as exc:  # only the check talks to the daemon outside _import_blocks' own handling
        return fail_client(args, exc, prefix="nothing imported: ")
    counts = {s: sum(1 for b in blocks if b.status == s) for s in _IMPORT_STATUSES}
    summary = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)
    failed = counts["imported"] != len(blocks)
    if args.json:
        document: dict[str, Any] = {"sessions": [b.report() for b in blocks]}
        if failed:
            message = f"{counted(len(blocks), 'session')} in {args.file}: {summary}"
            document["error"] = error_json(message, reason="NOT_IMPORTED", code=EXIT_FAILURE)
        print_json(document)
    for block in blocks:
        if args.json:
            break
        if block.status == "imported":
            say(f"imported {block.session_id}: {counted(block.events_imported, 'event')}")
        else:
            a, b = block.span
            name = block.session_id if block.session_id is not None else "(no session id)"
            say(f"claw-sessiond: error: {block.status} {name} (lines {a}-{b}): {block.reason}", err=True)
    if not failed:
        return EXIT_OK
    say(f"claw-sessiond: error: {counted(len(blocks), 'session')} in {args.file}: {summary}", err=True)
    return EXIT_FAILURE


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
