"""Commands for people: ``ls``, ``show``, ``stats`` (online) and ``doctor`` (online or offline).

Registered in :data:`claw_sessiond.cli.COMMANDS`; ``cli`` adds ``--workspace``,
``--socket`` and ``--json`` to each. Online commands go through the client
library (``SessionClient(autostart=False)``): looking at a workspace never
starts a daemon, and nothing here writes. ``show`` reads through Load with
``no_repair`` (plus Export for audit events); the verb that repairs is
``repair`` (``commands_verbs``), and ``show --repair`` is its deprecated
alias. With no daemon answering, ``ls``, ``show`` and ``stats`` give a
read-only view instead (``offline.py``: under the daemon's lock, ``mode=ro``;
``--no-offline`` keeps the error). ``doctor`` with the daemon down first takes
the daemon's own lock (``.claw/sessiond.lock``), so it can never run beside a
daemon as a second writer, then opens the database read-only (``mode=ro``).

Every command prints text for people, or one JSON document with ``--json``
(:func:`claw_sessiond.print_json`: ``"format": 1`` first; failures are
``{"format": 1, "error": {...}}``). Text for people passes through
:func:`claw_sessiond.cli.termsafe.visible` (control and invisible format
characters from stored content are shown as escapes, never sent to the
terminal; rich gets content as ``Text``, never as markup) and fits the
terminal's width (:mod:`claw_sessiond.cli.terminal`, 80 columns off a terminal).
Exit codes: 0 ok, 1 failure (daemon unreachable, session not found, a check
failed), 2 usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import re
import sqlite3
import stat
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from claw_sessiond_client import InFlightCall, Message, Session, SessionClient, SessiondError
from claw_sessiond_client.errors import DaemonUnavailableError
from claw_sessiond_client.paths import claw_dir

from . import schema
from .cli import terminal
from .cli.connect import MAX_PAGE, online, open_client, socket_path, stored_summary
from .cli.failure import EXIT_FAILURE, EXIT_OK, report_error
from .cli.offline import OPEN_CALL_NOTE, add_offline_options
from .cli.options import Command
from .cli.output import clip, cost, print_json, rfc3339, short_time, table, usage_json
from .cli.termsafe import visible
from .errors import CorruptDatabaseError

__all__ = ["doctor", "ls", "show", "stats"]

_EXIT_CODES: Final = "Exit codes: 0 ok, 1 failure (daemon unreachable, not found, check failed), 2 usage error."

_SQLITE_HEADER: Final = b"SQLite format 3\x00"


# ---------------------------------------------------------------- shared


def _add_json(parser: argparse.ArgumentParser, about: str = "") -> None:
    """Help epilog (``--json`` itself is added by ``cli`` to every command)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (textwrap.fill(about, 79) + "\n\n" if about else "") + _EXIT_CODES


# ---------------------------------------------------------------- ls


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= value <= MAX_PAGE:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_PAGE} (got {value}); --all lists every one")
    return value


def _add_ls(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contains", default="", metavar="TEXT", help="only sessions whose id contains TEXT")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--limit", type=_limit, default=100, metavar="N", help="at most N sessions (default 100)")
    group.add_argument("--all", action="store_true", help="every session (pages through ListSessions)")
    _add_json(
        parser,
        "Most recently updated first. When more sessions match than are listed, a last line on stderr says "
        "'showing N of M sessions'. Long ids are cut with '…' to fit the terminal (80 columns off a terminal); "
        "--json has them whole.",
    )


def _ls(args: argparse.Namespace, client: SessionClient) -> int:
    """List stored sessions, most recently updated first."""
    page = client.list_sessions_page(args.contains, MAX_PAGE if args.all else args.limit)
    sessions, total = list(page.sessions), page.total
    while args.all and page.next_page_token:
        page = client.list_sessions_page(args.contains, MAX_PAGE, page.next_page_token)
        sessions += page.sessions
    if args.json:
        print_json(
            {
                "sessions": [
                    {
                        "id": s.id,
                        "messages": s.message_count,
                        "last_position": s.last_position,
                        "usage": usage_json(s.usage),
                        "updated_at": rfc3339(s.updated_at),
                        "workdir": s.workdir,
                    }
                    for s in sessions
                ],
                "total": total,
            }
        )
        return EXIT_OK
    if not sessions:
        print("no sessions")
        return EXIT_OK
    rows = [["ID", "MESSAGES", "TOKENS", "COST", "UPDATED"]]
    for s in sessions:
        tokens = s.usage.input_tokens + s.usage.output_tokens
        rows.append([s.id, str(s.message_count), str(tokens), cost(s.usage), short_time(s.updated_at)])
    table(rows, right={1, 2}, shrink=0)
    if len(sessions) < total:
        sys.stdout.flush()
        print(f"showing {len(sessions)} of {total} sessions (--all for every one, --limit N)", file=sys.stderr)
    return EXIT_OK


