"""Watch follows one incarnation of a session: a session deleted and created again is another stream.

Real daemons, real clients. The resume test stops the daemon while a watch is
open, deletes and re-creates the session on its successor, and lets the
client resume by itself: it must end with SessionNotFoundError instead of
delivering the new session's events as if they followed the old ones. (The
upgrade of a database written before incarnations existed is in
tests/storage/sqlite/test_database_file.py.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from claw_sessiond_client import Message, SessionNotFoundError, WatchEvent
from tests.helpers.daemon import DaemonProcess, raw_watch


def next_within(it: Iterator[WatchEvent], timeout_s: float) -> WatchEvent | BaseException:
    """``next(it)`` on a thread, bounded in time: the event, or the exception it raised."""
    box: list[WatchEvent | BaseException] = []

    def run() -> None:
        try:
            box.append(next(it))
        except BaseException as exc:
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert box, f"the watch neither delivered nor ended within {timeout_s}s"
    return box[0]


def test_a_resumed_watch_does_not_follow_a_recreated_session(spawn_daemon: Any) -> None:
    first: DaemonProcess = spawn_daemon()
    with first.client() as c:
        c.append("s", [Message.user("old-1"), Message.user("old-2")])
    watcher = first.client(retry_window_s=20)
    events = watcher.watch("s")
    got = [next_within(events, 10), next_within(events, 10)]
    assert [e.message.content for e in got if isinstance(e, WatchEvent) and e.message] == ["old-1", "old-2"]
    assert first.terminate() == 0

    second: DaemonProcess = spawn_daemon()  # same workspace and socket: the watch resumes against it
    with second.client() as c:
        assert c.delete("s") == 2
        c.append("s", [Message.user("new-1"), Message.user("new-2"), Message.user("new-3")])
    outcome = next_within(events, 15)
    assert isinstance(outcome, SessionNotFoundError), f"the watch went on with {outcome!r}"
    watcher.close()


@pytest.mark.smoke
def test_a_live_watch_ends_at_delete_and_never_sends_the_new_incarnation(
    module_daemon: DaemonProcess, sid: str
) -> None:
    with module_daemon.client() as c, module_daemon.client() as w:
        for round_ in range(5):
            session = f"{sid}-{round_}"
            c.append(session, [Message.user(f"old-{i}") for i in range(3)])
            events = w.watch(session)
            seen = [next_within(events, 10) for _ in range(3)]
            c.delete(session)
            c.append(session, [Message.user(f"new-{i}") for i in range(6)])
            end = next_within(events, 10)
            assert isinstance(end, SessionNotFoundError), f"round {round_}: went on with {end!r}"
            assert all(isinstance(e, WatchEvent) and e.message and e.message.content.startswith("old") for e in seen)
            events.close()  # type: ignore[attr-defined]


def test_a_watch_of_a_session_not_stored_yet_follows_the_one_created(module_daemon: DaemonProcess, sid: str) -> None:
    with module_daemon.client() as c, module_daemon.client() as w:
        events = w.watch(sid)
        box: list[WatchEvent | BaseException] = []
        thread = threading.Thread(target=lambda: box.append(next_within(events, 15)), daemon=True)
        thread.start()
        c.append(sid, Message.user("first"))
        thread.join(20)
        first = box[0]
        assert isinstance(first, WatchEvent) and first.position == 1 and first.message
        assert first.message.content == "first"
        c.append(sid, Message.user("second"))
        second = next_within(events, 10)
        assert isinstance(second, WatchEvent) and second.position == 2


def test_incarnation_on_the_wire(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    with daemon.client() as c:
        c.append(sid, [Message.user("a"), Message.user("b")])
        c.clear(sid)
        lines = list(c.export(sid))
        c.import_lines(lines, mode="merge")  # a merge rebuilds the row and keeps the incarnation
    replies = raw_watch(daemon.address, session_id=sid)
    assert isinstance(replies, list) and [r.position for r in replies] == [1, 2, 3]
    incarnations = {r.incarnation for r in replies}
    assert len(incarnations) == 1 and "" not in incarnations
    (incarnation,) = incarnations
    again = raw_watch(daemon.address, session_id=sid, after_position=2, incarnation=incarnation)
    assert isinstance(again, list) and [r.position for r in again] == [3]
    wrong = raw_watch(daemon.address, session_id=sid, incarnation="0123456789abcdef")
    assert isinstance(wrong, grpc.RpcError) and wrong.code() == grpc.StatusCode.NOT_FOUND
    with daemon.client() as c:
        c.delete(sid)
        c.append(sid, Message.user("reborn"))
    replies = raw_watch(daemon.address, session_id=sid)
    assert isinstance(replies, list) and replies[0].incarnation not in ("", incarnation)
