"""The house rules of the code's layout, checked on the source (no daemon, no database).

* no import cycles between modules (imports made at module level, outside
  ``if TYPE_CHECKING:``, are the ones that run when a module is first imported);
* arrows point inward: the CLI may use everything, the RPC edge may not use the
  CLI, the application may use neither, the pure rules use no storage, no RPC
  and no gRPC; each backend's driver (``sqlite3``/``aiosqlite``, ``asyncpg``) is
  imported only inside that backend, and a backend only by itself and by the
  place that chooses one (:data:`BACKEND_CHOOSERS`);
* no module over the size limit of the house style, counted in lines of code
  (docstrings, comments and blank lines are free), but for a short listed
  exception (:data:`SIZE_EXCEPTIONS`);
* no function defined the same way in two backends (:func:`_normalized`), the reference backend too:
  what both need is written once, in ``storage/``; :data:`KNOWN_TWINS` lists
  today's, and may only shrink.

Each rule reports every offender, with the file and the line, so a failure
says what to move; each is also run on a tiny synthetic source, so none can
pass for want of anything to look at. Every module is read and parsed once per
test process (:func:`_parsed`).
"""

from __future__ import annotations

import ast
import copy
import functools
import io
import itertools
import re
import tokenize
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "claw_sessiond": ROOT / "daemon" / "claw_sessiond",
    "claw_sessiond_client": ROOT / "clients" / "python" / "claw_sessiond_client",
}
GENERATED = PACKAGES["claw_sessiond_client"] / "api"
STORAGE = PACKAGES["claw_sessiond"] / "storage"

#: Most lines of code in a module. STYLE's "under ~600 lines" counted every line; at the ratio of the
#: house's models (15-25 % docstring lines, 2-7 % comments, about a tenth blank) that is some 400-450
#: lines of code, and the fullest modules held about 420. The limit is set a little above, so that
#: neither a docstring is trimmed nor a file cut for its last few lines: a module that grows a second
#: job grows by more than that, and is then cut by job.
MAX_CODE_LINES = 500
#: Modules allowed over :data:`MAX_CODE_LINES`, each with its reason: one cohesive concept that a cut
#: would only scatter. Keep it short; an entry the module no longer needs fails the test.
SIZE_EXCEPTIONS: dict[str, str] = {}
#: Not even a listed exception grows past this.
MAX_EXCEPTION_CODE_LINES = 2 * MAX_CODE_LINES

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
POSTGRES = ("asyncpg",)
#: Each backend's package and the database drivers only it imports.
BACKENDS = {"claw_sessiond.storage.sqlite": SQLITE, "claw_sessiond.storage.postgres": POSTGRES}
#: The modules that may import a backend (besides the backend itself): the storage package's factories
#: (``open_storage``, ``open_url``, ``check_url``, ...), which pick one by the configuration. The rest of
#: the daemon, and the backend-neutral storage modules, see only the ``Storage`` interface.
BACKEND_CHOOSERS = ("claw_sessiond.storage",)
IO = ("grpc", *SQLITE, *POSTGRES, "os", "socket", "subprocess")  # asyncio is allowed: a long plan yields the loop
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
            # a build/ folder inside a package is skipped, not a checkout in a folder named build (/work/wt/build)
            if not path.is_relative_to(GENERATED) and "build" not in path.relative_to(folder).parts:
                yield path


@dataclass(frozen=True)
class Source:
    """One module, read and parsed."""

    path: Path
    text: str
    tree: ast.Module


@functools.cache
def _parsed() -> dict[str, Source]:
    """Every module by name, read and parsed once per test process (each rule walks the same trees)."""
    found = {}
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        found[_module_name(path)] = Source(path, text, ast.parse(text, str(path)))
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports_in(text: str, module: str, is_package: bool, known: set[str]) -> Iterator[Import]:
    yield from _imports_of(ast.parse(text), module, is_package, known)


def _imports_of(tree: ast.Module, module: str, is_package: bool, known: set[str]) -> Iterator[Import]:
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


@functools.cache
def _graph() -> tuple[list[Import], set[str], dict[str, Path]]:
    sources = _parsed()
    files = {name: source.path for name, source in sources.items()}
    known = set(files)
    imports = [
        i
        for name, source in sources.items()
        for i in _imports_of(source.tree, name, source.path.name == "__init__.py", known)
    ]
    return imports, known, files


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


