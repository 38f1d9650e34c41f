"""Delete (SPEC §5, right to erasure) and the change feed (``ChangeListener``): told after commits and erasures only."""

from __future__ import annotations

import asyncio
import json

import pytest

from claw_sessiond.errors import SessionNotFoundError, ToolCallStateError
from claw_sessiond.model import LoadResult
from claw_sessiond.storage import Storage
from tests.storage._support import (
    Feed,
    append,
    assistant,
    clear,
    contents,
    eventually,
    export_lines,
    import_lines,
    renamed,
    result,
    usage,
    user,
)


async def test_delete_removes_the_session_and_reports_its_events(storage: Storage) -> None:
    await append(storage, "victim", user("secret"), assistant("c"), request_id="r1")
    await storage.load("victim", "/w", "t")  # a repair
    await usage(storage, "victim", input_tokens=3)
    await storage.record_event("victim", "error", json.dumps({"detail": "x"}), request_id="", trace_id="t")
    await clear(storage, "victim")
    await append(storage, "keep", user("unrelated"))
    kept = await export_lines(storage, "keep")

    deleted = await storage.delete("victim")
    assert deleted.events_deleted == 6  # two messages, a repair, usage, an audit event, a clear
    assert (await storage.load("victim", "/w", "t")).session.stored is False
    assert await storage.export_start("victim") is None
    with pytest.raises(SessionNotFoundError):
        await storage.usage_by_model("victim")
    assert [s.id for s in await storage.list_sessions("", 10)] == ["keep"]
    assert await storage.session_ids() == ["keep"]
    assert await storage.count_sessions("victim") == 0
    figures = await storage.figures()
    assert (figures.sessions, figures.events, figures.request_records) == (1, 1, 0)
    assert await export_lines(storage, "keep") == kept


async def test_deleting_an_unknown_session_reports_nothing_deleted(storage: Storage) -> None:
    await append(storage, "other", user("x"))
    deleted = await storage.delete("never-stored")
    assert deleted.events_deleted == 0 and not deleted.erasure_pending
    assert (await storage.figures()).events == 1


async def test_a_deleted_session_starts_afresh(storage: Storage) -> None:
    await append(storage, "s", user("old"), assistant("c1"), request_id="r1")
    await usage(storage, "s", cost_micros=5, currency="USD")
    await storage.delete("s")
    again = await append(storage, "s", user("old"), assistant("c1"), request_id="r1")
    assert not again.replayed and again.first_position == 1  # positions restart; the request id is forgotten
    assert await contents(storage, "s") == ["old", ""]
    await usage(storage, "s", cost_micros=1, currency="EUR")  # the old currency went with the session
    assert (await storage.usage_by_model("s"))[0].currency == "EUR"
    await append(storage, "s", result("c1"))  # the new call is open, not the old one's answered state


async def test_erasures_are_told_on_delete_and_on_an_import_that_replaces(storage: Storage) -> None:
    feed = Feed()
    storage.subscribe(feed)
    await append(storage, "s1", user("hi"))
    await storage.delete("s1")
    await eventually(lambda: feed.erasures() == ["s1"])

    await append(storage, "s2", user("x"))
    lines = await export_lines(storage, "s2")
    await import_lines(storage, lines, "merge")  # a merge erases nothing
    await import_lines(storage, lines, "replace")
    await eventually(lambda: feed.erasures() == ["s1", "s2"])
    await import_lines(storage, renamed(lines, "s3"))
    await append(storage, "marker", user("m"))
    await eventually(lambda: feed.changes_of("marker") > 0)
    assert feed.erasures() == ["s1", "s2"]  # an import of a new session erases nothing


async def test_changes_are_told_after_their_commit(storage: Storage) -> None:
    """A read started when ``changed`` is told sees the change: the signal follows the commit."""
    reads: list[asyncio.Future[LoadResult]] = []

    class Reader(Feed):
        def changed(self, session_ids: set[str]) -> None:
            super().changed(session_ids)
            if "s" in session_ids:
                reads.append(asyncio.ensure_future(storage.load("s", "/w", "t", repair=False)))

    feed = Reader()
    storage.subscribe(feed)
    for n in range(1, 6):
        await append(storage, "s", user(f"m{n}"))
        await eventually(lambda n=n: feed.changes_of("s") == n)  # type: ignore[misc]
        assert (await reads[-1]).session.last_position == n


async def test_every_kind_of_history_change_is_told(storage: Storage) -> None:
    feed = Feed()
    storage.subscribe(feed)
    await append(storage, "s", assistant("c"))
    await eventually(lambda: feed.changes_of("s") == 1)
    await storage.load("s", "/w", "t")  # repairs c
    await eventually(lambda: feed.changes_of("s") == 2)
    await clear(storage, "s")
    await eventually(lambda: feed.changes_of("s") == 3)
    lines = await export_lines(storage, "s")
    await import_lines(storage, renamed(lines, "copy"))
    await eventually(lambda: feed.changes_of("copy") == 1)


async def test_a_refused_write_is_not_told(storage: Storage) -> None:
    feed = Feed()
    storage.subscribe(feed)
    await append(storage, "s", user("a"))
    await eventually(lambda: feed.changes_of("s") == 1)
    with pytest.raises(ToolCallStateError):
        await append(storage, "s", user("b"), result("nope"))
    await storage.load("s", "/w", "t")  # nothing to repair: nothing written, nothing told
    await append(storage, "marker", user("later"))
    await eventually(lambda: feed.changes_of("marker") == 1)
    assert feed.changes_of("s") == 1


async def test_every_listener_is_told(storage: Storage) -> None:
    feeds = [Feed(), Feed()]
    for feed in feeds:
        storage.subscribe(feed)
    await append(storage, "s", user("a"))
    await storage.delete("s")
    for feed in feeds:
        await eventually(lambda feed=feed: feed.changes_of("s") == 1 and feed.erasures() == ["s"])  # type: ignore[misc]
