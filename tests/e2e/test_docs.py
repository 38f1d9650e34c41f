"""Every shell and Python block of README.md and docs/*.md runs as written.

A page's fenced ```sh and ```python blocks run top to bottom as one bash script
(``set -euo pipefail``), so a ``cd`` or ``export`` in one block holds for the next;
a Python block runs as ``python - <<EOF`` with the ``python`` that is on PATH at
that point. Other fences (```text, ```json, bare ```) are shown output or file
contents, not code.

A page starts in a fresh, empty folder with the project's venv first on PATH
(the docs pages say so), except a page whose first code block is marked
``<!-- doc: start-in-checkout -->``: it starts in the checkout with PATH as the
test found it, minus the venv (README's tour proves its own ``export`` line).

Markers, an HTML comment on the line right before a fence:

- ``<!-- doc: skip REASON -->`` — not runnable here; the reason is required and
  is shown in the test's report (for example: needs a systemd user manager);
- ``<!-- doc: start-in-checkout -->`` — see above.

README's first block, the two set-up commands, is not run here: the first serves in the
foreground, and the second is the command ``.ci/run`` runs on a fresh clone.

In a ```sh block, lines that start with ``$ `` are a transcript: those lines (with
their ``\\`` continuations) run, and the lines between them are output shown to the
reader, not compared here (tests/e2e/test_grpcurl.py and tests/e2e/test_cli.py compare
outputs). Every daemon a page started is stopped afterwards by the pid in its
workspace lock file; the page's temporary folders are removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.daemon import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"(?:^<!-- doc: ([a-z-]+)(?: (.*?))? -->\n)?^```([a-z]*)\n(.*?)^```$", re.M | re.S)
_CODE = {"sh": "sh", "bash": "sh", "python": "python"}
_PAGE_TIMEOUT_S = 300


pytestmark = pytest.mark.sqlite_only(
    "the pages' blocks run as a reader runs them, on the default store (.claw/sessions.db)"
)


@dataclass(frozen=True)
class Block:
    lang: str  # "sh" or "python"
    body: str
    marker: str | None
    reason: str | None
    line: int


def code_blocks(path: Path) -> list[Block]:
    """The page's sh and python blocks, in order, with their markers."""
    text = path.read_text()
    blocks: list[Block] = []
    for m in _FENCE.finditer(text):
        marker, reason, lang, body = m.group(1), m.group(2), m.group(3), m.group(4)
        if lang not in _CODE:
            continue
        line = text.count("\n", 0, m.start(3)) + 1
        if path.name == "README.md" and not blocks and marker is None:
            marker, reason = "skip", "the set-up commands (.ci/run runs the test one on a fresh clone)"
        blocks.append(Block(_CODE[lang], body, marker, reason, line))
    return blocks


def _transcript_commands(body: str) -> str:
    """The commands of a ``$ `` transcript (continuation lines kept), without the output lines."""
    out: list[str] = []
    cont = False
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append(line[2:])
            cont = line.endswith("\\")
        elif cont:
            out.append(line)
            cont = line.endswith("\\")
    return "\n".join(out) + "\n"


def page_script(blocks: list[Block]) -> str:
    """One bash script that runs the page's runnable blocks in order."""
    parts = ["set -euo pipefail\n"]
    for b in blocks:
        if b.marker == "skip":
            continue
        parts.append(f"echo '--- doc block at line {b.line}' >&2\n")
        if b.lang == "python":
            assert "CLAW_DOC_EOF" not in b.body
            parts.append(f"python - <<'CLAW_DOC_EOF'\n{b.body}CLAW_DOC_EOF\n")
        elif any(line.startswith("$ ") for line in b.body.splitlines()):
            parts.append(_transcript_commands(b.body))
        else:
            parts.append(b.body)
    return "".join(parts)


def _stop_daemons(root: Path) -> None:
    """Stop every daemon whose workspace lock lies under ``root`` (by the pid it wrote there)."""
    pids = []
    for lock in root.rglob("sessiond.lock"):
        text = lock.read_text(errors="replace").split()
        if text and text[0].isdigit():
            pids.append(int(text[0]))
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + 15
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.smoke
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_code_runs_as_written(page: Path) -> None:
    blocks = code_blocks(page)
    for b in blocks:
        assert b.marker in (None, "skip", "start-in-checkout"), f"{page.name}:{b.line}: unknown marker {b.marker!r}"
        if b.marker == "skip":
            assert b.reason, f"{page.name}:{b.line}: a skipped block must say why"
    runnable = [b for b in blocks if b.marker != "skip"]
    if not runnable:
        return
    venv_bin = str(Path(sys.executable).parent)
    # Short paths: a workspace's socket must fit the 107-byte Unix socket limit.
    scratch = Path(tempfile.mkdtemp(prefix="clawdoc-", dir="/tmp"))
    try:
        os.chmod(scratch, 0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAW_", "PYTEST_"))}
        env["TMPDIR"] = str(scratch)
        runtime = scratch / "run"
        runtime.mkdir(mode=0o700)
        env["XDG_RUNTIME_DIR"] = str(runtime)
        path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin]
        if runnable[0].marker == "start-in-checkout":
            cwd = ROOT
        else:
            cwd = scratch / "ws"
            cwd.mkdir()
            path.insert(0, venv_bin)
        env["PATH"] = os.pathsep.join(path)
        proc = subprocess.run(
            ["bash", "-c", page_script(blocks)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=_PAGE_TIMEOUT_S,
        )
        assert proc.returncode == 0, (
            f"{page.relative_to(ROOT)}: a block failed (exit {proc.returncode})\n"
            f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
        )
    finally:
        _stop_daemons(scratch)
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.smoke
def test_every_page_is_checked() -> None:
    """A page with code is listed; a skipped block's reason is a sentence, not a placeholder."""
    assert (ROOT / "README.md") in PAGES and len(PAGES) > 1
    for page in PAGES:
        for b in code_blocks(page):
            if b.marker == "skip":
                assert b.reason and len(b.reason.split()) >= 3, f"{page.name}:{b.line}: say why it cannot run here"