def _against_the_arrows(imports: Iterable[Import]) -> Iterator[tuple[Import, str]]:
    """Each import against the arrows, with why."""
    for imp in imports:
        src, dst = imp.source, imp.target
        daemon_side = _in(src, "claw_sessiond")
        for backend, drivers in BACKENDS.items():
            if _in(dst, *drivers) and not _in(src, backend):
                yield imp, f"only {backend} speaks {'/'.join(drivers)}"
            if _in(dst, backend) and not _in(src, backend) and src not in BACKEND_CHOOSERS:
                yield imp, "only the storage package's factories choose a backend; the rest sees the Storage interface"
        if _in(src, "claw_sessiond.storage") and _in(
            dst, *GRPC, "claw_sessiond.rpc", "claw_sessiond.cli", "claw_sessiond.daemon"
        ):
            yield imp, "storage knows nothing of gRPC, the RPC edge, the process or the CLI"
        if _in(src, *PURE) and _in(dst, *IO, "claw_sessiond.storage", "claw_sessiond.rpc", "claw_sessiond.cli"):
            yield imp, "pure rules do no I/O"
        if daemon_side and _in(dst, *GRPC) and not _in(src, "claw_sessiond.rpc"):
            yield imp, "only rpc/ speaks gRPC"
        entry = src == "claw_sessiond.__main__"
        if daemon_side and _in(dst, "claw_sessiond.cli") and not _in(src, "claw_sessiond.cli") and not entry:
            yield imp, "nothing uses the CLI"
        if daemon_side and _in(dst, "claw_sessiond.rpc") and not _in(src, "claw_sessiond.rpc", "claw_sessiond.daemon"):
            yield imp, "only the process builds on the RPC edge"
        if _in(src, "claw_sessiond.rpc") and _in(dst, "claw_sessiond.daemon"):
            yield imp, "the RPC edge does not use the process"
        if _in(src, "claw_sessiond_client") and daemon_side is False and _in(dst, "claw_sessiond"):
            yield imp, "the client does not depend on the daemon"


def test_arrows_point_inward() -> None:
    imports, _known, files = _graph()
    wrong = [
        f"{files[imp.source].relative_to(ROOT)}:{imp.line}: {imp.source} imports {imp.target} ({why})"
        for imp, why in _against_the_arrows(imports)
    ]
    assert not wrong, "imports against the arrows:\n" + "\n".join(wrong)


def test_the_backend_rules_refuse_what_they_say() -> None:
    """The driver and backend rules above can fail: each refuses a synthetic import it forbids."""

    def refused(source: str, target: str) -> list[str]:
        return [why for _imp, why in _against_the_arrows([Import(source, target, 1, True)])]

    assert refused("claw_sessiond.rpc.service", "asyncpg")
    assert refused("claw_sessiond.storage.base", "asyncpg")
    assert refused("claw_sessiond.storage.sqlite.store", "asyncpg")
    assert refused("claw_sessiond.storage.postgres.store", "sqlite3")
    assert refused("claw_sessiond.cli.copy", "claw_sessiond.storage.postgres.store")
    assert refused("claw_sessiond.storage.steps", "claw_sessiond.storage.sqlite.tx")
    assert refused("claw_sessiond.storage.sqlite.store", "claw_sessiond.storage.postgres.errors")
    assert refused("claw_sessiond.daemon", "claw_sessiond.storage.sqlite")
    assert not refused("claw_sessiond.storage", "claw_sessiond.storage.postgres.store")
    assert not refused("claw_sessiond.storage.postgres.store", "asyncpg")
    assert not refused("claw_sessiond.storage.postgres.store", "claw_sessiond.storage.postgres.errors")
    assert not refused("claw_sessiond.storage.sqlite.store", "aiosqlite")
    assert not refused("claw_sessiond.daemon", "claw_sessiond.storage")


def test_the_backends_are_chosen_where_the_rules_say() -> None:
    """Today's code has what the rules guard: asyncpg in the PostgreSQL backend, both backends imported by the
    storage package's factories, and by nothing else outside their own packages."""
    imports, _known, _files = _graph()
    into = {
        backend: {i.source for i in imports if _in(i.target, backend) and not _in(i.source, backend)}
        for backend in BACKENDS
    }
    assert into == {backend: set(BACKEND_CHOOSERS) for backend in BACKENDS}, into
    assert any(_in(i.source, "claw_sessiond.storage.postgres") and _in(i.target, *POSTGRES) for i in imports)


