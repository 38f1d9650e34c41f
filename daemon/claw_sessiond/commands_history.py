"""Run-history commands for people: ``export``, ``import``, ``delete``, ``migrate-legacy``.

They talk to the workspace's running daemon through the client library (the
daemon stays the single writer) and register themselves in
:data:`claw_sessiond.cli.COMMANDS`. Exit codes: 0 ok, 1 failure (daemon
unreachable, session not found, refused or failed import), 2 usage error.
No SQL here, no grpc: only the client.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from claw_sessiond_client import DaemonUnavailableError, PreconditionError, Reason, SessionClient, SessiondError
from claw_sessiond_client.paths import socket_path_for

from . import cli, legacy

__all__: list[str] = []


def _client(args: argparse.Namespace) -> SessionClient:
    # The workspace was resolved by cli.main (found upward unless given): connect to exactly its socket.
    address = (
        args.socket or f"unix:{socket_path_for(os.path.abspath(args.workspace), os.environ.get('XDG_RUNTIME_DIR'))}"
    )
    return SessionClient(args.workspace, address=address, autostart=False)


def _fail(exc: SessiondError, args: argparse.Namespace) -> int:
    print(f"claw-sessiond: error: {exc.message}", file=sys.stderr)
    if isinstance(exc, DaemonUnavailableError):
        print(f"Try: claw-sessiond serve --workspace {args.workspace}", file=sys.stderr)
    return cli.EXIT_FAILURE


def _usage(text: str) -> int:
    print(f"claw-sessiond: {text}", file=sys.stderr)
    return cli.EXIT_USAGE


# ---------------------------------------------------------------- export


def _export_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", nargs="?", default=None, help="session id (default: every session)")
    parser.add_argument("--output", "-o", default="-", help="file to write (mode 0600; default: standard output)")


def _export(args: argparse.Namespace) -> int:
    try:
        with _client(args) as client:
            if args.output == "-":
                for line in client.export(args.session):
                    sys.stdout.write(line + "\n")
                return cli.EXIT_OK
            target = Path(args.output)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:  # mkstemp creates it 0600
                    for line in client.export(args.session):
                        fh.write(line + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, target)
            except BaseException:
                os.unlink(tmp)
                raise
    except SessiondError as exc:
        return _fail(exc, args)
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return cli.EXIT_FAILURE
    except OSError as exc:
        print(f"claw-sessiond: error: {args.output}: {exc.strerror}", file=sys.stderr)
        return cli.EXIT_FAILURE
    return cli.EXIT_OK


# ---------------------------------------------------------------- import


def _import_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="export file to import ('-' for standard input)")
    parser.add_argument(
        "--mode",
        choices=["refuse", "replace", "merge"],
        default="refuse",
        help="if a session exists: refuse (default), replace it, or merge in the events it lacks",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def _lines(path: str) -> Iterator[str]:
    if path == "-":
        yield from sys.stdin
        return
    with open(path, encoding="utf-8") as fh:
        yield from fh


def _import(args: argparse.Namespace) -> int:
    if args.file != "-" and not Path(args.file).is_file():
        return _usage(f"{args.file}: no such file")
    try:
        with _client(args) as client:
            results = client.import_lines(list(_lines(args.file)), mode=args.mode)
    except SessiondError as exc:
        return _fail(exc, args)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"claw-sessiond: error: {args.file}: {exc}", file=sys.stderr)
        return cli.EXIT_FAILURE
    if args.json:
        print(json.dumps([{"session_id": r.session_id, "events_imported": r.events_imported} for r in results]))
    else:
        for r in results:
            print(f"imported {r.session_id}: {r.events_imported} events")
    return cli.EXIT_OK


# ---------------------------------------------------------------- delete


def _delete_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", help="session id to erase (every event, usage row and request record)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def _delete(args: argparse.Namespace) -> int:
    try:
        with _client(args) as client:
            count = client.delete(args.session)
    except SessiondError as exc:
        return _fail(exc, args)
    if args.json:
        print(json.dumps({"session_id": args.session, "events_deleted": count}))
    elif count:
        print(f"deleted {args.session}: {count} events")
    if not count:
        print(f"claw-sessiond: error: session {args.session!r} is not stored", file=sys.stderr)
        return cli.EXIT_FAILURE
    return cli.EXIT_OK


# ---------------------------------------------------------------- migrate-legacy


def _migrate_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder", help="folder of legacy session files (.claw/sessions of the Go harness, .port_sessions of the port)"
    )
    parser.add_argument("--dry-run", action="store_true", help="convert and report, import nothing")
    parser.add_argument("--json", action="store_true", help="print one JSON object per file instead of text")


def _mtime(path: Path) -> str:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _migrate_one(client: SessionClient | None, path: Path) -> dict[str, Any]:
    report: dict[str, Any] = {"file": path.name}
    try:
        converted = legacy.convert(path.read_bytes(), fallback_id=path.stem, fallback_time=_mtime(path))
    except (legacy.LegacyError, OSError) as exc:
        return {**report, "status": "failed", "reason": str(exc)}
    report.update(session_id=converted.session_id, kind=converted.kind, messages=converted.messages)
    if client is None:
        return {**report, "status": "converted"}
    try:
        client.import_lines(converted.lines, mode="refuse")
    except PreconditionError as exc:
        if exc.reason == Reason.SESSION_EXISTS:
            return {**report, "status": "skipped", "reason": "already imported (the session exists)"}
        return {**report, "status": "failed", "reason": exc.message}
    except DaemonUnavailableError:
        raise
    except SessiondError as exc:
        return {**report, "status": "failed", "reason": exc.message}
    return {**report, "status": "imported"}


def _migrate(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    folder = Path(args.folder)
    if not folder.is_dir():
        return _usage(f"{folder}: not a folder")
    files = sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
    reports: list[dict[str, Any]] = []
    client = None if args.dry_run else _client(args)
    try:
        with Progress(
            TextColumn("migrating"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=Console(stderr=True),
            transient=True,
        ) as progress:
            task = progress.add_task("", total=len(files))
            for path in files:
                progress.update(task, description=path.name)
                reports.append(_migrate_one(client, path))
                progress.advance(task)
    except SessiondError as exc:
        return _fail(exc, args)
    finally:
        if client is not None:
            client.close()
    for r in reports:
        if args.json:
            print(json.dumps(r, ensure_ascii=False))
        else:
            detail = f"  {r['session_id']} ({r['kind']}, {r['messages']} messages)" if "session_id" in r else ""
            why = f": {r['reason']}" if "reason" in r else ""
            print(f"{r['status']:<9} {r['file']}{detail}{why}")
    counts = {s: sum(1 for r in reports if r["status"] == s) for s in ("imported", "skipped", "failed", "converted")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n or s != "converted")
    print(f"{len(files)} files: {summary}", file=sys.stderr)
    return cli.EXIT_FAILURE if counts["failed"] else cli.EXIT_OK


cli.COMMANDS.update(
    {
        "export": ("export sessions as JSON Lines (format claw-sessiond-export v1)", _export_args, _export),
        "import": ("import an export file into this workspace, all or nothing per session", _import_args, _import),
        "delete": ("hard-delete a session (right to erasure); its bytes leave the files", _delete_args, _delete),
        "migrate-legacy": (
            "import a folder of Go-harness or Python-port JSON session files (safe to re-run)",
            _migrate_args,
            _migrate,
        ),
    }
)
