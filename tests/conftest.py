"""Fixtures and hooks of the whole suite; what the tests share lives in ``tests/helpers/``.

Every process a test starts is stopped by its pid at teardown. Set ``CLAW_FULL=1`` for the
full tier: every test, both backends, the long versions of the robustness tests (CI does); then a
skipped test fails the run. Without it the default tier runs (``tests/helpers/tiers.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from claw_sessiond_client import SessionClient
from tests.helpers.collected import pytest_collection_finish  # noqa: F401  (what collection imported)
from tests.helpers.daemon import DaemonProcess
from tests.helpers.figures import (  # noqa: F401  (collect and print the robustness figures)
    pytest_configure,
    pytest_terminal_summary,
    pytest_unconfigure,
)
from tests.helpers.inspect_postgres import close_reader
from tests.helpers.postgres import SHARED as POSTGRES
from tests.helpers.tiers import FULL, left_out_because, longest_first, selected_backends, tier_line

# Property tests judge behaviour, not speed: on a loaded 2-core machine example generation and single
# examples can be slow, which Hypothesis would otherwise report as a failure (too_slow, deadline).
settings.register_profile("claw", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("claw")

TESTS = Path(__file__).resolve().parent

#: Tests that must not run at the same time as each other under pytest-xdist (``--dist loadgroup``
#: puts a group on one worker): ``perms`` open the shared temporary folders to another uid for a
#: moment and restore them; ``timing`` compare memory or latencies against a baseline measured in
#: the same test, so two of them must not run at once; ``load`` kill -9 a daemon under eight
#: writers, kept apart from each other. Kept small: a group's files run one after another on one
#: worker, so the longest group bounds the run (heavy files that compare nothing, such as
#: test_interference since its bounds became sanity bounds, or test_metrics_limits, are units of
#: their own). ``sdk``: the OpenAI Agents SDK's suites, SQLite's half first, whose list of the tests that
#: use a session the PostgreSQL half runs (tests/e2e/test_contrib_openai_agents_sdk.py). Keyed by the file's
#: path under tests/.
_GROUPS = {
    "e2e/test_users.py": "perms",
    "e2e/test_tcp_auth.py": "perms",
    "e2e/test_daemon.py": "perms",
    "e2e/test_soak.py": "timing",
    "e2e/test_stream_bounds.py": "timing",
    "e2e/test_crash.py": "load",
    "e2e/test_crash_state.py": "load",
    "e2e/test_contrib_openai_agents_sdk.py": "sdk",
}


def _file_key(path: Path) -> str:
    """The test file's path under tests/ (``e2e/test_cli.py``), or its full path if it lies elsewhere."""
    try:
        return path.relative_to(TESTS).as_posix()
    except ValueError:
        return str(path)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Every test file is one unit for the workers per backend (its module fixtures are made once
    per backend, and tests that read what an earlier test of the file left, such as figures, see
    it): an end-to-end file's ``[sqlite]`` and ``[postgres]`` halves (groups ``<file>:sqlite`` and
    ``<file>:postgres``) may run on two workers at once. The groups above join several files, both
    halves of each, into one unit. Marked as each item is collected: xdist reads the marks in its
    own ``pytest_collection_modifyitems``."""
    item.add_marker(pytest.mark.xdist_group(_group(item)))


def _group(item: pytest.Item) -> str:
    """The xdist group of ``item`` (:func:`pytest_itemcollected`)."""
    key = _file_key(item.path)
    callspec = getattr(item, "callspec", None)
    backend = callspec.params.get("backend") if callspec is not None and key.startswith("e2e/") else None
    # not "key[backend]": xdist's loadgroup ignores a group name that ends in "]"
    return _GROUPS.get(key) or (f"{key}:{backend}" if backend else key)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """What ``-n auto`` (``addopts``) means here: three workers for every two cores (one per core where there is
    one). The suite's tests wait for about a third of their wall (daemons starting, leases running out, timeouts,
    children's exits: measured per test, a worker's CPU and its descendants' against its wall), so one worker per
    core left a core idle that long; a third worker on two cores fills it. ``.ci/run`` on clean clones of the 2-core
    development machine, one sitting, nothing else running: 831 s of pytest with two workers (``003aafa``), 591 s
    with three (``d130e6b``), every test passing in both; the whole run 14 min 46 s and 10 min 42 s."""
    cores = len(os.sched_getaffinity(0))
    return max(1, cores * 3 // 2)


def pytest_report_header(config: pytest.Config) -> str:
    return tier_line(FULL, selected_backends())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tier and the backends of this run (``tests/helpers/tiers.py``): what they leave out is
    deselected, not skipped (``CLAW_FULL=1`` fails a skip); what runs goes in the order the workers are
    to take it, the longest groups first (``tiers.longest_first``)."""
    backends = selected_backends()
    kept, dropped = [], []
    for item in items:
        why = left_out_because(item, _file_key(item.path), full=FULL, backends=backends)
        (kept if why is None else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = longest_first(kept, _group)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With CLAW_FULL=1 (what CI runs) a skipped test is a failure: CI must run every test."""
    if not FULL or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped:
        for report in skipped:
            reporter.write_line(f"CLAW_FULL=1 and skipped: {report.nodeid}: {report.longrepr}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", autouse=True)
def _stop_postgres() -> Iterator[None]:
    """Stop the throwaway PostgreSQL server (``tests/helpers/postgres.py``), if a test started one, at the end."""
    yield
    close_reader()  # the connection stored() keeps to the server
    POSTGRES.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def spawn_daemon(workspace: Path) -> Iterator[Any]:
    """A factory: ``spawn_daemon(*args, workspace=..., env=..., start=True)``; all are stopped at teardown."""
    started: list[DaemonProcess] = []

    def make(*args: str, workspace_path: Path | None = None, env: dict[str, str] | None = None, start: bool = True):
        d = DaemonProcess(workspace_path or workspace, *args, env=env)
        started.append(d)
        return d.start() if start else d

    yield make
    for d in started:
        d.stop()


@pytest.fixture
def daemon(spawn_daemon: Any) -> DaemonProcess:
    """A running daemon on ``workspace``."""
    d: DaemonProcess = spawn_daemon()
    return d


@pytest.fixture
def client(daemon: DaemonProcess) -> Iterator[SessionClient]:
    """A sync client of ``daemon`` (no auto-start)."""
    c = daemon.client()
    yield c
    c.close()
