"""The TypeScript client's own tests (clients/typescript/test, node's test runner) against real
daemons, and its generated code matching the proto."""

from __future__ import annotations

import filecmp
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.backend_neutral(
    "the TypeScript client's own tests: its daemons serve their own temporary workspaces (the proto, not storage, "
    "is under test; storage is the Python suites' on both backends)"
)

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "clients" / "typescript"


def _need_node_modules() -> None:
    if not (TS / "node_modules" / ".bin" / "tsc").exists():
        pytest.skip("the TypeScript client's packages are not installed: run scripts/setup-tests")


def test_the_typescript_client_passes_its_tests_against_a_real_daemon() -> None:
    _need_node_modules()
    env = {**os.environ, "CLAW_PYTHON": sys.executable}
    proc = subprocess.run(["npm", "test", "--silent"], cwd=TS, capture_output=True, text=True, timeout=600, env=env)
    summary = dict(re.findall(r"^# (pass|fail|cancelled|skipped|todo) (\d+)$", proc.stdout, re.M))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert summary.get("fail") == "0" and summary.get("cancelled") == "0", summary
    assert summary.get("skipped") == "0" and summary.get("todo") == "0", summary
    assert int(summary["pass"]) >= 31, summary  # test/client.test.ts, parity.test.ts and langgraph.test.ts


def test_the_langgraph_js_checkpointer_passes_langgraphs_validation_suite() -> None:
    _need_node_modules()
    env = {**os.environ, "CLAW_PYTHON": sys.executable, "NO_COLOR": "1", "FORCE_COLOR": "0"}
    vitest = TS / "node_modules" / ".bin" / "vitest"  # not through npx: one node process less
    proc = subprocess.run(
        [str(vitest), "run", "--config", "validation/vitest.config.mjs", "--reporter=verbose"],
        cwd=TS,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    out = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout)
    failed = [line for line in out.splitlines() if line.lstrip().startswith("×")]
    assert proc.returncode == 0 and not failed, "\n".join(failed) + out[-4000:] + proc.stderr[-2000:]
    found = re.search(r"Tests\s+(.*)\((\d+)\)", out)
    assert found, out[-4000:] + proc.stderr[-2000:]
    # Every case ran and passed: none failed, none skipped (the suite skips some cases by saver name).
    assert found[1].strip() == f"{found[2]} passed", found[0]
    assert int(found[2]) >= 718, found[0]  # getTuple, list, put, putWrites, deleteThread and delta-channel suites


def test_the_generated_typescript_matches_the_proto(tmp_path: Path) -> None:
    _need_node_modules()
    buf = TS / "node_modules" / ".bin" / "buf"
    proc = subprocess.run(
        [str(buf), "generate", str(ROOT / "protos"), "--template", "buf.gen.yaml", "--output", str(tmp_path)],
        cwd=TS,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    fresh, committed = tmp_path / "src" / "gen", TS / "src" / "gen"

    def differ(cmp: filecmp.dircmp[str]) -> list[str]:
        out = [*cmp.left_only, *cmp.right_only, *cmp.diff_files]
        for sub in cmp.subdirs.values():
            out += differ(sub)
        return out

    assert not differ(filecmp.dircmp(fresh, committed)), "run `npm run generate` in clients/typescript"
