"""Repair planning and placement (pure): which open calls a Load repairs, with what, and where.

An open tool call (no result) is *interrupted* unless the run that appended it
is still live, or it is *pending* (awaiting a person's approval or a long
tool, whether or not its process lives): then it is *in flight* and left
alone (SPEC §4). What a Load does with an interrupted call is its repair mode
(``policy.call_fate``): ``synthesize``, ``drop`` (hidden from the reply,
nothing written) or ``off`` (left open). A Load repairs every interrupted
call in mode ``synthesize`` by appending a synthetic result
(``events.encode_repair``: the tool was not re-run) after the session's last
position, in call order: by assistant position, then call index. Appending is
all a log can do; the projection (``history.project``) then shows each
result right after its assistant message.

A large repair is written in chunks of :data:`REPAIR_CHUNK` calls, planned on
the event loop from one read and written by the backend; a plan carries the
session's bounds at planning time (:class:`RepairPlan`) so the backend can
tell whether it still holds when it writes.

Repair is conservative and idempotent: a repaired call has a result, so
planning again yields nothing. Must never: do I/O, speak SQL, or import grpc.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from .events import call_names, encode_repair, message_from_payload
from .history import OpenCall, hidden_by_drop
from .model import InFlightCall, Repair
from .policy import ToolPolicy, call_fate

__all__ = [
    "PLAN_SLICE",
    "REPAIR_CHUNK",
    "REPAIR_PAUSE_RATIO",
    "CallSplit",
    "RepairPlan",
    "assistant_positions",
    "call_names_of",
    "drop_positions",
    "flights",
    "hidden_count",
    "in_flight_calls",
    "place",
    "plan_payloads",
    "plan_repair",
    "split_calls",
    "synthetic_payloads",
]

#: A repair of more open calls than this is written in chunks of this many, one write
#: each (measured: ~10-40 µs a call, so a chunk holds the writer for a few ms).
REPAIR_CHUNK: Final = 128
#: Open calls planned (or synthetic payloads made) on the loop before it yields.
PLAN_SLICE: Final = 128
#: After each chunk of a large repair, pause this many times the time the chunk took.
REPAIR_PAUSE_RATIO: Final = 1.0


def _call_order(call: OpenCall) -> tuple[int, int]:
    return (call.assistant_position, call.call_index)


@dataclass(frozen=True, slots=True)
class CallSplit:
    """A Load's open calls by fate (each list in call order).

    ``in_flight``: owned by a live run, or pending (a pending call whose run
    is not live is reported with run id ""); ``repair``: written a synthetic
    result; ``dropped``: hidden from the reply; ``left_open``: repair ``off``.
    """

    repair: list[OpenCall]
    in_flight: list[OpenCall]
    dropped: list[OpenCall]
    left_open: list[OpenCall]


def split_calls(calls: Sequence[OpenCall], is_live: Callable[[str], bool], session: ToolPolicy) -> CallSplit:
    """Split open calls by what a Load does with them (``policy.call_fate``; ``session``: its policy)."""
    split = CallSplit([], [], [], [])
    for c in sorted(calls, key=_call_order):
        live = bool(c.run_id) and is_live(c.run_id)
        fate = call_fate(live=live, pending=c.pending, call_mode=c.repair_mode, session=session)
        if fate == "in_flight":
            split.in_flight.append(c if live or not c.run_id else dataclasses.replace(c, run_id=""))
        elif fate == "repair":
            split.repair.append(c)
        elif fate == "drop":
            split.dropped.append(c)
        else:
            split.left_open.append(c)
    return split


def plan_repair(
    calls: Sequence[OpenCall], is_live: Callable[[str], bool], session: ToolPolicy | None = None
) -> tuple[list[OpenCall], list[OpenCall]]:
    """Split open calls into (to repair, in flight) (see :func:`split_calls`).

    A call appended by a run that is still alive, and a pending call, is in
    flight, not interrupted. Order is kept: by assistant position, then call index.
    """
    split = split_calls(calls, is_live, session or ToolPolicy())
    return split.repair, split.in_flight


def in_flight_calls(owned: Iterable[OpenCall], is_live: Callable[[str], bool]) -> list[OpenCall]:
    """The open calls of live runs and the pending ones, in call order (``owned``: open calls appended
    by some run or pending; a pending call whose run is not live is reported with run id "")."""
    out = [
        c if (c.run_id and is_live(c.run_id)) or not c.run_id else dataclasses.replace(c, run_id="")
        for c in owned
        if c.pending or (c.run_id and is_live(c.run_id))
    ]
    return sorted(out, key=_call_order)


def flights(in_flight: Iterable[OpenCall]) -> list[InFlightCall]:
    """How a Load reports the calls it left open because their run is live."""
    return [InFlightCall(c.tool_call_id, c.assistant_position, c.run_id) for c in in_flight]


def assistant_positions(to_repair: Iterable[OpenCall]) -> list[int]:
    """The positions of the assistant messages whose calls are repaired (their payloads name the tools)."""
    return sorted({c.assistant_position for c in to_repair})


def drop_positions(dropped: Iterable[OpenCall]) -> list[int]:
    """The positions of the assistant messages whose calls a Load drops (read to count what it hides)."""
    return sorted({c.assistant_position for c in dropped})


def hidden_count(entries: Iterable[tuple[int, str, bool]], dropped: Collection[str]) -> int:
    """How many entries dropping the ``dropped`` calls hides whole.

    ``entries``: ``(position, payload, has item)`` of the assistant messages at
    :func:`drop_positions`.
    """
    count = 0
    for position, payload, has_item in entries:
        entry = message_from_payload(position, "assistant_message", "", "", payload)
        count += not has_item and hidden_by_drop(entry, dropped)
    return count


def place(to_repair: Sequence[OpenCall], last_position: int) -> list[Repair]:
    """Where the synthetic results go: right after the session's last position, in the given (call) order."""
    first = last_position + 1
    return [Repair(c.tool_call_id, c.assistant_position, first + i) for i, c in enumerate(to_repair)]


