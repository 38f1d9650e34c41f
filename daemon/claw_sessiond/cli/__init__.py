"""Command line: ``claw-sessiond serve`` runs the daemon; the other subcommands are for people.

:func:`main` is the ``claw-sessiond`` console script (and ``python -m
claw_sessiond``); :func:`build_parser` makes the whole parser, from
:data:`COMMANDS`, the explicit list of subcommands. One module per group of
subcommands, each defining its :class:`~claw_sessiond.cli.options.Command`
entries:

=================  ===========================================================
``serve``          the daemon itself (:mod:`.serve`)
``inspect``        ``ls``, ``show``, ``stats`` (:mod:`.transcript`: what ``show`` prints)
``doctor``         checks of the daemon, the database and ``.claw/``
``transfer``       ``export``, ``import``; ``migrate``: ``migrate-legacy``
``migrate_db``     ``migrate-db``: a PostgreSQL database's schema migrations, no daemon
``verbs``          ``repair``, ``clear``, ``delete``
``lifecycle``      ``status``, ``stop``
``backup``         ``backup``, ``restore``
``copy``           ``copy``: a whole store between SQLite and PostgreSQL
``init``           ``init``: record the workspace's store in ``.claw/config.toml``
``find``           ``search``, ``follow``, ``usage``
``completion``     shell completion scripts from this parser
``ui``             ``ui``: the local web viewer (:mod:`claw_sessiond.ui`)
=================  ===========================================================

A command's module is imported when that command is chosen (``--help`` of the whole CLI and the
completion scripts import them all): a daemon's start and a CLI call load only what they run. So a
module imports at its top only what its options and help need; the client classes (grpc), the
storage code and asyncio are imported inside the functions that use them, and the top-level
``--help`` adds no command's arguments (tests/unit/test_start_imports.py checks what each loads).
They share :mod:`.options` (the options every command takes), :mod:`.connect`
(the one client factory), :mod:`.failure` (the one failure report and the
exit codes), :mod:`.output` (JSON documents, lines, tables), :mod:`.offline`
(the read-only views with no daemon), :mod:`.terminal` and :mod:`.termsafe`.

The workspace is ``--workspace`` (or ``CLAW_SESSIOND_WORKSPACE``) as given;
without either, the nearest of the current folder and its parents holding
``.claw/``, else the current folder; that ``.claw`` must be the caller's own
(another user's is refused, exit 1, reason ``UNTRUSTED_PEER``). Every option
has an environment variable ``CLAW_SESSIOND_<OPTION>``
(``--max-message-bytes`` → ``CLAW_SESSIOND_MAX_MESSAGE_BYTES``); a flag wins
over the variable, the variable over the default. ``--workspace``, ``--socket`` and ``--json`` are
accepted before or after the subcommand. Every ``--json`` document, failures
included, is an object whose first key is ``"format": 1``. Exit codes: 0 ok,
1 failure (daemon unreachable, storage broken, lock held, not found), 2 usage
or configuration error; a closed stdout (``| head``) ends quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import functools
import importlib
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, NoReturn

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

from claw_sessiond_client import UntrustedPeerError
from claw_sessiond_client.paths import find_workspace

from .. import __version__
from ..config import environ
from .failure import EXIT_FAILURE, EXIT_USAGE, fail_client, print_json_error
from .options import Command, Help, add_json_option, add_workspace_option
from .termsafe import visible

__all__ = ["ALIASES", "COMMANDS", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse echoes arguments in its errors ("unrecognized arguments: ..."): print them terminal-safe.

    A usage error is two lines, a short usage line and the error (the whole usage of ``serve`` is
    20 lines: ``--help`` has it), with a suggestion for a mistyped command or choice. With ``--json``
    anywhere on the command line it is also a JSON error document on stdout.
    """

    json_errors: bool = False

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        super()._print_message(visible(message, keep_layout=True), file)

    def error(self, message: str) -> NoReturn:
        message = _suggest(message)
        if _Parser.json_errors:
            print_json_error(message, reason="USAGE", code=EXIT_USAGE)
        positionals = " ".join(str(a.metavar or a.dest.upper()) for a in self._actions if not a.option_strings)
        self._print_message(f"usage: {self.prog} [OPTIONS] {positionals}".rstrip() + f"  (see {self.prog} --help)\n")
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


#: Other names of commands (``claw-sessiond list`` is ``ls``).
ALIASES: Final[Mapping[str, str]] = {"list": "ls", "rm": "delete"}

#: Words people type for a command of another name, with what to run instead.
_MEANT: Final[Mapping[str, str]] = {
    "tail": "'follow' (new messages as they are stored, like tail -f) or 'show SESSION --tail N'",
    "cat": "'show SESSION'",
    "start": "'serve'",
    "run": "'serve'",
    "kill": "'stop'",
    "remove": "'delete'",
    "find": "'search'",
}

_INVALID_CHOICE: Final = re.compile(r"^argument (\S+): invalid choice: '(.*)' \(choose from (.*)\)$", re.S)


