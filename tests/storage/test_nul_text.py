"""Text holding NUL (U+0000) is stored as written on every backend (PostgreSQL's ``text`` holds no NUL and
its ``->>`` refuses the JSON escape of one: an append of such a message once failed there with
UNAVAILABLE), and the message stays searchable by its words before the first NUL (SQLite's full-text index
reads text up to a NUL; PostgreSQL's reads every word)."""

from __future__ import annotations

from claw_sessiond.queries import SearchFilter, fts_query
from claw_sessiond.storage import Storage
from tests.storage._support import append, read, user

NUL_TEXTS = ("\x00", "needle a\x00b", "\\u0000 needle \x00\x00 x", "\\\x00")


async def test_messages_holding_nul_round_trip_and_stay_searchable(storage: Storage) -> None:
    for text in NUL_TEXTS:
        await append(storage, "nul", user(text))
    assert [m.content for m in await read(storage, "nul")] == list(NUL_TEXTS)
    hits, more = await storage.search(fts_query("needle", raw=False), SearchFilter(), 10)
    assert sorted(h.position for h in hits) == [2, 3] and not more
    hits, _ = await storage.search(fts_query("needle", raw=False), SearchFilter(role="user"), 10)
    assert len(hits) == 2
