"""The reads: listings, figures, paged history, watch and follow batches, search, retention's queries."""

from __future__ import annotations

import asyncio
import json

import pytest

from claw_sessiond.errors import SequenceConflictError
from claw_sessiond.model import Message, Usage
from claw_sessiond.queries import SearchFilter, fts_query
from claw_sessiond.storage import Storage
from tests.storage._support import append, assistant, clear, history, import_lines, usage, user

OLD = "2020-01-01T00:00:00.000000Z"


async def test_sessions_are_listed_most_recently_updated_first(storage: Storage) -> None:
    for sid in ("a", "b", "c"):
        await append(storage, sid, user(f"hello {sid}"), workdir=f"/w/{sid}")
    await append(storage, "a", user("again"), assistant("k"))
    await usage(storage, "b", input_tokens=5)
    listed = await storage.list_sessions("", 10)
    assert [s.id for s in listed] == ["b", "a", "c"]
    a = listed[1]
    assert (a.workdir, a.message_count, a.last_position, a.usage) == ("/w/a", 3, 3, Usage())
    assert listed[0].usage == Usage(input_tokens=5)
    assert listed[0].updated_at > a.updated_at > listed[2].updated_at


async def test_id_contains_is_a_literal_case_insensitive_substring(storage: Storage) -> None:
    for sid in ("Agent-One", "agent-two", "other", "100%_done", "100xydone"):
        await append(storage, sid, user("x"))

    async def ids(text: str) -> set[str]:
        listed = {s.id for s in await storage.list_sessions(text, 100)}
        assert await storage.count_sessions(text) == len(listed)
        return listed

    assert await ids("AGENT") == {"Agent-One", "agent-two"}
    assert await ids("%_") == {"100%_done"}  # no wildcards: % and _ match themselves
    assert await ids("0%") == {"100%_done"}
    assert await ids("nothing-like-it") == set()
    assert await ids("") == {"Agent-One", "agent-two", "other", "100%_done", "100xydone"}


async def test_pages_of_a_listing_cover_every_session_once(storage: Storage) -> None:
    for i in range(23):
        await append(storage, f"s{i:02}", user("x"))
    seen: list[str] = []
    after = None
    while True:
        page = await storage.list_sessions("s", 5, after)
        assert len(page) <= 5
        if not page:
            break
        seen += [s.id for s in page]
        after = (page[-1].updated_at, page[-1].id)
    assert seen == [f"s{i:02}" for i in reversed(range(23))]
    assert await storage.count_sessions("s") == 23


async def test_figures_count_sessions_events_and_request_records(storage: Storage) -> None:
    empty = await storage.figures()
    assert (empty.sessions, empty.events, empty.request_records) == (0, 0, 0)
    await append(storage, "a", user("1"), user("2"), request_id="r")
    await usage(storage, "b", input_tokens=1)
    await clear(storage, "a")
    figures = await storage.figures()
    assert (figures.sessions, figures.events, figures.request_records) == (2, 4, 1)
    assert figures.schema_version > 0 and figures.stored_bytes > 0


async def test_a_long_history_comes_in_pages_in_conversation_order(storage: Storage) -> None:
    for start in range(0, 1200, 200):
        await append(storage, "long", *(user(f"m{i}") for i in range(start, start + 200)))
    await clear(storage, "long")  # position 1201
    await append(storage, "long", *(user(f"n{i}") for i in range(700)))
    loaded = await storage.load("long", "/w", "t")
    messages = await history(storage, loaded)
    assert [m.content for m in messages] == [f"n{i}" for i in range(700)]
    assert [m.position for m in messages] == list(range(1202, 1902))


async def test_the_pages_of_a_history_cleared_meanwhile_are_refused(storage: Storage) -> None:
    await append(storage, "long", *(user("x" * 4096) for _ in range(600)))
    loaded = await storage.load("long", "/w", "t")
    assert loaded.cursor is not None, "a history of 2.4 MB does not fit one page"
    await clear(storage, "long")
    with pytest.raises(SequenceConflictError):
        await history(storage, loaded)


async def test_watch_batches_are_the_history_events_after_a_position(storage: Storage) -> None:
    assert await storage.watch_batch("w", 0, 10) == (None, [], False)
    await append(storage, "w", user("a"), user("b"))
    await usage(storage, "w", input_tokens=1)  # not a history event
    await clear(storage, "w")
    await append(storage, "w", user("c"))
    incarnation, items, more = await storage.watch_batch("w", 0, 10)
    assert incarnation is not None and not more
    assert [(p, m.content if m else None) for p, m in items] == [(1, "a"), (2, "b"), (3, None), (4, "c")]
    assert [p for p, _m in (await storage.watch_batch("w", 2, 10))[1]] == [3, 4]
    first_two = await storage.watch_batch("w", 0, 2)
    assert [p for p, _m in first_two[1]] == [1, 2] and first_two[2]
    # erased and written again: another incarnation, whose positions restart
    await storage.delete("w")
    await append(storage, "w", user("new"))
    again, items, _more = await storage.watch_batch("w", 0, 10)
    assert again is not None and again != incarnation
    assert [(p, m.content if m else None) for p, m in items] == [(1, "new")]


