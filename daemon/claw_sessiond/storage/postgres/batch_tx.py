"""Plain appends of one session in one call of the server-side ``append_batch`` (``batch_sql.py``).

An append is *plain* (:func:`is_plain`) when all it needs is the row lock, the request-id and
expected-position checks, its events, the request record and the session row's update: no tool
calls or tool results, no usage, no client ids, no state deltas, no run (fencing). Group commit
(``group_commit.py``) sends a queue of them as ONE statement in its own implicit transaction: one
round trip and one COMMIT for up to ``MAX_GROUP`` appends, where ``writes.append`` in a savepoint
takes 8 or more. The call returns only once the COMMIT is done (``synchronous_commit=on``).

Each append's outcome is decided by the rules here, from what the function reports
(:func:`outcome`): an append it did not write is a replay, REQUEST_ID_REUSED or SEQUENCE_CONFLICT,
and wrote nothing, so one bad append in a queue fails only itself. If the server refuses the
statement itself (an error with the connection still open: everything was rolled back),
:func:`append_batch` returns None and the caller runs the queue again the general way, each
append in its own savepoint.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Final

import asyncpg

from ... import rules
from ...errors import SessiondError, StorageUnavailableError
from ...events import EVENT_SCHEMA_VERSION
from ...model import AppendJob, AppendResult
from ...rules import StoredRequest
from ..port import new_incarnation
from .feed import CHANNEL, note

__all__ = ["append_batch", "is_plain", "outcome"]

_log = logging.getLogger("claw_sessiond.store")

_CALL: Final = (
    "SELECT outcome, first_position, last_position, at, kind, fingerprint, result FROM append_batch("
    + ", ".join(f"${n}" for n in range(1, 17))
    + ")"
)


def is_plain(job: AppendJob) -> bool:
    """True if ``append_batch`` can write ``job`` exactly as ``writes.append`` would."""
    if job.run_id or job.state_deltas:
        return False
    return all(
        not (p.message.tool_calls or p.message.role == "tool" or p.message.usage is not None or p.message.client_id)
        for p in job.messages
    )


async def append_batch(
    conn: Any, session_id: str, jobs: Sequence[AppendJob], origin: str
) -> list[tuple[bool, Any]] | None:
    """Write the plain appends ``jobs`` of ``session_id`` in order, committed; each one's (ok, result or error).

    None: the server refused the call and rolled all of it back (run them the general way).
    Raises (mapped by the caller's ``map_pg_errors``) when the connection was lost: whether the
    COMMIT landed is then unknown.
    """
    messages = [p for job in jobs for p in job.messages]
    try:
        rows = await conn.fetch(
            _CALL,
            session_id,
            CHANNEL,
            note(origin, session_id),
            EVENT_SCHEMA_VERSION,
            [job.request_id for job in jobs],
            [job.fingerprint for job in jobs],
            [job.expected_last_position for job in jobs],
            [job.workdir for job in jobs],
            [job.trace_id for job in jobs],
            [json.dumps(job.trace_id) for job in jobs],
            new_incarnation(),
            [len(job.messages) for job in jobs],
            [p.event_type for p in messages],
            [p.payload for p in messages],
            [p.message.format or None for p in messages],
            [p.message.item if p.message.format else None for p in messages],
        )
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
        return None
    return [outcome(job, row) for job, row in zip(jobs, rows, strict=True)]


def outcome(job: AppendJob, row: Sequence[Any]) -> tuple[bool, Any]:
    """What one row of ``append_batch`` means for ``job``, decided by the rules."""
    kind = row[0]
    try:
        if kind == "ok":
            return True, AppendResult(int(row[1]), int(row[2]), str(row[3]), job.trace_id)
        if kind == "stored":
            stored = StoredRequest(str(row[4]), str(row[5]), str(row[6]))
            record = rules.replay_record(job.request_id, "append", job.fingerprint, stored, job.earlier_fingerprint)
            if record is not None:
                return True, rules.append_from_record(record)
        elif kind == "conflict":
            rules.check_expected(job.expected_last_position, int(row[2]))
    except SessiondError as exc:
        return False, exc
    # Not reached while the function's conditions are the rules': it wrote nothing for this append.
    _log.error("event=append_batch_disagrees session=%s outcome=%s", job.session_id, kind)
    return False, StorageUnavailableError(f"append not written: append_batch answered {kind!r}")
