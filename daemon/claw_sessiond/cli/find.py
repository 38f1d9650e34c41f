"""Cross-session commands for people: ``search``, ``follow``, ``usage``.

They talk to the workspace's running daemon through the client library (the
daemon stays the single writer). With no daemon answering, ``search`` and
``usage`` give a read-only view instead (:mod:`claw_sessiond.cli.offline`: the
workspace's SQLite file under its lock, or the PostgreSQL database configured
for it; ``--no-offline`` keeps the error); ``follow`` needs the daemon.
Exit codes: 0 ok (``follow`` ended with Ctrl-C included), 1 failure (daemon
unreachable, storage error), 2 usage error (a bad option value, a malformed
query). No SQL here, no grpc: only the client. Every line for people goes
through :func:`claw_sessiond.cli.termsafe.visible`; ``--json`` output is
:func:`claw_sessiond.cli.termsafe.json_text` with ``"format": 1``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from claw_sessiond_client.errors import SessionNotFoundError

if TYPE_CHECKING:
    from claw_sessiond_client import FollowEvent, Message, SearchHit, SessionClient, UsageReportRow, WatchEvent

from . import terminal
from .connect import MAX_PAGE, online
from .failure import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError
from .offline import add_offline_options
from .options import Command, set_epilog
from .output import call_json, print_json_line, say
from .termsafe import visible

__all__ = ["FOLLOW", "SEARCH", "USAGE", "follow", "search", "usage"]

_EXIT_CODES: Final = "Exit codes: 0 ok, 1 failure (daemon unreachable, storage error), 2 usage error."
#: What ``search --limit`` accepts (the daemon's cap, ``queries.MAX_SEARCH_HITS``).
_MAX_LIMIT: Final = 200
#: What ``follow -n`` accepts (the daemon's cap, ``queries.MAX_FOLLOW_LAST``).
_MAX_LAST: Final = 1000
_RELATIVE: Final = re.compile(r"^(\d{1,6})([mhdw])$")
_UNITS: Final = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_BLOCKS: Final = " ▏▎▍▌▋▊▉█"
_WIDTH: Final = 80


# ---------------------------------------------------------------- shared


def _online(body: Callable[[argparse.Namespace, SessionClient], int]) -> Callable[[argparse.Namespace], int]:
    """Run ``body`` with a client: a refused argument (a malformed query, a bad filter) exits 2, other errors 1."""
    return online(body, unavailable=_no_answer, invalid_code=EXIT_USAGE)


def _no_answer(args: argparse.Namespace) -> str:
    return f"no claw-sessiond answers for workspace {args.workspace}"


def parse_time(value: str | None, *, now: dt.datetime | None = None) -> dt.datetime | None:
    """``--since``/``--until``: ``30m``, ``12h``, ``7d``, ``2w`` ago, a date, or an ISO time (UTC unless it says).

    Raises:
        UsageError: not one of those forms.
    """
    if not value:
        return None
    at = now or dt.datetime.now(dt.UTC)
    found = _RELATIVE.match(value.strip())
    if found:
        return at - dt.timedelta(seconds=int(found.group(1)) * _UNITS[found.group(2)])
    try:
        when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{value!r} is not a time: use 30m, 12h, 7d, 2w (ago), 2026-12-01 or 2026-12-01T08:00:00Z"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _iso(when: dt.datetime | None) -> str | None:
    return when.astimezone(dt.UTC).isoformat().replace("+00:00", "Z") if when is not None else None


def _epilog(parser: argparse.ArgumentParser, about: str) -> None:
    set_epilog(parser, about, _EXIT_CODES)


# ---------------------------------------------------------------- search


def _add_search(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "query", metavar="QUERY", nargs="+", help="words to find (all must occur; at most 1024 bytes in all)"
    )
    parser.add_argument("--session", default="", metavar="ID", help="only this session")
    parser.add_argument("--role", choices=["user", "assistant", "tool", "system"], help="only messages of this role")
    parser.add_argument("--since", metavar="TIME", help="only messages stored since TIME (7d, 12h, a date, ISO time)")
    parser.add_argument("--until", metavar="TIME", help="only messages stored before TIME")
    parser.add_argument(
        "--limit",
        type=int,
        default=20,
        metavar="N",
        help=f"at most this many hits (1-{_MAX_LIMIT}; default 20), best first",
    )
    parser.add_argument("--all", action="store_true", help="also search history hidden by a clear")
    parser.add_argument(
        "--raw", action="store_true", help='QUERY is FTS5 syntax: "a phrase", OR, NOT, prefix*, NEAR(a b, 5)'
    )
    _epilog(
        parser,
        "Searches message content across sessions, best matches first (bm25). By default only the\n"
        "visible history (what Load returns); --all also searches history hidden by a clear, which stays\n"
        "in the log until the session is deleted. Matched words are bold on a terminal, [in brackets]\n"
        "otherwise. Tool-call arguments are not searched.",
    )


def _mark(text: str, on_terminal: bool) -> str:
    shown = visible(text)
    return f"\x1b[1m{shown}\x1b[0m" if on_terminal else f"[{shown}]"


def _snippet(hit: SearchHit, on_terminal: bool) -> str:
    return "".join(_mark(t, on_terminal) if match else visible(t) for t, match in hit.snippet)


def _hit_json(hit: SearchHit) -> dict[str, Any]:
    return {
        "session_id": hit.session_id,
        "position": hit.position,
        "role": hit.role,
        "created_at": _iso(hit.created_at),
        "rank": hit.rank,
        "cleared": hit.cleared,
        "snippet": "".join(t for t, _ in hit.snippet),
        "matches": [t for t, match in hit.snippet if match],
    }


def _search(args: argparse.Namespace, client: SessionClient) -> int:
    """Full-text search over message content across sessions."""
    if not 1 <= args.limit <= _MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {_MAX_LIMIT} (got {args.limit})")
    result = client.search(
        " ".join(args.query),
        raw=args.raw,
        session_id=args.session,
        role=args.role or "",
        since=parse_time(args.since),
        until=parse_time(args.until),
        limit=args.limit,
        include_cleared=args.all,
    )
    if args.json:
        print_json_line({"hits": [_hit_json(h) for h in result.hits], "truncated": result.truncated}, flush=True)
        return EXIT_OK
    if not result.hits:
        say("no matches" + ("" if args.all else " (--all also searches cleared history)"), flush=True)
        return EXIT_OK
    on_terminal = terminal.colour()  # bold marks; [brackets] in a pipe, with NO_COLOR or TERM=dumb
    for hit in result.hits:
        when = hit.created_at.strftime("%Y-%m-%d %H:%M") if hit.created_at else "-"
        cleared = "  (cleared)" if hit.cleared else ""
        say(f"{hit.session_id} #{hit.position} {hit.role}  {when}{cleared}", flush=True)
        # The snippet is made terminal-safe part by part: only our own bold marks stay raw.
        print("  " + _snippet(hit, on_terminal), flush=True)
    if result.truncated:
        say(f"(more matches: showing the best {len(result.hits)}; raise --limit or narrow the search)", flush=True)
    return EXIT_OK


search = _online(_search)


# ---------------------------------------------------------------- follow


def _add_follow(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "session", nargs="?", default=None, metavar="SESSION", help="session id (default: every session)"
    )
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--from-start", action="store_true", help="print the whole stored history first (SESSION only)")
    start.add_argument("-n", type=int, default=0, metavar="N", help=f"print the last N messages first (0-{_MAX_LAST})")
    _epilog(
        parser,
        "Prints new messages as they are stored, like tail -f (clears too). Without SESSION it follows\n"
        "every session, each line prefixed with the session id. Ctrl-C ends it (exit 0). A follower\n"
        "that stops reading is cut off by the daemon after --watch-stall-s and resumes by itself.",
    )


def _message_lines(prefix: str, message: Message) -> Iterator[str]:
    head = f"{prefix}#{message.position} {message.role}"
    if message.role == "tool":
        head += f" ← {message.tool_call_id}" + (f" ({message.name})" if message.name else "")
    if message.synthetic_reason:
        head += f"  SYNTHETIC ({message.synthetic_reason}): written by claw-sessiond; tool not re-run"
    yield visible(head)
    if message.content:
        yield "  " + visible(message.content, keep_layout=True).replace("\n", "\n  ")
    for call in message.tool_calls:
        yield visible(f"  → {call.name}({call.arguments})  [{call.id}]")


def _message_json(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [call_json(c) for c in message.tool_calls]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    if message.name:
        out["name"] = message.name
    if message.synthetic_reason:
        out["synthetic"] = message.synthetic_reason
    out["created_at"] = _iso(message.created_at)
    return out


def _print_event(
    session_id: str,
    event: WatchEvent | FollowEvent,
    *,
    prefix: str,
    as_json: bool,
    extra: dict[str, Any],
) -> None:
    position, message = event.position, event.message
    if as_json:
        body: dict[str, Any] = {"session_id": session_id, "position": position, **extra}
        body["cleared"] = event.cleared
        if event.erased:
            body["erased"] = True
        if event.edited:
            body["edit"] = {"removed_positions": list(event.removed_positions)}
        if message is not None:
            body["message"] = _message_json(message)
        print_json_line(body, flush=True)
        return
    if event.edited:
        removed = ", ".join(f"#{p}" for p in event.removed_positions) or "nothing"
        print(visible(f"{prefix}#{position} -- edited: removed {removed} --"), flush=True)
        return
    if message is None:
        erased = " and erased" if event.erased else ""
        print(visible(f"{prefix}#{position} -- history cleared{erased} --"), flush=True)
        return
    print("\n".join(_message_lines(prefix, message)), flush=True)


def _follow(args: argparse.Namespace, client: SessionClient) -> int:
    """Print new messages as they commit (one session, or all)."""
    if not 0 <= args.n <= _MAX_LAST:
        raise UsageError(f"-n must be between 0 and {_MAX_LAST} (got {args.n})")
    if args.session is None and args.from_start:
        raise UsageError("--from-start needs a SESSION (use -n N to see the last messages of every session)")
    try:
        if args.session is None:
            for event in client.watch_all(last=args.n):
                _print_all(event, args.json)
            return EXIT_OK  # pragma: no cover - watch_all never ends by itself
        after = 0 if args.from_start else _start_position(client, args.session, args.n)
        for w in client.watch(args.session, after_position=after):
            _print_event(args.session, w, prefix="", as_json=args.json, extra={})
    except KeyboardInterrupt:
        return EXIT_OK
    except SessionNotFoundError as exc:  # deleted while followed
        say(f"claw-sessiond: {exc.message}", err=True, flush=True)
        return EXIT_FAILURE
    return EXIT_OK  # pragma: no cover - watch never ends by itself


def _print_all(event: FollowEvent, as_json: bool) -> None:
    _print_event(
        event.session_id,
        event,
        prefix=f"{event.session_id} ",
        as_json=as_json,
        extra={"event_id": event.event_id},
    )


def _start_position(client: SessionClient, session_id: str, last: int) -> int:
    """The position to follow after: the session's last one, less ``last`` (0 if it is not stored)."""
    for summary in client.list_sessions(session_id, MAX_PAGE):
        if summary.id == session_id:
            return max(0, summary.last_position - last)
    return 0


