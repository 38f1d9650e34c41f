"""Looking at a workspace: ``ls``, ``show`` and ``stats``.

They go through the daemon (:func:`claw_sessiond.cli.connect.online`), which
they never start, and write nothing: ``show`` reads through Load with
``no_repair`` (plus Export for audit events; :mod:`claw_sessiond.cli.transcript`);
the verb that repairs is ``repair`` (:mod:`claw_sessiond.cli.verbs`), and
``show --repair`` is its deprecated alias. With no daemon answering they give
a read-only view instead (:mod:`claw_sessiond.cli.offline`: under the
daemon's lock, ``mode=ro``; ``--no-offline`` keeps the error).

Every command prints text for people, or one JSON document with ``--json``
(:mod:`claw_sessiond.cli.output`). Exit codes: 0 ok, 1 failure (daemon
unreachable, session not found), 2 usage error.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from . import terminal
from .connect import MAX_PAGE, online
from .failure import EXIT_OK, report_error
from .offline import add_offline_options
from .options import Command, add_session_argument, set_epilog
from .output import Narrower, clip, cost, counted, print_json, rfc3339, say, short_time, table, usage_json
from .termsafe import visible
from .transcript import (
    Transcript,
    audit_events,
    labels_text,
    read_transcript,
    render_transcript,
    stored_workdir,
    transcript_json,
)

if TYPE_CHECKING:
    from claw_sessiond_client import SessionClient, SessionSummary


__all__ = ["LS", "SHOW", "STATS", "ls", "parse_since", "show", "stats"]

_EXIT_CODES: Final = "Exit codes: 0 ok, 1 failure (daemon unreachable, not found, check failed), 2 usage error."


def _epilog(parser: argparse.ArgumentParser, about: str = "") -> None:
    set_epilog(parser, about, _EXIT_CODES)


# ---------------------------------------------------------------- ls


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= value <= MAX_PAGE:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_PAGE} (got {value}); --all lists every one")
    return value


def _label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"not KEY=VALUE: {text!r} (for example app=weather)")
    return key, value


def _add_ls(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contains", default="", metavar="TEXT", help="only sessions whose id contains TEXT")
    parser.add_argument(
        "--label",
        type=_label,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="only sessions with this label (exactly this value); repeat for several (all must match)",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--limit", type=_limit, default=100, metavar="N", help="at most N sessions (default 100)")
    group.add_argument("--all", action="store_true", help="every session (pages through ListSessions)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print the ids only, one a line, whole")
    parser.add_argument(
        "--no-trunc", action="store_true", help="every column, nothing cut, even past the terminal's width"
    )
    _epilog(
        parser,
        "Most recently updated first. When more sessions match than are listed, a last line on stderr says "
        "'showing N of M sessions'. The table fits the width (the terminal's; 80 columns or $COLUMNS off a "
        "terminal). Off a terminal nothing is cut: columns that do not fit are left out (a line on stderr "
        "names them); on a terminal a long id may be cut with '…'. --no-trunc prints every column whole, "
        "-q the ids alone, --json everything.",
    )


def _ls(args: argparse.Namespace, client: SessionClient) -> int:
    """List stored sessions, most recently updated first."""
    labels = dict(args.label)
    page = client.list_sessions_page(args.contains, MAX_PAGE if args.all else args.limit, labels=labels)
    sessions, total = list(page.sessions), page.total
    while args.all and page.next_page_token:
        page = client.list_sessions_page(args.contains, MAX_PAGE, page.next_page_token, labels=labels)
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
                        "labels": dict(sorted(s.labels.items())),
                        "created_at": rfc3339(s.created_at),
                    }
                    for s in sessions
                ],
                "total": total,
            }
        )
        return EXIT_OK
    if args.quiet:
        for s in sessions:
            say(s.id)
    elif not sessions:
        print("no sessions")
    else:
        _ls_table(sessions, whole=args.no_trunc)
    if len(sessions) < total:
        sys.stdout.flush()
        more = f"showing {len(sessions)} of {counted(total, 'session')} (--all for every one, --limit N)"
        print(more, file=sys.stderr)
    return EXIT_OK


#: The columns of ``ls``, in order; LABELS only when a listed session has labels.
_ID, _MESSAGES, _TOKENS, _COST, _UPDATED, _LABELS = range(6)


def _ls_table(sessions: Sequence[SessionSummary], *, whole: bool) -> None:
    """The table of ``ls``, fitted to the width (:func:`terminal.width`) unless ``whole``.

    On a terminal the labels are cut first, then columns are left out (labels, tokens, cost), and
    only then is a long id cut with "…". Off a terminal nothing is ever cut (an id piped to another
    command must be whole): columns are left out instead, and a line on stderr names them.
    """
    with_labels = any(s.labels for s in sessions)  # the LABELS column only when there are some
    rows = [["ID", "MESSAGES", "TOKENS", "COST", "UPDATED", *(["LABELS"] if with_labels else [])]]
    for s in sessions:
        tokens = s.usage.input_tokens + s.usage.output_tokens
        row = [s.id, str(s.message_count), str(tokens), cost(s.usage), short_time(s.updated_at)]
        rows.append(row + ([labels_text(s.labels)] if with_labels else []))
    labels = [Narrower(_LABELS, 10), Narrower(_LABELS)] if with_labels else []
    if sys.stdout.isatty():
        steps = [*labels, Narrower(_TOKENS), Narrower(_COST), Narrower(_ID, 12), Narrower(_MESSAGES)]
    else:
        steps = [*labels[1:], Narrower(_TOKENS), Narrower(_COST), Narrower(_MESSAGES), Narrower(_UPDATED)]
    left_out = table(rows, right={_MESSAGES, _TOKENS}, narrower=steps, width=0 if whole else None)
    if left_out:
        sys.stdout.flush()
        say(
            f"columns not shown: {', '.join(left_out)} (--no-trunc shows them)",
            err=True,
        )


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
    _epilog(
        parser,
        "show only looks (Load without repair, Export for audit events): a tool call without a result is "
        "marked 'running (run R, pid P)' when a live run owns it, 'pending' when it was appended pending (it "
        "awaits approval or a long-running tool; never repaired), or 'interrupted' when none of these (the next "
        "Load, or 'claw-sessiond repair', stores a synthetic result for it). Synthetic results are marked "
        "SYNTHETIC. On a terminal the transcript goes through $PAGER (default less -FRX) and is folded to its "
        "width.",
    )


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
    t.audit = audit_events(client, args.session)
    _since_filter(t, args.since, args.tail)
    if args.json:
        print_json(transcript_json(t))
        return EXIT_OK
    terminal.page(render_transcript(t), enabled=not args.no_pager)
    return EXIT_OK


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
        shown = _figure(value, room)
        if isinstance(value, str) and len(shown) > room:  # a long path or URL: whole, on a line of its own
            print(visible(key))
            print(visible(f"  {shown}"))
            continue
        print(visible(f"{key.ljust(width)}  {shown}"))
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
    add_offline_options(_epilog),
    stats,
)
