"""Which modules a fresh Python process imports: for the guards of what a start-up loads.

:func:`imported_by` runs Python code in a new interpreter (this one's ``sys.executable``) and returns
the names in its ``sys.modules`` at the end; :func:`imported_by_cli` does the same for a run of the
CLI (``python -m claw_sessiond ARGS``, ``SystemExit`` caught). Both are deterministic: they say what
was loaded, never how long it took. :func:`loaded_under` picks the loaded modules of given packages
(a package and its submodules), for an assertion that names the offenders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["imported_by", "imported_by_cli", "loaded_under"]

#: Appended to the code run: write the sorted module names, as JSON, to the file named by argv[1].
_REPORT = "\nimport json as _j, sys as _s\nwith open(_s.argv[1], 'w') as _f:\n    _j.dump(sorted(_s.modules), _f)\n"

#: Runs the CLI as ``python -m claw_sessiond`` does, with the arguments after the report file's name.
_CLI = (
    "import runpy, sys\n"
    "_report = sys.argv[1]\n"
    "sys.argv = ['claw-sessiond', *sys.argv[2:]]\n"
    "try:\n"
    "    runpy.run_module('claw_sessiond', run_name='__main__', alter_sys=True)\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.argv = [sys.argv[0], _report]\n"
)


def imported_by(
    code: str,
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 60.0,
) -> frozenset[str]:
    """The modules loaded after ``code`` ran in a new interpreter (``args`` are its ``sys.argv[2:]``).

    The process must end normally (its output is in the assertion message otherwise); ``env`` is added
    to this process's environment.
    """
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "modules.json"
        done = subprocess.run(
            [sys.executable, "-c", code + _REPORT, str(report), *args],
            cwd=cwd,
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        assert done.returncode == 0 and report.exists(), f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return frozenset(json.loads(report.read_text(encoding="utf-8")))


def imported_by_cli(
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> frozenset[str]:
    """The modules loaded after ``claw-sessiond ARGS`` ran in a new interpreter (whatever its exit code)."""
    return imported_by(_CLI, *args, cwd=cwd, env=env)


def loaded_under(modules: Iterable[str], packages: Iterable[str]) -> list[str]:
    """The names in ``modules`` that are one of ``packages`` or a submodule of one, sorted."""
    roots = tuple(packages)
    return sorted(m for m in modules if m in roots or m.startswith(tuple(f"{p}." for p in roots)))