def _suggest(message: str) -> str:
    """argparse's "invalid choice" error made short, with the nearest choice: ``did you mean 'ls'?``."""
    found = _INVALID_CHOICE.match(message)
    if found is None:
        return message
    argument, typed, listed = found.groups()
    choices = re.findall(r"'([^']*)'", listed)
    if argument == "COMMAND":
        near = _MEANT.get(typed) or ", ".join(f"'{c}'" for c in difflib.get_close_matches(typed, choices, 3, 0.6))
        more = f"did you mean {near}?" if near else "claw-sessiond --help lists them"
        return f"unknown command '{typed}': {more}"
    near = ", ".join(f"'{c}'" for c in difflib.get_close_matches(typed, choices, 1, 0.6))
    return f"argument {argument}: invalid choice '{typed}'" + (
        f": did you mean {near}?" if near else f" (choose from {', '.join(choices)})"
    )


#: What ``claw-sessiond --help`` lists, by group, in order (every command, once).
_GROUPS: Final = (
    ("look", ("ls", "show", "stats", "search", "follow", "usage", "ui", "doctor", "status")),
    ("change", ("repair", "clear", "delete")),
    ("run the daemon", ("serve", "stop", "init", "migrate-db")),
    ("move data", ("export", "import", "backup", "restore", "copy", "migrate-legacy")),
    ("shell", ("completion",)),
)


def _command_list(helps: Mapping[str, str]) -> str:
    """The commands of ``--help``, by group, each help folded to the width (``Help`` keeps indented lines)."""
    width = max(40, shutil.get_terminal_size((80, 24)).columns - 2)
    names = {name: name + "".join(f", {a}" for a, n in ALIASES.items() if n == name) for name in helps}
    column = max(len(n) for n in names.values()) + 4
    lines = []
    for title, group in _GROUPS:
        lines.append(f" {title}:")
        for name in group:
            text = textwrap.wrap(helps[name], max(20, width - column))
            lines.append(f"  {names[name].ljust(column - 2)}{text[0]}")
            lines += [" " * column + rest for rest in text[1:]]
    return "\n".join(lines)


def build_parser(
    env: Mapping[str, str] | None = None, only: str | None = None, *, arguments: bool = True
) -> argparse.ArgumentParser:
    """The full argument parser (``env`` supplies option defaults); with ``only``, the same parser
    with that one subcommand (whose module alone is imported), for a command line that names it.

    With ``arguments=False`` the subcommands have no arguments of their own: the parser of a command
    line that asks for the top-level ``--help`` or ``--version``, which exit before a subcommand is
    parsed and print the same (a command's arguments may import what only that command uses)."""
    env = environ() if env is None else env
    parser = _Parser(
        prog="claw-sessiond",
        usage="%(prog)s [--workspace DIR] [--socket PATH] [--json] COMMAND ...",
        description="Session store daemon for local AI-agent harnesses: one per workspace, the single writer of "
        "its sessions (.claw/sessions.db, or PostgreSQL), served over gRPC on .claw/sessiond.sock.",
        epilog="Exit codes: 0 ok, 1 failure, 2 usage or configuration error. Run 'claw-sessiond COMMAND --help'.",
        formatter_class=Help,
    )
    parser.add_argument("--version", action="version", version=f"claw-sessiond {__version__}")
    add_workspace_option(parser, env, global_=True)
    add_json_option(parser, global_=True)
    # Each command's help is listed by group in the description (``_command_list``), not in one block.
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, help=argparse.SUPPRESS)
    helps: dict[str, str] = {}
    if only in (None, "serve"):
        from . import serve

        helps["serve"] = serve.HELP
        daemon = sub.add_parser(
            "serve", prog="claw-sessiond serve", help=serve.HELP, description=serve.DESCRIPTION, formatter_class=Help
        )
        if arguments:
            add_workspace_option(daemon, env)
            serve.add_arguments(daemon, env)
        daemon.set_defaults(handler=serve.run)
        flags = (a.option_strings[0] for a in daemon._actions if a.option_strings)
        parser.set_defaults(known_flags=[flag for flag in flags if flag.startswith("--")])
    for name in _PLACES if only is None else [only] if only in _PLACES else []:
        command = COMMANDS[name]
        helps[name] = command.help
        aliases = [alias for alias, named in ALIASES.items() if named == name]
        cmd = sub.add_parser(
            command.name,
            prog=f"claw-sessiond {command.name}",
            aliases=aliases,
            help=command.help,
            description=command.help,
        )
        if arguments:
            add_workspace_option(cmd, env)
            add_json_option(cmd)
            command.add_arguments(cmd)
        cmd.formatter_class = Help
        cmd.set_defaults(handler=command.handler)
    if only is None:
        parser.description = f"{parser.description}\n\n{_command_list(helps)}"
    return parser


