"""The storage seam holds, read from the source: who may import a database driver, a backend, or grpc.

Arrows point inward: the daemon speaks to ``storage`` (the interface), only
``storage/`` speaks SQLite, and neither the storage nor the pure rules know
about gRPC. The CLI files listed in :data:`_CLI_STILL_ON_SQLITE` still open the
file themselves (``doctor``, ``restore``); they are to call
``storage.check_storage`` and ``storage.stored_sessions`` instead, and the list
is to shrink to nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "daemon" / "claw_sessiond"
_DRIVERS = {"sqlite3", "aiosqlite"}
#: Outside storage/, these still import sqlite3 (or the SQLite backend) and are to stop.
_CLI_STILL_ON_SQLITE: set[str] = set()
#: Pure modules: no I/O drivers, no grpc, no storage.
_PURE = ("events.py", "rules.py", "repair.py", "history.py", "model.py", "export.py", "legacy.py", "queries.py")


def _imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved against the package)."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    package = list(rel.parts[:-1])  # claw_sessiond[, storage[, sqlite]]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)
    return found


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "api" not in p.parts)


def _in_storage(path: Path) -> bool:
    return path.relative_to(PACKAGE).parts[0] == "storage"


def test_the_import_walker_sees_relative_and_absolute_imports() -> None:
    found = _imports(PACKAGE / "storage" / "sqlite" / "store.py")
    assert "sqlite3" in found and "aiosqlite" in found
    assert "claw_sessiond.storage.base" in found and "claw_sessiond.errors" in found
    assert "claw_sessiond.storage.sqlite.writer" in found


def test_only_storage_imports_a_database_driver() -> None:
    offenders = {
        str(p.relative_to(PACKAGE))
        for p in _modules()
        if not _in_storage(p) and {m.split(".")[0] for m in _imports(p)} & _DRIVERS
    }
    assert offenders <= _CLI_STILL_ON_SQLITE, f"outside storage/, these import sqlite3/aiosqlite: {sorted(offenders)}"


def test_only_storage_reaches_into_the_sqlite_backend() -> None:
    offenders = {
        str(p.relative_to(PACKAGE))
        for p in _modules()
        if not _in_storage(p) and any(m.startswith("claw_sessiond.storage.sqlite") for m in _imports(p))
    }
    assert offenders <= _CLI_STILL_ON_SQLITE, f"these import the SQLite backend, not the interface: {sorted(offenders)}"


def test_storage_knows_nothing_of_grpc_or_the_service() -> None:
    for path in _modules():
        if not _in_storage(path):
            continue
        found = _imports(path)
        assert not any(m.split(".")[0] in {"grpc", "grpc_status", "google"} for m in found), path
        assert not any(
            m.startswith(("claw_sessiond.service", "claw_sessiond.server", "claw_sessiond_client")) for m in found
        ), path


def test_the_pure_rules_do_no_io() -> None:
    for name in _PURE:
        found = _imports(PACKAGE / name)
        tops = {m.split(".")[0] for m in found}
        assert not tops & (_DRIVERS | {"grpc", "os", "socket", "subprocess"}), (name, tops)
        assert not any(m.startswith("claw_sessiond.storage") for m in found), name


def test_the_interface_module_is_backend_neutral() -> None:
    found = _imports(PACKAGE / "storage" / "base.py")
    assert not {m.split(".")[0] for m in found} & _DRIVERS
    assert not any(m.startswith("claw_sessiond.storage.sqlite") for m in found)
