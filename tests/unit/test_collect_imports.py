"""What collecting the suite imports: no agent framework, no framework adapter.

Every pytest process imports every test module to collect it (each xdist worker, whichever of them then
runs the file's tests, and the default tier too), so a framework imported at the top of a test module is
paid by all of them: ``agents`` ~2.6 CPU-s, ``google.adk`` ~1.1 with ``google.genai`` ~0.8, ``langgraph``
~1.3, ``langchain_core`` ~0.3. The test modules that need one name it through
:class:`tests.helpers.lazy.LazyModule`, imported by the first test that uses it. The guard reads the modules held
when the collection of the whole suite ended (:mod:`tests.helpers.collected`): this process's own, or a new
process's (``--collect-only``, the full tier) when this one collected less. Deterministic: it says what was
loaded, never how long anything took.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.collected import REPORT_ENV, whole_suite_modules
from tests.helpers.daemon import ROOT
from tests.helpers.imports import imported_by, loaded_under

#: The frameworks the adapters adapt, the adapters, and the test helpers that import a framework at the top.
FRAMEWORKS: tuple[str, ...] = (
    "agents",
    "google.adk",
    "google.genai",
    "langchain_core",
    "langgraph",
    "claw_sessiond_client.contrib.adk",
    "claw_sessiond_client.contrib._adk_mapping",
    "claw_sessiond_client.contrib.langchain",
    "claw_sessiond_client.contrib.langgraph",
    "claw_sessiond_client.contrib.openai_agents",
    "tests.helpers.adk_events",
    "tests.helpers.langgraph_graphs",
)
#: Test modules that use a framework: collection imported them, or the guard would prove nothing.
USERS: tuple[str, ...] = (
    "tests.e2e.test_contrib_adk",
    "tests.e2e.test_contrib_langgraph",
    "tests.e2e.test_contrib_openai_agents",
    "tests.e2e.test_langchain",
)

#: Collect only, in that process (no xdist worker); ``tests/conftest.py`` loads the reporting hook.
COLLECT: tuple[str, ...] = ("--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider")


def test_collecting_the_whole_suite_imports_no_framework(tmp_path: Path) -> None:
    """On this process's own collection when it collected the whole suite (each worker of a run of the
    suite: nothing more to pay), else on a new process's collection of the full tier."""
    modules = whole_suite_modules() or _collected_elsewhere(tmp_path / "modules.json")
    assert set(USERS) <= modules
    assert loaded_under(modules, FRAMEWORKS) == []


def _collected_elsewhere(report: Path) -> frozenset[str]:
    """The modules a new pytest process held when its collection of the full tier ended."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *COLLECT],
        cwd=ROOT,
        env={**os.environ, "CLAW_FULL": "1", "PYTHONPATH": str(ROOT), REPORT_ENV: str(report)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and report.exists(), f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr}"
    return frozenset(json.loads(report.read_text(encoding="utf-8")))


def test_a_lazy_module_is_imported_on_the_first_public_name_read() -> None:
    """Nothing before; not for a private name (what pytest probes); then the module, on a public one."""
    code = (
        "from tests.helpers.lazy import LazyModule\n"
        "import sys\n"
        "m = LazyModule('claw_sessiond_client.contrib._names')\n"
        "assert 'claw_sessiond_client.contrib._names' not in sys.modules\n"
        "assert getattr(m, '_fixture_function_marker', None) is None and not hasattr(m, '__test__')\n"
        "assert 'claw_sessiond_client.contrib._names' not in sys.modules\n"
        "assert m.HASHED_PREFIX\n"
    )
    modules = imported_by(code, env={"PYTHONPATH": str(ROOT)})
    assert "claw_sessiond_client.contrib._names" in modules
