"""langchain-core's own chat-history tests, from its published sdist, against a real daemon.

The sdist of the ``langchain-core`` version the client's ``langchain`` extra pins is fetched by
``scripts/setup-tests`` into the test cache (``tests/helpers/sdist.py``; nothing of it is copied
into this repository). The test copies it out of the cache and runs its tests in a
separate pytest process whose rootdir is the copy (its own pytest settings and conftest, for
example the ``blockbuster`` fixture that fails a test doing blocking I/O on the event loop).
The plugin tests/helpers/sdist_plugins/claw_langchain_swap.py replaces
``InMemoryChatMessageHistory`` by :class:`ClawChatMessageHistory` bound to the daemon; the
tests' assertions are untouched and none is deselected.

The files run are the two that construct ``InMemoryChatMessageHistory``:
``tests/unit_tests/chat_history/test_chat_history.py`` (6 tests; 3 of them check the base
class's defaults with histories of their own, so they do not reach the adapter) and
``tests/unit_tests/runnables/test_history.py`` (``RunnableWithMessageHistory`` over a store of
histories, 23 tests). ``test_runnable_events_v1/v2.py`` define their own history class and
``utils/_type_checking_annotations.py`` holds no test.

The ``langchain-tests`` package (its standard test classes) has no chat-history suite in
1.1.9 (chat models, embeddings, tools, retrievers, vector stores, caches, byte stores,
indexers, sandboxes only), so there is nothing of it to run here.

The test never reaches the network: without the cached sdist it fails, naming scripts/setup-tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.daemon import ROOT
from tests.helpers.sdist import pinned_version, sdist_or_fail

LANGCHAIN_CORE = "langchain-core==1.8.3"
TEST_FILES = ("tests/unit_tests/chat_history/test_chat_history.py", "tests/unit_tests/runnables/test_history.py")
PLUGINS = ROOT / "tests" / "helpers" / "sdist_plugins"
#: langchain-core 1.8.3 has 29 tests in TEST_FILES; all run and must pass.
MIN_TESTS = 29
#: The ones among them that make no history (every other test makes at least one, on the daemon).
WITHOUT_A_HISTORY = {
    "test_chat_history.py::test_chat_history_deprecated[BaseChatMessageHistory]": "reads the base class's docstring",
    "test_chat_history.py::test_chat_history_deprecated[DaemonHistory]": "reads the swapped class's docstring",
    "test_chat_history.py::test_add_message_implementation_only": "the base class's defaults, on its own history",
    "test_chat_history.py::test_bulk_message_implementation_only": "the base class's defaults, on its own history",
    "test_chat_history.py::test_async_interface": "the base class's async defaults, on its own history",
    "test_history.py::test_get_input_schema_input_dict": "schemas of RunnableWithMessageHistory only",
    "test_history.py::test_get_output_schema": "schemas of RunnableWithMessageHistory only",
    "test_history.py::test_get_input_schema_input_messages": "schemas of RunnableWithMessageHistory only",
}


def _sdist_copy(into: Path) -> Path:
    """A fresh copy of the cached langchain-core sdist (the tests run in it; the cache stays as fetched)."""
    cached = sdist_or_fail("langchain-core")
    assert pinned_version("langchain-core") == LANGCHAIN_CORE.split("==")[1], "the extra and this test disagree"
    return Path(shutil.copytree(cached, into / cached.name))


def _outcomes(junit: Path) -> dict[str, str]:
    """``classname::name`` → passed / failed / error / skipped, from a JUnit XML report."""
    found: dict[str, str] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                outcome = tag
        found[f"{case.get('classname')}::{case.get('name')}"] = outcome
    return found


@pytest.mark.both_backends("langchain-core's own chat-history tests through the adapter, on each backend's daemon")
def test_langchain_core_chat_history_tests_pass_on_the_adapter(tmp_path: Path, daemon: Any) -> None:
    sdist = _sdist_copy(tmp_path)
    record, junit = tmp_path / "record.jsonl", tmp_path / "junit.xml"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")]),
        "CLAW_LANGCHAIN_ADDRESS": daemon.address,
        "CLAW_LANGCHAIN_RECORD": str(record),
    }
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-p", "claw_langchain_swap", "-p", "no:cacheprovider", "-p", "no:xdist"]
    cmd += ["-q", "-rA", f"--junitxml={junit}", *TEST_FILES]
    out = subprocess.run(cmd, cwd=sdist, env=env, capture_output=True, text=True, timeout=300, check=False)
    report = out.stdout[-20000:] + out.stderr[-5000:]
    assert out.returncode == 0, report
    outcomes = _outcomes(junit)
    assert len(outcomes) >= MIN_TESTS, report
    assert {k: v for k, v in outcomes.items() if v != "passed"} == {}, report
    made = {
        json.loads(line)["test"].rsplit("/", 1)[-1]: json.loads(line)["histories"]
        for line in record.read_text().splitlines()
    }
    assert len(made) == len(outcomes), made
    assert {test for test, n in made.items() if n == 0} == set(WITHOUT_A_HISTORY), made
    # The histories lived in the daemon: one session per history the tests made.
    with daemon.client() as client:
        sessions = client.list_sessions(id_contains="lc-sdist-", limit=1000)
    assert len(sessions) >= len(made) - len(WITHOUT_A_HISTORY)
