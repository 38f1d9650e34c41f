"""Many writes to one session submitted at once (what group commit batches), on every backend.

Each write must behave as if it had a transaction of its own: submission order kept, a write that
fails (a sequence conflict, a duplicate client id) gets its own error and writes nothing while the
writes queued beside it commit, and a request id repeated inside one group is applied once and
replayed for the other.
"""

from __future__ import annotations

import asyncio

import pytest

from claw_sessiond.errors import AlreadyExistsError, SequenceConflictError
from claw_sessiond.model import Message
from claw_sessiond.storage import Storage
from tests.storage._support import append, contents, job

N = 60


async def test_writes_submitted_together_keep_their_order_and_each_its_own_outcome(storage: Storage) -> None:
    await append(storage, "s", Message("user", "first", client_id="dup"))
    calls = []
    for i in range(N):
        if i == 10:
            calls.append(storage.append(job("s", Message("user", "conflict"), expected=999)))
        elif i == 20:
            calls.append(storage.append(job("s", Message("user", "dup client id", client_id="dup"))))
        elif i in (30, 31):
            calls.append(storage.append(job("s", Message("user", "same request"), request_id="r-30")))
        else:
            calls.append(storage.append(job("s", Message("user", f"m{i}"))))
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(results[10], SequenceConflictError), results[10]
    assert isinstance(results[20], AlreadyExistsError), results[20]
    ok = [r for i, r in enumerate(results) if i not in (10, 20)]
    assert not [r for r in ok if isinstance(r, BaseException)], ok
    assert [r.replayed for r in results[30:32]] == [False, True]  # type: ignore[union-attr]
    assert results[30].last_position == results[31].last_position  # type: ignore[union-attr]
    expected = ["first"] + ["same request" if i == 30 else f"m{i}" for i in range(N) if i not in (10, 20, 31)]
    assert await contents(storage, "s") == expected
    positions = [r.last_position for i, r in enumerate(results) if i not in (10, 20, 31)]  # type: ignore[union-attr]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)


@pytest.mark.parametrize("sessions", [1, 4])
async def test_many_writers_lose_and_duplicate_nothing(storage: Storage, sessions: int) -> None:
    calls = [storage.append(job(f"s{i % sessions}", Message("user", f"m{i}"), request_id=f"r{i}")) for i in range(N)]
    await asyncio.gather(*calls)
    again = await asyncio.gather(
        *[storage.append(job(f"s{i % sessions}", Message("user", f"m{i}"), request_id=f"r{i}")) for i in range(N)]
    )
    assert all(r.replayed for r in again)
    stored = [t for s in range(sessions) for t in await contents(storage, f"s{s}")]
    assert sorted(stored) == sorted(f"m{i}" for i in range(N))
