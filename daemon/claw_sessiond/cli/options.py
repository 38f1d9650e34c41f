"""What a subcommand is made of (:class:`Command`), and the options and help shared by several.

Every option has an environment variable ``CLAW_SESSIOND_<OPTION>``
(``--max-message-bytes`` → ``CLAW_SESSIOND_MAX_MESSAGE_BYTES``; :func:`env_option`):
a flag wins over the variable, the variable over the default. ``--workspace``,
``--socket`` and ``--json`` are accepted before or after the subcommand.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..config import env_name

__all__ = [
    "Command",
    "Help",
    "add_json_option",
    "add_session_argument",
    "add_workspace_option",
    "env_option",
    "set_epilog",
]


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand for people: its name, its help line, how to add its arguments, and what runs it.

    ``help`` is also the description of its ``--help``. ``add_arguments`` gets the subcommand's parser
    with ``--workspace``, ``--socket`` and ``--json`` already added; ``handler`` gets the parsed
    arguments and returns the exit code.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]


def env_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    flag: str,
    env: Mapping[str, str],
    *,
    default: Any,
    help: str,
    dest_default: Any = None,
    **kw: Any,
) -> None:
    """Add ``flag`` with its default taken from ``CLAW_SESSIOND_<FLAG>`` in ``env`` when set there."""
    name = env_name(flag)
    value = env.get(name, default)
    if kw.get("action") == "store_true":
        value = str(value).lower() in ("1", "true", "yes", "on") if name in env else default
    if dest_default is not None:  # argparse.SUPPRESS: the top-level parser holds the value
        value = dest_default
    if "metavar" not in kw and kw.get("type") in (int, float):
        kw["metavar"] = "N"
    shown = "" if default is None or isinstance(default, bool) else f"; default {default}"
    parser.add_argument(flag, default=value, help=f"{help} [env {name}{shown}]", **kw)


def add_workspace_option(parser: argparse.ArgumentParser, env: Mapping[str, str], *, global_: bool = False) -> None:
    """``--workspace`` and ``--socket``: accepted before the subcommand and after it.

    The top-level parser (``global_``) holds the defaults; a subcommand's copy uses ``SUPPRESS`` so that it
    sets the value only when given after the subcommand, never overwriting one given before it.
    """
    kw: dict[str, Any] = {} if global_ else {"dest_default": argparse.SUPPRESS}
    env_option(
        parser,
        "--workspace",
        env,
        default=None,
        metavar="DIR",
        help="workspace folder (state lives in <workspace>/.claw/); by default the nearest of the current folder "
        "and its parents that holds .claw/, else the current folder",
        **kw,
    )
    env_option(
        parser,
        "--socket",
        env,
        default=None,
        metavar="PATH",
        help="Unix socket path (default: .claw/sessiond.sock)",
        **kw,
    )


def add_json_option(parser: argparse.ArgumentParser, *, global_: bool = False) -> None:
    """``--json`` (every command but ``serve``; see :func:`add_workspace_option` for before/after)."""
    parser.add_argument(
        "--json",
        action="store_true",
        default=False if global_ else argparse.SUPPRESS,
        help='print one JSON document instead of text (top-level "format": 1; errors too)',
    )


def add_session_argument(parser: argparse.ArgumentParser) -> None:
    """The ``SESSION`` argument of the commands about one session."""
    parser.add_argument("session", metavar="SESSION", help="session id")


def set_epilog(parser: argparse.ArgumentParser, about: str, exit_codes: str) -> None:
    """End ``--help`` with ``about``, then the exit codes, as two paragraphs (:class:`Help` folds them)."""
    parser.epilog = (about + "\n\n" if about else "") + exit_codes


class Help(argparse.HelpFormatter):
    """``--help`` folded to the terminal's width (80 columns off a terminal, or ``$COLUMNS``).

    A description or epilog is paragraphs apart by blank lines: each is folded to the width, except
    one whose lines start with a space (a list, an example), which is kept as written.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.strip("\n").split("\n\n"):
            if any(line.startswith(" ") for line in paragraph.splitlines()):
                paragraphs.append(textwrap.indent(paragraph, indent))
            else:
                paragraphs.append("\n".join(indent + line for line in self._split_lines(paragraph, width)))
        return "\n\n".join(paragraphs)

    def _split_lines(self, text: str, width: int) -> list[str]:
        # never at a hyphen: "--no-trunc" and "claw-sessiond" stay whole
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)
