"""docs/grpcurl.md is true: every command runs and prints what it shows.

Each ```sh block in the section holds one command (first line ``$ ``, shell
continuation lines after it); the next fenced block is its output. The
commands run in order, through ``bash -c`` with grpcurl on PATH, in a fresh
workspace with a real daemon, and their stdout+stderr must equal the shown
output after normalisation (:func:`normalise`, documented in docs/grpcurl.md).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import grpcurl_path
from tests.helpers.daemon import ROOT, DaemonProcess

SECTION = "## Inspect with grpcurl"
PAGE = ROOT / "docs" / "grpcurl.md"
_FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```\n", re.M | re.S)
_TIME = re.compile(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"')
_TRACE = re.compile(r'"[0-9a-f]{32}"')
_INCARNATION = re.compile(r'"incarnation": "[0-9a-f]{16}"')


pytestmark = pytest.mark.backend_neutral(
    "docs/grpcurl.md's commands run as written; what they store is tested on both backends elsewhere"
)


def readme_examples(text: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs of the grpcurl section of docs/grpcurl.md, in order."""
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start : end if end != -1 else len(text)]
    blocks = [(m.group(1), m.group(2)) for m in _FENCE.finditer(section)]
    pairs = []
    i = 0
    while i < len(blocks):
        lang, body = blocks[i]
        if lang == "sh" and body.startswith("$ "):
            assert i + 1 < len(blocks), f"command without an output block: {body}"
            pairs.append((body[2:].rstrip("\n"), blocks[i + 1][1]))
            i += 2
        else:
            i += 1
    return pairs


def normalise(text: str) -> str:
    """Replace volatile values (timestamps, trace ids, incarnations) and trailing whitespace."""
    text = _TIME.sub('"<TIME>"', text)
    text = _TRACE.sub('"<TRACE_ID>"', text)
    text = _INCARNATION.sub('"incarnation": "<INCARNATION>"', text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def test_normalise_keeps_what_matters() -> None:
    shown = '{\n  "trace_id": "ab804dd4369a4dc4b6c4a30f81e0ce2f",\n  "position": "4"\n}'
    assert normalise(shown) == normalise(shown.replace("ab804dd4", "00000000"))
    assert normalise(shown) != normalise(shown.replace('"4"', '"5"'))
    assert normalise('"2026-12-02T15:54:58.876275Z"') == '"<TIME>"'
    assert normalise('"incarnation": "9daad21955e94571"') == normalise('"incarnation": "0da1716fe98d49c1"')


@pytest.mark.smoke
def test_readme_grpcurl_section_is_real(spawn_daemon: object, workspace: Path) -> None:
    examples = readme_examples(PAGE.read_text())
    commands = [c for c, _ in examples]
    assert len(examples) >= 9, commands
    for needle in (
        " list",
        "describe claw.sessiond.v1.SessionService",
        "describe claw.sessiond.v1.",
        "grpc.health.v1.Health/Check",
        "SessionService/Load",
        "SessionService/Append",
        "SessionService/RecordUsage",
        "SessionService/Clear",
        "-format-error",
    ):
        assert any(needle in c for c in commands), f"docs/grpcurl.md shows no grpcurl call with {needle!r}"
    assert all(c.startswith("grpcurl ") for c in commands), commands

    daemon = spawn_daemon()  # type: ignore[operator]
    assert isinstance(daemon, DaemonProcess)
    env = {**os.environ, "PATH": f"{Path(grpcurl_path()).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command, expected in examples:
        proc = subprocess.run(
            ["bash", "-c", command],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=30,
        )
        got = normalise(proc.stdout)
        shown = f"$ {command}\n--- docs/grpcurl.md shows:\n{expected}\n--- got:\n{proc.stdout}"
        assert got == normalise(expected), shown
        if "-format-error" not in command:
            assert proc.returncode == 0, f"$ {command}\nexit {proc.returncode}\n{proc.stdout}"
