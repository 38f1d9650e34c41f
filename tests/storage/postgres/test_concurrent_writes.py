"""Writes that create their session, sent from two daemons on one PostgreSQL database at once.

The session row does not exist yet, so neither daemon's first statement (the row lock) waits:
both find no row, and the second's insert of the row waits for the first's commit. The write's
sequence (``storage/writes.py``) then asks again for its request record and checks the expected
position on the row it got: one write is stored, the other replays it or is refused, whichever
daemon wins and however the two interleave.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from claw_sessiond.config import Config
from claw_sessiond.errors import SequenceConflictError
from claw_sessiond.model import UsageDelta
from claw_sessiond.storage import Storage, open_storage
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import assistant, clear, contents, event_types, job

ROUNDS = 5


async def _two_daemons(tmp_path: Path) -> tuple[Storage, Storage]:
    (tmp_path / ".claw").mkdir(mode=0o700, exist_ok=True)
    config = Config(workspace=tmp_path, database_url=POSTGRES.database_for(str(tmp_path)))
    return await open_storage(config), await open_storage(config)


async def test_one_request_creating_its_session_from_two_daemons_is_written_once(tmp_path: Path) -> None:
    a, b = await _two_daemons(tmp_path)
    try:
        for i in range(ROUNDS):
            sid = f"append-{i}"  # a call: not a plain append, so the sequence writes it (not append_batch)
            made = await asyncio.gather(*(s.append(job(sid, assistant("c1"), request_id="r")) for s in (a, b)))
            assert sorted(m.replayed for m in made) == [False, True]
            assert made[0].last_position == made[1].last_position == 1
            assert await event_types(a, sid) == ["assistant_message"]

            sid = f"usage-{i}"
            delta = UsageDelta(input_tokens=7)
            used = await asyncio.gather(
                *(s.record_usage(sid, delta, request_id="r", workdir="", trace_id="t") for s in (a, b))
            )
            assert sorted(u.replayed for u in used) == [False, True]
            assert [u.usage.input_tokens for u in used] == [7, 7]
            assert (await a.load(sid, "", "t", repair=False)).session.usage.input_tokens == 7

            sid = f"event-{i}"
            events = await asyncio.gather(
                *(s.record_event(sid, "error", '{"x":1}', request_id="r", trace_id="t") for s in (a, b))
            )
            assert sorted(e.replayed for e in events) == [False, True]
            assert events[0].event_id == events[1].event_id
            assert await event_types(b, sid) == ["error"]

            sid = f"clear-{i}"
            cleared = await asyncio.gather(*(clear(s, sid, request_id="r") for s in (a, b)))
            assert sorted(c.replayed for c in cleared) == [False, True]
            assert cleared[0].position == cleared[1].position == 1
    finally:
        await a.close()
        await b.close()


async def test_two_clears_of_a_new_session_from_two_daemons_one_is_refused(tmp_path: Path) -> None:
    a, b = await _two_daemons(tmp_path)
    try:
        for i in range(ROUNDS):
            sid = f"new-{i}"
            cleared = await asyncio.gather(
                clear(a, sid, expected=-1, request_id="ra"),
                clear(b, sid, expected=-1, request_id="rb"),
                return_exceptions=True,
            )
            refused = [c for c in cleared if isinstance(c, SequenceConflictError)]
            assert len(refused) == 1, cleared  # expected -1 (a new session) holds for one of them only
            assert await event_types(a, sid) == ["clear"]
            assert await contents(b, sid) == []
    finally:
        await a.close()
        await b.close()