def _stop_following(_signum: int, _frame: object) -> None:
    """Ctrl-C while following: what was printed is flushed, then the process ends at once with 0.

    Under load a follow once did not exit within 15 s of SIGINT (CI, both follow tests on one
    worker); the likely place is the teardown after a KeyboardInterrupt raised inside the gRPC
    stream's own wait. A follow writes nothing, so there is nothing to finish but the output, and
    ending here leaves no teardown to hang.
    """
    try:
        sys.stdout.flush()
    finally:
        os._exit(EXIT_OK)


def follow(args: argparse.Namespace) -> int:
    """``follow``: like the other online commands, but Ctrl-C anywhere (even while connecting) exits 0 quietly."""
    previous = signal.signal(signal.SIGINT, _stop_following)
    try:
        return _online(_follow)(args)
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        signal.signal(signal.SIGINT, previous)


# ---------------------------------------------------------------- usage


def _add_usage(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", metavar="TIME", help="only usage recorded since TIME (7d, 12h, a date, ISO time)")
    parser.add_argument("--until", metavar="TIME", help="only usage recorded before TIME")
    parser.add_argument("--by", choices=["model", "day", "session"], default="model", help="group by (default model)")
    parser.add_argument("--ascii", action="store_true", help="draw the bars with '#' (also when not a terminal)")
    _epilog(
        parser,
        "Usage and cost across sessions from the recorded usage events, grouped by model, UTC day or\n"
        "session. Costs are exact (micros) and never added across currencies: a group with costs in two\n"
        "currencies is two rows. The bar shows tokens (input + output + cache), which are comparable\n"
        "across currencies.",
    )


@dataclass
class _Group:
    key: str
    currency: str
    events: int = 0
    pricing_versions: set[str] = field(default_factory=set)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_micros: int = 0

    def add(self, row: UsageReportRow) -> None:
        u = row.usage
        self.events += row.events
        self.pricing_versions.add(row.pricing_version)
        self.input_tokens += u.input_tokens
        self.output_tokens += u.output_tokens
        self.cache_read_tokens += u.cache_read_tokens
        self.cache_write_tokens += u.cache_write_tokens
        self.cost_micros += u.cost_micros

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens

    def json(self, by: str) -> dict[str, Any]:
        return {
            by: self.key,
            "currency": self.currency,
            "events": self.events,
            "pricing_versions": sorted(self.pricing_versions),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_micros": self.cost_micros,
        }


def group_usage(rows: list[UsageReportRow], by: str) -> list[_Group]:
    """Rows of the daemon's report → one group per (key, currency), in key order."""
    groups: dict[tuple[str, str], _Group] = {}
    for row in rows:
        key = {"model": row.model, "day": row.day, "session": row.session_id}[by]
        currency = row.usage.currency
        groups.setdefault((key, currency), _Group(key, currency)).add(row)
    return [groups[k] for k in sorted(groups)]


def _cost(micros: int, currency: str) -> str:
    if not micros:
        return "0"
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), 1_000_000)
    return f"{sign}{whole}.{frac:06d} {currency}".rstrip()


