"""The run against each framework's newest release knows every pinned framework's suite, reads pytest's
summary right, and says each outcome in one line."""

from __future__ import annotations

from tests.helpers import newest
from tests.helpers.sdist import pinned_version, version_under_test


def test_every_pinned_framework_has_a_suite_whose_files_exist() -> None:
    pinned = newest.pins()
    assert pinned, "the client's extras pin no framework"
    assert set(pinned) == set(newest.SUITES)
    for files in newest.SUITES.values():
        for name in files:
            assert (newest.ROOT / "tests" / name).is_file(), name
    assert set(newest.SUITES) >= newest.SDIST_SUITES


def test_the_pins_are_the_sdist_helpers_pins_and_installed_here() -> None:
    for project, version in newest.pins().items():
        assert pinned_version(project) == version
        assert version_under_test(project) == version, f"{project}: the README's venv runs another version"


def test_failed_ids_come_from_the_short_summary() -> None:
    out = (
        "..F.E\n=========================== short test summary info ===========================\n"
        "FAILED tests/e2e/test_contrib_adk.py::test_a[sqlite] - AssertionError: x\n"
        "ERROR tests/e2e/test_langchain.py::test_b - RuntimeError\n"
        "FAILED tests/e2e/test_contrib_adk.py::test_a[sqlite] - again\n"
        "SKIPPED [1] tests/e2e/x.py:3: no\n1 failed, 1 error, 3 passed\n"
    )
    assert newest.failed_ids(out) == [
        "tests/e2e/test_contrib_adk.py::test_a[sqlite]",
        "tests/e2e/test_langchain.py::test_b",
    ]


def test_each_outcome_is_one_line_naming_both_versions() -> None:
    lines = {
        v: newest.Outcome("p", "1.0", "1.1", v, "d" if v in ("differs", "not-installable") else "").line()
        for v in ("same", "passes", "differs", "not-installable", "no-answer")
    }
    assert lines["same"] == "p: pinned 1.0 is the newest release"
    assert lines["passes"] == "p: pinned 1.0; newest 1.1: the adapter's tests pass on it"
    assert lines["differs"].startswith("p: pinned 1.0; newest 1.1: the adapter's tests DIFFER on it\n    d")
    assert "does not install here" in lines["not-installable"]
    assert "no newest release" in lines["no-answer"]
