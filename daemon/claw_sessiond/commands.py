"""Commands for people: ``ls``, ``show``, ``stats`` (online) and ``doctor`` (online or offline).

Registered in :data:`claw_sessiond.cli.COMMANDS`; ``cli`` adds ``--workspace``
and ``--socket`` to each. Online commands go through the client library
(``SessionClient(autostart=False)``): looking at a workspace never starts a
daemon, and nothing here opens the database for writing. Only ``show --repair``
changes anything, through the daemon's Load (``show`` itself reads via
Export). With no daemon answering, ``ls``, ``show`` and ``stats`` give a
read-only view instead (``offline.py``: under the daemon's lock, ``mode=ro``;
``--no-offline`` keeps the error). ``doctor`` with the daemon down first takes the daemon's own lock
(``.claw/sessiond.lock``), so it can never run beside a daemon as a second
writer, then opens the database read-only (``mode=ro``).

Every command prints text for people, or one JSON document with ``--json``.
Text for people passes through :func:`claw_sessiond.termsafe.visible`
(control and invisible format characters from stored content are shown as
escapes, never sent to the terminal; rich gets content as ``Text``, never as
markup); JSON is :func:`claw_sessiond.termsafe.json_text`, exact once parsed.
Exit codes: 0 ok, 1 failure (daemon unreachable, session not found, a check
failed), 2 usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import json
import os
import sqlite3
import stat
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from claw_sessiond_client import Message, Session, SessionClient, SessiondError, SessionSummary, ToolCall, Usage
from claw_sessiond_client.errors import DaemonUnavailableError
from claw_sessiond_client.paths import claw_dir, socket_path_for

from . import schema
from .cli import COMMANDS, EXIT_FAILURE, EXIT_OK
from .errors import CorruptDatabaseError
from .offline import add_offline_options, run_offline
from .termsafe import json_text, visible

__all__ = ["doctor", "ls", "show", "stats"]

_EXIT_CODES: Final = "Exit codes: 0 ok, 1 failure (daemon unreachable, not found, check failed), 2 usage error."

_SQLITE_HEADER: Final = b"SQLite format 3\x00"


# ---------------------------------------------------------------- shared


def _add_json(parser: argparse.ArgumentParser, about: str = "") -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (textwrap.fill(about, 79) + "\n\n" if about else "") + _EXIT_CODES


def _socket_path(args: argparse.Namespace) -> Path:
    if args.socket:
        return Path(os.path.abspath(args.socket))
    return socket_path_for(os.path.abspath(args.workspace), os.environ.get("XDG_RUNTIME_DIR"))


def _client(args: argparse.Namespace) -> SessionClient:
    # Never auto-start: inspecting a workspace must not create a daemon (or a .claw/). The workspace (already
    # resolved by cli.main) tells the client whose daemon to expect on the socket.
    return SessionClient(
        args.workspace, address=f"unix:{_socket_path(args)}", autostart=False, retry_window_s=0.0, timeout_s=10.0
    )


def _fail(message: str, hint: str = "") -> int:
    print(visible(f"claw-sessiond: error: {message}"), file=sys.stderr)
    if hint:
        print(visible(f"Try: {hint}"), file=sys.stderr)
    return EXIT_FAILURE


def _online(fn: Callable[[argparse.Namespace, SessionClient], int]) -> Callable[[argparse.Namespace], int]:
    """Run ``fn`` with a client; turn client errors into exit 1 with an actionable message."""

    def handler(args: argparse.Namespace) -> int:
        if getattr(args, "offline", None) is True:
            return run_offline(args, fn)
        try:
            with _client(args) as client:
                return fn(args, client)
        except DaemonUnavailableError:
            if getattr(args, "offline", False) is None:  # no daemon: the read-only view (--no-offline: the error)
                return run_offline(args, fn)
            return _fail(
                f"no claw-sessiond answers on {_socket_path(args)}",
                f"claw-sessiond serve --workspace {args.workspace}  (or: claw-sessiond doctor)",
            )
        except SessiondError as exc:
            return _fail(str(exc))
        except BrokenPipeError:  # `claw-sessiond ls | head`
            with contextlib.suppress(OSError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_FAILURE

    handler.__doc__ = fn.__doc__
    return handler


def _time(value: dt.datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def _cost(u: Usage) -> str:
    return f"{u.cost_micros / 1_000_000:.6f} {u.currency}".rstrip() if u.cost_micros else "0"


def _usage_json(u: Usage) -> dict[str, Any]:
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_tokens": u.cache_read_tokens,
        "cache_write_tokens": u.cache_write_tokens,
        "cost_micros": u.cost_micros,
        "currency": u.currency,
    }


def _print_json(value: Any, out: TextIO | None = None) -> None:
    (out or sys.stdout).write(json_text(value, indent=2) + "\n")


def _table(rows: list[list[str]], right: set[int]) -> None:
    """Columns two spaces apart, ``right`` ones right-aligned; plain text, easy to grep."""
    rows = [[visible(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)]
        print("  ".join(cells).rstrip())


# ---------------------------------------------------------------- ls


def _add_ls(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contains", default="", metavar="TEXT", help="only sessions whose id contains TEXT")
    parser.add_argument("--limit", type=int, default=100, help="at most this many sessions (1-10000; default 100)")
    _add_json(parser)


def _ls(args: argparse.Namespace, client: SessionClient) -> int:
    """List stored sessions, most recently updated first."""
    sessions = client.list_sessions(args.contains, args.limit)
    if args.json:
        _print_json(
            [
                {
                    "id": s.id,
                    "messages": s.message_count,
                    "last_position": s.last_position,
                    "usage": _usage_json(s.usage),
                    "updated_at": _time(s.updated_at),
                    "workdir": s.workdir,
                }
                for s in sessions
            ]
        )
        return EXIT_OK
    if not sessions:
        print("no sessions")
        return EXIT_OK
    rows = [["ID", "MESSAGES", "TOKENS", "COST", "UPDATED"]]
    for s in sessions:
        tokens = s.usage.input_tokens + s.usage.output_tokens
        rows.append([s.id, str(s.message_count), str(tokens), _cost(s.usage), _time(s.updated_at) or "-"])
    _table(rows, right={1, 2})
    return EXIT_OK


ls = _online(_ls)


# ---------------------------------------------------------------- show


def _add_show(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION", help="session id")
    parser.add_argument(
        "--repair",
        action="store_true",
        help="load the session the way a resuming agent does: store a synthetic 'interrupted' result for "
        "every tool call without one that no live run owns (the tool is not re-run)",
    )
    _add_json(
        parser,
        "show reads the session through Export and never writes: tool calls without a result are listed as "
        "open (still running, or interrupted). With --repair it calls Load instead, which repairs the "
        "interrupted ones. Synthetic results (repairs) are marked SYNTHETIC.",
    )


def _message_json(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"position": m.position, "role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": json.loads(c.arguments)} for c in m.tool_calls]
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    if m.name:
        out["name"] = m.name
    if m.synthetic_reason:
        out["synthetic"] = m.synthetic_reason
    out["created_at"] = _time(m.created_at)
    out["trace_id"] = m.trace_id
    return out


@dataclass(frozen=True)
class _Transcript:
    """What ``show`` prints: metadata, the visible history, and the state of its tool calls."""

    session: Session
    messages: list[Message]
    open_calls: list[str]
    repaired_now: list[str]
    audit: list[dict[str, Any]]
    open_calls_note: str = (
        "still running, or interrupted: the next Load repairs those no live run owns; show --repair does it now"
    )
    open_call_mark: str = "no result yet"


def _parse_time(value: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _read_only_transcript(client: SessionClient, summary: SessionSummary) -> _Transcript:
    """The visible history from the session's exported events (Export writes nothing)."""
    from . import history, model

    lines = [json.loads(line) for line in client.export(summary.id)]
    header, events = lines[0], lines[1:]
    cleared = max((e["position"] for e in events if e["type"] == "clear"), default=0)
    stored = [
        model.Message(
            role=e["payload"]["role"],
            content=e["payload"].get("content", ""),
            tool_calls=tuple(
                model.ToolCall(c["id"], c.get("name", ""), c["arguments"]) for c in e["payload"].get("tool_calls", ())
            ),
            tool_call_id=e["payload"].get("tool_call_id", ""),
            name=e["payload"].get("name", ""),
            synthetic_reason=e["payload"].get("synthetic", "") if e["type"] == "repair" else "",
            position=e["position"],
            created_at=e["ts"],
            trace_id=e["trace_id"],
        )
        for e in events
        if e["position"] is not None and e["position"] > cleared and e["type"] != "clear" and "role" in e["payload"]
    ]
    visible = history.project(stored)
    messages = [
        Message(
            m.role,
            m.content,
            tuple(ToolCall(c.id, c.name, c.arguments) for c in m.tool_calls),
            m.tool_call_id,
            m.name,
            m.synthetic_reason,
            m.position,
            _parse_time(m.created_at),
            m.trace_id,
        )
        for m in visible
    ]
    session = Session(
        summary.id,
        summary.workdir,
        _parse_time(header.get("created_at")),
        summary.updated_at,
        summary.usage,
        summary.last_position,
        True,
        summary.message_count,
    )
    audit = [
        {"type": e["type"], "ts": e["ts"], "payload": e["payload"]}
        for e in events
        if e["type"] in ("permission_denial", "error")
    ]
    t = _Transcript(session, messages, [c.tool_call_id for c in history.open_calls(visible)], [], audit)
    note = getattr(client, "open_call_note", "")  # the offline view: nothing repairs them now
    return dataclasses.replace(t, open_calls_note="daemon down: not repaired", open_call_mark=note) if note else t


