"""Migration of the seed harnesses' JSON session files (``claw-sessiond migrate-legacy``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claw_sessiond import legacy
from claw_sessiond.export import parse_session
from tests.helpers.daemon import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "legacy"
NOW = "2026-12-01T00:00:00.000000Z"


def convert(name: str) -> legacy.LegacySession:
    path = FIXTURES / name
    return legacy.convert(path.read_bytes(), fallback_id=path.stem, fallback_time=NOW)


def test_go_snake_case_file_converts_to_valid_export_lines() -> None:
    s = convert("go_snake_case.json")
    assert (s.kind, s.session_id, s.messages) == ("go", "terminal_default", 5)
    parsed = parse_session(s.lines)  # the daemon's own validator accepts it
    h = parsed.header
    assert (h.workdir, h.created_at, h.updated_at) == (
        "/home/dev/project",
        "2026-08-23T02:00:00.123456Z",
        "2026-08-23T02:05:30.500000Z",
    )
    types = [e.type for e in parsed.events]
    assert types == ["system_message", "user_message", "assistant_message", "tool_result", "assistant_message", "usage"]
    tool = json.loads(parsed.events[3].payload)
    assert tool == {"role": "tool", "content": "a.txt\nb.txt", "tool_call_id": "call-1"}
    call = json.loads(parsed.events[2].payload)["tool_calls"][0]
    assert call["name"] == "bash" and json.loads(call["arguments"]) == {"cmd": "ls -la", "timeout": 30}
    usage = json.loads(parsed.events[-1].payload)
    assert (usage["input_tokens"], usage["output_tokens"]) == (280, 24)
    assert len({e.trace_id for e in parsed.events}) == 1 and parsed.events[0].trace_id.startswith("legacy-")
    assert convert("go_snake_case.json").lines == s.lines  # deterministic


def test_go_default_field_names_and_python_port() -> None:
    s = convert("go_default_names.json")
    assert (s.kind, s.session_id, s.messages) == ("go", "go-crashed", 3)
    parsed = parse_session(s.lines)
    assert parsed.header.updated_at == "2026-08-20T08:01:00.000000Z"
    calls = json.loads(parsed.events[1].payload)["tool_calls"]
    assert [c["id"] for c in calls] == ["call-1", "call-2"]
    assert json.loads(calls[1]["arguments"]) == {"path": "b.txt", "content": "y"}
    p = convert("0f3c2a9e8b7d4c1a.json")
    assert (p.kind, p.session_id, p.messages) == ("python-port", "0f3c2a9e8b7d4c1a", 2)
    parsed = parse_session(p.lines)
    assert parsed.header.created_at == parsed.header.updated_at == NOW
    assert [json.loads(e.payload).get("content") for e in parsed.events[:2]] == [
        "summarise the repo",
        "now list the tests",
    ]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("broken_truncated.json", "not valid JSON"),
        ("broken_empty.json", "empty file"),
        ("broken_wrong_types.json", "must be a string"),
        ("broken_path_id.json", "unusable session id"),
        ("broken_not_object.json", "must be a JSON object"),
    ],
)
def test_broken_files_are_refused_with_a_reason(name: str, why: str) -> None:
    with pytest.raises(legacy.LegacyError, match=why):
        convert(name)


def test_times() -> None:
    assert legacy.normalise_time("2026-01-02T03:04:05Z", "t") == "2026-01-02T03:04:05.000000Z"
    assert legacy.normalise_time("0001-01-01T00:00:00Z", "t") is None
    with pytest.raises(legacy.LegacyError):
        legacy.normalise_time("2026-01-02 03:04", "t")
    with pytest.raises(legacy.LegacyError):
        legacy.normalise_time(12, "t")


def migrate(folder: Path, socket: Path, *extra: str) -> tuple[int, dict[str, dict[str, object]], str]:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "claw_sessiond",
            "migrate-legacy",
            str(folder),
            "--socket",
            str(socket),
            "--json",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    reports = {d["file"]: d for d in map(json.loads, r.stdout.splitlines())}
    return r.returncode, reports, r.stderr


def test_migrate_legacy_folder_is_all_or_nothing_per_file_and_rerunnable(spawn_daemon, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(FIXTURES, folder)
    (folder / "notes.txt").write_text("not a session")
    d = spawn_daemon()
    code, reports, stderr = migrate(folder, d.socket_path)
    assert code == 1, stderr  # some files failed
    status = {name: r["status"] for name, r in reports.items()}
    assert status == {
        "0f3c2a9e8b7d4c1a.json": "imported",
        "go_default_names.json": "imported",
        "go_snake_case.json": "imported",
        "broken_empty.json": "failed",
        "broken_not_object.json": "failed",
        "broken_orphan_result.json": "failed",
        "broken_path_id.json": "failed",
        "broken_truncated.json": "failed",
        "broken_wrong_types.json": "failed",
    }
    assert "unknown tool call" in str(reports["broken_orphan_result.json"]["reason"])
    assert "9 files: 3 imported, 0 skipped, 6 failed" in stderr
    with d.client() as c:
        ids = sorted(s.id for s in c.list_sessions())
        assert ids == ["0f3c2a9e8b7d4c1a", "go-crashed", "terminal_default"]  # nothing half-imported
        before = list(c.export())
        loaded = c.load("go-crashed", "/srv/work")
        # The interrupted call-2 is repaired on first Load, never re-run.
        assert [r.tool_call_id for r in loaded.repairs] == ["call-2"]
        assert c.usage("terminal_default").total.input_tokens == 280
        t = c.load("terminal_default", "/home/dev/project")
        assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "assistant"]
        before_rerun = list(c.export())
        assert len(before_rerun) == len(before) + 1  # the repair event
    code, reports, stderr = migrate(folder, d.socket_path)
    assert code == 1
    assert {n for n, r in reports.items() if r["status"] == "skipped"} == {
        "0f3c2a9e8b7d4c1a.json",
        "go_default_names.json",
        "go_snake_case.json",
    }
    assert "already imported" in str(reports["go_snake_case.json"]["reason"])
    with d.client() as c:
        assert list(c.export()) == before_rerun  # the re-run wrote nothing
    # Only the good files: exit 0.
    good = tmp_path / "good"
    good.mkdir()
    shutil.copy(FIXTURES / "go_snake_case.json", good / "x.json")
    code, reports, _ = migrate(good, d.socket_path, "--dry-run")
    # The dry run does the real run's checks against the daemon: this session is already imported.
    assert code == 0 and reports["x.json"]["status"] == "skipped"
