"""Figures of the robustness tests, printed at the end of the pytest run.

A test calls ``record("crash", crashes_survived=20, acked_checked=1234, lost=0)``;
the terminal summary prints one line per recorded name. Figures of one name
recorded several times (parametrised tests) are summed, except ``*_max`` and
``*_ms`` figures, which keep the largest value.
"""

from __future__ import annotations

from typing import Any

FIGURES: dict[str, dict[str, float]] = {}


def record(name: str, **figures: float) -> None:
    """Add figures under ``name`` and print them (visible with ``-s``)."""
    into = FIGURES.setdefault(name, {})
    for key, value in figures.items():
        if key.endswith(("_max", "_ms", "_mib", "_bound")):
            into[key] = max(into.get(key, value), value)
        else:
            into[key] = into.get(key, 0) + value
    shown = " ".join(f"{k}={_fmt(v)}" for k, v in figures.items())
    print(f"[figures] {name}: {shown}")


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the collected figures, one line per test group."""
    if not FIGURES:
        return
    terminalreporter.section("claw-sessiond robustness figures")
    for name in sorted(FIGURES):
        shown = " ".join(f"{k}={_fmt(v)}" for k, v in FIGURES[name].items())
        terminalreporter.write_line(f"{name}: {shown}")