ls = online(_ls)


# ---------------------------------------------------------------- show

_DURATION: Final = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_UNIT_S: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: dt.datetime | None = None) -> dt.datetime:
    """``--since``: a duration back from now (``90s``, ``10m``, ``2h``, ``1d``, ``1w``) or an RFC 3339 time."""
    m = _DURATION.match(text.strip())
    if m:
        return (now or dt.datetime.now(dt.UTC)) - dt.timedelta(seconds=float(m.group(1)) * _UNIT_S[m.group(2)])
    try:
        value = dt.datetime.fromisoformat(text.strip().replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a duration or an RFC 3339 time: {text!r} (try 10m, 2h, 1d or 2026-12-02T16:00:00Z)"
        ) from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone (add Z for UTC, or +01:00)")
    return value


def _tail(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more (got {value})")
    return value


def add_session_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION", help="session id")


def _add_show(parser: argparse.ArgumentParser) -> None:
    add_session_argument(parser)
    parser.add_argument("--tail", type=_tail, metavar="N", help="only the last N messages")
    parser.add_argument(
        "--since",
        type=parse_since,
        metavar="TIME",
        help="only messages (and audit events) from TIME on: a duration back from now (10m, 2h, 1d) or RFC 3339",
    )
    parser.add_argument("--no-pager", action="store_true", help="never page (on a terminal, $PAGER or less -FRX)")
    parser.add_argument("--repair", action="store_true", help="deprecated: use 'claw-sessiond repair SESSION'")
    _add_json(
        parser,
        "show only looks (Load without repair, Export for audit events): a tool call without a result is "
        "marked 'running (run R, pid P)' when a live run owns it, or 'interrupted' when none does (the next "
        "Load, or 'claw-sessiond repair', stores a synthetic result for it). Synthetic results are marked "
        "SYNTHETIC. On a terminal the transcript goes through $PAGER (default less -FRX) and is folded to its "
        "width.",
    )


def message_json(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"position": m.position, "role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": json.loads(c.arguments)} for c in m.tool_calls]
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    if m.name:
        out["name"] = m.name
    if m.synthetic_reason:
        out["synthetic"] = m.synthetic_reason
    out["created_at"] = rfc3339(m.created_at)
    out["trace_id"] = m.trace_id
    return out


@dataclass
class Transcript:
    """What ``show`` (and ``repair``) print: metadata, the history shown, and the state of its tool calls."""

    session: Session
    messages: list[Message]
    #: Unanswered calls, in call order (of the whole history, not only the messages shown).
    open_calls: list[str]
    #: Those a live run owns: tool call id → its InFlightCall.
    running: dict[str, InFlightCall]
    repaired_now: list[str] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    #: Messages in the history before the ones shown (``--tail``/``--since``).
    hidden: int = 0

    @property
    def interrupted(self) -> list[str]:
        return [c for c in self.open_calls if c not in self.running]

    #: Set by the offline view (daemon down): nothing repairs open calls now.
    offline: bool = False


def _open_calls(messages: list[Message]) -> list[str]:
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    return [c.id for m in messages if m.role == "assistant" for c in m.tool_calls if c.id not in answered]


def _audit_events(client: SessionClient, session_id: str) -> list[dict[str, Any]]:
    """Permission denials and errors, from Export (only their lines are parsed)."""
    out = []
    for line in client.export(session_id):
        if '"permission_denial"' not in line and '"error"' not in line:
            continue
        e = json.loads(line)
        if e.get("type") in ("permission_denial", "error"):
            out.append({"type": e["type"], "ts": e["ts"], "payload": e["payload"]})
    return out


def read_transcript(client: SessionClient, session_id: str, workdir: str, *, repair: bool) -> Transcript | None:
    """Load a session (``repair``: as a resuming agent does; else only look); None if it is not stored."""
    result = client.load(session_id, workdir=workdir, repair=repair)
    if not result.session.stored:
        return None
    return Transcript(
        result.session,
        result.messages,
        _open_calls(result.messages),
        {c.tool_call_id: c for c in result.in_flight},
        [r.tool_call_id for r in result.repairs],
        offline=bool(getattr(client, "offline", False)),
    )


