"""The README's client example works when pasted into a fresh process (it auto-starts the daemon)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT


def _python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Client example", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_client_example_runs_as_pasted(workspace: Path) -> None:
    blocks = _python_blocks()
    assert blocks, "README has a python client example"
    proc = subprocess.run([sys.executable, "-c", blocks[0]], cwd=workspace, capture_output=True, text=True, timeout=120)
    lock = workspace / ".claw" / "sessiond.lock"
    try:
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0].startswith("1 user list the files")
        assert lines[1].startswith("2 assistant") and "call_1" in lines[1]
        assert lines[2] == "3 tool README.md"
    finally:
        if lock.exists() and lock.read_text().strip().isdigit():
            pid = int(lock.read_text())
            os.kill(pid, signal.SIGTERM)
            for _ in range(200):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
