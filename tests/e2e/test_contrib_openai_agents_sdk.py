"""The OpenAI Agents SDK's own session tests, run against :class:`ClawSession` on a real daemon.

The tests come from the SDK's published sdist, fetched by scripts/setup-tests (never copied into
this repository; see ``tests/helpers/sdist.py``), at the version the client's ``openai-agents``
extra pins. They run in a pytest subprocess inside the unpacked sdist (its own pytest settings),
with ``tests/helpers/sdist_plugins/claw_openai_agents_swap.py`` loaded first: it replaces the SDK's
``SQLiteSession`` with a ``ClawSession`` bound to the daemon this test starts. The assertions are
the SDK's, untouched. Selected: every file under the sdist's ``tests/memory`` that constructs
``SQLiteSession``, and the encrypted-session tests (``EncryptedSession`` over it, with automatic
compaction through ``_get_compaction_snapshot``); and, second, the runner tests that construct
``SQLiteSession`` (``RUNNER``). Deselected: only tests that reach into SQLiteSession's private
tables, connections and locks, each named below with its reason.

Both suites run in one pytest process per backend (``sdk_run``: one start-up and import of the SDK, one
daemon; each test below checks its own suite's outcomes). Each suite runs whole against the SQLite
daemon; against the PostgreSQL daemon they run the tests that constructed the swapped class in that run
(the others never reach a session, so they cannot see the backend: about 160 of the runner suite's 997).
Both halves of this file are one xdist group (``tests/conftest.py``), SQLite's first, so the PostgreSQL
half finds that list; run alone (say ``CLAW_TEST_BACKEND=postgres``), the PostgreSQL half runs both suites
whole.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.daemon import ROOT, DaemonProcess
from tests.helpers.sdist import sdist_or_fail

PLUGINS = ROOT / "tests" / "helpers" / "sdist_plugins"

#: ``no:langsmith_plugin``: the pytest plugin of langsmith (installed for the LangChain adapter), which the SDK's
#: suites do not use, costs its pytest process about 1.2 CPU-s to load.
PYTEST_ARGS = ("-p", "claw_openai_agents_swap", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin", "-q", "-rfE")
SELECTED = (
    "tests/memory/test_session.py",
    "tests/memory/test_session_limit.py",
    "tests/memory/test_compaction_suffix.py",
    "tests/memory/test_compaction_model_visibility.py",
    "tests/memory/test_openai_responses_compaction_session.py",
    "tests/extensions/memory/test_encrypt_session.py",
)

_CONNECTIONS = "reads SQLiteSession's private per-thread sqlite3 connections (_connections, _get_connection)"
_CORRUPT = (
    "inserts rows that are not JSON straight into SQLiteSession's private table (_locked_connection); "
    "the daemon refuses such items, so they cannot be stored"
)
_INJECT = "injects a failing sqlite3 Connection through SQLiteSession's private _get_connection"
_TRIGGER = "makes the write fail with a sqlite3 trigger on SQLiteSession's private agent_messages table"
_INSERT = "monkeypatches SQLiteSession's private _insert_items"
_OBSERVE = "reads SQLiteSession's private agent_messages table (and its write lock) with sqlite3"

_S = "tests/memory/test_session.py::test_sqlite_session_"
_C = "tests/memory/test_compaction_suffix.py::test_"
_E = "tests/extensions/memory/test_encrypt_session.py::test_"
_R = "tests/memory/test_openai_responses_compaction_session.py::TestOpenAIResponsesCompactionSession::test_settled_"

#: node id → why it cannot apply to another backend (each reads or patches SQLiteSession's internals).
DESELECTED = {
    f"{_S}close_closes_worker_thread_connections": _CONNECTIONS,
    f"{_S}reaps_connections_from_exited_worker_threads": _CONNECTIONS,
    f"{_S}closes_retired_connections_before_the_next_allocation": _CONNECTIONS,
    f"{_S}keeps_connections_of_live_worker_threads": _CONNECTIONS,
    f"{_S}rollback_failure_evicts_connection": _CONNECTIONS,
    f"{_S}close_retries_quarantined_connection": _CONNECTIONS,
    f"{_S}pop_item_skips_corrupt_most_recent": _CORRUPT,
    f"{_S}pop_item_returns_none_after_dropping_only_corrupt_rows": _CORRUPT,
    f"{_S}get_items_limit_skips_corrupt_newest_rows": _CORRUPT,
    f"{_S}get_items_session_settings_limit_skips_corrupt_rows": _CORRUPT,
    f"{_S}file_lock_is_shared_across_instances": "reads SQLiteSession's private per-file lock registry",
    f"{_S}failed_add_items_releases_write_lock": "probes SQLiteSession's private agent_sessions table with sqlite3",
    f"{_S}failed_clear_session_rolls_back": "drops SQLiteSession's private tables with sqlite3 to make clear fail",
    f"{_S}failed_pop_item_releases_write_lock": "drops SQLiteSession's private tables with sqlite3 to make pop fail",
    f"{_S}post_commit_cancellation_propagates_after_known_outcome[add]": _INJECT,
    f"{_S}post_commit_cancellation_propagates_after_known_outcome[pop]": _INJECT,
    f"{_S}post_commit_cancellation_propagates_after_known_outcome[clear]": _INJECT,
    f"{_C}suffix_transaction_rolls_back_failed_insert[sqlite]": _TRIGGER,
    f"{_C}failed_encrypted_suffix_transaction_preserves_original_tokens[sqlite-False]": _TRIGGER,
    f"{_C}failed_encrypted_suffix_transaction_preserves_original_tokens[sqlite-True]": _TRIGGER,
    f"{_C}cancelled_suffix_transaction_settles_before_newer_append[sqlite]": _INSERT,
    f"{_E}encrypted_pop_wrong_key_preserves_row_identity": _OBSERVE,
    f"{_E}encrypted_pop_authentication_is_atomic_with_concurrent_mutations[append]": _OBSERVE,
    f"{_E}encrypted_pop_authentication_is_atomic_with_concurrent_mutations[clear]": _OBSERVE,
    f"{_R}pop_failure_invalidates_response_chain[cancelled]": _INJECT,
    f"{_R}pop_failure_invalidates_response_chain[error]": _INJECT,
    f"{_R}clear_failure_invalidates_response_chain[cancelled]": _INJECT,
    f"{_R}clear_failure_invalidates_response_chain[error]": _INJECT,
}

#: node id → why the SDK's test skips itself here (with SQLiteSession as well); no other test may skip.
SKIPPED_BY_THE_SDK = {
    f"{_E}encrypted_pop_preserves_sqlalchemy_history": "importorskip('sqlalchemy'): another backend, not installed",
    f"{_E}encrypted_session_scan_budget_does_not_turn_redis_negative_limit_into_history": (
        "importorskip('fakeredis.aioredis'): another backend, not installed"
    ),
}

#: Tests the selection runs with openai-agents 0.24.0 (all of them must pass) ...
EXPECTED_PASSED = 328
#: ... and the ones among them that construct the swapped SQLiteSession (at least this many).
EXPECTED_TOUCHED = 184


#: The SDK's runner tests that construct SQLiteSession: a Runner's turns stored and read back (parallel
#: tool calls, handoffs, failures, resumes), so the next model input must equal SQLiteSession's.
RUNNER = (
    "tests/test_agent_runner.py",
    "tests/test_agent_runner_streamed.py",
    "tests/test_max_turns.py",
    "tests/test_native_tool_failure_history.py",
    "tests/test_programmatic_tool_calling.py",
    "tests/test_run_impl_resume_paths.py",
    "tests/test_soft_cancel.py",
    "tests/test_tool_batch_failure_history.py",
    "tests/test_tool_failure_boundaries.py",
)
_H = "tests/test_run_impl_resume_paths.py::test_handoff_resume_after_cancelled_compaction_commits"
#: node id → why it cannot apply to another backend.
RUNNER_DESELECTED = {f"{_H}[{mode}]": _INSERT for mode in ("run-live", "run-json", "streamed-live", "streamed-json")}
#: node id → why the SDK's test skips itself here (with SQLiteSession as well).
RUNNER_SKIPPED = (
    {
        "tests/test_programmatic_tool_calling.py::test_sync_callable_does_not_infer_through_pep695_awaitable_alias": (
            "skipif(sys.version_info < (3, 12)): PEP 695"
        )
    }
    if sys.version_info < (3, 12)
    else {}
)
#: Runner tests that pass with openai-agents 0.24.0 (all of them must; 996 on Python 3.11) ...
RUNNER_EXPECTED_PASSED = 997 - len(RUNNER_SKIPPED)
#: ... and the ones among them that construct the swapped SQLiteSession (at least this many).
RUNNER_EXPECTED_TOUCHED = 159


@dataclass(frozen=True)
class _Suite:
    """One selection of the SDK's tests: its files, what it deselects and what the SDK skips in it."""

    files: tuple[str, ...]
    deselected: dict[str, str]
    skipped: dict[str, str]

    def holds(self, nodeid: str) -> bool:
        return nodeid.split("::", 1)[0] in self.files


