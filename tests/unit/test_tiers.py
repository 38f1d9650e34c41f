"""The suite's tiers (``tests/helpers/tiers.py``): what the default run leaves out, and the marks it relies on.

Checked on the rule itself with stand-in items (no daemon, no server), and on the test files: every
end-to-end file has a smoke test or says why not, and every storage file that starts processes is
marked ``processes``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import conftest
from tests.helpers import tiers
from tests.unit.test_suite_layout import TESTS, imported_modules

#: Modules whose import means a test file starts daemons or CLI processes.
PROCESS_MODULES = {"subprocess", "tests.helpers.daemon", "tests.helpers.cli", "tests.helpers.process"}

#: End-to-end files with no smoke test, and why: each costs a minute or more, or needs PostgreSQL.
NO_SMOKE = {
    "test_crash_state": "kill -9 under load: test_crash's round is the default tier's",
    "test_interference": "minutes of load against a quiet baseline",
    "test_soak": "a steady load for 15 s to 120 s",
    "test_reply_sizes": "hundreds of MiB through Load, Watch and Export",
    "test_contrib_openai_agents_sdk": "the SDK's own test suite, run from its sdist",
    "test_langchain_sdist": "langchain-core's own test suite, run from its sdist",
    "test_typescript_client": "the TypeScript client's own test suite",
    "test_go_client": "the Go client's own tests (go test), compiled first",
    "test_install_lines": "every install command in clean venvs, minutes (its parser is unit-tested by default)",
    "test_typescript_package": "npm pack and npm install of the TypeScript package, a minute",
    "test_ui_browser": "a headless Chromium per test against the viewer (its server's own tests are in the smoke set)",
}


class _Item:
    """What the rule reads of a collected test: its closest markers and its parameters."""

    def __init__(self, *marks: str, backend: str | None = None) -> None:
        self._marks = set(marks)
        self.callspec = SimpleNamespace(params={"backend": backend}) if backend else None

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self._marks else None


def left_out(item: _Item, key: str, *, full: bool = False, backends: tuple[str, ...] = ("sqlite",)) -> str | None:
    return tiers.left_out_because(item, key, full=full, backends=backends)  # type: ignore[arg-type]


def test_the_default_tier_runs_in_process_tests_and_the_smoke_set() -> None:
    assert left_out(_Item(), "unit/test_rules.py") is None
    assert left_out(_Item(backend="sqlite"), "storage/test_order.py") is None
    assert left_out(_Item(), "storage/sqlite/test_store.py") is None
    assert left_out(_Item("smoke", backend="sqlite"), "e2e/test_core.py") is None
    assert left_out(_Item("smoke", "processes"), "storage/sqlite/test_backup.py") is None
    assert "smoke" in str(left_out(_Item(backend="sqlite"), "e2e/test_core.py"))
    assert "smoke" in str(left_out(_Item(), "e2e/test_packaging.py"))
    assert "smoke" in str(left_out(_Item("processes"), "storage/sqlite/test_backup.py"))


def test_the_full_tier_runs_every_test_of_the_backends_it_keeps() -> None:
    both = tiers.BACKENDS
    for item, key in (
        (_Item(backend="postgres"), "e2e/test_core.py"),
        (_Item("processes"), "storage/sqlite/test_backup.py"),
        (_Item(), "storage/postgres/test_fencing.py"),
        (_Item(backend="postgres"), "storage/test_order.py"),
    ):
        assert left_out(item, key, full=True, backends=both) is None
    assert "postgres" in str(left_out(_Item(backend="postgres"), "storage/test_order.py", full=True))
    assert "postgres" in str(left_out(_Item(), "storage/postgres/test_fencing.py", full=True))


def test_the_reference_backend_runs_in_every_tier_whatever_backends_it_keeps() -> None:
    for full in (False, True):
        for backends in (("sqlite",), ("postgres",), tiers.BACKENDS):
            assert left_out(_Item(backend="memory"), "storage/test_order.py", full=full, backends=backends) is None
    assert "postgres" in str(left_out(_Item(backend="postgres"), "storage/test_order.py", backends=("sqlite",)))


def test_a_backend_parameter_outside_storage_and_e2e_is_not_a_backend() -> None:
    assert left_out(_Item(backend="postgres"), "unit/test_database_url.py") is None


@pytest.mark.parametrize(
    ("env", "full", "expected"),
    [
        ("", False, ("sqlite",)),
        ("", True, ("sqlite", "postgres")),
        ("all", False, ("sqlite", "postgres")),
        ("postgres", True, ("postgres",)),
        ("sqlite", False, ("sqlite",)),
    ],
)
def test_the_backends_a_run_keeps(
    monkeypatch: pytest.MonkeyPatch, env: str, full: bool, expected: tuple[str, ...]
) -> None:
    monkeypatch.setenv("CLAW_TEST_BACKEND", env)
    monkeypatch.setattr(tiers, "FULL", full)
    assert tiers.selected_backends() == expected


def test_an_unknown_backend_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAW_TEST_BACKEND", "mysql")
    with pytest.raises(pytest.UsageError, match="sqlite, postgres or all"):
        tiers.selected_backends()


def _marks(path: Path) -> set[str]:
    """The ``pytest.mark.<name>`` names a file uses (decorators and ``pytestmark``)."""
    return {
        node.attr
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "pytest"
    }


def test_every_storage_file_that_starts_processes_is_marked() -> None:
    files = sorted((TESTS / "storage").rglob("test_*.py"))
    starting = [p for p in files if imported_modules(p) & PROCESS_MODULES or "spawn_daemon" in p.read_text()]
    assert starting, "no storage file starts processes: the scan is broken"
    unmarked = [str(p.relative_to(TESTS)) for p in starting if "processes" not in _marks(p)]
    assert unmarked == [], f"start processes but are not marked processes (the default tier would run them): {unmarked}"


def test_every_end_to_end_file_has_a_smoke_test_or_says_why_not() -> None:
    files = {p.stem: p for p in (TESTS / "e2e").glob("test_*.py")}
    without = {stem for stem, path in files.items() if "smoke" not in _marks(path)}
    # the property files' end-to-end example sets are chosen with the properties themselves
    without -= {stem for stem in without if "property" in stem or stem == "test_edit_supersede_model"}
    # PostgreSQL's own files need its server, which the default tier does not start
    without -= {stem for stem in without if "postgres" in stem or stem == "test_workspace_backend"}
    assert without == set(NO_SMOKE), f"no smoke test and not in NO_SMOKE: {sorted(without - set(NO_SMOKE))}"


def test_the_longest_groups_go_first_and_a_group_keeps_its_order() -> None:
    longest, second = sorted(tiers.LONGEST, key=lambda g: -tiers.LONGEST[g])[:2]
    items = [
        ("unit/a.py", 1),
        (second, 1),
        ("unit/b.py", 1),
        ("unit/b.py", 2),
        (longest, 1),
        ("unit/a.py", 2),
        (second, 2),
        ("unit/b.py", 3),
        (longest, 2),
    ]
    ordered = tiers.longest_first(items, lambda item: item[0])
    assert ordered == [
        (longest, 1),
        (longest, 2),
        (second, 1),
        (second, 2),
        ("unit/b.py", 1),  # then the others, most tests first
        ("unit/b.py", 2),
        ("unit/b.py", 3),
        ("unit/a.py", 1),
        ("unit/a.py", 2),
    ]


def test_every_longest_group_is_a_group_of_the_suite() -> None:
    """A group renamed or removed would silently lose its place at the front."""

    def is_group(name: str) -> bool:
        if name in conftest._GROUPS.values():
            return True
        path = name.removesuffix(":sqlite").removesuffix(":postgres")
        # a file of a group of conftest._GROUPS is scheduled with its group, not by itself
        if not (TESTS / path).is_file() or path in conftest._GROUPS:
            return False
        if not path.startswith("e2e/"):
            return path == name  # only an end-to-end file is split by backend
        # an end-to-end test is in <file>:<backend> unless it is backend_neutral (conftest._group)
        text = (TESTS / path).read_text()
        if path == name:
            return "backend_neutral(" in text
        return name.endswith(":sqlite") or "both_backends(" in text

    unknown = [group for group in tiers.LONGEST if not is_group(group)]
    assert unknown == [], f"tiers.LONGEST names groups the suite does not have: {unknown}"
