"""``ls`` paging and width, ``show --tail/--since``, the pager and folding, live vs interrupted calls.

A real daemon, the real CLI as ``python -m claw_sessiond`` subprocesses, and a
real pseudo-terminal (with a window size set by ``TIOCSWINSZ``) wherever the
output depends on a terminal.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client import InvalidRequestError, Message, ToolCall
from tests.helpers.cli import claw, on_pty
from tests.helpers.daemon import DaemonProcess

SGR = re.compile("\x1b\\[[0-9;]*m")
BIG = 10_000


def cli(workspace: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return claw("--workspace", str(workspace), *args, cwd=workspace, env=env)


def on_terminal(
    workspace: Path, *args: str, cols: int = 80, rows: int = 24, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run the CLI on a pty (``cols`` x ``rows``: its controlling terminal, stdin and stdout); return (code, text)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "PAGER", "LESS")}
    run = on_pty(
        "--workspace",
        str(workspace),
        *args,
        cwd=workspace,
        env={**environment, "TERM": "xterm-256color", **(env or {})},
        size=(rows, cols),
        controlling=True,  # less opens /dev/tty
    )
    return run.code, run.text().replace("\r\n", "\n")


@pytest.fixture(scope="module")
def many(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """105 sessions (three with 120-character ids), one of 10,000 messages, one with a call in flight."""
    ws = tmp_path_factory.mktemp("paging") / "ws"
    ws.mkdir()
    daemon = DaemonProcess(ws).start()
    try:
        with daemon.client() as client:
            for i in range(102):
                client.append(f"s{i:03d}", Message.user(f"hello {i}"))
            for i in range(3):
                client.append(f"long-{i}-" + "x" * 112, Message.user("a long id"))
            for start in range(0, BIG, 1000):
                client.append("big", [Message.user(f"message {n} " + "word " * 30) for n in range(start, start + 1000)])
        yield daemon
    finally:
        daemon.stop()


def test_ls_says_how_many_it_did_not_show_and_all_pages_through(many: DaemonProcess) -> None:
    proc = cli(many.workspace, "ls")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 1 + 100
    assert proc.stderr.strip().splitlines()[-1] == "showing 100 of 106 sessions (--all for every one, --limit N)"

    every = cli(many.workspace, "ls", "--all")
    ids = [line.split()[0] for line in every.stdout.splitlines()[1:]]
    assert len(ids) == 106 and "showing" not in every.stderr

    listed = cli(many.workspace, "ls", "--all", "--json")
    data = json.loads(listed.stdout)
    assert listed.returncode == 0 and "error" not in data, (listed.stdout, listed.stderr)
    assert data["format"] == 1 and data["total"] == 106 and len({s["id"] for s in data["sessions"]}) == 106
    with many.client() as client:
        assert [s["id"] for s in data["sessions"]] == [s.id for s in client.list_sessions("", 10000)]

    three = json.loads(cli(many.workspace, "ls", "--limit", "3", "--json").stdout)
    assert len(three["sessions"]) == 3 and three["total"] == 106
    assert "showing 3 of 106 sessions" in cli(many.workspace, "ls", "--limit", "3").stderr
    filtered = json.loads(cli(many.workspace, "ls", "--contains", "long-", "--json").stdout)
    assert filtered["total"] == 3 and "showing" not in cli(many.workspace, "ls", "--contains", "long-").stderr


@pytest.mark.smoke
def test_list_sessions_pages_by_cursor(many: DaemonProcess) -> None:
    with many.client() as client:
        expected = [s.id for s in client.list_sessions("", 10000)]
        seen: list[str] = []
        page = client.list_sessions_page("", 7)
        for _ in range(100):  # bounded: 106 / 7 pages
            assert page.total == 106
            seen += [s.id for s in page.sessions]
            if not page.next_page_token:
                break
            page = client.list_sessions_page("", 7, page.next_page_token)
        assert seen == expected
        with pytest.raises(InvalidRequestError, match="page_token"):
            client.list_sessions_page("", 7, "not-a-token")


@pytest.mark.parametrize("bad", [["--limit", "0"], ["--limit", "10001"], ["--limit", "x"], ["--limit", "5", "--all"]])
def test_ls_bad_limits_are_usage_errors(many: DaemonProcess, bad: list[str]) -> None:
    proc = cli(many.workspace, "ls", *bad)
    assert proc.returncode == 2 and "--limit" in proc.stderr and proc.stdout == ""


def test_ls_fits_the_terminal(many: DaemonProcess) -> None:
    proc = cli(many.workspace, "ls", "--contains", "long-")
    lines = proc.stdout.splitlines()
    # off a terminal ids are never cut: the columns that do not fit 80 are left out instead
    assert lines[0] == "ID" and lines[1:] == [f"long-{i}-" + "x" * 112 for i in (2, 1, 0)]
    assert "…" not in proc.stdout and "columns not shown: MESSAGES" in proc.stderr
    long_id = "long-0-" + "x" * 112
    shown = cli(many.workspace, "show", long_id).stdout.splitlines()
    assert shown and all(len(line) <= 80 for line in shown), shown  # the header folds, the id stays whole
    assert long_id in "".join(shown)
    code, text = on_terminal(many.workspace, "ls", "--contains", "long-", cols=60)
    assert code == 0
    rows = [SGR.sub("", line) for line in text.splitlines() if line.strip()]
    assert len(rows) == 5 and all(len(row) <= 60 for row in rows), rows
    assert rows[-1] == "columns not shown: TOKENS, COST (--no-trunc shows them)"


def test_show_tail_is_fast_on_10000_messages(many: DaemonProcess) -> None:
    start = time.monotonic()
    proc = cli(many.workspace, "show", "big", "--tail", "3")
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    assert "(9997 earlier messages not shown)" in proc.stdout
    positions = re.findall(r"^#(\d+) user", proc.stdout, re.M)
    assert positions == ["9998", "9999", "10000"]
    # a sanity bound only (one loaded run took 38.7 s): that the tail's cost does not grow with the
    # history is measured, not timed, by tests/storage/sqlite/test_window_cost.py and the contract suite
    assert elapsed < 180, f"show --tail took {elapsed:.1f}s"
    data = json.loads(cli(many.workspace, "show", "big", "--tail", "2", "--json").stdout)
    assert [m["position"] for m in data["messages"]] == [9999, 10000] and data["messages_not_shown"] == 9998
    assert json.loads(cli(many.workspace, "show", "big", "--tail", "0", "--json").stdout)["messages"] == []


def test_show_since(many: DaemonProcess) -> None:
    recent = json.loads(cli(many.workspace, "show", "s001", "--since", "10m", "--json").stdout)
    assert [m["content"] for m in recent["messages"]] == ["hello 1"]
    future = json.loads(cli(many.workspace, "show", "s001", "--since", "2099-01-01T00:00:00Z", "--json").stdout)
    assert future["messages"] == [] and future["messages_not_shown"] == 1
    for bad, why in (("yesterday", "not a duration or an RFC 3339 time"), ("2026-01-01T00:00:00", "no time zone")):
        proc = cli(many.workspace, "show", "s001", "--since", bad)
        assert proc.returncode == 2 and why in proc.stderr


def test_show_folds_to_the_terminal_and_pages(many: DaemonProcess, tmp_path: Path) -> None:
    # Folded to 50 columns on a 50-column terminal (the pager is cat here: only the width matters).
    code, text = on_terminal(many.workspace, "show", "big", "--tail", "2", cols=50, env={"PAGER": "cat"})
    assert code == 0
    lines = [SGR.sub("", line) for line in text.splitlines()]
    assert max(len(line) for line in lines) <= 50 and sum(line.startswith("  word") for line in lines) >= 4

    # $PAGER gets the transcript on a terminal; --no-pager and a pipe bypass it.
    got = tmp_path / "paged.txt"
    pager = f"{sys.executable} -c 'import shutil, sys; shutil.copyfileobj(sys.stdin, open(sys.argv[1], \"w\"))' {got}"
    code, text = on_terminal(many.workspace, "show", "s002", env={"PAGER": pager})
    assert code == 0 and "hello 2" in got.read_text() and "hello 2" not in text
    got.unlink()
    code, text = on_terminal(many.workspace, "show", "s002", "--no-pager", env={"PAGER": pager})
    assert code == 0 and "hello 2" in text and not got.exists()
    proc = cli(many.workspace, "show", "s002", env={"PAGER": pager})
    assert "hello 2" in proc.stdout and not got.exists()


def test_show_through_the_default_pager_less(many: DaemonProcess) -> None:
    # No $PAGER: less -FRX; the text fits one screen, so -F quits at once and leaves it on the terminal (-X).
    code, text = on_terminal(many.workspace, "show", "s003", rows=40)
    assert code == 0 and "hello 3" in text and "session s003" in text


def test_running_and_interrupted_calls_are_told_apart(daemon: DaemonProcess) -> None:
    many = daemon
    with many.client() as client, client.attach("live") as run:
        client.append(
            "live",
            [Message.user("go"), Message.assistant(tool_calls=[ToolCall("run_1", "bash", '{"cmd": "sleep 60"}')])],
            run_id=run.run_id,
        )
        client.append("dead", [Message.user("go"), Message.assistant(tool_calls=[ToolCall("dead_1", "bash", "{}")])])
        live = json.loads(cli(many.workspace, "show", "live", "--json").stdout)
        assert live["interrupted"] == [] and live["open_calls"] == ["run_1"]
        assert live["running"] == [{"tool_call_id": "run_1", "run_id": run.run_id, "owner_pid": os.getpid()}]
        text = cli(many.workspace, "show", "live").stdout
        assert f"tool call run_1: running (run {run.run_id}, pid {os.getpid()})" in text
        dead = cli(many.workspace, "show", "dead").stdout
        assert "tool call dead_1: interrupted (no result; the next Load repairs it)" in dead
        assert "[dead_1]  interrupted" in dead
        # show only looked: both calls are still open (no synthetic result was written).
        assert json.loads(cli(many.workspace, "show", "dead", "--json").stdout)["interrupted"] == ["dead_1"]
        assert client.load("live", "/w", repair=False).in_flight[0].tool_call_id == "run_1"


def test_stats_and_doctor_fit_80_columns(many: DaemonProcess) -> None:
    stats = cli(many.workspace, "stats")
    assert stats.returncode == 0, stats.stderr
    lines = stats.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    requests = lines.index("requests")  # a small table of method, code, count; not one long JSON line
    assert lines[requests + 1].startswith("  ") and "{" not in stats.stdout
    assert any(line.split()[:2] == ["Append", "OK"] for line in lines[requests + 1 :])
    doctor = cli(many.workspace, "doctor")
    assert doctor.returncode == 0 and all(len(line) <= 80 for line in doctor.stdout.splitlines()), doctor.stdout
