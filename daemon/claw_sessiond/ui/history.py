"""A session page's history events: the clears and edits (EditTail, DeleteEntries) among its positions.

Load returns the visible entries only; the log's other events reach a client through Watch, whose replay
from a position sends every history event after it, in order (messages, hidden ones included, clears and
edits). A page reads that replay over its own span of positions and stops at the span's end: the cost is
the page's events (the entries shown and those hidden among them), bounded by :data:`EVENT_SCAN`, never the
rest of the session (Export would read all of it). The viewer reads through the public client, so this works
against either backend. The span starts :data:`LOOKBACK` positions back on the oldest page, so a clear just
before the first visible entry is shown.

The replay does not say which edit a DeleteEntries made (both are ``edit`` events with the positions they
removed). The offline view has no Watch: it gives the same events from the export it reads.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final

from claw_sessiond_client import SessiondError

from .source import OfflineUnavailableError, Source

__all__ = ["EVENT_SCAN", "EVENT_WAIT_S", "LOOKBACK", "log_events"]

#: History events read per page, at most (the page's entries, the hidden ones among them, its clears and
#: edits); a page whose span holds more carries ``events_complete: false``.
EVENT_SCAN: Final = 5000
#: How far before its first entry the oldest page looks for the clear or edit that begins it.
LOOKBACK: Final = 1000
#: Seconds a page waits for its replay at most (then ``events_complete: false``).
EVENT_WAIT_S: Final = 5.0


async def log_events(source: Source, session_id: str, lower: int, upper: int) -> tuple[list[dict[str, Any]], bool]:
    """The clears and edits with ``lower <= position <= upper`` and whether all of the span was read."""
    found: list[dict[str, Any]] = []
    if upper < lower or lower < 1:
        return found, True
    try:
        async with asyncio.timeout(EVENT_WAIT_S), contextlib.aclosing(source.history(session_id, lower - 1)) as replay:
            read = 0
            async for event in replay:
                if event.position > upper:
                    return found, True
                if event.cleared:
                    found.append(_event(event.position, "clear", {"erased": event.erased}))
                elif event.edited:
                    found.append(_event(event.position, "edit", {"removed_positions": list(event.removed_positions)}))
                read += 1
                if event.position == upper:
                    return found, True
                if read >= EVENT_SCAN:
                    return found, False
        return found, True  # the replay ended: the offline view's, after the last stored event
    except (TimeoutError, SessiondError, OfflineUnavailableError):
        return found, False


def _event(position: int, kind: str, detail: dict[str, Any]) -> dict[str, Any]:
    # The replay carries no time for a clear or an edit.
    return {"position": position, "type": kind, "at": None, "detail": detail}