def call_names_of(assistant_payloads: Iterable[str]) -> dict[str, str]:
    """Call id → tool name, from the payloads of the assistant messages at :func:`assistant_positions`."""
    names: dict[str, str] = {}
    for text in assistant_payloads:
        names.update(call_names(text))
    return names


def synthetic_payloads(to_repair: Iterable[OpenCall], names: Mapping[str, str]) -> list[str]:
    """The synthetic results' payloads (``names``: call id → tool name, from the assistant payloads)."""
    return [encode_repair(c.tool_call_id, names.get(c.tool_call_id, "")) for c in to_repair]


async def plan_payloads(calls: Sequence[OpenCall], assistant_payloads: Sequence[tuple[int, str]]) -> tuple[str, ...]:
    """:func:`synthetic_payloads`, made on the loop in slices of :data:`PLAN_SLICE` (yielding between them).

    ``assistant_payloads``: ``(position, payload)`` of the assistant messages
    at :func:`assistant_positions`. Not in a worker thread: a thread computing
    holds the GIL in 5 ms turns, and every other request's hand-offs between
    the loop and the storage threads then wait behind it (measured: an
    ordinary Load took 33 ms).
    """
    names: dict[str, str] = {}
    for _position, text in assistant_payloads:
        names.update(call_names(text))
        await asyncio.sleep(0)
    out: list[str] = []
    for i in range(0, len(calls), PLAN_SLICE):
        out.extend(synthetic_payloads(calls[i : i + PLAN_SLICE], names))
        await asyncio.sleep(0)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class RepairPlan:
    """Synthetic results planned from a read of the session at ``last_position``.

    ``created_at`` and ``clear_position`` name what was read: a session
    erased and created again, or cleared, is another history, and the plan
    does not hold for it.
    """

    created_at: str
    clear_position: int
    last_position: int
    calls: tuple[OpenCall, ...]
    payloads: tuple[str, ...]
    #: Open calls the Load hides (repair mode ``drop``), and how many entries that hides whole.
    dropped: tuple[str, ...] = ()
    hidden: int = 0

    def same_history(self, created_at: str, clear_position: int) -> bool:
        """True if the session still holds the history the plan was made from (not erased, not cleared)."""
        return (created_at, clear_position) == (self.created_at, self.clear_position)

    def unchanged(self, created_at: str, clear_position: int, last_position: int) -> bool:
        """True if nothing was written to the session since planning: the plan can be written as it is."""
        return self.same_history(created_at, clear_position) and last_position == self.last_position