#: The global options that take a value, as :func:`build_parser` adds them (``add_workspace_option``).
_GLOBAL_VALUE_OPTIONS: Final = ("--workspace", "--socket")
#: The top-level options that print and exit as soon as argparse reads them.
_EXITING_OPTIONS: Final = ("-h", "--help", "--version")


def _first_word(argv: Sequence[str]) -> str | None:
    """The first word of ``argv`` that is not a global option (``--workspace``, ``--socket`` with their
    values, ``--json``) or its value; None if there is none."""
    words = iter(argv)
    for word in words:
        if word in _GLOBAL_VALUE_OPTIONS:
            next(words, None)
        elif word != "--json" and not word.startswith(tuple(f"{option}=" for option in _GLOBAL_VALUE_OPTIONS)):
            return word
    return None


def chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names, when it surely does: its first word that is not a global option
    (``--workspace``, ``--socket`` with their values, ``--json``) or its value. None (the whole parser,
    which also reports the errors) for anything else: ``--help``, ``--version``, an abbreviated option,
    no command, an unknown one."""
    word = _first_word(argv)
    if word is None:
        return None
    word = ALIASES.get(word, word)
    return word if word == "serve" or word in _PLACES else None


def resolve_workspace(args: argparse.Namespace) -> None:
    """Fill in ``args.workspace`` when neither ``--workspace`` nor its variable gave one.

    The nearest of the current folder and its parents that holds ``.claw/``
    (as git finds ``.git``), so a command run in a subfolder reaches the
    workspace's daemon instead of starting a second, empty store. When that is
    not the current folder, one line on stderr says which workspace is used
    (stdout stays clean for ``--json``). Another user's ``.claw`` found there
    raises :class:`~claw_sessiond_client.UntrustedPeerError` (``main`` reports it).
    """
    if getattr(args, "workspace", "") is not None or not getattr(args, "find_workspace", True):
        return  # given, or a command for which "no workspace" means every one (status)
    here = Path(os.getcwd())
    found = find_workspace(here)
    if found != Path(os.path.abspath(here)):
        print(f"claw-sessiond: using workspace {found} (found {found / '.claw'} above {here})", file=sys.stderr)
    args.workspace = str(found)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``claw-sessiond`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _Parser.json_errors = "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv
    parser = build_parser(only=chosen_command(argv), arguments=_first_word(argv) not in _EXITING_OPTIONS)
    args = parser.parse_args(argv)
    try:
        resolve_workspace(args)
    except UntrustedPeerError as exc:  # another user's .claw above the current folder
        return fail_client(args, exc)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        code = handler(args)
        sys.stdout.flush()  # a closed pipe (| head) shows here, not in the interpreter's exit
    except BrokenPipeError:
        # The reader went away: stop quietly (no traceback, no "Exception ignored" at exit).
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURE
    return code


#: Every subcommand but ``serve``, in the order of ``--help`` and of the completion scripts: the module of
#: ``claw_sessiond.cli`` that defines it and the name of its :class:`Command` there (``completion``'s is
#: made by a function of its module, handed :func:`build_parser`).
_PLACES: Final[Mapping[str, tuple[str, str]]] = {
    "ls": ("inspect", "LS"),
    "show": ("inspect", "SHOW"),
    "stats": ("inspect", "STATS"),
    "doctor": ("doctor", "DOCTOR"),
    "export": ("transfer", "EXPORT"),
    "import": ("transfer", "IMPORT"),
    "delete": ("verbs", "DELETE"),
    "migrate-legacy": ("migrate", "MIGRATE_LEGACY"),
    "status": ("lifecycle", "STATUS"),
    "stop": ("lifecycle", "STOP"),
    "repair": ("verbs", "REPAIR"),
    "clear": ("verbs", "CLEAR"),
    "completion": ("completion", "completion_command"),
    "backup": ("backup", "BACKUP"),
    "restore": ("backup", "RESTORE"),
    "search": ("find", "SEARCH"),
    "follow": ("find", "FOLLOW"),
    "usage": ("find", "USAGE"),
    "copy": ("copy", "COPY"),
    "migrate-db": ("migrate_db", "MIGRATE_DB"),
    "init": ("init", "INIT"),
    "ui": ("ui", "UI"),
}


@functools.cache
def _command(name: str) -> Command:
    """The subcommand ``name``, its module imported now."""
    module_name, attribute = _PLACES[name]
    found = getattr(importlib.import_module(f"{__name__}.{module_name}"), attribute)
    command: Command = found(build_parser) if name == "completion" else found
    return command


class _Commands(Mapping[str, Command]):
    """:data:`COMMANDS`: each command's module is imported when the command is first looked up."""

    def __getitem__(self, name: str) -> Command:
        if name not in _PLACES:
            raise KeyError(name)
        return _command(name)

    def __iter__(self) -> Iterator[str]:
        return iter(_PLACES)

    def __len__(self) -> int:
        return len(_PLACES)


#: Every subcommand but ``serve``, by name, in the order of ``--help`` and of the completion scripts.
COMMANDS: Final[Mapping[str, Command]] = _Commands()
