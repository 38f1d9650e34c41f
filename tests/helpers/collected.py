"""A pytest plugin that writes which modules the process holds once collection ends.

Loaded by name (``-p tests.helpers.collected``, the project root on ``PYTHONPATH``), never by a conftest,
so that a run with it collects exactly what any other run collects. At ``pytest_collection_finish`` it
writes the sorted names in ``sys.modules``, as JSON, to the file named by ``CLAW_COLLECTED_MODULES``
(nothing when that is unset). The guard of what collection imports (tests/unit/test_collect_imports.py)
reads it: deterministic, it says what was loaded, never how long it took.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

#: The environment variable naming the report file.
REPORT_ENV = "CLAW_COLLECTED_MODULES"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Write the loaded modules' names to the report file (collection is over, no test has run)."""
    report = os.environ.get(REPORT_ENV)
    if report:
        Path(report).write_text(json.dumps(sorted(sys.modules)), encoding="utf-8")
