"""The end-to-end suite's backend markers: each carries a reason, and docs/postgres-design.md lists each file.

``tests/e2e/conftest.py`` runs an end-to-end test on SQLite unless it carries ``both_backends(reason)``
(SQLite and PostgreSQL), ``sqlite_only(reason)`` or ``backend_neutral(reason)``; a marker without a
reason, or two on one test, is a usage error. Checked here on the rule itself (no daemon, no
server) and on the docs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.conftest import BACKEND_MARKERS, backend_marker

ROOT = Path(__file__).resolve().parents[2]


class _Node:
    """What the rule reads of a collected test: its closest markers and its id."""

    nodeid = "tests/e2e/test_x.py::test_y"

    def __init__(self, *marks: pytest.MarkDecorator) -> None:
        self._marks = {m.mark.name: m.mark for m in marks}

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self._marks.get(name)


@pytest.mark.parametrize("name", BACKEND_MARKERS)
def test_a_marker_with_a_reason_names_itself(name: str) -> None:
    assert backend_marker(_Node(getattr(pytest.mark, name)("a reason"))) == name  # type: ignore[arg-type]
    assert backend_marker(_Node(getattr(pytest.mark, name)(reason="a reason"))) == name  # type: ignore[arg-type]


@pytest.mark.parametrize("name", BACKEND_MARKERS)
@pytest.mark.parametrize("args", [(), ("",), ("   ",), (None,)])
def test_a_marker_without_a_reason_is_a_usage_error(name: str, args: tuple[object, ...]) -> None:
    with pytest.raises(pytest.UsageError, match=f"{name} needs a reason"):
        backend_marker(_Node(getattr(pytest.mark, name)(*args)))  # type: ignore[arg-type]


@pytest.mark.parametrize(("first", "second"), [("sqlite_only", "backend_neutral"), ("both_backends", "sqlite_only")])
def test_two_markers_on_one_test_is_a_usage_error(first: str, second: str) -> None:
    node = _Node(getattr(pytest.mark, first)("a"), getattr(pytest.mark, second)("b"))
    with pytest.raises(pytest.UsageError, match="not "):
        backend_marker(node)  # type: ignore[arg-type]


def test_an_unmarked_test_runs_on_sqlite_alone() -> None:
    assert backend_marker(_Node(pytest.mark.slow)) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("marker", BACKEND_MARKERS)
def test_docs_list_every_file_with_a_marked_test(marker: str) -> None:
    """docs/postgres-design.md, "What runs where", names every end-to-end file with a test of each marker,
    in that marker's paragraph."""
    text = (ROOT / "docs" / "postgres-design.md").read_text()
    start = text.index("- **What runs where**")
    section = text[start : text.index("\n## ", start)]
    paragraph = section[section.index(f"`{marker}(reason)`") :]
    paragraph = paragraph[: paragraph.find("\n  - ") if "\n  - " in paragraph else len(paragraph)]
    marked = sorted(
        path.stem
        for path in (ROOT / "tests" / "e2e").glob("test_*.py")
        if re.search(rf"mark\.{marker}\(", path.read_text())
    )
    assert marked, f"no file marked {marker} found: the scan is broken"
    missing = [stem for stem in marked if f"`{stem}`" not in paragraph]
    assert missing == [], f"docs/postgres-design.md, What runs where, {marker}, does not name: {missing}"
