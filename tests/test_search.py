"""``claw-sessiond search`` and the Search RPC: real daemon, real CLI subprocesses, a real pty.

Covers ranking and filters, visible vs cleared history, plain-word queries
that contain FTS5 syntax, malformed ``--raw`` queries (INVALID_ARGUMENT, exit
2, never INTERNAL), terminal-safe highlighted snippets on a pty and in a
pipe, erasure of the indexed words by Delete and import-replace (bytes gone
from ``.db`` and ``-wal``), and the schema upgrade that indexes a database
written by the commit before the index existed.
"""

from __future__ import annotations

import json
import os
import pty
import select
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest

from claw_sessiond.storage.sqlite import schema
from claw_sessiond.storage.sqlite.schema import SCHEMA_VERSION
from claw_sessiond_client import Message, SessionClient, ToolCall
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests._robust import db_path, read_only
from tests.conftest import DaemonProcess
from tests.test_watch_incarnation import install_old_database

#: The commit this feature started from (schema version 2, no search index).
BASE_COMMIT = "a5e914a"


def cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "claw_sessiond", *args[:1], "--socket", str(daemon.socket_path), *args[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=daemon.workspace,
    )


def search_json(daemon: DaemonProcess, *args: str) -> dict[str, Any]:
    proc = cli(daemon, "search", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    assert out["format"] == 1
    return out


def where(out: dict[str, Any]) -> list[tuple[str, int]]:
    return [(h["session_id"], h["position"]) for h in out["hits"]]


def file_bytes(workspace: Path) -> bytes:
    db = db_path(workspace)
    wal = Path(f"{db}-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def populate(c: SessionClient) -> None:
    c.append(
        "alpha",
        [
            Message.system("you are a build helper"),
            Message.user("why does the parser crash on empty input?"),
            Message.assistant(
                "the parser crash comes from the parser reading past the end", [ToolCall("c1", "bash", "{}")]
            ),
        ],
    )
    c.append("alpha", Message.tool("c1", "Traceback: parser crash in tokenize()", name="bash"))
    c.append("beta", [Message.user("deploy the parser to staging"), Message.assistant("deployed")])
    c.append("gamma", Message.user("an old parser question"))
    c.clear("gamma")
    c.append("gamma", Message.user("a fresh topic"))


def test_search_ranks_filters_and_hides_cleared_history(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        populate(c)
        out = search_json(daemon, "parser crash")
        # Every word must occur (beta's "parser" alone is no hit), best rank (lowest bm25) first.
        assert sorted(where(out)) == [("alpha", 2), ("alpha", 3), ("alpha", 4)] and out["truncated"] is False
        assert out["hits"][0]["rank"] <= out["hits"][1]["rank"] <= out["hits"][2]["rank"]
        assert {h["role"] for h in out["hits"]} == {"user", "assistant", "tool"}
        assert set(out["hits"][0]["matches"]) == {"parser", "crash"}
        c.append("zoo", [Message.user("zebra stripes horse mane"), Message.user("zebra zebra zebra stripes")])
        # Same length: the message that says it more often ranks first.
        assert where(search_json(daemon, "zebra")) == [("zoo", 2), ("zoo", 1)]

        assert {s for s, _ in where(search_json(daemon, "parser"))} == {"alpha", "beta"}  # gamma's is cleared
        cleared = search_json(daemon, "parser", "--all", "--session", "gamma")
        assert where(cleared) == [("gamma", 1)] and cleared["hits"][0]["cleared"] is True
        assert where(search_json(daemon, "parser", "--session", "beta")) == [("beta", 1)]
        assert where(search_json(daemon, "parser", "--role", "tool")) == [("alpha", 4)]
        assert where(search_json(daemon, "parser", "--role", "system")) == []
        assert where(search_json(daemon, "build", "--role", "system")) == [("alpha", 1)]
        limited = search_json(daemon, "parser", "--limit", "1")
        assert len(limited["hits"]) == 1 and limited["truncated"] is True
        assert where(search_json(daemon, "parser", "--since", "1h")) != []
        assert where(search_json(daemon, "parser", "--until", "2020-01-01")) == []
        assert where(search_json(daemon, "parser", "--since", "2999-01-01T00:00:00Z")) == []

        # The client API says the same.
        result = c.search("deploy", role="user")
        assert [(h.session_id, h.position) for h in result.hits] == [("beta", 1)]
        assert [t for t, match in result.hits[0].snippet if match] == ["deploy"]

        text = cli(daemon, "search", "parser", "crash")
        assert text.returncode == 0, text.stderr
        assert text.stdout.splitlines()[0].startswith("alpha #4 tool")
        assert "[parser] [crash]" in text.stdout  # not a terminal: matches in brackets
        nothing = cli(daemon, "search", "nonexistentword")
        assert nothing.returncode == 0 and "no matches" in nothing.stdout


def test_queries_are_plain_words_and_bad_raw_syntax_is_invalid_argument(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.append("s", Message.user('he said "AND" OR NOT: near(x) * done'))
    # FTS5 syntax in a plain query is just words.
    assert where(search_json(daemon, 'said "AND" NOT: near( *')) == [("s", 1)]
    assert where(search_json(daemon, "said", "--raw")) == [("s", 1)]
    assert where(search_json(daemon, "sai*", "--raw")) == [("s", 1)]
    assert where(search_json(daemon, '"he said"', "--raw")) == [("s", 1)]

    with grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        for request in (
            pb.SearchRequest(query='"unterminated', raw=True),
            pb.SearchRequest(query="AND OR", raw=True),
            pb.SearchRequest(query="nosuchcolumn: x", raw=True),
            pb.SearchRequest(query="NEAR(", raw=True),
            pb.SearchRequest(query="*", raw=False),
            pb.SearchRequest(query="", raw=True),
            pb.SearchRequest(query="x" * 1025),
            pb.SearchRequest(query="x", limit=201),
            pb.SearchRequest(query="x", session_id="../etc"),
            pb.SearchRequest(query="x", role=99),  # type: ignore[arg-type]
        ):
            with pytest.raises(grpc.RpcError) as err:
                stub.Search(request, timeout=10)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (request, err.value.details())
            assert "internal" not in (err.value.details() or "").lower()

    bad = cli(daemon, "search", '"unterminated', "--raw")
    assert bad.returncode == 2 and "not valid FTS5 syntax" in bad.stderr and "Traceback" not in bad.stderr
    assert cli(daemon, "search", "x", "--limit", "0").returncode == 2
    assert cli(daemon, "search", "x", "--since", "yesterday-ish").returncode == 2
    assert cli(daemon, "search", "x", "--role", "robot").returncode == 2


def run_in_pty(daemon: DaemonProcess, *args: str, timeout_s: float = 30) -> str:
    """Run the CLI with its stdout on a real pty (80 columns); return what the terminal received."""
    master, slave = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "claw_sessiond", *args[:1], "--socket", str(daemon.socket_path), *args[1:]],
        stdout=slave,
        stderr=subprocess.PIPE,
        cwd=daemon.workspace,
        env={**os.environ, "COLUMNS": "80", "TERM": "xterm"},
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the pty
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(10) == 0, proc.stderr.read() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    return b"".join(chunks).decode()


def test_snippets_on_a_terminal_are_bold_and_terminal_safe(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.append("t", Message.user("danger \x1b]52;c;cGF3bmVk\x07 clipboard \x1b[2J wipe \u202e reversed"))
    out = run_in_pty(daemon, "search", "clipboard")
    assert "\x1b[1mclipboard\x1b[0m" in out  # the match is bold
    assert "\x1b]52" not in out and "\x1b[2J" not in out and "\u202e" not in out
    assert "\\x1b]52" in out and "\\u202e" in out  # the controls are shown, escaped
    # Only our own bold marks are raw escapes.
    assert out.replace("\x1b[1m", "").replace("\x1b[0m", "").count("\x1b") == 0
    piped = cli(daemon, "search", "clipboard")
    assert "[clipboard]" in piped.stdout and "\x1b" not in piped.stdout


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

        r = cli(daemon, "delete", "victim", "--yes", "--json")
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
    """The reason for 'optimize' in ``_delete_in_tx``, shown on the real schema without the daemon."""
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
    conn.execute("DELETE FROM events WHERE position = 1")
    assert conn.execute("SELECT count(*) FROM message_fts WHERE message_fts MATCH ?", (marker,)).fetchone()[0] == 0
    conn.close()
    assert marker.encode() in path.read_bytes()  # not found by search, but still in the index pages
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("INSERT INTO message_fts(message_fts) VALUES ('optimize')")
    conn.close()
    assert marker.encode() not in path.read_bytes()


def test_the_upgrade_indexes_a_database_written_before_the_index(
    spawn_daemon: Any, workspace: Path, tmp_path: Path
) -> None:
    # Written by the code of BASE_COMMIT (schema 2): "legacy" [user "written before the index
    # existed", assistant "indexed later"], "gone" [user "cleared before the upgrade"] then Clear,
    # and usage 5/1 tokens, 7 micro-USD, model "m" (tests/fixtures/db/make_fixtures.py).
    install_old_database(workspace, "schema-v2.sessions.db")
    with read_only(db_path(workspace)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2

    new: DaemonProcess = spawn_daemon()
    with new.client() as c:
        assert c.stats()["schema_version"] == SCHEMA_VERSION == 3
        assert [(h.session_id, h.position) for h in c.search("index").hits] == [("legacy", 1)]
        assert [h.position for h in c.search("indexed later").hits] == [2]
        assert c.search("cleared upgrade").hits == []
        assert [h.session_id for h in c.search("cleared upgrade", include_cleared=True).hits] == ["gone"]
        c.append("legacy", Message.user("written after the upgrade"))
        assert sorted(h.position for h in c.search("written").hits) == [1, 3]
        report = c.usage_report()
        assert [(r.model, r.usage.cost_micros, r.usage.currency) for r in report.rows] == [("m", 7, "USD")]
        c.delete("legacy")
        assert c.search("written").hits == []
    assert new.terminate() == 0


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


async def test_the_async_client_searches_reports_and_follows(daemon: DaemonProcess) -> None:
    import asyncio
    import contextlib

    from claw_sessiond_client import AsyncSessionClient

    c = AsyncSessionClient(address=daemon.address, autostart=False)
    try:
        await c.append("a", [Message.user("async words here"), Message.assistant("more async words")])
        await c.record_usage("a", input_tokens=3, output_tokens=1, cost_micros=5, currency="USD", model="m")
        found = await c.search("async words", role="assistant")
        assert [(h.session_id, h.position) for h in found.hits] == [("a", 2)]
        report = await c.usage_report(by_session=True)
        assert [(r.session_id, r.model, r.usage.cost_micros) for r in report.rows] == [("a", "m", 5)]

        async def first_two() -> list[tuple[str, int]]:
            got: list[tuple[str, int]] = []
            async with contextlib.aclosing(c.watch_all(last=1)) as stream:
                async for event in stream:
                    got.append((event.session_id, event.position))
                    if len(got) == 1:
                        await c.append("b", Message.user("new"))
                    if len(got) == 2:
                        return got
            return got

        assert await asyncio.wait_for(first_two(), 20) == [("a", 2), ("b", 1)]
    finally:
        await c.close()
