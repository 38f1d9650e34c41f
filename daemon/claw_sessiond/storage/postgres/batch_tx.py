"""Plain appends of one session: decided by Append's one sequence, applied in one statement.

An append is *plain* (:func:`is_plain`) when all it needs is the row lock, the request-id and
expected-position checks, its events, the request record and the session row's update: no tool
calls or tool results, no usage, no client ids, no state deltas, no run (fencing). Group commit
(``group_commit.py``) hands a queue of them to :func:`append_batch`, which costs four round
trips for up to ``MAX_GROUP`` appends, where each append in a savepoint takes 8 or more:

1. one simple query: ``BEGIN`` and the follow-all announcement (``follow.ANNOUNCE_SQL``);
2. one statement: the session row locked (``FOR UPDATE``), the transaction's time, and the
   stored records of the queue's request ids;
3. in memory, each append's own sequence (``writes.append``, the same code as every other
   Append) over a port that answers from those reads and records the writes asked of it
   (:class:`_Plan`): the rules decide a replay, REQUEST_ID_REUSED or SEQUENCE_CONFLICT, and an
   append they refuse fails alone and records nothing;
4. one statement applying what was recorded: the events, the request records, the session row's
   update and the notification to other daemons;
5. ``COMMIT``; only then are the results handed out (``synchronous_commit=on``).

A session not stored yet (its creation must wait for a concurrent creator's commit) returns
None, and so does a statement the server refuses with the connection still open (all of it
rolled back): the caller runs the queue again the general way, each append in its own
savepoint. The records are read in the locking statement, so under READ COMMITTED a record
committed by the writer the lock waited for is not seen; inserting it again is then refused by
the key of ``requests`` and the general way replays it.

The server function ``append_batch`` of schema version 5 (``batch_sql.py``) is no longer called:
it decided the replay and expected-position checks again in PL/pgSQL.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Final, cast

import asyncpg

from ...errors import SessiondError
from ...events import EVENT_SCHEMA_VERSION
from ...model import AppendJob, PreparedMessage
from ...rules import StoredRequest
from .. import writes
from ..port import SESSION_COLS, Port, SessionRow, session_row
from ..steps import run_sync
from .feed import CHANNEL, note
from .follow import ANNOUNCE_SQL
from .port import NOW_SQL

__all__ = ["append_batch", "is_plain"]

_log = logging.getLogger("claw_sessiond.store")

_BEGIN: Final = "BEGIN; " + ANNOUNCE_SQL

#: The row locked, the time, and the stored records of the request ids ``$2`` (JSON ``[[id, kind, fp, result]]``).
_READ: Final = (
    f"SELECT {SESSION_COLS}, {NOW_SQL}, (SELECT json_agg(json_build_array(r.request_id, r.kind, r.fingerprint, "
    "r.result)) FROM requests AS r WHERE r.session_id = $1 AND r.request_id = ANY($2::text[])) "
    "FROM sessions WHERE session_id = $1 FOR UPDATE OF sessions"
)

#: What a plan recorded, in one statement (data-modifying ``WITH`` parts run once each, to completion).
_APPLY: Final = (
    "WITH ev AS (INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item) "
    "SELECT $1, u.pos, u.t, u.tr, $2, $3, u.p, u.f, u.it "
    "FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bytea[]) AS u(pos, t, tr, p, f, it) "
    "ORDER BY u.pos), "
    "rq AS (INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at) "
    "SELECT $1, r.id, r.k, r.fp, r.res, $2 FROM unnest($10::text[], $11::text[], $12::text[], $13::text[]) "
    "AS r(id, k, fp, res)), "
    "up AS (UPDATE sessions SET last_position = $14, message_count = message_count + $15, updated_at = $2, "
    "workdir = CASE WHEN $16 <> '' THEN $16 ELSE workdir END WHERE session_id = $1) "
    "SELECT pg_notify($17, $18)"
)


def is_plain(job: AppendJob) -> bool:
    """True if ``append_batch`` can write ``job``: the port of :class:`_Plan` has every verb its sequence asks."""
    if job.run_id or job.state_deltas:
        return False
    return all(
        not (p.message.tool_calls or p.message.role == "tool" or p.message.usage is not None or p.message.client_id)
        for p in job.messages
    )


class _Plan:
    """The port a plain append's sequence runs over here: reads answered from the locking statement,
    writes recorded for :data:`_APPLY` (a plain append asks no other verb)."""

    def __init__(self, row: SessionRow, now: str, stored: dict[str, StoredRequest]) -> None:
        self.row = row
        self.now = now
        self.stored = stored
        self.events: list[tuple[int, PreparedMessage, str, str]] = []  # position, entry, trace, payload
        self.requests: list[tuple[str, str, str, str]] = []  # id, kind, fingerprint, record
        self.added = 0
        self.workdir = ""  # the last non-empty workdir asked for ('' changes nothing)

    def session_row(self, session_id: str) -> tuple[SessionRow, str]:
        return self.row, self.now

    def stored_request(self, session_id: str, request_id: str) -> StoredRequest | None:
        return self.stored.get(request_id)

    def insert_entry(
        self, session_id: str, position: int, prepared: PreparedMessage, trace_id: str, ts: str, payload: str
    ) -> None:
        self.events.append((position, prepared, trace_id, payload))

    def advance_session(self, session_id: str, last_position: int, added: int, now: str, workdir: str) -> None:
        self.row.last_position = last_position
        self.added += added
        self.workdir = workdir or self.workdir

    def remember(self, session_id: str, request_id: str, kind: str, fingerprint: str, record: str, now: str) -> None:
        self.requests.append((request_id, kind, fingerprint, record))
        self.stored[request_id] = StoredRequest(kind, fingerprint, record)

    def run(self, job: AppendJob) -> tuple[bool, Any]:
        """``job``'s sequence over this plan: (True, its result) or (False, the rules' refusal, nothing recorded)."""
        mark = (self.row.last_position, len(self.events), len(self.requests), self.added, self.workdir)
        try:
            return True, run_sync(writes.append(cast(Port, self), job))
        except SessiondError as exc:
            self.row.last_position, events, requests, self.added, self.workdir = mark
            for request_id, *_ in self.requests[requests:]:
                self.stored.pop(request_id, None)
            del self.events[events:], self.requests[requests:]
            return False, exc


async def append_batch(
    conn: Any, session_id: str, jobs: Sequence[AppendJob], origin: str
) -> list[tuple[bool, Any]] | None:
    """Write the plain appends ``jobs`` of ``session_id`` in order, committed; each one's (ok, result or error).

    None: the session is not stored yet, or the server refused a statement and rolled all of it
    back (run them the general way). Raises (mapped by the caller's ``map_pg_errors``) when the
    connection was lost: whether the COMMIT landed is then unknown.
    """
    try:
        await conn.execute(_BEGIN)
        found = await conn.fetchrow(_READ, session_id, [job.request_id for job in jobs if job.request_id])
        row = session_row(found)
        if row is None:
            await conn.execute("ROLLBACK")
            return None
        stored = {r[0]: StoredRequest(r[1], r[2], r[3]) for r in json.loads(found[14] or "[]")}
        plan = _Plan(row, str(found[13]), stored)
        outcomes = [plan.run(job) for job in jobs]
        if plan.events:
            await _apply(conn, session_id, plan, origin)
        await conn.execute("COMMIT")
    except asyncpg.PostgresError as exc:
        if conn.is_closed():
            raise
        if conn.is_in_transaction():
            await conn.execute("ROLLBACK")
        _log.warning(
            "event=append_batch_refused session=%s appends=%d sqlstate=%s error=%s",
            session_id,
            len(jobs),
            getattr(exc, "sqlstate", ""),
            type(exc).__name__,
        )
        return None
    return outcomes


async def _apply(conn: Any, session_id: str, plan: _Plan, origin: str) -> None:
    events = plan.events
    await conn.execute(
        _APPLY,
        session_id,
        plan.now,
        EVENT_SCHEMA_VERSION,
        [e[0] for e in events],
        [e[1].event_type for e in events],
        [e[2] for e in events],
        [e[3] for e in events],
        [e[1].message.format or None for e in events],
        [e[1].message.item if e[1].message.format else None for e in events],
        [r[0] for r in plan.requests],
        [r[1] for r in plan.requests],
        [r[2] for r in plan.requests],
        [r[3] for r in plan.requests],
        plan.row.last_position,
        plan.added,
        plan.workdir,
        CHANNEL,
        note(origin, session_id),
    )