def _show(args: argparse.Namespace, client: SessionClient) -> int:
    """Print one session's transcript."""
    stored = [s for s in client.list_sessions(args.session, 10000) if s.id == args.session]
    if not stored:
        return _fail(f"session {args.session!r} is not stored", "claw-sessiond ls")
    if args.repair:
        # Load with the stored workdir, so that a repair does not move the session to this shell's folder.
        result = client.load(args.session, workdir=stored[0].workdir or os.path.abspath(args.workspace))
        t = _Transcript(
            result.session,
            result.messages,
            [c.tool_call_id for c in result.in_flight],
            [r.tool_call_id for r in result.repairs],
            [],
        )
    else:
        t = _read_only_transcript(client, stored[0])
    if args.json:
        s = t.session
        _print_json(
            {
                "session": {
                    "id": s.id,
                    "workdir": s.workdir,
                    "created_at": _time(s.created_at),
                    "updated_at": _time(s.updated_at),
                    "messages": s.message_count,
                    "last_position": s.last_position,
                    "usage": _usage_json(s.usage),
                },
                "messages": [_message_json(m) for m in t.messages],
                "open_calls": t.open_calls,
                "repaired_now": t.repaired_now,
                "audit_events": t.audit,
            }
        )
        return EXIT_OK
    _render_transcript(t)
    return EXIT_OK


