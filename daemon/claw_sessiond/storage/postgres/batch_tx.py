"""Plain appends of one session: decided by ``writes.append`` in Python, applied in one statement.

An append is *plain* (:func:`is_plain`) when all it needs is the row, the request-id and
expected-position checks, its events, the request record and the session row's update: no tool
calls or tool results, no usage, no client ids, no state deltas, no run (fencing). Group commit
(``group_commit.py``) hands a queue of them to :func:`append_batch`:

1. the decision, in Python: each append runs ``writes.append`` (the sequence every append runs,
   on both backends) over a port that answers from what is known of the session (its row as the
   last apply left it, :data:`Known`) and keeps the rows it writes (``batch_plan.py``); an append
   that fails a rule (replay, REQUEST_ID_REUSED, SEQUENCE_CONFLICT) keeps nothing and fails alone;
2. the apply: one call of ``apply_appends`` (``batch_sql.py``), in its own implicit transaction,
   writes all the kept rows after checking under the row lock that the row is still the version
   the plan saw and that no request id the plan took for new is stored (the guard). It returns
   the row as it left it (known for the next queue), and only once its COMMIT is done
   (``synchronous_commit=on``).

If the guard fails (another writer, maybe another daemon, wrote to the session since; or this
daemon knew nothing of the session yet) the call wrote nothing and answered the row and the
stored records of the queue's request ids instead: the queue is decided again from those, at
most :data:`PLAN_ATTEMPTS` times, then written the general way. So a queue costs one round trip
when this daemon's last apply is still the session's latest write, two when it is not. A queue
decided from a fresh answer that writes nothing (every append a replay or refused) needs no
further call.

The time: the database's clock at the apply, as every port verb's. The plan carries a marker
(:data:`_MARK`) where the time goes; the apply writes its transaction's time in the events, the
session row and, at the marker's place, the request record, and the results get it from the
answer.

The order rule holds (SPEC §8): every write that commits takes the session's row lock first, and
an apply commits only rows decided from the row version it holds the lock on, so the writes of a
session form one total order whichever daemon sends them.

If the server refuses a statement (an error with the connection still open: nothing was
written), :func:`append_batch` returns None and the caller runs the queue the general way, each
append in its own savepoint.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Sequence
from typing import Any, Final

import asyncpg

from ...errors import SessiondError
from ...events import EVENT_SCHEMA_VERSION
from ...model import AppendJob, AppendResult
from ...rules import StoredRequest
from ..port import SessionRow, new_incarnation, session_row
from ..steps import run_sync
from ..writes import append
from .batch_plan import NotPlanned, PlannedAppends
from .feed import CHANNEL, note

__all__ = ["PLAN_ATTEMPTS", "Known", "append_batch", "is_plain"]

_log = logging.getLogger("claw_sessiond.store")

#: Decisions of one queue before it goes the general way (the guard failed each time).
PLAN_ATTEMPTS: Final = 3

#: What this daemon knows of a session: the version (``xmin``) of its row ('' for none) and the row.
Known = tuple[str, SessionRow | None]

#: The time in a plan, until the apply writes the database's (a NUL and random text: no trace id holds it).
_MARK: Final = "\x00" + secrets.token_hex(12)
_MARK_JSON: Final = json.dumps(_MARK)

_APPLY_SQL: Final = "SELECT * FROM apply_appends(" + ", ".join(f"${n}" for n in range(1, 26)) + ")"


def is_plain(job: AppendJob) -> bool:
    """True if ``writes.append`` of ``job`` needs only what :func:`append_batch` reads."""
    if job.run_id or job.state_deltas:
        return False
    return all(
        not (p.message.tool_calls or p.message.role == "tool" or p.message.usage is not None or p.message.client_id)
        for p in job.messages
    )


async def append_batch(
    conn: Any, session_id: str, jobs: Sequence[AppendJob], origin: str, known: Known | None
) -> tuple[list[tuple[bool, Any]] | None, Known | None]:
    """Write the plain appends ``jobs`` of ``session_id`` in order, committed: each one's (ok, result or error),
    and what is known of the session after them (``known``: before them, None for nothing).

    None for the outcomes: nothing was written, run them the general way (the server refused a
    statement, or the guard failed :data:`PLAN_ATTEMPTS` times).
    Raises (mapped by the caller's ``map_pg_errors``) when the connection was lost: whether the
    COMMIT landed is then unknown.
    """
    ids = sorted({job.request_id for job in jobs if job.request_id})
    stored: dict[str, StoredRequest] = {}
    fresh = False  # ``known`` and ``stored`` are the database's answer, not a memory
    try:
        for _ in range(PLAN_ATTEMPTS + 1):
            plan, outcomes = None, []
            if known is not None:
                plan = PlannedAppends(known[1], _MARK, stored)
                outcomes = [_decide(plan, job) for job in jobs]
                if fresh and plan.empty():
                    return outcomes, known
            new_ids = [i for i in ids if i not in stored]
            got = tuple(await conn.fetchrow(_APPLY_SQL, *_apply_args(session_id, origin, known, ids, new_ids, plan)))
            version = got[2] or ""
            known = (version, session_row(got[3:-1]) if version else None)
            if got[0]:
                return [_timed(outcome, str(got[1])) for outcome in outcomes], known
            stored = {str(r[0]): StoredRequest(str(r[1]), str(r[2]), str(r[3])) for r in got[-1]}
            fresh = True
        _log.info("event=append_batch_contended session=%s appends=%d", session_id, len(jobs))
        return None, None
    except asyncpg.PostgresError as exc:
        if conn.is_closed():
            raise
        _log.warning(
            "event=append_batch_refused session=%s appends=%d sqlstate=%s error=%s",
            session_id,
            len(jobs),
            getattr(exc, "sqlstate", ""),
            type(exc).__name__,
        )
        return None, None
    except NotPlanned as exc:  # is_plain let through an append that needs more reads: a defect, written safely
        _log.error("event=append_batch_not_plain session=%s verb=%s", session_id, exc)
        return None, None


def _decide(plan: PlannedAppends, job: AppendJob) -> tuple[bool, Any]:
    """``writes.append`` of ``job`` over the plan, as in a savepoint: its result, or its error and no rows."""
    mark = plan.mark()
    try:
        return True, run_sync(append(plan.as_port(), job))
    except SessiondError as exc:
        plan.undo(mark)
        return False, exc


def _timed(outcome: tuple[bool, Any], now: str) -> tuple[bool, Any]:
    """An outcome with the apply's time where the plan had the marker (a replay keeps its stored time)."""
    ok, value = outcome
    if ok and isinstance(value, AppendResult) and value.created_at == _MARK:
        return ok, AppendResult(value.first_position, value.last_position, now, value.trace_id, value.replayed)
    return outcome


def _around_mark(record: str) -> tuple[str, str]:
    """A request record cut where the time goes: (before, after)."""
    head, found, tail = record.partition(_MARK_JSON)
    if not found or _MARK_JSON in tail:
        raise NotPlanned("a request record without its time")
    return head, tail


def _apply_args(
    session_id: str, origin: str, known: Known | None, ids: list[str], new_ids: list[str], plan: PlannedAppends | None
) -> list[Any]:
    """The arguments of ``apply_appends`` (its parameters in order, ``batch_sql.py``); ``plan`` None: only read."""
    events = plan.events if plan else []
    requests = plan.requests if plan else []
    cut = [_around_mark(r[3]) for r in requests]
    row = known[1] if known else None
    return [
        session_id,
        CHANNEL,
        note(origin, session_id),
        None if known is None else known[0],
        row.last_position if row else 0,
        ids,
        new_ids,
        new_incarnation(),
        plan.created_workdir if plan else "",
        EVENT_SCHEMA_VERSION,
        [e[0] for e in events],
        [e[1] for e in events],
        [e[2] for e in events],
        [e[3] for e in events],
        [e[4] for e in events],
        [e[5] for e in events],
        [e[6] for e in events],
        [r[0] for r in requests],
        [r[1] for r in requests],
        [r[2] for r in requests],
        [c[0] for c in cut],
        [c[1] for c in cut],
        plan.row.last_position if plan and plan.row else 0,
        plan.added if plan else 0,
        plan.workdir if plan else "",
    ]