def test_the_reference_backend_is_chosen_by_nothing_and_speaks_no_driver() -> None:
    """``storage/memory/`` is for the tests alone: no module of the daemon or the client imports it (it cannot be
    chosen from the CLI or the configuration), and it imports no database driver."""
    imports, _known, _files = _graph()
    memory = "claw_sessiond.storage.memory"
    assert any(_in(i.source, memory) for i in imports), "the reference backend's modules were not read"
    into = sorted(f"{i.source}:{i.line}" for i in imports if _in(i.target, memory) and not _in(i.source, memory))
    assert not into, into
    drivers = sorted(f"{i.source}:{i.line}" for i in imports if _in(i.source, memory) and _in(i.target, *IO))
    assert not drivers, drivers


# ---------------------------------------------------------------- size


_NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


def _is_doc(node: ast.AST) -> bool:
    """A bare string statement: a docstring (of a module, class or function) or an attribute's."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _code_lines(text: str, tree: ast.Module) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring (a multi-line string that is
    code, such as SQL, counts every line)."""
    docs = {n for node in ast.walk(tree) if _is_doc(node) for n in range(node.lineno, (node.end_lineno or 0) + 1)}
    code: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in _NOT_CODE:
            code.update(range(token.start[0], token.end[0] + 1))
    return len(code - docs)


def _oversized(counts: Mapping[str, int], exceptions: Mapping[str, str]) -> list[str]:
    """What breaks the size rule: a module over the limit and not listed, a listed one over the ceiling, and a
    listed exception its module no longer needs (or that names no module)."""
    wrong = [f"{m}: {n} lines of code" for m, n in counts.items() if n > MAX_CODE_LINES and m not in exceptions]
    for module, why in exceptions.items():
        n = counts.get(module)
        if n is None or n <= MAX_CODE_LINES:
            wrong.append(f"{module}: listed in SIZE_EXCEPTIONS ({why}) but {n} lines of code: remove the entry")
        elif n > MAX_EXCEPTION_CODE_LINES:
            wrong.append(f"{module}: {n} lines of code, over even an exception's {MAX_EXCEPTION_CODE_LINES}")
    return wrong


def test_no_module_over_the_size_limit() -> None:
    counts = {name: _code_lines(s.text, s.tree) for name, s in _parsed().items()}
    wrong = _oversized(counts, SIZE_EXCEPTIONS)
    assert not wrong, f"over {MAX_CODE_LINES} lines of code (STYLE: split by job):\n" + "\n".join(wrong)
    assert len(SIZE_EXCEPTIONS) <= 3, "the exception list is for one cohesive concept or two, not a second limit"


def test_code_lines_leave_out_docstrings_comments_and_blank_lines() -> None:
    text = (
        '"""A module docstring\n\nover three lines."""\n'
        "\n"
        "# a comment\n"
        "import os  # a trailing comment: the line is code\n"
        "\n"
        "class A:\n"
        '    """A class docstring."""\n'
        "\n"
        "    x: int = 0\n"
        '    """An attribute docstring."""\n'
        "\n"
        "    def f(self) -> str:\n"
        '        """A function docstring,\n\n        over lines."""\n'
        '        return """SELECT 1\n        FROM t"""  # SQL over two lines: code\n'
    )
    # import, class, x, def, and the return's two lines
    assert _code_lines(text, ast.parse(text)) == 6


def test_the_size_rule_refuses_what_it_says() -> None:
    over, fine = MAX_CODE_LINES + 1, MAX_CODE_LINES
    assert _oversized({"a": over, "b": fine}, {}) == [f"a: {over} lines of code"]
    assert _oversized({"a": over}, {"a": "one cohesive concept"}) == []
    stale = _oversized({"a": fine}, {"a": "one cohesive concept"})
    assert len(stale) == 1 and "remove the entry" in stale[0]
    assert len(_oversized({}, {"gone": "renamed since"})) == 1
    huge = MAX_EXCEPTION_CODE_LINES + 1
    assert _oversized({"a": huge}, {"a": "one cohesive concept"}) == [
        f"a: {huge} lines of code, over even an exception's {MAX_EXCEPTION_CODE_LINES}"
    ]


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


# ---------------------------------------------------------------- twins across the backends


