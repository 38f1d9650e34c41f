"""The test suite's own layout: storage is read through tests.helpers.inspect outside a backend's folder.

Only ``tests/storage/<backend>/`` (and the helpers that implement ``tests.helpers.inspect``) may open
the SQLite file or import the SQLite helpers; every other test asks ``inspect.stored(...)``, so a
second backend can run it unchanged. The xdist groups in conftest name files that exist.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests import conftest

TESTS = Path(conftest.__file__).resolve().parent
#: Modules only a backend's own tests (and the inspect helper) may import: the drivers that open the
#: file, and the helpers that read it.
BACKEND_MODULES = {"sqlite3", "aiosqlite", "tests.helpers.sqlite_file"}
ALLOWED = (TESTS / "storage", TESTS / "helpers" / "sqlite_file.py", TESTS / "helpers" / "inspect.py")


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports (``import a.b`` and ``from a.b import c`` give ``a.b``; also ``a.b.c``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def backend_imports(path: Path) -> set[str]:
    return {m for m in imported_modules(path) if m in BACKEND_MODULES}


def test_only_a_backend_s_own_tests_open_its_storage() -> None:
    offenders = {
        str(path.relative_to(TESTS)): sorted(backend_imports(path))
        for path in sorted(TESTS.rglob("*.py"))
        if not any(path == allowed or allowed in path.parents for allowed in ALLOWED) and backend_imports(path)
    }
    assert offenders == {}, f"read storage through tests.helpers.inspect instead: {offenders}"


def test_the_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The positive control: each way of reaching the backend is caught, other imports are not."""
    for line in (
        "import sqlite3",
        "import aiosqlite as a",
        "from sqlite3 import connect",
        "from tests.helpers import sqlite_file",
        "from tests.helpers.sqlite_file import read_only",
        "def f():\n    import sqlite3",
    ):
        (tmp_path / "t.py").write_text(line + "\n")
        assert backend_imports(tmp_path / "t.py"), line
    (tmp_path / "t.py").write_text(
        "import json\nfrom tests.helpers.inspect import stored\nfrom claw_sessiond.storage import open_storage\n"
    )
    assert backend_imports(tmp_path / "t.py") == set()


def test_every_xdist_group_names_an_existing_file() -> None:
    missing = [name for name in conftest._GROUPS if not (TESTS / name).is_file()]
    assert missing == [], f"conftest._GROUPS names files that are not there: {missing}"


def test_a_file_s_backend_halves_are_groups_loadgroup_honours() -> None:
    """xdist's loadgroup ignores a group name ending in "]" or holding "@" (each test becomes a unit of its own)."""

    class Item:
        def __init__(self, name: str, backend: str) -> None:
            self.path = TESTS / "e2e" / name
            self.callspec = type("Spec", (), {"params": {"backend": backend}})()
            self.marks: list[object] = []

        def add_marker(self, mark: object) -> None:
            self.marks.append(mark)

    for name, backend, group in (
        ("test_core.py", "postgres", "e2e/test_core.py:postgres"),
        ("test_core.py", "sqlite", "e2e/test_core.py:sqlite"),
        ("test_crash.py", "postgres", "load"),
    ):
        item = Item(name, backend)
        conftest.pytest_itemcollected(item)  # type: ignore[arg-type]
        got = item.marks[0].args[0]  # type: ignore[attr-defined]
        assert got == group and not got.endswith("]") and "@" not in got