def _render_transcript(t: _Transcript) -> None:
    """Print a transcript with rich styles; every stored string is a ``Text`` span, never markup."""
    from rich.console import Console
    from rich.text import Text

    def line(*parts: str | tuple[str, str]) -> Text:
        # Text.assemble takes (text, style) pairs literally: "[bold]" or ":smile:" in content stays as typed.
        return Text.assemble(*parts)

    console = Console(highlight=False, soft_wrap=True, emoji=False, markup=False)
    s = t.session
    u = s.usage
    console.print(line((f"session {visible(s.id)}", "bold"), f"  workdir {visible(s.workdir or '-')}"))
    console.print(
        line(
            f"created {_time(s.created_at)}  updated {_time(s.updated_at)}  messages {s.message_count}  "
            f"tokens {u.input_tokens} in / {u.output_tokens} out  cost {visible(_cost(u))}"
        )
    )
    if t.repaired_now:
        console.print(line((f"repaired by this load: {visible(', '.join(t.repaired_now))}", "yellow")))
    if t.open_calls:
        console.print(
            line(
                (
                    f"tool calls without a result: {visible(', '.join(t.open_calls))} ({t.open_calls_note})",
                    "yellow",
                )
            )
        )
    for event in t.audit:
        detail = visible(json.dumps(event["payload"], ensure_ascii=False))
        console.print(line((visible(event["type"]), "red"), f" {visible(str(event['ts']))} {detail}"))
    open_calls = set(t.open_calls)
    styles = {"system": "magenta", "user": "green", "assistant": "blue", "tool": "cyan"}
    for m in t.messages:
        console.print()
        head: list[str | tuple[str, str]] = [
            (f"#{m.position} {visible(m.role)}", f"bold {styles.get(m.role, 'white')}")
        ]
        if m.role == "tool":
            head.append(f" ← {visible(m.tool_call_id)}" + (f" ({visible(m.name)})" if m.name else ""))
        if m.synthetic_reason:
            reason = visible(m.synthetic_reason)
            head.append((f"  SYNTHETIC ({reason}): written by claw-sessiond; tool not re-run", "bold yellow"))
        console.print(line(*head))
        if m.content:
            console.print(line("  " + visible(m.content, keep_layout=True).replace("\n", "\n  ")))
        for call in m.tool_calls:
            call_line: list[str | tuple[str, str]] = [
                f"  → {visible(call.name)}({visible(call.arguments)})  [{visible(call.id)}]"
            ]
            if call.id in open_calls:
                call_line.append((f"  ({t.open_call_mark})", "yellow"))
            console.print(line(*call_line))


