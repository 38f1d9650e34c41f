"""Figures of the robustness tests, printed at the end of the pytest run.

A test calls ``record("crash", crashes_survived=20, acked_checked=1234, lost=0)``;
the terminal summary prints one line per recorded name. Figures of one name
recorded several times (parametrised tests) are summed, except ``*_max``,
``*_ms``, ``*_mib`` and ``*_bound`` figures, which keep the largest value.

The suite runs in several pytest-xdist worker processes, so each record is
also appended as a JSON line to a file in ``$CLAW_FIGURES_DIR`` (made by the
controlling process at start, inherited by the workers); the summary merges
the files.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

FIGURES: dict[str, dict[str, float]] = {}
_DIR_ENV = "CLAW_FIGURES_DIR"


def _merge(into: dict[str, dict[str, float]], name: str, figures: dict[str, float]) -> None:
    group = into.setdefault(name, {})
    for key, value in figures.items():
        if key.endswith(("_max", "_ms", "_mib", "_bound")):
            group[key] = max(group.get(key, value), value)
        else:
            group[key] = group.get(key, 0) + value


def record(name: str, **figures: float) -> None:
    """Add figures under ``name`` and print them (visible with ``-s``)."""
    _merge(FIGURES, name, figures)
    folder = os.environ.get(_DIR_ENV)
    if folder and os.path.isdir(folder):
        with open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a") as out:
            out.write(json.dumps({"name": name, "figures": figures}) + "\n")
    shown = " ".join(f"{k}={_fmt(v)}" for k, v in figures.items())
    print(f"[figures] {name}: {shown}")


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def pytest_configure(config: Any) -> None:
    """The controlling process (not an xdist worker) makes the folder the workers write into."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None and _DIR_ENV not in os.environ:
        folder = tempfile.mkdtemp(prefix="claw-figures-")
        os.environ[_DIR_ENV] = folder
        config._claw_figures_dir = folder


def pytest_unconfigure(config: Any) -> None:
    folder = getattr(config, "_claw_figures_dir", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(_DIR_ENV, None)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the collected figures (of every worker), one line per test group."""
    merged: dict[str, dict[str, float]] = {}
    folder = getattr(terminalreporter.config, "_claw_figures_dir", None)
    if folder:
        for path in sorted(Path(folder).glob("*.jsonl")):
            for line in path.read_text().splitlines():
                entry = json.loads(line)
                _merge(merged, entry["name"], entry["figures"])
    else:
        merged = FIGURES
    if not merged:
        return
    terminalreporter.section("claw-sessiond robustness figures")
    for name in sorted(merged):
        shown = " ".join(f"{k}={_fmt(v)}" for k, v in merged[name].items())
        terminalreporter.write_line(f"{name}: {shown}")