SUITES = {
    "memory": _Suite(SELECTED, DESELECTED, SKIPPED_BY_THE_SDK),
    "runner": _Suite(RUNNER, RUNNER_DESELECTED, RUNNER_SKIPPED),
}


@dataclass(frozen=True)
class _Run:
    """One pytest run of the SDK's tests: each test's outcome, the tests that constructed the swapped class, and
    the test ids it was asked to run (None: the suites whole)."""

    outcomes: dict[str, str]
    touched: list[str]
    asked: list[str] | None
    report: str


def _results(junit: Path) -> dict[str, str]:
    """node id → outcome (passed, failed, error, skipped) from pytest's JUnit XML."""
    outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module, _, cls = case.get("classname", "").partition(".Test")
        path = module.replace(".", "/") + ".py"
        nodeid = "::".join(p for p in (path, f"Test{cls}" if cls else "", case.get("name", "")) if p)
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
        outcomes[nodeid] = outcome
    return outcomes


#: The node ids of the tests that constructed the swapped class in the whole run on SQLite (filled by the
#: SQLite half, read by the PostgreSQL half: one worker runs both, :data:`__doc__`).
_TOUCHED: list[list[str]] = []


def _run_sdk_tests(workdir: Path, asked: list[str] | None) -> _Run:
    """Run the sdist's tests ``asked`` (or both suites whole, but their deselected tests), with SQLiteSession
    swapped for ClawSession on a real daemon (this backend's), in one pytest process.

    The sdist's pytest writes its rewritten test modules' bytecode into the sdist's ``__pycache__`` folders (pytest
    checks each against its source), so the next run, this one's other backend's, does not rewrite and compile the
    suites' 31,000 lines again (collecting the runner files: 12.6 CPU-s without their bytecode, 6.5 with, load 9).
    """
    sdist = sdist_or_fail("openai-agents")
    junit, touched = workdir / "junit.xml", workdir / "touched.txt"
    drop = ("PYTEST_", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "CLAW_SESSIOND_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    if asked is None:
        targets = [f for suite in SUITES.values() for f in suite.files]
        deselected = {nodeid: why for suite in SUITES.values() for nodeid, why in suite.deselected.items()}
    else:
        targets, deselected = asked, {}
    daemon = DaemonProcess(workdir / "ws").start()
    try:
        env.update(PYTHONPATH=str(PLUGINS), CLAW_SWAP_ADDRESS=daemon.address, CLAW_SWAP_TOUCHED=str(touched))
        deselect = [f"--deselect={nodeid}" for nodeid in deselected]
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", *PYTEST_ARGS, f"--junitxml={junit}", *targets, *deselect],
            cwd=sdist,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        daemon.stop()
    report = f"{proc.stdout[-12000:]}\n{proc.stderr[-4000:]}"
    assert junit.is_file(), f"the SDK's tests did not run ({proc.returncode}):\n{report}"
    outcomes = _results(junit)
    # A failed test fails its own suite's test below; any other non-zero exit is the run's.
    assert proc.returncode == 0 or set(outcomes.values()) - {"passed", "skipped"}, f"exit {proc.returncode}:\n{report}"
    found = re.search(r"(\d+) deselected", proc.stdout)
    assert (int(found.group(1)) if found else 0) == len(deselected), (
        f"every deselected test must exist (a renamed one would silently run again):\n{report}"
    )
    assert not set(deselected) & set(outcomes)
    swapped = touched.read_text(encoding="utf-8").splitlines() if touched.is_file() else []
    return _Run(outcomes, swapped, asked, report)


@pytest.fixture(scope="module")
def sdk_run(backend: str, tmp_path_factory: pytest.TempPathFactory) -> _Run:
    """Both suites in one pytest process on ``backend``'s daemon (one start-up, one import of the SDK, one daemon):
    whole on SQLite, recording the tests that used a session; on PostgreSQL the tests that used one on SQLite, or
    both suites whole if the SQLite half did not run in this process."""
    workdir = tmp_path_factory.mktemp(f"sdk-{backend}")
    (workdir / "ws").mkdir()
    run = _run_sdk_tests(workdir, _TOUCHED[0] if backend == "postgres" and _TOUCHED else None)
    if backend == "sqlite":
        _TOUCHED[:] = [run.touched]
    return run


def _check_suite(run: _Run, name: str) -> tuple[int, int, int]:
    """``name``'s tests in ``run``: every one passed, but those the SDK skips itself.

    Returns: how many passed, how many ran (but those the SDK skips; -1 for a whole run), and how many used the
    swapped class."""
    suite = SUITES[name]
    outcomes = {n: o for n, o in run.outcomes.items() if suite.holds(n)}
    touched = [n for n in run.touched if suite.holds(n)]
    asked = None if run.asked is None else [n for n in run.asked if suite.holds(n)]
    skipped = {n: why for n, why in suite.skipped.items() if asked is None or n in asked}
    bad = sorted(n for n, o in outcomes.items() if o != "passed" and n not in skipped)
    assert not bad, f"not passed: {bad}\n{run.report}"
    assert {n for n, o in outcomes.items() if o == "skipped"} == set(skipped), run.report
    passed = len(outcomes) - len(skipped)
    if asked is None:
        return passed, -1, len(touched)
    assert sorted(outcomes) == sorted(asked), "the run's tests differ from those asked"
    assert sorted(touched) == sorted(asked), "the tests that used a session differ from the SQLite run's"
    return passed, len(asked) - len(skipped), len(touched)


@pytest.mark.both_backends("the SDK's own session tests through the adapter, on each backend's daemon")
def test_the_sdks_memory_tests_pass_with_claw_session(sdk_run: _Run) -> None:
    passed, ran, swapped = _check_suite(sdk_run, "memory")
    expected = EXPECTED_PASSED if ran < 0 else ran
    assert passed == expected, f"{passed} passed, expected {expected}"
    assert swapped >= EXPECTED_TOUCHED, f"only {swapped} tests used the swapped SQLiteSession"


@pytest.mark.both_backends("the SDK's runner tests through the adapter, on each backend's daemon")
def test_the_sdks_runner_tests_pass_with_claw_session(sdk_run: _Run) -> None:
    """The items a Runner stores come back as SQLiteSession gives them (the order written: parallel
    tool calls before their outputs), so every turn's model input is the same."""
    passed, ran, swapped = _check_suite(sdk_run, "runner")
    expected = RUNNER_EXPECTED_PASSED if ran < 0 else ran
    assert passed == expected, f"{passed} passed, expected {expected}"
    assert swapped >= RUNNER_EXPECTED_TOUCHED, f"only {swapped} tests used the swapped SQLiteSession"
