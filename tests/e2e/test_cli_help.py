"""``--help`` grouped and folded to the terminal, one-line usage errors, suggestions and aliases.

The installed ``claw-sessiond`` command, in a pipe (80 columns) and on a real pseudo-terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from claw_sessiond import cli
from claw_sessiond_client import Message, SessionClient
from tests.helpers.cli import on_pty
from tests.helpers.daemon import DaemonProcess

INSTALLED = Path(sys.executable).with_name("claw-sessiond")
EVERY = ["serve", *cli.COMMANDS]


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [str(INSTALLED), *args], capture_output=True, text=True, cwd=cwd, env={**environment, **(env or {})}, timeout=60
    )


def test_help_is_grouped_and_fits_80_columns_in_a_pipe(tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    script = 'for c in "" ' + " ".join(EVERY) + '; do "$CLAW" $c --help || echo "FAILED $c"; done'
    proc = subprocess.run(
        ["sh", "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**environment, "CLAW": str(INSTALLED)},
        timeout=300,
    )
    assert "FAILED" not in proc.stdout and proc.stderr == "", proc.stderr
    wide = [line for line in proc.stdout.splitlines() if len(line) > 80]
    assert wide == []
    assert "default None" not in proc.stdout and "default False" not in proc.stdout
    top = run("--help", cwd=tmp_path).stdout
    assert [line for line in top.splitlines() if line.startswith(" ") and line.endswith(":")] == [
        " look:",
        " change:",
        " run the daemon:",
        " move data:",
        " shell:",
    ]
    assert "  ls, list  " in top and "  delete, rm  " in top
    for command in EVERY:
        assert f"\n  {command}" in top, command
    serve = run("serve", "--help", cwd=tmp_path).stdout
    for group in ("network:", "limits and fairness:", "lifecycle and logs:"):
        assert f"\n{group}\n" in serve
    assert "--tcp HOST:PORT" in serve and "[env CLAW_SESSIOND_TCP]" in serve
    assert "[env CLAW_SESSIOND_MAX_WATCHERS; default " in " ".join(serve.split())


def test_help_is_folded_to_a_wider_terminal(tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    wide = on_pty("serve", "--help", cwd=tmp_path, env=environment, size=(40, 120))
    lines = wide.text().replace("\r\n", "\n").splitlines()
    assert wide.code == 0 and max(len(line) for line in lines) <= 120
    assert max(len(line) for line in lines) > 100  # folded to the terminal, not to 80 columns
    narrow = on_pty("ls", "--help", cwd=tmp_path, env=environment, size=(40, 60))
    assert max(len(line) for line in narrow.text().replace("\r\n", "\n").splitlines()) <= 60


@pytest.mark.smoke
@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["serve", "--max-watchers", "x"],
            "claw-sessiond serve: error: argument --max-watchers: invalid int value: 'x'",
        ),
        (["ls", "--limit", "0"], "claw-sessiond ls: error: argument --limit: must be between 1 and 10000 (got 0)"),
        (["lst"], "claw-sessiond: error: unknown command 'lst': did you mean 'list', 'ls'?"),
        (["shwo", "x"], "claw-sessiond: error: unknown command 'shwo': did you mean 'show'?"),
        (
            ["tail"],
            "claw-sessiond: error: unknown command 'tail': did you mean 'follow' (new messages as they are stored, "
            "like tail -f) or 'show SESSION --tail N'?",
        ),
        (
            ["search", "x", "--role", "usr"],
            "claw-sessiond search: error: argument --role: invalid choice 'usr': did you mean 'user'?",
        ),
    ],
)
def test_a_bad_value_is_a_usage_line_and_one_error(args: list[str], error: str, tmp_path: Path) -> None:
    proc = run(*args, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    usage, message = proc.stderr.splitlines()
    assert usage.startswith("usage: claw-sessiond") and usage.endswith("--help)") and len(usage) <= 80
    assert message.startswith(error), message


@pytest.mark.smoke
def test_list_and_rm_are_ls_and_delete(module_daemon: DaemonProcess, module_client: SessionClient, sid: str) -> None:
    module_client.append(sid, Message.user("hello"))
    env = {"CLAW_SESSIOND_WORKSPACE": str(module_daemon.workspace)}
    listed = run("list", "-q", "--contains", sid, cwd=module_daemon.workspace, env=env)
    assert listed.returncode == 0 and listed.stdout.splitlines() == [sid], listed.stderr
    removed = run("rm", sid, "--yes", cwd=module_daemon.workspace, env=env)
    assert removed.returncode == 0 and removed.stdout.startswith(f"deleted {sid}: "), removed.stderr
    assert module_client.list_sessions(sid) == []