#: Functions defined the same way in both backends today, as (SQLite's, PostgreSQL's), each
#: ``<path under storage/>::<qualified name>``. Each is to move into backend-neutral ``storage/``
#: code; the list may only shrink (an entry that is no longer a twin fails the test).
KNOWN_TWINS: frozenset[tuple[str, str]] = frozenset()
_PLACEHOLDER = re.compile(r"\$\d+|\?")


@dataclass(frozen=True)
class Function:
    """A function (or method, or nested function) of a backend module."""

    key: str  # <path under storage/>::<qualified name>
    line: int
    body: str  # the normalized dump


class _Normalize(ast.NodeTransformer):
    """What may differ between two backends' copies of one function: its name and its module's, docstrings,
    ``await`` (and ``async def``/``with``/``for``), annotations, and SQL placeholders (``$1`` against ``?``)."""

    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def visit_Await(self, node: ast.Await) -> ast.AST:
        return self.visit(node.value)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        return self.visit(ast.With(items=node.items, body=node.body))

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        return self.visit(ast.For(target=node.target, iter=node.iter, body=node.body, orelse=node.orelse))

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        plain = ast.FunctionDef(
            name=node.name, args=node.args, body=node.body, decorator_list=node.decorator_list, returns=None
        )
        return self.visit(plain)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self.names.get(node.name, node.name)
        node.returns = None
        node.body = [s for s in node.body if not _is_doc(s)] or [ast.Pass()]
        return self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.annotation = None
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        node.annotation = ast.Name("_", ast.Load())
        return self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        return None if _is_doc(node) else self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(_PLACEHOLDER.sub("?", node.value)) if isinstance(node.value, str) else node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(self.names.get(node.id, node.id), node.ctx)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        node.attr = self.names.get(node.attr, node.attr)
        return node


def _normalized(function: ast.FunctionDef | ast.AsyncFunctionDef, module: str) -> str:
    """``function`` as a comparable text: two backends' copies of one function give the same text."""
    names = {function.name: "<function>", module.rsplit(".", 1)[-1]: "<module>"}
    return ast.dump(_Normalize(names).visit(copy.deepcopy(function)))


