"""DeleteEntries: the write's sequence, once for every backend (``steps.py``; its rules are ``edits.py``).

A delete removes visible entries anywhere in a history, chosen by client id, prefix or range
(:meth:`~.port.Port.select_positions`: through the index of client ids, or by position). As an
EditTail's removal, the entries stay in the log: an ``edit`` event at the next position lists
them (marked ``scattered``: entries between them stay visible, so a later EditTail's walk does
not step over them) and each is marked hidden by it; removed calls leave the index and the calls
of removed results reopen. Refusals (a match over the bound, a split call, a moved last
position, an unknown session) are raised before the first write. A selector that matches
nothing writes nothing.

Must never: touch a connection or a clock (the port does), or decide what ``edits.py`` decides.
"""

# A write verb answers None: ``yield port.hide_entries(...)`` hands the call to the driver, and the
# None it sends back is not used (mypy's func-returns-value would refuse the ``yield`` of such a call).
# mypy: disable-error-code="func-returns-value"

from __future__ import annotations

from typing import Final

from .. import edits, rules, selection
from ..errors import SessionNotFoundError
from ..model import DeleteEntriesJob, DeleteEntriesResult, EntrySelection, Message
from .editing import record_removal
from .port import Port
from .steps import Steps
from .writes import replayed

__all__ = ["delete_entries"]

#: The event types of entries that make or answer tool calls (the only ones whose pairs a delete may split).
_PAIRED_TYPES: Final = frozenset({"assistant_message", "tool_result", "repair"})


def delete_entries(port: Port, job: DeleteEntriesJob) -> Steps[DeleteEntriesResult]:
    """Remove the visible entries ``job`` selects.

    Raises:
        SessionNotFoundError, SequenceConflictError, InvalidRequestError, PreconditionError: nothing written.
    """
    sid = job.session_id
    row, now = yield port.session_row(sid)
    record = yield from replayed(port, sid, job.request_id, "delete", job.fingerprint)
    if record is not None:
        return edits.delete_from_record(record)
    if row is None:
        raise SessionNotFoundError(f"session {sid!r} is not stored; nothing was written", session_id=sid)
    rules.check_expected(job.expected_last_position, row.last_position)
    after = max(job.from_position - 1, row.clear_position)
    chosen = EntrySelection(job.client_ids, job.client_id_prefix, after, job.to_position or row.last_position)
    found = yield port.select_positions(sid, chosen, job.max_entries + 1 if job.max_entries else 0)
    selection.check_match_count(len(found), job.max_entries)
    if not found:
        return DeleteEntriesResult((), 0, job.trace_id)
    positions = [p for p, _type in found]
    paired = [p for p, event_type in found if event_type in _PAIRED_TYPES]
    messages: list[Message] = (yield port.messages_at(sid, paired)) if paired else []
    call_ids = {c.id for m in messages for c in m.tool_calls if c.id} | {m.tool_call_id for m in messages}
    call_ids.discard("")
    calls = (yield port.indexed_calls(sid, sorted(call_ids))) if call_ids else []
    edits.check_delete_splits(set(positions), messages, calls, job.discard_pending)
    position = row.last_position + 1
    yield from record_removal(port, sid, position, positions, messages, job.trace_id, now, "", scattered=True)
    result = DeleteEntriesResult(tuple(positions), position, job.trace_id)
    if job.request_id:
        yield port.remember(sid, job.request_id, "delete", job.fingerprint, edits.delete_record(result), now)
    return result
