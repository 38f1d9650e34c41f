"""The house rules of the code's layout, checked on the source (no daemon, no database).

* no import cycles between modules (imports made at module level, outside
  ``if TYPE_CHECKING:``, are the ones that run when a module is first imported);
* arrows point inward: the CLI may use everything, the RPC edge may not use the
  CLI, the application may use neither, the pure rules use no storage, no RPC
  and no gRPC, and nothing outside ``storage/`` imports SQLite;
* no module over the size limit of the house style.

Each rule reports every offender, with the file and the import, so a failure
says what to move.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "claw_sessiond": ROOT / "daemon" / "claw_sessiond",
    "claw_sessiond_client": ROOT / "clients" / "python" / "claw_sessiond_client",
}
GENERATED = PACKAGES["claw_sessiond_client"] / "api"
MAX_LINES = 600

# Modules that hold pure rules, codecs and the model: decisions, no I/O.
PURE = (
    "claw_sessiond.events",
    "claw_sessiond.entry_wire",
    "claw_sessiond.rules",
    "claw_sessiond.repair",
    "claw_sessiond.history",
    "claw_sessiond.model",
    "claw_sessiond.export",
    "claw_sessiond.legacy",
    "claw_sessiond.queries",
    "claw_sessiond.policy",
    "claw_sessiond.state",
)
SQLITE = ("sqlite3", "aiosqlite")
IO = ("grpc", *SQLITE, "os", "socket", "subprocess")  # asyncio is allowed: a long plan yields the loop
GRPC = ("grpc", "grpc_health", "grpc_reflection", "grpc_status")


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported module (absolute, as far as it resolves to a module)
    line: int
    top_level: bool  # runs when the module is imported


def _module_name(path: Path) -> str:
    for package, folder in PACKAGES.items():
        if path.is_relative_to(folder):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join([package, *parts])
    raise AssertionError(f"{path} is in no package")


def _sources() -> Iterator[Path]:
    for folder in PACKAGES.values():
        for path in sorted(folder.rglob("*.py")):
            if not path.is_relative_to(GENERATED) and "build" not in path.parts:
                yield path


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, known: set[str]) -> Iterator[Import]:
    yield from _imports_in(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py", known)


def _imports_in(text: str, module: str, is_package: bool, known: set[str]) -> Iterator[Import]:
    tree = ast.parse(text)

    def resolve(node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        base = module.split(".")
        base = base if is_package else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, *([node.module] if node.module else [])])

    def walk(nodes: list[ast.stmt], top: bool) -> Iterator[Import]:
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(module, alias.name, node.lineno, top)
            elif isinstance(node, ast.ImportFrom):
                target = resolve(node)
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    yield Import(module, sub if sub in known else target, node.lineno, top)
            elif isinstance(node, ast.If) and _is_type_checking(node):
                yield from walk(node.body, False)
                yield from walk(node.orelse, top)
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        # Inside a function or class body an import runs later, not at import time.
                        nested_top = top and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                        yield from walk([n for n in inner if isinstance(n, ast.stmt)], nested_top)
                        for handler in inner:
                            if isinstance(handler, ast.ExceptHandler):
                                yield from walk(handler.body, nested_top)

    yield from walk(tree.body, True)


def _graph() -> tuple[list[Import], set[str], dict[str, Path]]:
    files = {_module_name(p): p for p in _sources()}
    known = set(files)
    return [i for p in files.values() for i in _imports(p, known)], known, files


def _in(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    known = set(edges)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0
    for root in sorted(known):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_import_cycles() -> None:
    imports, known, _files = _graph()
    edges: dict[str, set[str]] = {m: set() for m in known}
    for imp in imports:
        if imp.top_level and imp.target in known and imp.target != imp.source:
            edges[imp.source].add(imp.target)
            # Importing a.b.c first imports its packages a.b and a.
            parts = imp.target.split(".")
            for n in range(1, len(parts)):
                parent = ".".join(parts[:n])
                if parent in known and parent != imp.source and not imp.source.startswith(parent + "."):
                    edges[imp.source].add(parent)

    cycles = _cycles(edges)
    assert not cycles, f"import cycles (module-level imports): {cycles}"


def test_arrows_point_inward() -> None:
    imports, _known, files = _graph()
    wrong: list[str] = []

    def refuse(imp: Import, why: str) -> None:
        wrong.append(f"{files[imp.source].relative_to(ROOT)}:{imp.line}: {imp.source} imports {imp.target} ({why})")

    for imp in imports:
        src, dst = imp.source, imp.target
        daemon_side = _in(src, "claw_sessiond")
        if _in(dst, *SQLITE) and not _in(src, "claw_sessiond.storage"):
            refuse(imp, "only storage/ speaks SQLite")
        if _in(dst, "claw_sessiond.storage.sqlite") and not _in(src, "claw_sessiond.storage"):
            refuse(imp, "only storage/ reaches into a backend; the rest sees the Storage interface")
        if src == "claw_sessiond.storage.base" and _in(dst, *SQLITE, "claw_sessiond.storage.sqlite"):
            refuse(imp, "the storage interface is backend-neutral")
        if _in(src, "claw_sessiond.storage") and _in(
            dst, *GRPC, "claw_sessiond.rpc", "claw_sessiond.cli", "claw_sessiond.daemon"
        ):
            refuse(imp, "storage knows nothing of gRPC, the RPC edge, the process or the CLI")
        if _in(src, *PURE) and _in(dst, *IO, "claw_sessiond.storage", "claw_sessiond.rpc", "claw_sessiond.cli"):
            refuse(imp, "pure rules do no I/O")
        if daemon_side and _in(dst, *GRPC) and not _in(src, "claw_sessiond.rpc"):
            refuse(imp, "only rpc/ speaks gRPC")
        entry = src == "claw_sessiond.__main__"
        if daemon_side and _in(dst, "claw_sessiond.cli") and not _in(src, "claw_sessiond.cli") and not entry:
            refuse(imp, "nothing uses the CLI")
        if daemon_side and _in(dst, "claw_sessiond.rpc") and not _in(src, "claw_sessiond.rpc", "claw_sessiond.daemon"):
            refuse(imp, "only the process builds on the RPC edge")
        if _in(src, "claw_sessiond.rpc") and _in(dst, "claw_sessiond.daemon"):
            refuse(imp, "the RPC edge does not use the process")
        if _in(src, "claw_sessiond_client") and daemon_side is False and _in(dst, "claw_sessiond"):
            refuse(imp, "the client does not depend on the daemon")
    assert not wrong, "imports against the arrows:\n" + "\n".join(wrong)


def test_no_module_over_the_size_limit() -> None:
    big = []
    for path in _sources():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            big.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not big, f"modules over {MAX_LINES} lines (STYLE: split by job):\n" + "\n".join(big)


def test_the_rpc_room_is_where_grpc_is() -> None:
    """The gRPC rule above is not vacuous: rpc/ does import grpc."""
    imports, _known, _files = _graph()
    assert any(_in(i.source, "claw_sessiond.rpc") and _in(i.target, "grpc") for i in imports)


def test_cycles_are_found() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_walker_finds_each_form_of_import() -> None:
    """The rules above can fail: the walker sees the forms of import the code uses."""
    text = (
        "from __future__ import annotations\n"
        "import sqlite3\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from . import later\n"
        "try:\n"
        "    from .x import y\n"
        "except ImportError:\n"
        "    from ..other import z\n"
        "def f():\n"
        "    import grpc\n"
    )
    found = {
        i.target: i.top_level for i in _imports_in(text, "claw_sessiond.sub.m", False, {"claw_sessiond.sub.later"})
    }
    assert found == {
        "__future__": True,
        "sqlite3": True,
        "typing": True,
        "claw_sessiond.sub.later": False,
        "claw_sessiond.sub.x": True,
        "claw_sessiond.other": True,
        "grpc": False,
    }