async def test_follow_batches_are_every_sessions_history_events_in_commit_order(storage: Storage) -> None:
    start = await storage.follow_start(0)
    await append(storage, "a", user("a1"))
    await append(storage, "b", user("b1"))
    await storage.record_event("a", "error", "{}", request_id="", trace_id="t")  # not a history event
    await clear(storage, "a")
    rows, more = await storage.follow_batch(start, 100)
    assert [(sid, pos, m.content if m else None) for _id, sid, pos, m in rows] == [
        ("a", 1, "a1"),
        ("b", 1, "b1"),
        ("a", 2, None),
    ]
    assert not more
    ids = [event_id for event_id, *_rest in rows]
    assert ids == sorted(ids) and ids[0] > start
    assert (await storage.follow_batch(ids[0], 100))[0] == rows[1:]
    assert await storage.follow_start(2) == ids[0]  # before the last two history events


async def test_search_finds_words_and_forgets_erased_sessions(storage: Storage) -> None:
    await append(storage, "s", user("the quick brown fox"), Message("assistant", "a lazy dog"))
    await append(storage, "t", user("another fox"))
    hits, more = await storage.search(fts_query("fox", raw=False), SearchFilter(), 10)
    assert sorted((h.session_id, h.position, h.role) for h in hits) == [("s", 1, "user"), ("t", 1, "user")]
    assert not more
    only_s, _ = await storage.search(fts_query("fox", raw=False), SearchFilter(session_id="s"), 10)
    assert [h.session_id for h in only_s] == ["s"]
    await clear(storage, "t")
    visible, _ = await storage.search(fts_query("fox", raw=False), SearchFilter(), 10)
    assert [h.session_id for h in visible] == ["s"]
    cleared, _ = await storage.search(fts_query("fox", raw=False), SearchFilter(include_cleared=True), 10)
    assert sorted((h.session_id, h.cleared) for h in cleared) == [("s", False), ("t", True)]
    await storage.delete("s")
    assert (await storage.search(fts_query("lazy", raw=False), SearchFilter(include_cleared=True), 10))[0] == []


async def test_retention_deletes_only_sessions_still_old_when_the_delete_runs(storage: Storage) -> None:
    header = {"format": "claw-sessiond-export", "version": 1, "workdir": "/w", "created_at": OLD, "updated_at": OLD}
    event = {"event_id": 1, "position": 1, "type": "user_message", "ts": OLD, "trace_id": "t", "schema_version": 1}
    for sid in ("old-1", "old-2"):
        await import_lines(
            storage,
            [
                json.dumps({**header, "session_id": sid, "events": 1}),
                json.dumps({**event, "session_id": sid, "payload": {"role": "user", "content": "old"}}),
            ],
        )
    await append(storage, "fresh", user("recent"))
    cutoff = "2021-01-01T00:00:00.000000Z"
    assert sorted(await storage.sessions_not_updated_since(cutoff)) == ["old-1", "old-2"]
    assert await storage.delete_if_not_updated_since("fresh", cutoff) == 0
    assert await storage.delete_if_not_updated_since("old-1", cutoff) == 1
    await append(storage, "old-2", user("touched now"))  # its stored time is now: no longer older than the cutoff
    assert await storage.delete_if_not_updated_since("old-2", cutoff) == 0
    assert await storage.delete_if_not_updated_since("missing", cutoff) == 0
    assert await storage.delete_if_not_updated_since("old-2", "9999-01-01T00:00:00.000000Z") == 2
    assert await storage.session_ids() == ["fresh"]


async def test_a_load_does_not_queue_behind_follower_reads(storage: Storage) -> None:
    """Watch and follow-all reads share a lane of the read connections: with many queued, a Load still finds one.

    Followers read after every commit (hundreds of streams can be due at once); requests must not wait for
    them all. The Load is issued after every follower read is queued; it must be done well before they are.
    """
    await append(storage, "w", *[user(f"event {i} " + "x" * 2_000) for i in range(60)])
    await append(storage, "l", user("hello"))
    start = await storage.follow_start(60)
    # Requests at once, first: a backend whose connections open on demand (PostgreSQL's pool) has them open, so
    # what is measured is the queue, not a connection's start-up (under CI's load that took 50 follower reads).
    await asyncio.gather(*(storage.load("l", "/tmp", "t") for _ in range(12)))
    done: list[str] = []

    async def follower(i: int) -> None:
        if i % 2:
            await storage.watch_batch("w", i % 20, 100)
        else:
            await storage.follow_batch(start + i % 20, 100)
        done.append("follower")

    async def load() -> None:
        await storage.load("l", "/tmp", "t")
        done.append("load")

    followers = [asyncio.create_task(follower(i)) for i in range(80)]
    await asyncio.sleep(0)  # every follower read has asked for a connection
    await asyncio.gather(load(), *followers)
    assert len(done) == 81
    assert done.index("load") < 40, f"the Load finished after {done.index('load')} of 80 follower reads"
