"""Migration of the seed harnesses' JSON session files (``claw-sessiond migrate-legacy``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.data import LEGACY_FILES


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


@pytest.mark.smoke
def test_migrate_legacy_folder_is_all_or_nothing_per_file_and_rerunnable(spawn_daemon, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(LEGACY_FILES, folder)
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
    shutil.copy(LEGACY_FILES / "go_snake_case.json", good / "x.json")
    code, reports, _ = migrate(good, d.socket_path, "--dry-run")
    # The dry run does the real run's checks against the daemon: this session is already imported.
    assert code == 0 and reports["x.json"]["status"] == "skipped"
