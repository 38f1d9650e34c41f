"""The CLI package's shape: an explicit list of subcommands, one client factory, one failure report.

Pure: no daemon. The parser is built with an empty environment; clients are
made but never connect (a gRPC channel connects on its first call).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import pkgutil
from pathlib import Path

import pytest

import claw_sessiond.cli as cli
from claw_sessiond.cli.connect import LOOK_TIMEOUT_S, STATUS_TIMEOUT_S, open_async_client, open_client
from claw_sessiond.cli.failure import EXIT_FAILURE, EXIT_USAGE, fail_client, report_error
from claw_sessiond.cli.options import Command
from claw_sessiond_client import DaemonUnavailableError, InvalidRequestError, Reason, SessionNotFoundError

CLI_DIR = Path(cli.__file__).parent

#: The order of ``claw-sessiond --help`` and of the completion scripts (unchanged by the move to cli/).
ORDER = [
    "serve",
    "ls",
    "show",
    "stats",
    "doctor",
    "export",
    "import",
    "delete",
    "migrate-legacy",
    "status",
    "stop",
    "repair",
    "clear",
    "completion",
    "backup",
    "restore",
    "search",
    "follow",
    "usage",
    "copy",
    "migrate-db",
    "init",
    "ui",
]


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [name for name in sub.choices if name not in cli.ALIASES]


def test_the_parser_has_every_subcommand_in_the_documented_order() -> None:
    assert _subcommands(cli.build_parser({})) == ORDER
    assert ["serve", *cli.COMMANDS] == ORDER


def test_every_command_a_module_defines_is_listed_and_nothing_else() -> None:
    defined = {}
    for info in pkgutil.iter_modules([str(CLI_DIR)]):
        module = importlib.import_module(f"claw_sessiond.cli.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, Command):
                defined[value.name] = f"{info.name}.{name}"
    # completion's Command is made by a function (it is handed build_parser), the others are constants.
    assert set(defined) == set(cli.COMMANDS) - {"completion"}
    for name, command in cli.COMMANDS.items():
        assert command.name == name


def test_only_connect_makes_clients() -> None:
    makers = []
    for path in sorted(CLI_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("SessionClient", "AsyncSessionClient"):
                makers.append(path.name)
    assert makers and set(makers) == {"connect.py"}


def test_open_client_never_autostarts_nor_resends(tmp_path: Path) -> None:
    socket = tmp_path / "sessiond.sock"
    for timeout_s, expected in ((LOOK_TIMEOUT_S, 10.0), (STATUS_TIMEOUT_S, 2.0), (None, 30.0)):
        with open_client(str(tmp_path), socket, timeout_s=timeout_s) as client:
            assert client.target == f"unix:{socket}"
            assert client.autostart is False and client.retry_window_s == 0.0
            assert client.timeout_s == expected


async def test_open_async_client_has_the_same_settings(tmp_path: Path) -> None:
    socket = tmp_path / "sessiond.sock"
    client = open_async_client(str(tmp_path), socket)
    try:
        assert client.target == f"unix:{socket}"
        assert client.autostart is False and client.retry_window_s == 0.0 and client.timeout_s == LOOK_TIMEOUT_S
    finally:
        await client.close()


def _args(**kw: object) -> argparse.Namespace:
    return argparse.Namespace(workspace="/w", json=True, **kw)


def test_report_error_is_one_line_for_people_and_one_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    code = report_error(_args(), "it broke\x1b[2J", hint="try this", reason="NOPE", code=7)
    out, err = capsys.readouterr()
    assert code == 7
    assert err == "claw-sessiond: error: it broke\\x1b[2J\nTry: try this\n"
    assert list(json.loads(out)) == ["format", "error"]
    assert json.loads(out) == {"format": 1, "error": {"message": "it broke\x1b[2J", "reason": "NOPE", "code": 7}}
    report_error(argparse.Namespace(workspace="/w"), "quiet")
    out, err = capsys.readouterr()
    assert out == "" and err == "claw-sessiond: error: quiet\n"


def test_fail_client_maps_client_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert fail_client(_args(), DaemonUnavailableError("gone"), unavailable="no claw-sessiond answers on S") == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["error"] == {
        "message": "no claw-sessiond answers on S",
        "reason": "DAEMON_UNAVAILABLE",
        "code": EXIT_FAILURE,
    }
    assert "Try: claw-sessiond serve --workspace /w  (or: claw-sessiond doctor)" in err

    assert fail_client(_args(), DaemonUnavailableError("gone"), prefix="nothing imported: ") == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["error"]["message"] == "nothing imported: gone"
    assert err.endswith("Try: claw-sessiond serve --workspace /w\n")

    refused = InvalidRequestError("bad query", reason=Reason.INVALID_MESSAGE)
    assert fail_client(_args(), refused) == EXIT_FAILURE
    assert fail_client(_args(), refused, invalid_code=EXIT_USAGE) == EXIT_USAGE
    capsys.readouterr()
    assert fail_client(_args(), SessionNotFoundError("no such"), invalid_code=EXIT_USAGE) == EXIT_FAILURE
    assert json.loads(capsys.readouterr().out)["error"]["reason"] == "SESSION_NOT_FOUND"


@pytest.mark.parametrize(
    ("argv", "chosen"),
    [
        (["ls"], "ls"),
        (["--workspace", "ls", "show", "s1"], "show"),
        (["--json", "--socket=/s", "serve", "--tcp", "x"], "serve"),
        (["--workspace=/w", "migrate-db"], "migrate-db"),
        (["--help"], None),
        (["--version"], None),
        (["--work", "/w", "ls"], None),  # an abbreviated option: the whole parser decides
        (["nonsense"], None),
        ([], None),
    ],
)
def test_the_chosen_command_is_read_only_when_sure(argv: list[str], chosen: str | None) -> None:
    assert cli.chosen_command(argv) == chosen


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "ls", "--limit", "5"],
        ["--workspace", "/w", "show", "s1", "--tail", "3"],
        ["serve", "--workspace", "/w", "--max-open-tool-calls", "7"],
        ["completion", "bash"],
    ],
)
def test_the_parser_of_the_chosen_command_parses_as_the_whole_one(argv: list[str]) -> None:
    """The same values, but ``known_flags`` (serve's flags, which only serve reads) outside serve."""
    whole = vars(cli.build_parser({}).parse_args(argv))
    alone = vars(cli.build_parser({}, only=cli.chosen_command(argv)).parse_args(argv))
    if argv[0] != "serve":
        whole.pop("known_flags")
    assert alone == whole


def test_the_top_level_help_is_the_same_without_the_commands_arguments() -> None:
    """``claw-sessiond --help`` is printed by a parser whose subcommands have no arguments (``arguments=False``,
    so no command's option code runs): the text is the whole parser's."""
    assert cli.build_parser({}, arguments=False).format_help() == cli.build_parser({}).format_help()
