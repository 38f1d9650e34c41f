"""Every command's ``--help`` says the same things the same way (docs/cli.md): its exit codes last, and what
each value is (``N``, ``FILE``, ``URL``, ``SESSION``...), never argparse's spelling of an option's name.

The real parser of ``claw-sessiond``, built in-process (``build_parser``), every command and alias.
"""

from __future__ import annotations

import argparse

import pytest

from claw_sessiond.cli import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser(env={})
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


COMMANDS = _commands()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_help_ends_with_the_exit_codes(name: str) -> None:
    text = " ".join(COMMANDS[name].format_help().split())  # folded to the width
    assert "Exit codes: 0 " in text and "2 usage" in text, f"{name} --help does not give its exit codes"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_value_is_named_by_what_it_is(name: str) -> None:
    unnamed = []
    for action in COMMANDS[name]._actions:
        if action.help == argparse.SUPPRESS or action.nargs == 0 or action.choices is not None:
            continue
        metavar = action.metavar
        if not (isinstance(metavar, str) and metavar.isupper()):
            unnamed.append("/".join(action.option_strings) or action.dest)
    assert not unnamed, f"{name}: values shown as argparse spells their names: {unnamed}"
