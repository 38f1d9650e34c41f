"""The Go client (clients/go): its own tests, ``go test ./...``, against real daemons they start.

The Go tests start ``claw-sessiond serve`` from ``PATH`` (this environment's, first) and the
Python writers from this interpreter; they cover discovery, the peer check, auto-start, every
error reason, runs across processes and languages, the drop-in harness and its example killed
mid-tool (clients/go/README.md). The module's dependencies come from ``scripts/setup-tests``
(``go mod download``): the tests reach no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GO_CLIENT = ROOT / "clients" / "go"

pytestmark = pytest.mark.backend_neutral(
    "the Go client's own tests: its daemons serve their own temporary workspaces on SQLite (disk full is a "
    "SQLite file on a small tmpfs); the Go client has no PostgreSQL-specific wiring, it speaks the proto, and "
    "storage is the Python suites' on both backends"
)


def test_go_client_tests_pass_against_real_daemons() -> None:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no go command (Go 1.26): the Go client's tests need it")
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "CLAW_PYTHON": sys.executable,
        "GOFLAGS": "-mod=readonly",
    }
    # The tests mostly wait on daemons and processes: run them eight at a time, whatever the cores.
    proc = subprocess.run(
        [go, "test", "-count=1", "-parallel", "8", "-timeout", "540s", "./..."],
        cwd=GO_CLIENT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-20000:] + proc.stderr[-20000:]
    assert "ok  \tgithub.com/claw-sessiond/claw-sessiond/clients/go\t" in proc.stdout
    assert "ok  \tgithub.com/claw-sessiond/claw-sessiond/clients/go/harness\t" in proc.stdout
