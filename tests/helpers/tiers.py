"""The suite's two tiers: what the README's test command runs, and what ``CLAW_FULL=1`` (CI) adds.

The **default tier** (``.venv/bin/python -m pytest -q``, a developer's loop, a few minutes on two
cores) runs every test that needs no process of its own: ``tests/unit`` and the in-process storage
tests of ``tests/storage``; of the tests that start daemons or CLI processes (all of ``tests/e2e``
and the files of ``tests/storage`` marked ``processes``) it runs the ``smoke`` set only, one to
three tests per file: every RPC family, the CLI, auto-start, the peer check, one crash round, the
docs' blocks.

The **full tier** (``CLAW_FULL=1``, what ``.ci/run`` runs) runs every test, with the long sizes of
the robustness tests; there a skipped test fails the run (``tests/conftest.py``).

Backends (``CLAW_TEST_BACKEND``): the default tier runs on SQLite alone, the full tier on both;
``CLAW_TEST_BACKEND=all`` adds PostgreSQL to the default tier (the storage contract's
``[postgres]`` half, the ``both_backends`` end-to-end tests, ``tests/storage/postgres``; the
tests start a throwaway server from ``/usr/lib/postgresql/*/bin``), and ``sqlite`` or
``postgres`` keeps that one backend's tests in either tier. The storage contract's ``[memory]`` half
(the in-process reference backend, :data:`IN_PROCESS`) runs in every tier. What a tier leaves out is
deselected, never skipped, and the run's header says which tier and backends it runs.

**Order** (:func:`longest_first`): the two xdist workers take whole groups (``--dist loadgroup``, the
groups of ``tests/conftest.py``), in the order of the collection. The longest groups of the full tier
(:data:`LONGEST`) come first, so that the run does not end with one worker idle while the other is
still in a two-minute group it took last.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from typing import Final, TypeVar

import pytest

__all__ = [
    "BACKENDS",
    "FULL",
    "IN_PROCESS",
    "LONGEST",
    "NEEDS_POSTGRES",
    "left_out_because",
    "longest_first",
    "scale",
    "selected_backends",
    "tier_line",
]

FULL: Final = os.environ.get("CLAW_FULL") == "1"


def scale(short: int, full: int) -> int:
    """A loop bound: ``short`` by default, ``full`` when CLAW_FULL=1."""
    return full if FULL else short


#: Every storage backend the suite knows, in the order of the test ids.
BACKENDS: Final = ("sqlite", "postgres")

#: Backends that need no server and no file (the reference backend, ``storage/memory/``): every tier runs
#: their storage contract tests, whatever ``CLAW_TEST_BACKEND`` keeps (it names the product backends).
IN_PROCESS: Final = ("memory",)

#: Folders (under tests/) whose every test needs a PostgreSQL server, whatever its parameters.
NEEDS_POSTGRES: Final = ("storage/postgres/",)
#: Folders (under tests/) whose ``backend`` parameter names the storage backend a test runs on.
PER_BACKEND: Final = ("storage/", "e2e/")

#: The full tier's longest groups (an xdist group of ``tests/conftest.py``: a group of files, or a file, or one
#: backend's half of an end-to-end file: ``<file>:sqlite``, ``<file>:postgres``) and about how many seconds each
#: takes on one worker: pytest's ``--durations=0`` of a clean-clone ``.ci/run`` of 2026-12-06 at ``671516c`` on
#: the 2-core development machine at load average 7-11 (so about twice an idle machine's), with the crash tests'
#: and the storage properties' sizes of today. Only the order matters, and only roughly: a group missing here
#: runs after these; a new group of a minute or more belongs here.
LONGEST: Final[dict[str, int]] = {
    "e2e/test_install_lines.py": 385,
    "load": 110,
    "e2e/test_postgres_fencing.py": 105,
    "e2e/test_docs.py:sqlite": 100,
    "e2e/test_interference.py:sqlite": 100,
    "sdk": 120,
    "e2e/test_ui_server.py:sqlite": 95,
    "timing": 90,
    "e2e/test_ui_browser.py:sqlite": 90,
    "e2e/test_postgres_robustness.py": 80,
    "e2e/test_typescript_client.py": 70,
    "e2e/test_single_writer.py:sqlite": 60,
    "e2e/test_typescript_package.py": 60,
    "e2e/test_watch.py:sqlite": 60,
    "storage/test_policy_property.py": 60,
    "e2e/test_metrics_limits.py": 55,
    "e2e/test_lifecycle.py:sqlite": 50,
    "storage/sqlite/test_backup.py": 50,
    "e2e/test_cli_escape.py:sqlite": 50,
    "e2e/test_watch.py:postgres": 45,
    "e2e/test_no_internal.py:sqlite": 40,
    "storage/test_edit_property.py": 40,
    "e2e/test_packaging.py": 40,
    "storage/sqlite/test_metrics_scrape.py": 40,
    "e2e/test_postgres_deploy.py": 40,
}

_Item = TypeVar("_Item")


def longest_first(items: list[_Item], group_of: Callable[[_Item], str]) -> list[_Item]:
    """``items`` in the order the workers are to take their groups: those of :data:`LONGEST`, longest first,
    then the others with most tests first (pytest-xdist's own order, which ``--no-loadscope-reorder`` in
    pyproject.toml turns off so that this one holds). Within a group the collected order stays: some
    files' tests read what an earlier test of the file left."""
    tests_in = Counter(group_of(item) for item in items)

    def rank(item: _Item) -> tuple[int, int]:
        group = group_of(item)
        return -LONGEST.get(group, 0), -tests_in[group]

    return sorted(items, key=rank)