show = _online(_show)


# ---------------------------------------------------------------- stats


def _stats(args: argparse.Namespace, client: SessionClient) -> int:
    """Print database and daemon figures."""
    figures = dict(client.stats().values)
    figures["messages"] = sum(s.message_count for s in client.list_sessions("", 10000))
    if args.json:
        _print_json(figures)
        return EXIT_OK
    order = ["sessions", "messages", "events", "database_bytes", "wal_bytes", "schema_version"]
    keys = order + sorted(k for k in figures if k not in order)
    width = max(len(k) for k in keys)
    for key in keys:
        value = figures[key]
        if isinstance(value, float):
            text = f"{value:.3f}"
        elif isinstance(value, list | dict):
            text = json.dumps(value, separators=(",", ":"))
        else:
            text = str(value)
        print(visible(f"{key.ljust(width)}  {text}"))
    return EXIT_OK


stats = _online(_stats)


# ---------------------------------------------------------------- doctor


class _Report:
    """Checks and their outcomes: ok, warn (worth knowing) or fail (exit 1)."""

    def __init__(self) -> None:
        self.checks: list[dict[str, str]] = []

    def add(self, name: str, status: str, detail: str) -> None:
        self.checks.append({"check": name, "status": status, "detail": detail})

    @property
    def failed(self) -> bool:
        return any(c["status"] == "fail" for c in self.checks)


@contextlib.contextmanager
def _held_lock(path: Path) -> Iterator[int]:
    from .server import acquire_lock

    fd = acquire_lock(path)
    try:
        yield fd
    finally:
        os.close(fd)


