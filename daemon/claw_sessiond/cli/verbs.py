"""Verbs that change a session on purpose: ``repair``, ``clear`` and ``delete``.

``repair`` does what a resuming agent's Load does: every tool call without
a result that no live run owns gets a synthetic ``interrupted`` result (the
tool is not re-run), and it prints what it repaired. ``clear`` empties the
visible history through the Clear RPC (usage totals are kept; the event log
keeps the past, unless ``--erase``). Both go through the daemon (the single writer) and
never move a session to the shell's folder. ``repair`` refuses a session that is not
stored; ``clear`` creates it empty, as every client's Clear does (docs/PROTOCOL.md).
``delete`` erases a session (right to erasure), after asking on a terminal
(``--yes`` without one). Exit codes: 0 ok, 1 failure, 2 usage error.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Final

from claw_sessiond_client import SessiondError

from . import terminal
from .connect import online, open_client, socket_path, stored_summary
from .failure import EXIT_OK, EXIT_USAGE, declined, fail_client, report_error
from .options import Command, add_session_argument
from .output import counted, print_json, say
from .termsafe import visible
from .transcript import read_transcript, stored_workdir

if TYPE_CHECKING:
    from claw_sessiond_client import SessionClient


__all__ = ["CLEAR", "DELETE", "REPAIR"]


def _not_stored(args: argparse.Namespace) -> int:
    return report_error(args, f"session {args.session!r} is not stored", hint="claw-sessiond ls", reason="NOT_STORED")


# ---------------------------------------------------------------- repair


def _repair_args(parser: argparse.ArgumentParser) -> None:
    add_session_argument(parser)
    parser.epilog = (
        "Stores a synthetic 'interrupted' result for every tool call without one that no live run owns "
        "(see Attach), as a resuming agent's Load does; the tool is not re-run. Calls a live run owns are "
        "left alone and listed. Running it again repairs nothing. Exit codes: 0 ok, 1 failure, 2 usage error."
    )


def _repair(args: argparse.Namespace, client: SessionClient) -> int:
    workdir = stored_workdir(client, args.session)
    if workdir is None:
        return _not_stored(args)
    t = read_transcript(client, args.session, workdir or "/", repair=True)
    if t is None:
        return _not_stored(args)
    positions = {m.tool_call_id: m.position for m in t.messages if m.role == "tool"}
    if args.json:
        print_json(
            {
                "session_id": args.session,
                "repaired": [{"tool_call_id": c, "position": positions.get(c)} for c in t.repaired_now],
                "running": [
                    {"tool_call_id": c.tool_call_id, "run_id": c.run_id, "owner_pid": c.owner_pid}
                    for c in t.running.values()
                ],
            }
        )
        return EXIT_OK
    for call_id in t.repaired_now:
        print(visible(f"repaired {call_id}: synthetic 'interrupted' result at #{positions.get(call_id)}"))
    for c in t.running.values():
        print(visible(f"left {c.tool_call_id}: running (run {c.run_id}, pid {c.owner_pid})"))
    if not t.repaired_now:
        print(visible(f"nothing to repair in {args.session}"))
    return EXIT_OK


# ---------------------------------------------------------------- clear


def _clear_args(parser: argparse.ArgumentParser) -> None:
    add_session_argument(parser)
    parser.add_argument(
        "--erase",
        action="store_true",
        help="also remove the history from the event log and its bytes from the database files (usage is kept)",
    )
    parser.epilog = (
        "Empties the visible history (the Clear RPC): the next Load starts from nothing. Usage totals are "
        "kept, and the event log keeps the past (export shows it) unless --erase is given: then the history "
        "leaves the log and the files too. To erase a whole session: claw-sessiond delete. "
        "A session that is not stored is created empty, as every client's Clear does. "
        "Exit codes: 0 ok, 1 failure (changed meanwhile), 2 usage error."
    )


def _clear(args: argparse.Namespace, client: SessionClient) -> int:
    stored = stored_summary(client, args.session)
    # Clear what was seen: if the session changed since, the daemon refuses (ABORTED) and nothing is cleared.
    # One not stored is created empty, as every client's Clear does (-1: only if it is still not stored).
    expected = -1 if stored is None else stored.last_position or 0
    result = client.clear(args.session, expected_last_position=expected, erase=args.erase)
    count = 0 if stored is None else stored.message_count
    if args.json:
        out: dict[str, object] = {"session_id": args.session, "messages_cleared": count, "position": result.position}
        if stored is None:  # only when true
            out["created"] = True
        if args.erase:
            out["events_erased"] = result.events_erased
            if result.erasure_pending:  # only when true, as delete's
                out["erasure_pending"] = True
        print_json(out)
    elif stored is None:
        say(f"cleared {args.session}: it was not stored; it is now, empty (claw-sessiond delete removes it)")
    else:
        print(visible(f"cleared {args.session}: {counted(count, 'message')} out of its history"))
        if args.erase:
            print(f"erased {counted(result.events_erased, 'event')} from the log; usage totals kept")
        else:
            print("usage totals kept; export still has the past")
    if result.erasure_pending:
        say(
            f"claw-sessiond: warning: {args.session!r} is erased but its bytes are still in the database files "
            "(a reader holds an older snapshot); the daemon erases them as soon as it ends",
            err=True,
        )
    return EXIT_OK


# ---------------------------------------------------------------- delete


def _delete_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "session", metavar="SESSION", help="session id to erase (every event, usage row and request record)"
    )
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask (scripts); required without a terminal")
    parser.epilog = (
        "On a terminal delete asks 'delete session X (N messages)? [y/N]'. Without a terminal it deletes\n"
        "nothing unless --yes is given (exit 2). To keep the session but empty its history: claw-sessiond clear.\n\n"
        "Exit codes: 0 deleted or answered no, 1 failure (daemon unreachable, not stored), 2 usage error."
    )


def _delete(args: argparse.Namespace) -> int:
    try:
        with open_client(args.workspace, socket_path(args), timeout_s=None, writes=True) as client:
            stored = stored_summary(client, args.session)
            if stored is None:
                client.load(args.session, "/", repair=False)  # an invalid id gets the daemon's own message
                return report_error(args, f"session {args.session!r} is not stored", reason="NOT_STORED")
            if not args.yes:
                count_text = counted(stored.message_count, "message")
                answer = terminal.confirm(visible(f"delete session {args.session} ({count_text})?"))
                if answer is None:
                    return report_error(
                        args,
                        f"not deleting {args.session!r} without confirmation: no terminal to ask on",
                        hint=f"claw-sessiond delete --yes {args.session}",
                        reason="CONFIRMATION_REQUIRED",
                        code=EXIT_USAGE,
                    )
                if not answer:  # what was asked for: nothing deleted, and no error
                    return declined(args, f"not deleted: {args.session}", {"session_id": args.session})
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
        say(f"deleted {args.session}: {counted(int(count), 'event')}")
    if pending:
        say(
            f"claw-sessiond: warning: {args.session!r} is deleted but its bytes are still in the database files "
            "(a reader holds an older snapshot); the daemon erases them as soon as it ends",
            err=True,
        )
    return EXIT_OK


REPAIR: Final = Command(
    "repair",
    "repair a session as a resuming agent's Load does (synthetic results for interrupted tool calls)",
    _repair_args,
    online(_repair, writes=True),
)

CLEAR: Final = Command(
    "clear",
    "empty a session's visible history (usage totals are kept)",
    _clear_args,
    online(_clear, writes=True),
)

DELETE: Final = Command(
    "delete",
    "hard-delete a session (right to erasure); its bytes leave the files",
    _delete_args,
    _delete,
)