def stored_workdir(client: SessionClient, session_id: str) -> str | None:
    """The session's stored workdir ("" if none), or None if it is not stored (Load with it: looking moves nothing)."""
    summary = stored_summary(client, session_id)
    if summary is not None:
        return summary.workdir
    client.load(session_id, "/", repair=False)  # an invalid id gets the daemon's own message (nothing is written)
    return None


def _since_filter(t: Transcript, since: dt.datetime | None, tail: int | None) -> None:
    """Keep the messages ``--since``/``--tail`` ask for; count the others."""
    kept = t.messages
    if since is not None:
        kept = [m for m in kept if m.created_at is not None and m.created_at >= since]
        t.audit = [a for a in t.audit if _parse_time(str(a["ts"])) >= since]
    if tail is not None:
        kept = kept[len(kept) - tail :] if tail else []
    t.hidden = len(t.messages) - len(kept)
    t.messages = kept


def _parse_time(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def transcript_json(t: Transcript) -> dict[str, Any]:
    s = t.session
    return {
        "session": {
            "id": s.id,
            "workdir": s.workdir,
            "created_at": rfc3339(s.created_at),
            "updated_at": rfc3339(s.updated_at),
            "messages": s.message_count,
            "last_position": s.last_position,
            "usage": usage_json(s.usage),
        },
        "messages": [message_json(m) for m in t.messages],
        "messages_not_shown": t.hidden,
        "open_calls": t.open_calls,
        "running": [
            {"tool_call_id": c.tool_call_id, "run_id": c.run_id, "owner_pid": c.owner_pid} for c in t.running.values()
        ],
        "interrupted": t.interrupted,
        "repaired_now": t.repaired_now,
        "audit_events": t.audit,
    }


def _show(args: argparse.Namespace, client: SessionClient) -> int:
    """Print one session's transcript."""
    if args.repair:
        print("claw-sessiond: 'show --repair' is deprecated: use 'claw-sessiond repair SESSION'", file=sys.stderr)
    workdir = stored_workdir(client, args.session)
    if workdir is None:
        return report_error(
            args, f"session {args.session!r} is not stored", hint="claw-sessiond ls", reason="NOT_STORED"
        )
    # Load with the stored workdir, so that a repair does not move the session to this shell's folder.
    t = read_transcript(client, args.session, workdir or os.path.abspath(args.workspace), repair=args.repair)
    if t is None:
        return report_error(
            args, f"session {args.session!r} is not stored", hint="claw-sessiond ls", reason="NOT_STORED"
        )
    t.audit = _audit_events(client, args.session)
    _since_filter(t, args.since, args.tail)
    if args.json:
        print_json(transcript_json(t))
        return EXIT_OK
    terminal.page(render_transcript(t), enabled=not args.no_pager)
    return EXIT_OK


def _call_state(t: Transcript, call_id: str) -> str:
    if t.offline:
        return OPEN_CALL_NOTE
    owner = t.running.get(call_id)
    if owner is not None:
        return f"running (run {visible(owner.run_id)}, pid {owner.owner_pid})"
    return "interrupted (no result; the next Load repairs it)"


def render_transcript(t: Transcript) -> str:
    """The transcript as text (rich styles on a terminal), folded to the terminal's width.

    Every stored string is a ``Text`` span, never markup; only the messages shown are formatted.
    """
    from rich.console import Console
    from rich.padding import Padding
    from rich.text import Text

    def line(*parts: str | tuple[str, str]) -> Text:
        # Text.assemble takes (text, style) pairs literally: "[bold]" or ":smile:" in content stays as typed.
        return Text.assemble(*parts)

    out = io.StringIO()
    tty = sys.stdout.isatty()
    console = Console(
        file=out,
        width=terminal.width(),
        force_terminal=tty,
        no_color=not tty,
        highlight=False,
        soft_wrap=False,
        emoji=False,
        markup=False,
    )
    s = t.session
    u = s.usage
    console.print(line((f"session {visible(s.id)}", "bold"), f"  workdir {visible(s.workdir or '-')}"))
    console.print(line(f"created {rfc3339(s.created_at)}  updated {rfc3339(s.updated_at)}"))
    console.print(
        line(f"messages {s.message_count}  tokens {u.input_tokens} in / {u.output_tokens} out  cost {visible(cost(u))}")
    )
    if t.repaired_now:
        console.print(line((f"repaired now: {visible(', '.join(t.repaired_now))}", "yellow")))
    for call_id in t.open_calls:
        console.print(line((f"tool call {visible(call_id)}: {_call_state(t, call_id)}", "yellow")))
    for event in t.audit:
        detail = visible(json.dumps(event["payload"], ensure_ascii=False))
        console.print(line((visible(event["type"]), "red"), f" {visible(str(event['ts']))} {detail}"))
    if t.hidden:
        console.print(line((f"({t.hidden} earlier messages not shown)", "dim")))
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
            head.append((f"  SYNTHETIC ({reason}): tool not re-run", "bold yellow"))
        console.print(line(*head))
        if m.content:  # folded lines keep the two-space indent
            console.print(Padding(line(visible(m.content, keep_layout=True)), (0, 0, 0, 2), expand=False))
        for call in m.tool_calls:
            call_line: list[str | tuple[str, str]] = [
                f"→ {visible(call.name)}({visible(call.arguments)})  [{visible(call.id)}]"
            ]
            if call.id in open_calls:  # the header above says what "interrupted" means
                call_line.append((f"  {_call_state(t, call.id).split(' (no result', 1)[0]}", "yellow"))
            console.print(Padding(line(*call_line), (0, 0, 0, 2), expand=False))
    # rich pads folded lines to the width: drop the padding (it would follow a copy-paste).
    return "\n".join(text.rstrip(" ") for text in out.getvalue().split("\n"))


show = online(_show)


# ---------------------------------------------------------------- stats


def _stats(args: argparse.Namespace, client: SessionClient) -> int:
    """Print database and daemon figures."""
    figures = dict(client.stats().values)
    figures["messages"] = _count_messages(client)
    if args.json:
        print_json({"stats": figures})
        return EXIT_OK
    order = ["sessions", "messages", "events", "database_bytes", "wal_bytes", "schema_version"]
    keys = order + sorted(k for k in figures if k not in order)
    width = max(len(k) for k in keys)
    room = max(20, terminal.width() - width - 2)
    for key in keys:
        value = figures[key]
        if isinstance(value, dict):  # one indented line per entry, not one long JSON line
            print(visible(key))
            for name in sorted(value):
                print(visible(f"  {clip(str(name), width - 2).ljust(width - 2)}  {_figure(value[name], room)}"))
            continue
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            print(visible(key))  # a list of records (requests by method and code): a small table
            rows = [[str(v) for v in item.values()] for item in value]
            cols = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(max(map(len, rows)))]
            for r in rows:
                print(visible("  " + "  ".join(c.ljust(cols[i]) for i, c in enumerate(r)).rstrip()))
            continue
        print(visible(f"{key.ljust(width)}  {_figure(value, room)}"))
    return EXIT_OK


