"""The search index in the SQLite file: erased words leave the bytes of ``.db`` and ``-wal``; statements are bounded.

Delete and import-replace take the indexed words out of the files (FTS5 keeps
them in old index segments until 'optimize' merges them, shown on the real
schema without the daemon); every Search and usage-report statement runs under a
time bound and stops when its caller leaves.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.storage.sqlite import schema
from claw_sessiond.storage.sqlite.port import index_messages_after
from claw_sessiond_client import Message
from tests.helpers.cli import on_daemon
from tests.helpers.daemon import DaemonProcess
from tests.helpers.sqlite_file import file_bytes

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)


def test_delete_and_import_replace_erase_the_indexed_words(daemon: DaemonProcess, workspace: Path) -> None:
    # Lower case and a rare first letter: FTS5 stores a term whole (not prefix-compressed) when no
    # neighbouring term shares its start, so its bytes are findable while it is in the index.
    marker = f"zzq{uuid.uuid4().hex}"
    replaced = f"zzw{uuid.uuid4().hex}"
    with daemon.client() as c:
        for i in range(30):  # enough index segments that a tombstone alone would not merge them away
            c.append("keep", Message.user(f"keeper message number {i} about parsers"))
            c.append("victim", Message.user(f"secret {marker} number {i}"))
        c.append("twin", Message.user(f"about to be replaced {replaced}"))
        assert len(c.search(marker).hits) == 20
        assert marker.encode() in file_bytes(workspace)

        r = on_daemon(daemon, "delete", "victim", "--yes", "--json")
        assert r.returncode == 0, r.stderr
        assert c.search(marker).hits == []
        assert marker.encode() not in file_bytes(workspace)

        lines = list(c.export("twin"))
        header = json.loads(lines[0])
        event = json.loads(lines[1])
        event["payload"]["content"] = "a new text"
        c.import_lines([json.dumps(header), json.dumps(event)], mode="replace")
        assert c.search(replaced).hits == [] and len(c.search("new text").hits) == 1
        assert replaced.encode() not in file_bytes(workspace)
        assert len(c.search("keeper parsers", limit=200).hits) == 30  # the rest of the index is intact
    assert daemon.terminate() == 0
    assert marker.encode() not in file_bytes(workspace) and replaced.encode() not in file_bytes(workspace)


def test_an_fts5_delete_alone_keeps_the_words_which_is_why_erasure_optimizes(tmp_path: Path) -> None:
    """The reason for 'optimize' in ``SQLitePort``'s erasing verbs, shown on the real schema without the daemon."""
    path = tmp_path / "plain.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA secure_delete = ON")
    schema.migrate(conn)
    marker = f"zzq{uuid.uuid4().hex}"
    for i, text in enumerate([f"secret {marker}", "other words", "more words"]):
        conn.execute(
            "INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload) "
            "VALUES ('s', ?, 'user_message', 't', 'now', 1, ?)",
            (i + 1, json.dumps({"role": "user", "content": text})),
        )
    index_messages_after(conn, 0)  # as the writer's verbs index what they insert
    conn.execute("DELETE FROM events WHERE position = 1")
    assert conn.execute("SELECT count(*) FROM message_fts WHERE message_fts MATCH ?", (marker,)).fetchone()[0] == 0
    conn.close()
    assert marker.encode() in path.read_bytes()  # not found by search, but still in the index pages
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("INSERT INTO message_fts(message_fts) VALUES ('optimize')")
    conn.close()
    assert marker.encode() not in path.read_bytes()


SLOW_SQL = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n WHERE i < 0"


async def test_a_long_statement_is_interrupted_at_its_time_bound_and_when_its_caller_leaves(tmp_path: Path) -> None:
    """The bound every Search and usage report runs under, on a real SQLite connection (a statement that never ends)."""
    import asyncio

    import aiosqlite

    from claw_sessiond.errors import InvalidRequestError
    from claw_sessiond.storage.sqlite import queries

    conn = await aiosqlite.connect(tmp_path / "slow.db")
    try:

        async def slow() -> list[Any]:
            return list(await conn.execute_fetchall(SLOW_SQL))

        started = time.monotonic()
        with pytest.raises(InvalidRequestError, match=r"took longer than 0\.2s"):
            await queries._bounded(conn, slow, 0.2, "search")
        assert time.monotonic() - started < 3
        assert list(await conn.execute_fetchall("SELECT 1")) == [(1,)]  # the connection is usable again

        task = asyncio.create_task(queries._bounded(conn, slow, 60, "search"))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()  # what grpc does when the caller goes away
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - started < 3
        assert list(await conn.execute_fetchall("SELECT 2")) == [(2,)]
    finally:
        await conn.close()
