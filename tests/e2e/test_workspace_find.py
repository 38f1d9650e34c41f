"""A subfolder of a workspace reaches the workspace's daemon (issue "Harden", item 14).

The CLI and the clients find the workspace upward, as git finds ``.git``: the
nearest of the starting folder and its parents holding ``.claw/``; without
one, the starting folder itself (as before). ``--workspace`` and
``CLAW_SESSIOND_WORKSPACE`` are used as given. The CLI says on stderr (one
line, never on stdout) which workspace it found when it is not the current
folder. Real daemons, real CLI processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client import AsyncSessionClient, DaemonUnavailableError, Message, SessionClient, find_workspace
from tests.helpers.cli import claw
from tests.helpers.daemon import DaemonProcess
from tests.helpers.process import wait_exit

pytestmark = pytest.mark.backend_neutral("how the CLI and the clients find the workspace and its socket")


def _cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CLAW_SESSIOND_")}
    return claw(*args, cwd=cwd, environ=base, env=env)


@pytest.fixture
def served(workspace: Path) -> Iterator[DaemonProcess]:
    """A daemon on ``workspace`` holding one session, and a subfolder two levels down."""
    d = DaemonProcess(workspace).start()
    with d.client() as c:
        c.append("kept", [Message.user("stored from the workspace root")])
    (workspace / "src" / "pkg").mkdir(parents=True)
    yield d
    d.stop()


@pytest.mark.smoke
def test_cli_in_a_subfolder_uses_the_workspace_above(served: DaemonProcess, workspace: Path) -> None:
    sub = workspace / "src" / "pkg"
    proc = _cli(sub, "ls", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)  # stdout is only the JSON document
    assert "kept" in json.dumps(listed), listed
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(workspace) in lines[0] and "using workspace" in lines[0], proc.stderr
    assert not (sub / ".claw").exists() and not (workspace / "src" / ".claw").exists()


def test_cli_at_the_workspace_root_prints_nothing_extra(served: DaemonProcess, workspace: Path) -> None:
    proc = _cli(workspace, "ls", "--json")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_serve_in_a_subfolder_does_not_start_a_second_store(served: DaemonProcess, workspace: Path) -> None:
    sub = workspace / "src" / "pkg"
    proc = subprocess.Popen(
        [sys.executable, "-m", "claw_sessiond", "serve"],
        cwd=str(sub),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if not k.startswith("CLAW_SESSIOND_")},
    )
    code = wait_exit(proc, 30)  # kills it (and fails) if it starts serving instead
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.stdout.close() if proc.stdout else None
    proc.stderr.close() if proc.stderr else None
    assert code == 1 and "another claw-sessiond" in err and str(workspace) in err, err
    assert not (sub / ".claw").exists()


def test_explicit_workspace_is_used_as_given(served: DaemonProcess, workspace: Path) -> None:
    sub = workspace / "src" / "pkg"
    for env, args in (({}, ("--workspace", str(sub))), ({"CLAW_SESSIOND_WORKSPACE": str(sub)}, ())):
        proc = _cli(workspace, "ls", *args, env=env)
        assert proc.returncode == 1 and f"nothing is stored for {sub}" in proc.stderr, proc.stderr  # sub, not ws
        assert "using workspace" not in proc.stderr
    assert not (sub / ".claw").exists()


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("how", ["path", "cwd"])
def test_client_in_a_subfolder_reaches_the_workspace_history(
    served: DaemonProcess, workspace: Path, monkeypatch: pytest.MonkeyPatch, kind: str, how: str
) -> None:
    sub = workspace / "src" / "pkg"
    monkeypatch.delenv("CLAW_SESSIOND_WORKSPACE", raising=False)
    monkeypatch.chdir(sub if how == "cwd" else workspace.parent)
    arg = None if how == "cwd" else str(sub)
    if kind == "sync":
        with SessionClient(arg, autostart=False) as c:
            assert c.workspace == workspace
            contents = [m.content for m in c.load("kept").messages]
    else:

        async def main() -> list[str]:
            async with AsyncSessionClient(arg, autostart=False) as c:
                assert c.workspace == workspace
                return [m.content for m in (await c.load("kept")).messages]

        contents = asyncio.run(main())
    assert contents == ["stored from the workspace root"]
    assert not (sub / ".claw").exists()


def test_client_environment_variable_is_used_as_given(
    served: DaemonProcess, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = workspace / "src" / "pkg"
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("CLAW_SESSIOND_WORKSPACE", str(sub))
    with SessionClient(autostart=False, retry_window_s=0) as c:
        assert c.workspace == sub
        with pytest.raises(DaemonUnavailableError):
            c.stats()


def test_without_any_claw_folder_the_start_folder_is_the_workspace(tmp_path: Path) -> None:
    lone = tmp_path / "lone" / "deeper"
    lone.mkdir(parents=True)
    assert find_workspace(lone) == lone
    with SessionClient(lone, autostart=False) as c:
        assert c.workspace == lone
