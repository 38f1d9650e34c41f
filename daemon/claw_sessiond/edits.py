"""The rules of EditTail, DeleteEntries and a Clear that erases, as pure decisions every backend calls.

An edit removes the tail of the visible history and appends replacements
in its place, all or nothing. The removed entries stay in the log: an
``edit`` event at the next position lists them (``events.encode_edit``) and
each is marked hidden by it. Decided here, for every backend:

- which entries an edit removes, found by walking the history *backwards
  from its end* (:class:`TailWalk`): every visible entry after
  ``after_position``, or the last ``remove_last`` visible ones. An edit
  event seen on the way (not a scattered one) is stepped over together with everything it
  removed (every position from its first removed one up to it is already
  out of the projection), so the walk reads the entries it removes, the
  edit events it steps over and the few entries hidden one at a time (a
  superseded repair), never the history before them;
- what refuses an edit, before anything is written: removing more entries
  than are visible (:func:`check_remove_count`), an entry whose pending
  call is still unanswered (:func:`check_pending`, reason
  ``EDIT_SPLITS_CALL``), removed entries that would not fit one reply
  (:data:`REPLY_BYTES`);
- the stored result a retried request id replays (:func:`edit_record`,
  :func:`edit_from_record`), which has no removed entries;
- how a history event that is not a message reaches a follower
  (:func:`history_item`);
- what refuses a DeleteEntries (an edit of entries anywhere, its event marked ``scattered``, so
  a later walk steps over none of the entries it left visible): taking one half of a tool call
  and its result (:func:`check_delete_splits`), and the record a retry replays
  (:func:`delete_record`, :func:`delete_from_record`).

Raises only ``claw_sessiond.errors``. Must never: do I/O, speak SQL, or import grpc.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Final

from .errors import InvalidRequestError, PreconditionError, Reason
from .events import MESSAGE_EVENT_TYPES, edit_removed, edit_span_start, erased_count, message_from_payload
from .history import IndexedCall
from .model import DeleteEntriesResult, EditResult, HistoryMark, Message

__all__ = [
    "REPLY_BYTES",
    "WALK_ROWS",
    "TailWalk",
    "check_after_position",
    "check_delete_splits",
    "check_pending",
    "check_remove_count",
    "delete_from_record",
    "delete_record",
    "edit_from_record",
    "edit_record",
    "history_item",
]

#: Most bytes of removed entries (payload and item) an edit may return in its reply; an edit that
#: removes a single entry may exceed it (as a page of Load holds at least one entry).
REPLY_BYTES: Final = 3 * 1024 * 1024
#: Most rows one step of a :class:`TailWalk` reads.
WALK_ROWS: Final = 256


class TailWalk:
    """Which visible entries an edit removes, from rows read backwards from the end of the history.

    The backend asks :meth:`window` for the next range of positions to read
    (highest first, at most :meth:`batch` rows), hands each row to
    :meth:`see` until :attr:`done`, and then reads :attr:`removed`.
    ``floor`` is the highest position that is never removed: the session's
    clear, or ``after_position`` if higher.
    """

    def __init__(self, *, remove_last: int, after_position: int, clear_position: int, last_position: int) -> None:
        self.remove_last = remove_last
        # Neither set: the edit only appends, and nothing is read.
        self.floor = max(after_position, clear_position) if remove_last or after_position else last_position
        self._cursor = last_position
        self.removed: list[int] = []
        """Positions to remove, highest first."""
        self.removed_bytes = 0
        self.rows_seen = 0

    @property
    def done(self) -> bool:
        """True once nothing more needs reading."""
        if self.remove_last and len(self.removed) >= self.remove_last:
            return True
        return self._cursor <= self.floor

    def window(self) -> tuple[int, int]:
        """``(floor, cursor)``: read the rows with a position above the first and at most the second, highest first."""
        return self.floor, self._cursor

    def batch(self) -> int:
        """How many rows the next read should take at most."""
        if self.remove_last:
            return min(self.remove_last - len(self.removed) + 1, WALK_ROWS)
        return WALK_ROWS

    def see(self, position: int, event_type: str, hidden: bool, edit_payload: str | None, size: int) -> None:
        """One row of the window, in descending position order (rows stepped over are ignored).

        ``edit_payload`` is the payload of an ``edit`` event (None for other types); ``size`` the
        bytes of the entry's payload and item.

        Raises:
            InvalidRequestError: reason FIELD_TOO_LARGE, the removed entries exceed :data:`REPLY_BYTES`.
        """
        if position > self._cursor or self.done:
            return
        self.rows_seen += 1
        self._cursor = position - 1
        if event_type == "edit":
            start = edit_span_start(edit_payload or "{}")
            if start is not None:  # everything from its first removed position up to it is out of the projection
                self._cursor = min(self._cursor, start - 1)
            return
        if hidden or event_type not in MESSAGE_EVENT_TYPES:
            return
        self.removed.append(position)
        self.removed_bytes += size
        if self.removed_bytes > REPLY_BYTES and len(self.removed) > 1:
            raise InvalidRequestError(
                f"the entries this edit would remove take more than {REPLY_BYTES} bytes, more than one reply "
                "holds; remove fewer at a time (or Clear the session); nothing was written",
                reason=Reason.FIELD_TOO_LARGE,
                limit=REPLY_BYTES,
            )

    def exhausted(self) -> None:
        """The backend read no row in the window: nothing is left to remove."""
        self._cursor = self.floor


def check_remove_count(remove_last: int, visible: int, found: int | None = None) -> None:
    """``remove_last`` must not exceed the visible entries (``found``: how many the walk found, if it ran).

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE, naming the field.
    """
    have = visible if found is None else min(visible, found)
    if remove_last > have:
        raise InvalidRequestError(
            f"remove_last is {remove_last} but the session has {have} visible "
            f"entr{'y' if have == 1 else 'ies'}; nothing was written",
            reason=Reason.INVALID_MESSAGE,
            field="remove_last",
            visible=have,
        )


def check_after_position(after_position: int, last_position: int) -> None:
    """``after_position`` must be a position the session has reached.

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE, naming the field.
    """
    if after_position > last_position:
        raise InvalidRequestError(
            f"after_position is {after_position} but the session's last position is {last_position}; "
            "nothing was written",
            reason=Reason.INVALID_MESSAGE,
            field="after_position",
            last_position=last_position,
        )


def check_pending(call_ids: Sequence[str], discard_pending: bool) -> None:
    """Removed entries may hold pending calls still unanswered only if the caller says to discard them.

    Raises:
        PreconditionError: reason EDIT_SPLITS_CALL, naming the calls.
    """
    if call_ids and not discard_pending:
        shown = ", ".join(repr(c) for c in sorted(call_ids)[:5])
        raise PreconditionError(
            f"the edit would remove {len(call_ids)} pending tool call(s) still awaiting a result ({shown}); "
            "append their results first, or set discard_pending to drop them; nothing was written",
            reason=Reason.EDIT_SPLITS_CALL,
            tool_call_ids=",".join(sorted(call_ids)[:5]),
        )


def edit_record(result: EditResult) -> str:
    """The stored record of an edit's first result (JSON text; never the removed entries' content)."""
    return json.dumps(
        {
            "edit": result.edit_position,
            "first": result.first_position,
            "last": result.last_position,
            "trace": result.trace_id,
        }
    )


def edit_from_record(text: str) -> EditResult:
    """The replayed result of an EditTail (no removed entries: they went with the first request)."""
    r = json.loads(text)
    return EditResult([], r["edit"], r["first"], r["last"], r["trace"], replayed=True)


def check_delete_splits(
    removed: AbstractSet[int], messages: Sequence[Message], calls: Sequence[IndexedCall], discard_pending: bool
) -> None:
    """A DeleteEntries may not take one half of a tool call and its result, unless ``discard_pending``.

    ``messages``: the removed entries that make or answer calls; ``calls``: the index rows of
    those calls. Split: a removed call whose result stays, a removed pending call still awaiting
    its result (as :func:`check_pending`), a removed result whose call stays.

    Raises:
        PreconditionError: reason EDIT_SPLITS_CALL, naming the calls.
    """
    by_id = {c.call_id: c for c in calls}
    split: set[str] = set()
    for m in messages:
        for call in m.tool_calls:
            row = by_id.get(call.id)
            if row is None or row.assistant_position != m.position:
                continue
            if (row.result_position is None and row.pending) or (
                row.result_position is not None and row.result_position not in removed
            ):
                split.add(call.id)
        row = by_id.get(m.tool_call_id) if m.tool_call_id else None
        if row is not None and row.result_position == m.position and row.assistant_position not in removed:
            split.add(m.tool_call_id)
    if split and not discard_pending:
        shown = ", ".join(repr(c) for c in sorted(split)[:5])
        raise PreconditionError(
            f"the delete would take one half of {len(split)} tool call(s) and their results ({shown}); "
            "select both halves, or set discard_pending; nothing was written",
            reason=Reason.EDIT_SPLITS_CALL,
            tool_call_ids=",".join(sorted(split)[:5]),
        )


def delete_record(result: DeleteEntriesResult) -> str:
    """The stored record of a DeleteEntries' first result (JSON text: positions only)."""
    return json.dumps(
        {"edit": result.edit_position, "removed": list(result.removed_positions), "trace": result.trace_id}
    )


def delete_from_record(text: str) -> DeleteEntriesResult:
    """The replayed result of a DeleteEntries."""
    r = json.loads(text)
    return DeleteEntriesResult(tuple(int(p) for p in r["removed"]), int(r["edit"]), str(r["trace"]), replayed=True)


def history_item(
    position: int,
    event_type: str,
    trace_id: str,
    ts: str,
    payload: str,
    fmt: str | None = None,
    item: bytes | None = None,
) -> Message | HistoryMark | None:
    """What a follower is sent for a stored history event.

    A message (a repair included) as a :class:`Message`; an edit, or a clear
    that erased the log, as a :class:`HistoryMark`; a clear that kept the
    log as None (as before edits existed).
    """
    if event_type == "edit":
        return HistoryMark(removed=edit_removed(payload))
    if event_type == "clear":
        return None if erased_count(payload) is None else HistoryMark(erased=True)
    return message_from_payload(position, event_type, trace_id, ts, payload, fmt, item)
