"""The wheels the packaging test installs its two fresh virtualenvs from, fetched by ``scripts/setup-tests``.

``python -m tests.helpers.wheelhouse`` (run by ``scripts/setup-tests``) downloads, into
``$CLAW_TEST_CACHE/wheels`` (default ``~/.cache/claw-sessiond-tests/wheels``), the build
backend both distributions name (``[build-system] requires``) and the runtime dependencies of
both (the daemon's ``DAEMON_DEPENDENCIES`` in setup.py, the client's ``dependencies``), with
theirs. The test then builds and installs with ``--no-index --find-links`` that folder only, so
it never reaches the network; :func:`wheelhouse_or_fail` fails it, naming the set-up, when the
folder was never filled.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.helpers.daemon import ROOT
from tests.helpers.sdist import cache_dir

#: Written last by :func:`fill`: the folder is complete once it exists.
DONE = "COMPLETE"


def wheelhouse_dir() -> Path:
    return cache_dir() / "wheels"


def requirements() -> list[str]:
    """The build backend and the runtime dependencies of both distributions (never themselves)."""
    out: list[str] = []
    for pyproject in (ROOT / "pyproject.toml", ROOT / "clients" / "python" / "pyproject.toml"):
        with open(pyproject, "rb") as f:
            data = tomllib.load(f)
        out += data["build-system"]["requires"]
        out += data["project"].get("dependencies", [])
    for node in ast.walk(ast.parse((ROOT / "setup.py").read_text())):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "DAEMON_DEPENDENCIES" for t in node.targets
        ):
            out += ast.literal_eval(node.value)
    return list(dict.fromkeys(out))


def fill(timeout_s: float = 900) -> Path:
    """Download :func:`requirements` (and what they need) as wheels into :func:`wheelhouse_dir`."""
    target = wheelhouse_dir()
    target.mkdir(parents=True, exist_ok=True)
    (target / DONE).unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--only-binary", ":all:", "-d", str(target)]
    subprocess.run([*cmd, *requirements()], check=True, timeout=timeout_s)
    (target / DONE).write_text("\n".join(requirements()) + "\n")
    return target


def wheelhouse_or_fail() -> Path:
    """The filled wheelhouse; fails the test (never skips) if ``scripts/setup-tests`` did not fill it."""
    target = wheelhouse_dir()
    done = target / DONE
    if not done.is_file() or done.read_text().splitlines() != requirements():
        pytest.fail(
            f"the wheels the packaging test installs from are not in {target} (or are for other requirements): "
            "run scripts/setup-tests (or `python -m tests.helpers.wheelhouse`) first; tests do not reach the network"
        )
    return target


if __name__ == "__main__":
    print(f"wheelhouse: {fill()}")