def bar(value: int, top: int, width: int, *, ascii_only: bool) -> str:
    """A bar of ``value`` out of ``top`` in ``width`` cells (eighth blocks, or '#')."""
    if top <= 0 or value <= 0 or width <= 0:
        return ""
    if ascii_only:
        return "#" * max(1, round(value * width / top))
    eighths = max(1, round(value * width * 8 / top))
    full, part = divmod(eighths, 8)
    return "█" * full + (_BLOCKS[part] if part else "")


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _usage(args: argparse.Namespace, client: SessionClient) -> int:
    """Usage and cost across sessions, by model, day or session."""
    from claw_sessiond_client import UsageReportRow  # here: with the client's search code (grpc)

    since, until = parse_time(args.since), parse_time(args.until)
    report = client.usage_report(since=since, until=until, by_session=args.by == "session")
    groups = group_usage(report.rows, args.by)
    totals = group_usage(
        [UsageReportRow("", "", r.pricing_version, r.usage, "", r.events) for r in report.rows], "model"
    )
    if args.json:
        print_json_line(
            {
                "by": args.by,
                "since": _iso(since),
                "until": _iso(until),
                "groups": [g.json(args.by) for g in groups],
                "totals": [{k: v for k, v in t.json("model").items() if k != "model"} for t in totals],
                "truncated": report.truncated,
            },
            flush=True,
        )
        return EXIT_OK
    if not groups:
        say("no usage recorded" + (" in that time" if since or until else ""), flush=True)
        return EXIT_OK
    ascii_only = args.ascii or not sys.stdout.isatty()
    label = {"model": "MODEL", "day": "DAY (UTC)", "session": "SESSION"}[args.by]
    cells = [
        [
            visible(_fit(g.key or "(none)", 24)),
            str(g.events),
            str(g.input_tokens),
            str(g.output_tokens),
            _cost(g.cost_micros, visible(g.currency)),
        ]
        for g in groups
    ]
    head = [label, "EVENTS", "INPUT", "OUTPUT", "COST"]
    widths = [max(len(r[i]) for r in [head, *cells]) for i in range(len(head))]
    used = sum(widths) + 2 * len(widths)
    bar_width = max(8, min(_WIDTH, shutil.get_terminal_size((_WIDTH, 24)).columns) - used - 1)
    top = max(g.tokens for g in groups)

    def line(row: list[str], tail: str = "") -> str:
        left = row[0].ljust(widths[0])
        rest = [c.rjust(widths[i + 1]) for i, c in enumerate(row[1:])]
        return ("  ".join([left, *rest]) + ("  " + tail if tail else "")).rstrip()

    print(line(head, "TOKENS"), flush=True)
    for g, row in zip(groups, cells, strict=True):
        print(line(row, bar(g.tokens, top, bar_width, ascii_only=ascii_only)), flush=True)
    for t in totals:
        print(
            line(
                [
                    "total",
                    str(t.events),
                    str(t.input_tokens),
                    str(t.output_tokens),
                    _cost(t.cost_micros, visible(t.currency)),
                ]
            ),
            flush=True,
        )
    if report.truncated:
        say("(the daemon returned its maximum of groups: narrow the report with --since/--until)", flush=True)
    return EXIT_OK


usage = _online(_usage)


SEARCH: Final = Command(
    "search",
    "full-text search over message content across sessions (ranked, highlighted)",
    add_offline_options(_add_search),
    search,
)

FOLLOW: Final = Command(
    "follow",
    "print new messages as they are stored, of one session or of all (like tail -f)",
    _add_follow,
    follow,
)

USAGE: Final = Command(
    "usage",
    "usage and cost across sessions by model, day or session, with a bar chart",
    add_offline_options(_add_usage),
    usage,
)
