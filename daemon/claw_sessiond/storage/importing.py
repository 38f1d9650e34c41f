"""Import: an imported session's events written and its derived rows rebuilt, once for every backend (``steps.py``).

The events are written as exported (a merge first drops those already stored and moves the
rest up after the stored history: ``rules.merge_events``, ``rules.shifted_edit``); then the
session's row, tool-call index, hidden marks and usage by model are rebuilt from the session's
whole log (``rules.fold_events``), and its state, labels, tool policy and lineage from the same
events (``state.fold_settings``). All in the caller's transaction: a refusal writes nothing.

A new id is first *claimed* with a placeholder row (:meth:`~.port.Port.claim_session`), which
the rebuilt row replaces: two imports (or an import and a CreateSession, a fork, an Append) of
one new id at once on PostgreSQL would otherwise both find no row, and the second would end on
the unique keys of ``events`` or ``sessions``. The claim waits for the other transaction; once
it has committed the row is there, held here, and the import decides on it (SESSION_EXISTS in
mode refuse).

Must never: touch a connection or a clock (the port does), or decide what a rule decides.
"""

# A write verb answers None: ``yield port.write_labels(...)`` hands the call to the driver, and the
# None it sends back is not used (mypy's func-returns-value would refuse the ``yield`` of such a call).
# mypy: disable-error-code="func-returns-value"

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Final

from .. import rules
from ..errors import StorageUnavailableError
from ..history import IndexedCall
from ..model import ImportMode
from ..state import EMPTY, fold_settings
from .port import Port, SessionRow, new_incarnation
from .steps import Steps

if TYPE_CHECKING:
    from ..export import ImportedSession

__all__ = ["import_session"]

#: Rounds of "no row, but the claim found one" before an import gives way (each needs another
#: transaction to create and then delete the id in between).
_CLAIM_ATTEMPTS: Final = 3


def _hold_or_claim(port: Port, session_id: str) -> Steps[SessionRow | None]:
    """The stored session's row, held; or None after claiming the id with a placeholder row of this transaction.

    Raises:
        StorageUnavailableError: the id was created and deleted by others between our statements, every time.
    """
    for _ in range(_CLAIM_ATTEMPTS):
        row: SessionRow | None
        row, _now = yield port.session_row(session_id)
        if row is not None:
            return row
        if (yield port.claim_session(session_id, "", EMPTY, EMPTY, "", 0)) is not None:
            return None
    raise StorageUnavailableError(
        f"session {session_id!r} is being created and deleted by others at once; try the import again"
    )


def import_session(port: Port, session: ImportedSession, mode: ImportMode, max_open_calls: int = 0) -> Steps[int]:
    """Write an imported session's events and rebuild its derived rows; returns events written.

    Raises:
        PreconditionError: SESSION_EXISTS, mode refuse and the id is stored.
        InvalidRequestError: INVALID_IMPORT, the events are not a consistent history, a folded state is
            too large, or the session would hold more open calls than ``max_open_calls`` (0: no limit).
        StorageUnavailableError: as :func:`_hold_or_claim`.
    """
    header = session.header
    sid = header.session_id
    row = yield from _hold_or_claim(port, sid)
    events = list(session.events)
    created_at, updated_at, workdir = header.created_at, header.updated_at, header.workdir
    rules.check_import_mode(sid, row is not None, mode)
    kept: str | None = None
    if row is not None:
        if mode == "replace":
            yield port.delete_session(sid)
        else:  # merge: skip events already stored (same type, time, trace and payload), append the rest
            kept = yield port.incarnation(sid)
            stored = {rules.stored_event_key(t, ts, trace, p) for _pos, t, ts, trace, p in (yield port.events_of(sid))}
            events, offset = rules.merge_events(stored, events, row.last_position)
            if offset:
                events = [
                    dataclasses.replace(
                        e,
                        position=None if e.position is None else e.position + offset,
                        payload=rules.shifted_edit(e.payload, offset) if e.type == "edit" else e.payload,
                    )
                    for e in events
                ]
            created_at, workdir = row.created_at, row.workdir or workdir
            updated_at = max(row.updated_at, updated_at)
    yield port.insert_events(sid, events)
    log = yield port.events_of(sid)
    fold = rules.fold_events(sid, [(pos, t, p) for pos, t, _ts, _trace, p in log])
    yield port.drop_derived_rows(sid)
    rebuilt = SessionRow(
        sid, workdir, created_at, updated_at, fold.last_position, fold.clear_position, fold.message_count, fold.usage
    )
    yield port.insert_session_row(rebuilt, kept or new_incarnation())
    calls = [
        IndexedCall(call_id, c.assistant_position, c.call_index, c.result_position, c.pending, c.repair_mode)
        for call_id, c in fold.calls.items()
    ]
    yield port.index_calls(sid, calls)
    # What the edits took out of the projection, and synthetic repairs superseded by a real result: the log
    # keeps them, out of the projection.
    yield port.hide_entries(sid, sorted(fold.hidden.items()))
    yield port.insert_model_usage(sid, fold.by_model)
    # State, labels, tool policy and lineage, from the same events.
    folded = fold_settings(sid, ((t, p) for pos, t, _ts, _trace, p in log if pos is None and t in _SETTINGS_TYPES))
    yield port.set_settings(sid, folded.state, folded.tool_policy, folded.forked_from, folded.forked_at_position)
    yield port.write_labels(sid, folded.labels)
    if max_open_calls:
        # Refused rather than stored: its repair would hold the writer beyond the bound.
        rules.check_imported_open_calls((yield port.open_call_count(sid)), max_open_calls, sid)
    return len(events)


#: The session-level events a session's settings fold from.
_SETTINGS_TYPES: Final = frozenset({"state", "session_settings"})
