"""The order the framework adapters give entries back in: the order they were written (pure, no I/O).

A Load's reply places a tool result right after the call it answers (what a model expects),
and a bounded Load's window puts the results of calls made before the window first. A
framework's own store gives back its items as they were added: parallel tool calls (two
calls, then their two outputs) stay in that order, and a long-running tool's late answer
stays after the events written between. That order is the entries' positions; a bounded
Load (``last=N``) holds the N visible entries of the highest positions, so sorting its
entries by position is exact too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from claw_sessiond_client import LoadResult, Message

__all__ = ["in_written_order", "written_order"]


def written_order(entries: Iterable[Message]) -> list[Message]:
    """``entries`` in the order they were written (by position)."""
    return sorted(entries, key=lambda e: e.position)


def in_written_order(loaded: LoadResult) -> LoadResult:
    """``loaded`` with its entries in the order they were written."""
    return dataclasses.replace(loaded, messages=written_order(loaded.messages))