#: The markers that put a test in the default tier's process-starting set, or say a file starts processes.
SMOKE: Final = "smoke"
PROCESSES: Final = "processes"


def selected_backends() -> tuple[str, ...]:
    """The backends this run keeps: ``CLAW_TEST_BACKEND`` (``sqlite``, ``postgres`` or ``all``) if set,
    else both under ``CLAW_FULL=1`` and SQLite alone in the default tier."""
    chosen = os.environ.get("CLAW_TEST_BACKEND", "")
    if not chosen:
        return BACKENDS if FULL else ("sqlite",)
    if chosen == "all":
        return BACKENDS
    if chosen not in BACKENDS:
        raise pytest.UsageError(f"CLAW_TEST_BACKEND must be sqlite, postgres or all (or unset), not {chosen!r}")
    return (chosen,)


def _backend_of(item: pytest.Item, key: str) -> str | None:
    """The backend a test needs: its ``backend`` parameter in a folder of :data:`PER_BACKEND`,
    ``postgres`` for a folder of :data:`NEEDS_POSTGRES`, else None (it runs on whatever is there)."""
    callspec = getattr(item, "callspec", None)
    if key.startswith(PER_BACKEND) and callspec is not None and "backend" in callspec.params:
        return str(callspec.params["backend"])
    return "postgres" if key.startswith(NEEDS_POSTGRES) else None


def _starts_processes(item: pytest.Item, key: str) -> bool:
    return key.startswith("e2e/") or item.get_closest_marker(PROCESSES) is not None


def left_out_because(item: pytest.Item, key: str, *, full: bool, backends: tuple[str, ...]) -> str | None:
    """Why ``item`` (the file ``key`` under tests/) is left out of this run, or None when it runs."""
    backend = _backend_of(item, key)
    if backend is not None and backend not in backends and backend not in IN_PROCESS:
        return f"on {backend}, which this run leaves out (CLAW_TEST_BACKEND)"
    if not full and _starts_processes(item, key) and item.get_closest_marker(SMOKE) is None:
        return "starts processes and is not in the smoke set (CLAW_FULL=1 runs it)"
    return None


def tier_line(full: bool, backends: tuple[str, ...]) -> str:
    """The run's header line: which tier and which backends (the in-process ones, :data:`IN_PROCESS`, always)."""
    named = ", ".join((*backends, *IN_PROCESS))
    if full:
        return f"claw tests: full tier (CLAW_FULL=1), every test, backends {named}"
    return (
        f"claw tests: default tier, backends {named}: unit, in-process storage and the smoke set "
        "of the tests that start processes; the others are deselected (CLAW_FULL=1 runs every test)"
    )
