"""A queue of plain appends decided by ``writes.append`` itself, over what is known of its session (``batch_tx.py``).

:class:`PlannedAppends` is a port (``storage/port.py``) whose reads answer from what the caller
knows of a session (its row as the last apply left it or as the database last answered, and the
stored records of the queue's request ids that answer gave) and whose writes are kept as rows to
apply later in one statement (``batch_sql.APPLY_APPENDS_SQL``, which first checks that what the
plan was decided from still holds). Each append of the queue runs the very sequence every other
append runs (``writes.append``, driven by ``steps.run_sync``): the replay, the expected-position
check, the positions and the request record are decided by the same code and rules on both
backends, none of them again in SQL.

An append runs as if in its own savepoint (:meth:`PlannedAppends.mark` / :meth:`PlannedAppends.undo`):
one that fails a rule keeps nothing, and the next one sees the rows as before it. A later append
of the queue sees the earlier ones' rows: its position follows theirs, and a request id one of
them stored is a replay.

A verb this port does not answer (a tool call, a tool result, a client id, a policy, a state
delta: reads beyond what is known) raises :class:`NotPlanned`; ``batch_tx.is_plain`` keeps such
appends out of the queue, so that is a defect, and the caller writes the queue the general way.

Must never: touch a connection or a clock (its time is the marker it is given; the apply writes the
database's time in its place).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn, cast

from ...model import PreparedMessage, Usage
from ...rules import StoredRequest
from ..nul_text import db_text
from ..port import Port, SessionRow

__all__ = ["Mark", "NotPlanned", "PlannedAppends", "PlannedEvent", "PlannedRequest"]

#: An event row to insert: (position, type, trace id, payload, format, item, client id).
PlannedEvent = tuple[int, str, str, str, str | None, bytes | None, str | None]
#: A request record to insert: (request id, kind, fingerprint, record).
PlannedRequest = tuple[str, str, str, str]
#: What :meth:`PlannedAppends.undo` goes back to.
Mark = tuple[int, int, SessionRow | None, bool, int, str]


class NotPlanned(Exception):
    """An append asked for a read or a write beyond the snapshot (it is not plain)."""


class PlannedAppends:
    """The port of a queue's plan: reads from one snapshot, writes kept in order (see the module)."""

    __slots__ = ("_stored", "added", "created", "created_workdir", "events", "now", "requests", "row", "workdir")

    def __init__(self, row: SessionRow | None, now: str, stored: Mapping[str, StoredRequest]) -> None:
        self.row = row  # the session's row as the plan has it so far (None: not stored yet)
        self.now = now  # the time as the plan writes it (``batch_tx``'s marker, replaced by the apply)
        self.created = False  # the plan creates the row
        self.created_workdir = ""  # the workdir of the row it creates
        self.events: list[PlannedEvent] = []
        self.requests: list[PlannedRequest] = []
        self.added = 0  # messages the plan adds to message_count
        self.workdir = ""  # the last non-empty workdir the plan sets ('' sets none)
        self._stored = dict(stored)

    def as_port(self) -> Port:
        """This plan as a sequence sees it (``steps.run_sync`` drives it)."""
        return cast(Port, self)

    def empty(self) -> bool:
        """True if the plan writes nothing."""
        return not (self.events or self.requests or self.created)

    def mark(self) -> Mark:
        """Where the plan is now (an append's savepoint)."""
        return (len(self.events), len(self.requests), self.row, self.created, self.added, self.workdir)

    def undo(self, mark: Mark) -> None:
        """Forget every row planned since ``mark`` (the append failed a rule)."""
        events, requests, self.row, self.created, self.added, self.workdir = mark
        for request_id, *_ in self.requests[requests:]:
            del self._stored[request_id]
        del self.events[events:], self.requests[requests:]

    # -- the verbs of writes.append on a plain append

    def session_row(self, session_id: str) -> tuple[SessionRow | None, str]:
        return self.row, self.now

    def stored_request(self, session_id: str, request_id: str) -> StoredRequest | None:
        return self._stored.get(request_id)

    def ensure_session(self, session_id: str, workdir: str) -> tuple[SessionRow, str]:
        if self.row is None:
            self.row = SessionRow(session_id, workdir, self.now, self.now, 0, 0, 0, Usage())
            self.created = True
            self.created_workdir = workdir
        return self.row, self.now

    def insert_entry(
        self, session_id: str, position: int, prepared: PreparedMessage, trace_id: str, ts: str, payload: str
    ) -> None:
        msg = prepared.message
        item = msg.item if msg.format else None
        client_id = db_text(msg.client_id) or None
        self.events.append((position, prepared.event_type, trace_id, payload, msg.format or None, item, client_id))

    def advance_session(self, session_id: str, last_position: int, added: int, now: str, workdir: str) -> None:
        row = self.row
        assert row is not None  # held (or created) first by the sequence
        # Built, not dataclasses.replace(): that measured 8 us a call, most of a plain append's planning.
        self.row = SessionRow(
            session_id,
            workdir or row.workdir,
            row.created_at,
            now,
            last_position,
            row.clear_position,
            row.message_count + added,
            row.usage,
        )
        self.added += added
        self.workdir = workdir or self.workdir

    def remember(self, session_id: str, request_id: str, kind: str, fingerprint: str, record: str, now: str) -> None:
        self.requests.append((request_id, kind, fingerprint, record))
        self._stored[request_id] = StoredRequest(kind, fingerprint, record)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def beyond(*_args: Any, **_kwargs: Any) -> NoReturn:
            raise NotPlanned(name)

        return beyond
