"""``claw-sessiond search`` and the Search RPC: real daemon, real CLI subprocesses, a real pty.

Covers ranking and filters, visible vs cleared history, plain-word queries
that contain FTS5 syntax, malformed ``--raw`` queries (INVALID_ARGUMENT, exit
2, never INTERNAL), terminal-safe highlighted snippets on a pty and in a
pipe. The erasure of indexed words from the files, the time bound of every
statement (tests/storage/sqlite/test_search_index.py) and the upgrade that
indexes a database written before the index existed
(tests/storage/sqlite/test_database_file.py) are with the SQLite tests.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.backend import on_postgres
from tests.helpers.cli import on_daemon, on_daemon_pty
from tests.helpers.daemon import DaemonProcess


def search_json(daemon: DaemonProcess, *args: str) -> dict[str, Any]:
    proc = on_daemon(daemon, "search", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    assert out["format"] == 1
    return out


def where(out: dict[str, Any]) -> list[tuple[str, int]]:
    return [(h["session_id"], h["position"]) for h in out["hits"]]


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


@pytest.mark.both_backends("PostgreSQL's full-text search (ts_rank) behind the same RPC and CLI")
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

        text = on_daemon(daemon, "search", "parser", "crash")
        assert text.returncode == 0, text.stderr
        # The best hit first: bm25 (SQLite's FTS5) favours the short tool message; ts_rank (PostgreSQL, no length
        # normalization) the assistant message that says "parser" twice (docs/postgres.md, Search: ranks differ).
        assert text.stdout.splitlines()[0].startswith("alpha #3 assistant" if on_postgres() else "alpha #4 tool")
        assert "[parser] [crash]" in text.stdout  # not a terminal: matches in brackets
        nothing = on_daemon(daemon, "search", "nonexistentword")
        assert nothing.returncode == 0 and "no matches" in nothing.stdout


@pytest.mark.smoke
def test_queries_are_plain_words_and_bad_requests_are_invalid_argument(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.append("s", Message.user('he said "AND" OR NOT: near(x) * done'))
    # FTS5 syntax in a plain query is just words.
    assert where(search_json(daemon, 'said "AND" NOT: near( *')) == [("s", 1)]
    assert where(search_json(daemon, "said", "--raw")) == [("s", 1)]
    assert where(search_json(daemon, '"he said"', "--raw")) == [("s", 1)]

    with grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        for request in (
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

    assert on_daemon(daemon, "search", "x", "--limit", "0").returncode == 2
    assert on_daemon(daemon, "search", "x", "--since", "yesterday-ish").returncode == 2
    assert on_daemon(daemon, "search", "x", "--role", "robot").returncode == 2


@pytest.mark.sqlite_only(
    "FTS5 raw syntax: PostgreSQL's --raw is web-search syntax, with no prefix* and no malformed query "
    "(docs/postgres.md, Search)"
)
def test_raw_queries_are_fts5_syntax_and_malformed_ones_are_invalid_argument(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.append("s", Message.user('he said "AND" OR NOT: near(x) * done'))
    assert where(search_json(daemon, "sai*", "--raw")) == [("s", 1)]

    with grpc.insecure_channel(daemon.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        for request in (
            pb.SearchRequest(query='"unterminated', raw=True),
            pb.SearchRequest(query="AND OR", raw=True),
            pb.SearchRequest(query="nosuchcolumn: x", raw=True),
            pb.SearchRequest(query="NEAR(", raw=True),
        ):
            with pytest.raises(grpc.RpcError) as err:
                stub.Search(request, timeout=10)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (request, err.value.details())
            assert "internal" not in (err.value.details() or "").lower()

    bad = on_daemon(daemon, "search", '"unterminated', "--raw")
    assert bad.returncode == 2 and "not valid FTS5 syntax" in bad.stderr and "Traceback" not in bad.stderr


def test_snippets_on_a_terminal_are_bold_and_terminal_safe(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.append("t", Message.user("danger \x1b]52;c;cGF3bmVk\x07 clipboard \x1b[2J wipe \u202e reversed"))
    out = on_daemon_pty(daemon, "search", "clipboard")
    assert "\x1b[1mclipboard\x1b[0m" in out  # the match is bold
    assert "\x1b]52" not in out and "\x1b[2J" not in out and "\u202e" not in out
    assert "\\x1b]52" in out and "\\u202e" in out  # the controls are shown, escaped
    # Only our own bold marks are raw escapes.
    assert out.replace("\x1b[1m", "").replace("\x1b[0m", "").count("\x1b") == 0
    piped = on_daemon(daemon, "search", "clipboard")
    assert "[clipboard]" in piped.stdout and "\x1b" not in piped.stdout


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
