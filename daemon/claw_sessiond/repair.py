"""Repair planning and placement (pure): which open calls a Load repairs, with what, and where.

An open tool call (no result) is *interrupted* unless the run that appended it
is still live: then it is *in flight* and left alone (SPEC §4). A Load repairs
every interrupted call by appending a synthetic result
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from .events import call_names, encode_repair
from .history import OpenCall
from .model import InFlightCall, Repair

__all__ = [
    "PLAN_SLICE",
    "REPAIR_CHUNK",
    "REPAIR_PAUSE_RATIO",
    "RepairPlan",
    "assistant_positions",
    "flights",
    "in_flight_calls",
    "place",
    "plan_payloads",
    "plan_repair",
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


def plan_repair(calls: Sequence[OpenCall], is_live: Callable[[str], bool]) -> tuple[list[OpenCall], list[OpenCall]]:
    """Split open calls into (to repair, in flight).

    A call appended by a run that is still alive is in flight, not
    interrupted. Order is kept: by assistant position, then call index.
    """
    ordered = sorted(calls, key=_call_order)
    repair = [c for c in ordered if not (c.run_id and is_live(c.run_id))]
    in_flight = [c for c in ordered if c.run_id and is_live(c.run_id)]
    return repair, in_flight


def in_flight_calls(owned: Iterable[OpenCall], is_live: Callable[[str], bool]) -> list[OpenCall]:
    """The open calls of live runs, in call order (``owned``: open calls appended by some run)."""
    return sorted((c for c in owned if c.run_id and is_live(c.run_id)), key=_call_order)


def flights(in_flight: Iterable[OpenCall]) -> list[InFlightCall]:
    """How a Load reports the calls it left open because their run is live."""
    return [InFlightCall(c.tool_call_id, c.assistant_position, c.run_id) for c in in_flight]


def assistant_positions(to_repair: Iterable[OpenCall]) -> list[int]:
    """The positions of the assistant messages whose calls are repaired (their payloads name the tools)."""
    return sorted({c.assistant_position for c in to_repair})


def place(to_repair: Sequence[OpenCall], last_position: int) -> list[Repair]:
    """Where the synthetic results go: right after the session's last position, in the given (call) order."""
    first = last_position + 1
    return [Repair(c.tool_call_id, c.assistant_position, first + i) for i, c in enumerate(to_repair)]


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

    def same_history(self, created_at: str, clear_position: int) -> bool:
        """True if the session still holds the history the plan was made from (not erased, not cleared)."""
        return (created_at, clear_position) == (self.created_at, self.clear_position)

    def unchanged(self, created_at: str, clear_position: int, last_position: int) -> bool:
        """True if nothing was written to the session since planning: the plan can be written as it is."""
        return self.same_history(created_at, clear_position) and last_position == self.last_position
