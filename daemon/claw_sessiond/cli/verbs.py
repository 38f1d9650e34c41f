"""Verbs that change a session on purpose: ``repair`` and ``clear``.

``repair`` does what a resuming agent's Load does: every tool call without
a result that no live run owns gets a synthetic ``interrupted`` result (the
tool is not re-run), and it prints what it repaired. ``clear`` empties the
visible history through the Clear RPC (usage totals are kept; the event log
keeps the past). Both go through the daemon (the single writer) with the
session's stored workdir, so they never move a session to the shell's
folder, and refuse a session that is not stored instead of creating it.
Exit codes: 0 ok, 1 failure, 2 usage error.
"""

from __future__ import annotations

import argparse
from typing import Final

from claw_sessiond_client import SessionClient

from .connect import online, stored_summary
from .failure import EXIT_OK, report_error
from .options import Command, add_session_argument
from .output import print_json
from .termsafe import visible
from .transcript import read_transcript, stored_workdir

__all__ = ["CLEAR", "REPAIR"]


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
    parser.epilog = (
        "Empties the visible history (the Clear RPC): the next Load starts from nothing. Usage totals are "
        "kept, and the event log keeps the past (export shows it). To erase a session: claw-sessiond delete. "
        "Exit codes: 0 ok, 1 failure (not stored, changed meanwhile), 2 usage error."
    )


def _clear(args: argparse.Namespace, client: SessionClient) -> int:
    if stored_workdir(client, args.session) is None:
        return _not_stored(args)
    stored = stored_summary(client, args.session)
    if stored is None:
        return _not_stored(args)
    # Clear what was seen: if the session changed since, the daemon refuses (ABORTED) and nothing is cleared.
    result = client.clear(args.session, expected_last_position=stored.last_position or 0)
    if args.json:
        print_json({"session_id": args.session, "messages_cleared": stored.message_count, "position": result.position})
        return EXIT_OK
    count = stored.message_count
    print(visible(f"cleared {args.session}: {count} message{'' if count == 1 else 's'} out of its history"))
    print("usage totals kept; export still has the past")
    return EXIT_OK


REPAIR: Final = Command(
    "repair",
    "repair a session as a resuming agent's Load does (synthetic results for interrupted tool calls)",
    _repair_args,
    online(_repair),
)

CLEAR: Final = Command(
    "clear",
    "empty a session's visible history (usage totals are kept)",
    _clear_args,
    online(_clear),
)
