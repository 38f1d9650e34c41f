"""``claw-sessiond import`` of a multi-session file: all checked first, every session reported, exit 1 on any failure.

A real export of three sessions from one daemon is imported into another
through the real CLI, with the 2nd session broken in two ways: malformed
(the file's check refuses it, so nothing at all is imported) and well formed
but inconsistent (only the daemon can refuse it: the 1st and 3rd go in, the
2nd is reported refused). Text and ``--json`` give the same per-session result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond_client import Message, ToolCall
from tests.helpers.cli import claw
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import exports

IDS = ["s-one", "s-two", "s-three"]


@pytest.fixture(scope="module")
def exported(backend: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The export lines of three sessions, written through a real daemon: made once for the module's tests (each
    imports them into a daemon of its own; the source daemon is not looked at again)."""
    src_ws = tmp_path_factory.mktemp("src") / "ws"
    src_ws.mkdir()
    src = DaemonProcess(src_ws).start()  # after ``backend``: on PostgreSQL, the workspace's database
    try:
        with src.client() as c:
            c.append("s-one", [Message.user("first")], workdir="/w")
            c.append(
                "s-two",
                [Message.user("second"), Message.assistant(tool_calls=[ToolCall("call-1", "bash", '{"cmd": "ls"}')])],
                workdir="/w",
            )
            c.append("s-two", Message.tool("call-1", "a.txt", name="bash"))
            c.append("s-three", [Message.user("third"), Message.assistant("done")], workdir="/w")
            return {sid: list(c.export(sid)) for sid in IDS}
    finally:
        src.stop()


@pytest.fixture
def pair(
    spawn_daemon: Any, tmp_path: Path, exported: dict[str, list[str]]
) -> tuple[DaemonProcess, Path, dict[str, list[str]]]:
    """An empty target daemon, and the export file of the three sessions of :func:`exported`."""
    dst_ws = tmp_path / "dst"
    dst_ws.mkdir()
    dst: DaemonProcess = spawn_daemon(workspace_path=dst_ws)
    path = tmp_path / "all.jsonl"
    path.write_text("".join(line + "\n" for sid in IDS for line in exported[sid]))
    return dst, path, {sid: list(lines) for sid, lines in exported.items()}  # a test's own copy


def edit_second(path: Path, blocks: dict[str, list[str]], change: Any) -> tuple[int, int]:
    """Rewrite the file with ``change`` applied to s-two's tool result line; return s-two's line span."""
    two = [json.loads(line) for line in blocks["s-two"]]
    change(two)
    lines = blocks["s-one"] + [json.dumps(o) for o in two] + blocks["s-three"]
    path.write_text("".join(line + "\n" for line in lines))
    first = len(blocks["s-one"]) + 1
    return first, first + len(two) - 1


def by_id(stdout: str) -> dict[str, dict[str, Any]]:
    return {r["session_id"]: r for r in json.loads(stdout)["sessions"]}


@pytest.mark.smoke
def test_whole_file_imported_and_reported(pair: Any) -> None:
    dst, path, blocks = pair
    r = claw("import", str(path), "--socket", str(dst.socket_path), "--json")
    assert r.returncode == 0, r.stderr
    assert [(x["session_id"], x["status"]) for x in json.loads(r.stdout)["sessions"]] == [
        (sid, "imported") for sid in IDS
    ]
    assert exports(dst) == blocks


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_malformed_second_session_imports_nothing(pair: Any, fmt: str) -> None:
    dst, path, blocks = pair

    def bad_type(events: list[dict[str, Any]]) -> None:
        events[3]["type"] = "no_such_type"  # the tool result line (header, user, assistant, tool)

    first, last = edit_second(path, blocks, bad_type)
    args = ["import", str(path), "--socket", str(dst.socket_path)] + (["--json"] if fmt == "json" else [])
    r = claw(*args)
    assert r.returncode == 1
    assert exports(dst) == {}, "a file with an invalid session imported something"
    if fmt == "json":
        report = by_id(r.stdout)
        assert [report[s]["status"] for s in IDS] == ["held_back", "invalid", "held_back"]
        assert report["s-two"]["lines"] == [first, last]
        assert report["s-two"]["reason"].startswith(f"line {first + 3}: unknown event type")
        assert all(report[s]["events_imported"] == 0 for s in IDS)
    else:
        assert r.stdout == ""
        err = r.stderr
        assert f"invalid s-two (lines {first}-{last}): line {first + 3}: unknown event type 'no_such_type'" in err
        assert "held_back s-one (lines 1-2)" in err and "held_back s-three" in err
        assert "3 sessions in" in err and "1 invalid, 2 held back" in err


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_second_session_the_daemon_refuses_is_reported_and_the_others_go_in(pair: Any, fmt: str) -> None:
    dst, path, blocks = pair

    def orphan(events: list[dict[str, Any]]) -> None:
        events[3]["payload"]["tool_call_id"] = "ghost"  # well formed; only the daemon sees the call is unknown

    edit_second(path, blocks, orphan)
    args = ["import", str(path), "--socket", str(dst.socket_path)] + (["--json"] if fmt == "json" else [])
    r = claw(*args)
    assert r.returncode == 1
    assert exports(dst) == {"s-one": blocks["s-one"], "s-three": blocks["s-three"]}
    if fmt == "json":
        report = by_id(r.stdout)
        assert [report[s]["status"] for s in IDS] == ["imported", "refused", "imported"]
        assert [report[s]["events_imported"] for s in IDS] == [1, 0, 2]
        assert "unknown tool call 'ghost'" in report["s-two"]["reason"]
    else:
        assert r.stdout.splitlines() == ["imported s-one: 1 event", "imported s-three: 2 events"]
        assert "refused s-two" in r.stderr and "unknown tool call 'ghost'" in r.stderr
        assert "2 imported, 1 refused" in r.stderr


def test_an_existing_or_repeated_session_imports_nothing(pair: Any, tmp_path: Path) -> None:
    dst, path, blocks = pair
    with dst.client() as c:
        c.append("s-two", [Message.user("already here")], workdir="/w")
    before = exports(dst)
    r = claw("import", str(path), "--socket", str(dst.socket_path), "--json")
    assert r.returncode == 1
    assert [by_id(r.stdout)[s]["status"] for s in IDS] == ["held_back", "exists", "held_back"]
    assert exports(dst) == before
    r = claw("import", str(path), "--socket", str(dst.socket_path), "--mode", "replace", "--json")
    assert r.returncode == 0, r.stderr
    assert exports(dst) == blocks

    twice = tmp_path / "twice.jsonl"
    twice.write_text("".join(line + "\n" for line in blocks["s-one"] + blocks["s-one"]))
    r = claw("import", str(twice), "--socket", str(dst.socket_path), "--mode", "replace")
    assert r.returncode == 1 and "is also in lines 1-2: one block per session" in r.stderr
    assert exports(dst) == blocks


def test_daemon_down_imports_nothing_and_says_so(pair: Any) -> None:
    dst, path, _ = pair
    dst.terminate()
    r = claw("import", str(path), "--socket", str(dst.socket_path))
    assert r.returncode == 1
    assert "nothing imported" in r.stderr and "Try: claw-sessiond serve" in r.stderr