def _check_database(report: _Report, db: Path) -> None:
    """Header, quick_check and schema version, on a read-only connection."""
    if not db.exists():
        report.add("database", "warn", f"{db} does not exist yet (created at the daemon's first start)")
        return
    with open(db, "rb") as fh:
        header = fh.read(16)
    if db.stat().st_size and header != _SQLITE_HEADER:
        report.add("database", "fail", f"{db}: not an SQLite database (bad header)")
        return
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        report.add("database", "fail", f"{db}: cannot open read-only: {exc}")
        return
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
        if rows == ["ok"]:
            report.add("quick_check", "ok", "ok")
        else:
            report.add("quick_check", "fail", "; ".join(rows[:5]))
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        try:
            pending = schema.pending(conn)
        except CorruptDatabaseError as exc:
            report.add("schema_version", "fail", f"{version}: {exc.message}")
        else:
            if pending:
                names = ", ".join(m.name for m in pending)
                report.add("schema_version", "warn", f"{version}; the daemon will migrate at start: {names}")
            else:
                report.add("schema_version", "ok", str(version))
    except sqlite3.Error as exc:
        report.add("quick_check", "fail", f"{getattr(exc, 'sqlite_errorname', '') or 'error'}: {exc}")
    finally:
        conn.close()


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
    _add_json(
        parser,
        "With the daemon running, doctor asks it (stats) and reads the database read-only. With the daemon "
        "down it first takes the daemon's lock (.claw/sessiond.lock), so no daemon can start while it looks, and "
        "opens the database read-only. It checks: daemon reachable, schema version, PRAGMA quick_check, and "
        "that .claw/ and its files are private (no group or other permissions).",
    )


def doctor(args: argparse.Namespace) -> int:
    """Check the daemon, the database and permissions."""
    workspace = Path(os.path.abspath(args.workspace))
    folder = claw_dir(workspace)
    report = _Report()
    sock = _socket_path(args)
    # SQLite may create -wal/-shm beside the database even for a read-only connection: keep them private.
    os.umask(0o077)
    if not folder.is_dir():
        report.add("workspace", "fail", f"{folder} does not exist: no daemon has run for {workspace}")
        return _finish(args, report)
    daemon_up = False
    try:
        with _client(args) as client:
            figures = client.stats().values
        daemon_up = True
        report.add("daemon", "ok", f"pid {figures['pid']} answers on {sock} (version {figures['version']})")
        report.add("daemon_schema_version", "ok", str(figures["schema_version"]))
    except SessiondError as exc:
        detail = "not running" if isinstance(exc, DaemonUnavailableError) else str(exc)
        report.add("daemon", "warn", f"no daemon answers on {sock} ({detail}); checked offline under its lock")
    if daemon_up:
        # Reading beside a live daemon is safe: a mode=ro connection can never write.
        _check_database(report, folder / "sessions.db")
    else:
        from .server import StartupError

        try:
            with _held_lock(folder / "sessiond.lock"):
                _check_database(report, folder / "sessions.db")
        except StartupError as exc:
            report.add("lock", "fail", f"{exc} but it does not answer on {sock}")
    _check_permissions(report, folder)
    return _finish(args, report)


def _finish(args: argparse.Namespace, report: _Report) -> int:
    if args.json:
        _print_json({"ok": not report.failed, "checks": report.checks})
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        for c in report.checks:
            print(visible(f"{marks[c['status']]}  {c['check']}: {c['detail']}"))
    return EXIT_FAILURE if report.failed else EXIT_OK


COMMANDS.update(
    {
        "ls": ("list stored sessions (id, messages, tokens, cost, updated)", add_offline_options(_add_ls), ls),
        "show": (
            "print a session's transcript (roles, tool calls, results, repairs)",
            add_offline_options(_add_show),
            show,
        ),
        "stats": (
            "print database and daemon figures (sessions, messages, sizes, schema version)",
            add_offline_options(_add_json),
            stats,
        ),
        "doctor": ("check the daemon, the database (quick_check, schema) and permissions", _add_doctor, doctor),
    }
)
