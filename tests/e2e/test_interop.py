"""scripts/interop: grpcurl (with only protos/), the TypeScript client and the Go client hold a
conversation with a daemon started by the Python package, and the Python client reads the same
history."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TS_BUILD = ROOT / "clients" / "typescript" / "dist" / "examples" / "conversation.js"


@pytest.mark.smoke
def test_the_proto_alone_is_enough_for_grpcurl_and_typescript() -> None:
    if not TS_BUILD.exists():
        pytest.skip("the TypeScript client is not built: run scripts/setup-tests")
    grpcurl = Path(sys.executable).parent / "grpcurl"
    env = {**os.environ, "PYTHON": sys.executable, "GRPCURL": str(grpcurl)}
    proc = subprocess.run(
        [str(ROOT / "scripts" / "interop")], capture_output=True, text=True, timeout=180, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = proc.stdout.splitlines()
    assert steps[-1] == "interop: OK"
    assert any("TypeScript loaded grpcurl's turn" in s for s in steps)
    assert any("the Python client reads the same five messages" in s for s in steps)
    if shutil.which("go") is not None:
        assert any("the Go client read the five messages" in s for s in steps)