def _figure(value: Any, room: int) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list | dict):
        return "\n".join(textwrap.wrap(json.dumps(value, separators=(", ", ": ")), room)) or "-"
    return str(value)


def _count_messages(client: SessionClient) -> int:
    page = client.list_sessions_page("", MAX_PAGE)
    count = sum(s.message_count for s in page.sessions)
    while page.next_page_token:
        page = client.list_sessions_page("", MAX_PAGE, page.next_page_token)
        count += sum(s.message_count for s in page.sessions)
    return count


stats = online(_stats)


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
    failed = [c["check"] for c in report.checks if c["status"] == "fail"]
    if args.json:
        document: dict[str, Any] = {"ok": not failed, "checks": report.checks}
        if failed:
            message = f"check failed: {', '.join(failed)}"
            document["error"] = {"message": message, "reason": "CHECK_FAILED", "code": EXIT_FAILURE}
        print_json(document)
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        room = terminal.width()
        for c in report.checks:
            text = visible(f"{marks[c['status']]}  {c['check']}: {c['detail']}")
            print("\n".join(textwrap.wrap(text, room, subsequent_indent=" " * 6, break_on_hyphens=False)))
    return EXIT_FAILURE if failed else EXIT_OK


LS: Final = Command(
    "ls",
    "list stored sessions (id, messages, tokens, cost, updated)",
    add_offline_options(_add_ls),
    ls,
)

SHOW: Final = Command(
    "show",
    "print a session's transcript (roles, tool calls, results, repairs)",
    add_offline_options(_add_show),
    show,
)

STATS: Final = Command(
    "stats",
    "print database and daemon figures (sessions, messages, sizes, schema version)",
    add_offline_options(_add_json),
    stats,
)

DOCTOR: Final = Command(
    "doctor",
    "check the daemon, the database (quick_check, schema) and permissions",
    _add_doctor,
    doctor,
)
