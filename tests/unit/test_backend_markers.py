"""The end-to-end suite's one-backend markers: each carries a reason, and docs/postgres.md lists each file.

``tests/e2e/conftest.py`` runs every end-to-end test on SQLite and PostgreSQL unless it carries
``sqlite_only(reason)`` or ``backend_neutral(reason)``; a marker without a reason, or both on one
test, is a usage error. Checked here on the rule itself (no daemon, no server) and on the docs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.conftest import ONE_BACKEND_MARKERS, one_backend_marker

ROOT = Path(__file__).resolve().parents[2]


class _Node:
    """What the rule reads of a collected test: its closest markers and its id."""

    nodeid = "tests/e2e/test_x.py::test_y"

    def __init__(self, *marks: pytest.MarkDecorator) -> None:
        self._marks = {m.mark.name: m.mark for m in marks}

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self._marks.get(name)


@pytest.mark.parametrize("name", ONE_BACKEND_MARKERS)
def test_a_marker_with_a_reason_names_itself(name: str) -> None:
    assert one_backend_marker(_Node(getattr(pytest.mark, name)("a reason"))) == name  # type: ignore[arg-type]
    assert one_backend_marker(_Node(getattr(pytest.mark, name)(reason="a reason"))) == name  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ONE_BACKEND_MARKERS)
@pytest.mark.parametrize("args", [(), ("",), ("   ",), (None,)])
def test_a_marker_without_a_reason_is_a_usage_error(name: str, args: tuple[object, ...]) -> None:
    with pytest.raises(pytest.UsageError, match=f"{name} needs a reason"):
        one_backend_marker(_Node(getattr(pytest.mark, name)(*args)))  # type: ignore[arg-type]


def test_both_markers_on_one_test_is_a_usage_error() -> None:
    node = _Node(pytest.mark.sqlite_only("a"), pytest.mark.backend_neutral("b"))
    with pytest.raises(pytest.UsageError, match="not both"):
        one_backend_marker(node)  # type: ignore[arg-type]


def test_an_unmarked_test_runs_on_both() -> None:
    assert one_backend_marker(_Node(pytest.mark.slow)) is None  # type: ignore[arg-type]


def test_docs_list_every_file_with_a_one_backend_test() -> None:
    """docs/postgres.md, "What runs where", names every end-to-end file that has a test running once."""
    text = (ROOT / "docs" / "postgres.md").read_text()
    start = text.index("- **What runs where**")
    section = text[start : text.index("\n## ", start)]
    marked = sorted(
        path.stem
        for path in (ROOT / "tests" / "e2e").glob("test_*.py")
        if re.search(r"mark\.(sqlite_only|backend_neutral)\(", path.read_text())
    )
    assert marked, "no marked file found: the scan is broken"
    missing = [stem for stem in marked if f"`{stem}`" not in section]
    assert missing == [], f"docs/postgres.md, What runs where, does not name: {missing}"
