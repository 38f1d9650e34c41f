"""The OpenAI Agents SDK's own session tests, run against :class:`ClawSession` on a real daemon.

The tests come from the SDK's published sdist, fetched by scripts/setup-tests (never copied into
this repository; see ``tests/helpers/sdist.py``), at the version the client's ``openai-agents``
extra pins. They run in a pytest subprocess inside the unpacked sdist (its own pytest settings),
with ``tests/helpers/sdist_plugins/claw_openai_agents_swap.py`` loaded first: it replaces the SDK's
``SQLiteSession`` with a ``ClawSession`` bound to the daemon this test starts. The assertions are
the SDK's, untouched. Selected: every file under the sdist's ``tests/memory`` that constructs
``SQLiteSession``, and the encrypted-session tests (``EncryptedSession`` over it, with automatic
compaction through ``_get_compaction_snapshot``). Deselected: only tests that reach into
SQLiteSession's private tables, connections and locks, each named below with its reason.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.helpers.daemon import ROOT, DaemonProcess
from tests.helpers.sdist import sdist_or_fail

PLUGINS = ROOT / "tests" / "helpers" / "sdist_plugins"

PYTEST_ARGS = ("-p", "claw_openai_agents_swap", "-p", "no:cacheprovider", "-q", "-rfE")
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


def test_the_sdks_memory_tests_pass_with_claw_session(tmp_path: Path, workspace: Path) -> None:
    sdist = sdist_or_fail("openai-agents")
    junit, touched = tmp_path / "junit.xml", tmp_path / "touched.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH", "CLAW_SESSIOND_"))}
    daemon = DaemonProcess(workspace).start()
    try:
        env.update(
            PYTHONPATH=str(PLUGINS),
            PYTHONDONTWRITEBYTECODE="1",
            CLAW_SWAP_ADDRESS=daemon.address,
            CLAW_SWAP_TOUCHED=str(touched),
        )
        deselect = [f"--deselect={nodeid}" for nodeid in DESELECTED]
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", *PYTEST_ARGS, f"--junitxml={junit}", *SELECTED, *deselect],
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
    bad = sorted(n for n, o in outcomes.items() if o != "passed" and n not in SKIPPED_BY_THE_SDK)
    assert not bad and proc.returncode == 0, f"not passed: {bad}\n{report}"
    deselected = re.search(r"(\d+) deselected", proc.stdout)
    assert deselected is not None and int(deselected.group(1)) == len(DESELECTED), (
        f"every deselected test must exist (a renamed one would silently run again):\n{report}"
    )
    assert not set(DESELECTED) & set(outcomes)
    assert {n for n, o in outcomes.items() if o == "skipped"} == set(SKIPPED_BY_THE_SDK)
    passed = len(outcomes) - len(SKIPPED_BY_THE_SDK)
    assert passed == EXPECTED_PASSED, f"{passed} passed, expected {EXPECTED_PASSED}:\n{report}"
    swapped = touched.read_text(encoding="utf-8").split()
    assert len(swapped) >= EXPECTED_TOUCHED, f"only {len(swapped)} tests used the swapped SQLiteSession"
