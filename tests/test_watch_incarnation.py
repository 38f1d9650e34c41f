"""Watch follows one incarnation of a session: a session deleted and created again is another stream.

Real daemons, real clients. The resume test stops the daemon while a watch is
open, deletes and re-creates the session on its successor, and lets the
client resume by itself: it must end with SessionNotFoundError instead of
delivering the new session's events as if they followed the old ones. The
upgrade test opens a database that the commit before the schema change
wrote (tests/fixtures/db/schema-v1.sessions.db) with this daemon.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc

from claw_sessiond.storage.sqlite.schema import SCHEMA_VERSION
from claw_sessiond_client import Message, SessionNotFoundError, WatchEvent
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests._robust import db_path, read_only
from tests.conftest import ROOT, DaemonProcess

#: The last commit with schema version 1 (before incarnations and record times).
BASE_COMMIT = "55a51f1"


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


def test_a_live_watch_ends_at_delete_and_never_sends_the_new_incarnation(daemon: DaemonProcess) -> None:
    with daemon.client() as c, daemon.client() as w:
        for round_ in range(5):
            sid = f"s{round_}"
            c.append(sid, [Message.user(f"old-{i}") for i in range(3)])
            events = w.watch(sid)
            seen = [next_within(events, 10) for _ in range(3)]
            c.delete(sid)
            c.append(sid, [Message.user(f"new-{i}") for i in range(6)])
            end = next_within(events, 10)
            assert isinstance(end, SessionNotFoundError), f"round {round_}: went on with {end!r}"
            assert all(isinstance(e, WatchEvent) and e.message and e.message.content.startswith("old") for e in seen)
            events.close()  # type: ignore[attr-defined]


def test_a_watch_of_a_session_not_stored_yet_follows_the_one_created(daemon: DaemonProcess) -> None:
    with daemon.client() as c, daemon.client() as w:
        events = w.watch("later")
        box: list[WatchEvent | BaseException] = []
        thread = threading.Thread(target=lambda: box.append(next_within(events, 15)), daemon=True)
        thread.start()
        c.append("later", Message.user("first"))
        thread.join(20)
        first = box[0]
        assert isinstance(first, WatchEvent) and first.position == 1 and first.message
        assert first.message.content == "first"
        c.append("later", Message.user("second"))
        second = next_within(events, 10)
        assert isinstance(second, WatchEvent) and second.position == 2


def raw_watch(address: str, **fields: Any) -> list[pb.WatchResponse] | grpc.RpcError:
    """Read a Watch stream with the bare stub until it has nothing more within a short deadline."""
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        replies: list[pb.WatchResponse] = []
        try:
            for reply in stub.Watch(pb.WatchRequest(**fields), timeout=1.5):
                replies.append(reply)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                return replies
            return exc
        return replies


def test_incarnation_on_the_wire(daemon: DaemonProcess, workspace: Path) -> None:
    with daemon.client() as c:
        c.append("w", [Message.user("a"), Message.user("b")])
        c.clear("w")
        lines = list(c.export("w"))
        c.import_lines(lines, mode="merge")  # a merge rebuilds the row and keeps the incarnation
    replies = raw_watch(daemon.address, session_id="w")
    assert isinstance(replies, list) and [r.position for r in replies] == [1, 2, 3]
    incarnations = {r.incarnation for r in replies}
    assert len(incarnations) == 1 and "" not in incarnations
    (incarnation,) = incarnations
    again = raw_watch(daemon.address, session_id="w", after_position=2, incarnation=incarnation)
    assert isinstance(again, list) and [r.position for r in again] == [3]
    wrong = raw_watch(daemon.address, session_id="w", incarnation="0123456789abcdef")
    assert isinstance(wrong, grpc.RpcError) and wrong.code() == grpc.StatusCode.NOT_FOUND
    with daemon.client() as c:
        c.delete("w")
        c.append("w", Message.user("reborn"))
    replies = raw_watch(daemon.address, session_id="w")
    assert isinstance(replies, list) and replies[0].incarnation not in ("", incarnation)


def install_old_database(workspace: Path, name: str) -> None:
    """Put a database an earlier version wrote into ``workspace`` (as its daemon left it: .claw/ 0700, file 0600)."""
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700, exist_ok=True)
    target = claw / "sessions.db"
    shutil.copyfile(ROOT / "tests" / "fixtures" / "db" / name, target)
    os.chmod(target, 0o600)


def test_a_database_written_by_the_base_commit_opens_and_upgrades(
    spawn_daemon: Any, workspace: Path, tmp_path: Path
) -> None:
    # Written by the code of BASE_COMMIT (schema 1): Append "legacy" ["from v1"] with request id
    # "req-v1" (position 1), then Append "other" ["x"] (tests/fixtures/db/make_fixtures.py).
    install_old_database(workspace, "schema-v1.sessions.db")
    with read_only(db_path(workspace)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1

    new: DaemonProcess = spawn_daemon()
    with new.client() as c:
        stats = c.stats()
        assert stats["schema_version"] == SCHEMA_VERSION >= 2
        assert stats["request_records"] == 2
        retry = c.append("legacy", [Message.user("from v1")], request_id="req-v1")
        assert retry.replayed and retry.first_position == 1
        assert [m.content for m in c.load("legacy", str(workspace)).messages] == ["from v1"]
    replies = raw_watch(new.address, session_id="legacy")
    assert isinstance(replies, list) and replies and replies[0].incarnation
    assert new.terminate() == 0
    with read_only(db_path(workspace)) as conn:
        rows = conn.execute("SELECT incarnation FROM sessions").fetchall()
        assert len(rows) == 2 and all(len(r[0]) == 16 for r in rows) and rows[0][0] != rows[1][0]
        created = conn.execute("SELECT created_at FROM requests").fetchall()
        assert len(created) == 2 and all(r[0].endswith("Z") and r[0] > "2020" for r in created)
