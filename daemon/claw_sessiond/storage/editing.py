"""EditTail: the write's sequence, once for every backend (``steps.py``; its rules are ``edits.py``).

An edit reads the tail it removes backwards from the end of the history
(:meth:`~.port.Port.tail_rows`; ``edits.TailWalk`` decides what each row means), checks the
pending calls of the removed entries, writes the ``edit`` event, marks the removed entries
hidden by it, takes the removed calls out of the index and reopens the calls whose results
went, and then appends the replacements with Append's own sequence (``writes.append``). Every
read and write goes through an index by key or by a range of positions at the end: the cost is
that of the entries touched, not of the history. A refusal is raised before the first write.

Must never: touch a connection or a clock (the port does), or decide what ``edits.py`` decides.
"""

# A write verb answers None: ``yield port.hide_entries(...)`` hands the call to the driver, and the
# None it sends back is not used (mypy's func-returns-value would refuse the ``yield`` of such a call).
# mypy: disable-error-code="func-returns-value"

from __future__ import annotations

from collections.abc import Sequence

from .. import edits, rules
from ..events import encode_edit
from ..model import EditJob, EditResult, Message
from .port import Port, SessionRow
from .steps import Steps
from .writes import append, replayed

__all__ = ["edit_tail", "record_removal"]


def _removed(port: Port, job: EditJob, row: SessionRow) -> Steps[list[Message]]:
    """The visible entries the edit removes, in position order (read from the end of the history)."""
    walk = edits.TailWalk(
        remove_last=job.remove_last,
        after_position=job.after_position,
        clear_position=row.clear_position,
        last_position=row.last_position,
    )
    while not walk.done:
        floor, cursor = walk.window()
        rows = yield port.tail_rows(job.session_id, floor, cursor, walk.batch())
        if not rows:
            walk.exhausted()
            break
        for position, event_type, hidden, edit_payload, size in rows:
            walk.see(position, event_type, hidden, edit_payload, size)
    if job.remove_last:
        edits.check_remove_count(job.remove_last, row.message_count, len(walk.removed))
    if not walk.removed:
        return []
    found: list[Message] = yield port.messages_at(job.session_id, sorted(walk.removed))
    return found


def record_removal(
    port: Port,
    sid: str,
    position: int,
    positions: Sequence[int],
    paired: Sequence[Message],
    trace_id: str,
    now: str,
    workdir: str,
    *,
    scattered: bool = False,
) -> Steps[None]:
    """The edit event at ``position`` that hides the entries at ``positions`` (EditTail's and DeleteEntries'
    one sequence); ``paired``: those removed entries that make or answer tool calls. The session advances."""
    yield port.insert_event(sid, position, "edit", trace_id, now, encode_edit(positions, scattered=scattered))
    if positions:
        yield port.hide_entries(sid, [(p, position) for p in positions])
    if paired:
        # A removed result reopens its call (unless the call goes too); a removed call leaves the index.
        yield port.reopen_calls(sid, [(m.tool_call_id, m.position) for m in paired if m.tool_call_id])
        yield port.unindex_calls(sid, [(c.id, m.position) for m in paired for c in m.tool_calls])
    yield port.advance_session(sid, position, -len(positions), now, workdir)


def edit_tail(port: Port, job: EditJob, max_open_calls: int = 0) -> Steps[EditResult]:
    """Edit the tail of a session (``max_open_calls``: as Append's; 0 for no limit).

    Raises:
        SequenceConflictError, InvalidRequestError, PreconditionError, ToolCallStateError: nothing written.
    """
    sid = job.session_id
    row, now = yield port.session_row(sid)
    record = yield from replayed(port, sid, job.request_id, "edit", job.fingerprint)
    if record is not None:
        return edits.edit_from_record(record)
    last = row.last_position if row is not None else 0
    rules.check_expected(job.expected_last_position, last)
    if job.remove_last:
        edits.check_remove_count(job.remove_last, row.message_count if row is not None else 0)
    if job.after_position:
        edits.check_after_position(job.after_position, last)
    removed = (yield from _removed(port, job, row)) if row is not None else []
    call_ids = [c.id for m in removed for c in m.tool_calls if c.id]
    edits.check_pending((yield port.pending_calls(sid, call_ids)) if call_ids else [], job.discard_pending)
    if row is None:
        row, now = yield port.ensure_session(sid, job.workdir)
    position = row.last_position + 1
    yield from record_removal(
        port, sid, position, [m.position for m in removed], removed, job.trace_id, now, job.workdir
    )
    first = last = 0
    if job.replacements is not None:
        appended = yield from append(port, job.replacements, max_open_calls)
        first, last = appended.first_position, appended.last_position
    result = EditResult(removed, position, first, last, job.trace_id)
    if job.request_id:
        yield port.remember(sid, job.request_id, "edit", job.fingerprint, edits.edit_record(result), now)
    return result