def _is_plumbing(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A constructor that only keeps its arguments (``self._conn = conn``), or a function that only answers a
    constant (``return False``: what the backend's nature fixes, such as "no erased bytes linger"): nothing
    to write once."""
    body = [s for s in function.body if not _is_doc(s)]
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant):
        return True
    params = {a.arg for a in function.args.args}
    return bool(body) and all(
        isinstance(s, (ast.Assign, ast.AnnAssign))
        and isinstance(s.value, ast.Name)
        and s.value.id in params
        and all(isinstance(t, ast.Attribute) for t in (s.targets if isinstance(s, ast.Assign) else [s.target]))
        for s in body
    )


def _functions(tree: ast.Module, path: str, module: str) -> Iterator[Function]:
    """Every function of a module: module-level, methods and nested ones, each by its qualified name."""

    def walk(nodes: list[ast.stmt], prefix: str) -> Iterator[Function]:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{node.name}"
                if not _is_plumbing(node):
                    yield Function(f"{path}::{name}", node.lineno, _normalized(node, module))
                yield from walk(node.body, f"{name}.")
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, f"{prefix}{node.name}.")
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        yield from walk([n for n in inner if isinstance(n, ast.stmt)], prefix)
                        for handler in inner:
                            if isinstance(handler, ast.ExceptHandler):
                                yield from walk(handler.body, prefix)

    yield from walk(tree.body, "")


def _twins(left: Iterable[Function], right: Iterable[Function]) -> list[tuple[Function, Function]]:
    """Every pair of a function of ``left`` and one of ``right`` defined the same way."""
    by_body: dict[str, list[Function]] = {}
    for function in right:
        by_body.setdefault(function.body, []).append(function)
    return sorted(((f, g) for f in left for g in by_body.get(f.body, [])), key=lambda pair: (pair[0].key, pair[1].key))


def _backend_functions(backend: str) -> list[Function]:
    return [
        function
        for name, source in _parsed().items()
        if _in(name, backend)
        for function in _functions(source.tree, source.path.relative_to(STORAGE).as_posix(), name)
    ]


def _twin_report(twins: list[tuple[Function, Function]], known: frozenset[tuple[str, str]]) -> list[str]:
    """New twins (by file:line), and entries of ``known`` that are twins no more."""
    found = {(f.key, g.key) for f, g in twins}

    def where(f: Function) -> str:
        return f"{f.key.split('::')[0]}:{f.line} {f.key.split('::')[1]}"

    new = [f"{where(f)} == {where(g)}" for f, g in twins if (f.key, g.key) not in known]
    gone = [f"{a} == {b}: no longer a twin, remove it from KNOWN_TWINS" for a, b in sorted(known - found)]
    return new + gone


#: The backends whose functions are compared, each pair once: the two product backends and the reference
#: backend (``storage/memory/``), which shares what it has in common with them rather than copying it.
TWIN_BACKENDS = ("claw_sessiond.storage.sqlite", "claw_sessiond.storage.postgres", "claw_sessiond.storage.memory")


def test_no_function_is_defined_the_same_way_in_two_backends() -> None:
    wrong: list[str] = []
    for left, right in itertools.combinations(TWIN_BACKENDS, 2):
        twins = _twins(_backend_functions(left), _backend_functions(right))
        wrong += _twin_report(twins, KNOWN_TWINS if (left, right) == TWIN_BACKENDS[:2] else frozenset())
    assert not wrong, "functions written twice (write it once in storage/, e.g. a step or a pure rule):\n" + "\n".join(
        wrong
    )


def test_twins_are_found_through_what_may_differ_and_only_that() -> None:
    sqlite_text = (
        "import sqlite3\n"
        "def count_rows(conn: sqlite3.Connection, sid: str) -> int:\n"
        '    """Rows of a session (SQLite)."""\n'
        '    row = conn.execute("SELECT count(*) FROM t WHERE s = ?", (sid,)).fetchone()\n'
        "    with conn:\n"
        "        for r in rows(conn):\n"
        "            count_rows(conn, r)\n"
        "    return tx.value(row)\n"
        "class Store:\n"
        "    def changed(self, ids):\n"
        "        def each(listener):\n"
        "            listener.changed(ids)\n"
        "        for listener in self._listeners:\n"
        "            each(listener)\n"
        "def other(conn, sid):\n"
        '    return conn.execute("SELECT 1 WHERE s = ?", (sid,))\n'
        "class Port:\n"
        "    def __init__(self, conn):\n"
        "        self._conn = conn\n"
        "    def lingers(self, sid):\n"
        "        return False\n"
    )
    postgres_text = (
        "from typing import Any\n"
        "async def rows_of(conn: Any, sid: str) -> int:\n"
        '    """Rows of a session, on PostgreSQL: another docstring."""\n'
        '    row = await conn.execute("SELECT count(*) FROM t WHERE s = $1", (sid,)).fetchone()\n'
        "    async with conn:\n"
        "        async for r in rows(conn):\n"
        "            await rows_of(conn, r)\n"
        "    return queries.value(row)\n"
        "class Feed:\n"
        "    def wake(self, ids):\n"
        "        for listener in self._listeners:\n"
        "            each(listener)\n"
        "    def each(listener):\n"
        "        listener.changed(ids)\n"
        "def other(conn, sid):\n"
        '    return conn.execute("SELECT 2 WHERE s = $1", (sid,))\n'
        "class Reads:\n"
        "    def __init__(self, conn):\n"
        "        self._conn = conn\n"
        "    async def lingers(self, sid):\n"
        "        return False\n"
    )
    left = list(_functions(ast.parse(sqlite_text), "sqlite/tx.py", "claw_sessiond.storage.sqlite.tx"))
    right = list(_functions(ast.parse(postgres_text), "postgres/queries.py", "claw_sessiond.storage.postgres.queries"))
    assert {f.key for f in left} >= {"sqlite/tx.py::Store.changed.each", "sqlite/tx.py::other"}
    twins = [(f.key, g.key) for f, g in _twins(left, right)]
    assert twins == [
        ("sqlite/tx.py::Store.changed.each", "postgres/queries.py::Feed.each"),
        ("sqlite/tx.py::count_rows", "postgres/queries.py::rows_of"),
    ], twins  # other: its SQL differs; Store.changed: its loop differs from Feed.wake's; __init__, lingers: plumbing
    report = _twin_report(_twins(left, right), frozenset({twins[0], ("sqlite/a.py::f", "postgres/a.py::f")}))
    assert report == [
        "sqlite/tx.py:2 count_rows == postgres/queries.py:2 rows_of",
        "sqlite/a.py::f == postgres/a.py::f: no longer a twin, remove it from KNOWN_TWINS",
    ], report
