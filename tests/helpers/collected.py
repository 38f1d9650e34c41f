"""Which modules a pytest process holds once its collection ends: for the guard of what collection imports.

Its hook runs in every pytest process of the suite (``tests/conftest.py`` imports it). When collection ends,
before any test runs, it keeps the names in ``sys.modules`` if the process collected the whole suite (the
configured ``testpaths``, as each xdist worker of a run of the suite does): :func:`whole_suite_modules`.
With ``CLAW_COLLECTED_MODULES`` set it also writes them, sorted, as JSON, to the file that names, for a
process that only collects (``--collect-only``). The guard (tests/unit/test_collect_imports.py) reads one
or the other: deterministic, it says what was loaded, never how long it took.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

__all__ = ["REPORT_ENV", "pytest_collection_finish", "whole_suite_modules"]

#: The environment variable naming the report file.
REPORT_ENV = "CLAW_COLLECTED_MODULES"

#: The modules held when this process's collection of the whole suite ended (one entry at most).
_WHOLE: list[frozenset[str]] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep (and report) the loaded modules' names: collection is over, no test has run."""
    modules = frozenset(sys.modules)
    if session.config.args_source is pytest.Config.ArgsSource.TESTPATHS:
        _WHOLE[:] = [modules]
    report = os.environ.get(REPORT_ENV)
    if report:
        Path(report).write_text(json.dumps(sorted(modules)), encoding="utf-8")


def whole_suite_modules() -> frozenset[str] | None:
    """The modules this process held when its collection ended, if it collected the whole suite; else None."""
    return _WHOLE[0] if _WHOLE else None
