"""``migrate-legacy`` never drops a file silently: conflicts are reported, and the dry run predicts the real run.

Real fixture files (tests/fixtures/legacy), a real daemon, the real CLI.
A file whose session id is already stored with other content (another
legacy file, or a session an agent wrote) is a ``conflict``, exit 1, and the
stored session is untouched. Re-running the same files is still ``skipped``
(already imported), also after the session has grown. ``--dry-run`` goes
through the same checks and differs only in not importing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond_client import Message
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import LEGACY_FILES, exports


def migrate(folder: Path, d: DaemonProcess, *extra: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    r = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "migrate-legacy", str(folder), "--socket", str(d.socket_path), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if "--json" not in extra:
        return r.returncode, {}, r.stdout + r.stderr
    return r.returncode, {x["file"]: x for x in map(json.loads, r.stdout.splitlines())}, r.stderr


def folder_of(tmp_path: Path, name: str, files: dict[str, bytes]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file_name, data in files.items():
        (folder / file_name).write_bytes(data)
    return folder


def changed_snake_case() -> bytes:
    """go_snake_case.json with one message edited: same session id, different content."""
    obj = json.loads((LEGACY_FILES / "go_snake_case.json").read_bytes())
    obj["history"][1]["content"] = "a different question"
    return json.dumps(obj).encode()


@pytest.mark.smoke
def test_a_different_file_on_a_used_id_is_a_conflict_in_both_runs(spawn_daemon: Any, tmp_path: Path) -> None:
    d: DaemonProcess = spawn_daemon()
    first = folder_of(tmp_path, "first", {"terminal_default.json": (LEGACY_FILES / "go_snake_case.json").read_bytes()})
    code, reports, stderr = migrate(first, d, "--json")
    assert code == 0 and reports["terminal_default.json"]["status"] == "imported", stderr
    before = exports(d)

    second = folder_of(tmp_path, "second", {"edited.json": changed_snake_case()})
    for extra in (("--dry-run",), ()):
        code, reports, stderr = migrate(second, d, "--json", *extra)
        assert code == 1, (extra, reports, stderr)
        report = reports["edited.json"]
        assert report["status"] == "conflict" and report["session_id"] == "terminal_default"
        assert "already stored with different content" in report["reason"]
        assert "1 conflict" in stderr
        assert exports(d) == before, "a conflicting file changed the stored session"
    code, _, text = migrate(second, d)
    assert code == 1 and "conflict  edited.json  terminal_default" in text

    # The original file again: still "already imported", exit 0, nothing written.
    for extra in (("--dry-run",), ()):
        code, reports, _ = migrate(first, d, "--json", *extra)
        assert code == 0 and reports["terminal_default.json"]["status"] == "skipped"
        assert "already imported" in reports["terminal_default.json"]["reason"]
    assert exports(d) == before


def test_a_rerun_after_the_session_grew_still_skips(spawn_daemon: Any, tmp_path: Path) -> None:
    d: DaemonProcess = spawn_daemon()
    folder = folder_of(tmp_path, "go", {"go_default_names.json": (LEGACY_FILES / "go_default_names.json").read_bytes()})
    assert migrate(folder, d, "--json")[0] == 0
    with d.client() as c:
        assert [r.tool_call_id for r in c.load("go-crashed", "/srv/work").repairs] == ["call-2"]
        c.append("go-crashed", Message.user("carry on"), workdir="/srv/work")
    grown = exports(d)
    code, reports, _ = migrate(folder, d, "--json")
    assert code == 0 and reports["go_default_names.json"]["status"] == "skipped"
    assert exports(d) == grown


def test_a_session_written_by_an_agent_is_not_overwritten_or_skipped(spawn_daemon: Any, tmp_path: Path) -> None:
    d: DaemonProcess = spawn_daemon()
    with d.client() as c:
        c.append("0f3c2a9e8b7d4c1a", Message.user("an agent's own session"), workdir="/w")
    before = exports(d)
    folder = folder_of(
        tmp_path, "port", {"0f3c2a9e8b7d4c1a.json": (LEGACY_FILES / "0f3c2a9e8b7d4c1a.json").read_bytes()}
    )
    for extra in (("--dry-run",), ()):
        code, reports, _ = migrate(folder, d, "--json", *extra)
        assert code == 1 and reports["0f3c2a9e8b7d4c1a.json"]["status"] == "conflict"
    assert exports(d) == before


def test_two_files_of_one_folder_claiming_one_id(spawn_daemon: Any, tmp_path: Path) -> None:
    d: DaemonProcess = spawn_daemon()
    original = (LEGACY_FILES / "go_snake_case.json").read_bytes()
    folder = folder_of(tmp_path, "two", {"a.json": original, "b.json": changed_snake_case(), "c.json": original})
    dry = migrate(folder, d, "--json", "--dry-run")
    assert exports(d) == {}
    code, reports, _ = migrate(folder, d, "--json")
    assert code == dry[0] == 1
    assert {f: r["status"] for f, r in reports.items()} == {
        "a.json": "imported",
        "b.json": "conflict",
        "c.json": "skipped",
    }
    assert {f: r["status"] for f, r in dry[1].items()} == {
        "a.json": "converted",
        "b.json": "conflict",
        "c.json": "skipped",
    }
    assert "a.json" in reports["b.json"]["reason"]


def test_the_dry_run_predicts_the_real_run_on_the_fixture_folder(spawn_daemon: Any, tmp_path: Path) -> None:
    d: DaemonProcess = spawn_daemon()
    folder = tmp_path / "fixtures"
    shutil.copytree(LEGACY_FILES, folder)
    dry_code, dry, _ = migrate(folder, d, "--json", "--dry-run")
    assert exports(d) == {}, "the dry run wrote"
    code, real, _ = migrate(folder, d, "--json")
    assert dry_code == code == 1
    predicted = {f: ("imported" if r["status"] == "converted" else r["status"]) for f, r in dry.items()}
    assert predicted == {f: r["status"] for f, r in real.items()}
    assert dry["broken_orphan_result.json"]["status"] == "failed"
    assert "unknown tool call" in dry["broken_orphan_result.json"]["reason"]
    assert {f for f, r in real.items() if r["status"] == "imported"} == {
        "0f3c2a9e8b7d4c1a.json",
        "go_default_names.json",
        "go_snake_case.json",
    }
