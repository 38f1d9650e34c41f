"""``claw-sessiond completion bash|zsh|fish``: scripts generated from the parser, loaded by the real shells.

bash: the script is sourced in a real bash, registered (``complete -p``), and
its function answers COMP_WORDS the way bash calls it. fish: ``complete -C``
asks real fish for completions. zsh: ``zsh -n`` and registration with
compinit. A shell that is not installed skips its test (``apt-get install zsh
fish`` gives them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claw_sessiond.cli import COMMANDS
from claw_sessiond_client import Message, SessionClient
from tests.helpers.daemon import DaemonProcess


def script(shell: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "completion", shell], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


#: The scripts call ``claw-sessiond`` itself for session ids: the venv's must be on PATH.
ENV = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _complete_bash(path: Path, *words: str, cwd: Path | None = None) -> list[str]:
    """What the completion function offers for ``words`` (the last one is being typed)."""
    array = " ".join(f"'{w}'" for w in ("claw-sessiond", *words))
    code = (
        f"source {path}; COMP_WORDS=({array}); COMP_CWORD={len(words)}; "
        'COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _claw_sessiond; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    proc = subprocess.run(["bash", "-c", code], capture_output=True, text=True, timeout=60, cwd=cwd, env=ENV)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line]


@pytest.mark.smoke
@pytest.mark.backend_neutral("a completion script generated from the parser, loaded by a real shell")
def test_bash(tmp_path: Path) -> None:
    path = tmp_path / "claw-sessiond.bash"
    path.write_text(script("bash"))
    registered = subprocess.run(
        ["bash", "-c", f"source <({sys.executable} -m claw_sessiond completion bash); complete -p claw-sessiond"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert registered.returncode == 0, registered.stderr
    assert registered.stdout.strip() == "complete -o default -F _claw_sessiond claw-sessiond"

    assert _complete_bash(path, "sh") == ["show"]
    assert set(_complete_bash(path, "")) == {"serve", *COMMANDS}
    assert set(_complete_bash(path, "show", "--")) >= {"--tail", "--since", "--no-pager", "--json", "--workspace"}
    assert set(_complete_bash(path, "delete", "-")) >= {"--yes", "-y"}
    assert _complete_bash(path, "import", "f.jsonl", "--mode", "re") == ["refuse", "replace"]
    assert _complete_bash(path, "completion", "f") == ["fish"]
    # Global options before the subcommand, and their values, are skipped when finding the subcommand.
    assert _complete_bash(path, "--workspace", "/tmp", "ls", "--al") == ["--all"]
    assert _complete_bash(path, "--js") == ["--json"]


@pytest.mark.backend_neutral("a completion script generated from the parser, loaded by a real shell")
@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish(tmp_path: Path) -> None:
    path = tmp_path / "claw-sessiond.fish"
    path.write_text(script("fish"))
    check = subprocess.run(["fish", "--no-execute", str(path)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr

    def complete(line: str) -> list[str]:
        proc = subprocess.run(
            ["fish", "--no-config", "-c", f"source {path}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        return [row.split("\t")[0] for row in proc.stdout.splitlines()]

    assert complete("claw-sessiond sh") == ["show"]
    assert complete("claw-sessiond import f --mode ") == ["merge", "refuse", "replace"]
    assert "--tail" in complete("claw-sessiond show x --t")


@pytest.mark.backend_neutral("a completion script generated from the parser, loaded by a real shell")
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh(tmp_path: Path) -> None:
    path = tmp_path / "_claw-sessiond"
    path.write_text(script("zsh"))
    check = subprocess.run(["zsh", "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr
    assert path.read_text().startswith("#compdef claw-sessiond\n")
    registered = subprocess.run(
        ["zsh", "-f", "-c", f"autoload -U compinit; compinit -u -D; source {path}; print -r -- $_comps[claw-sessiond]"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert registered.returncode == 0, registered.stderr
    assert registered.stdout.strip() == "_claw_sessiond"


@pytest.mark.backend_neutral("a completion script generated from the parser, loaded by a real shell")
def test_unknown_shell_is_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "completion", "tcsh"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "invalid choice" in proc.stderr and proc.stdout == ""
    bare = subprocess.run([sys.executable, "-m", "claw_sessiond", "completion"], capture_output=True, text=True)
    assert bare.returncode == 2 and "name a shell: bash, zsh or fish" in bare.stderr


def test_session_ids_are_completed_from_the_workspace_s_daemon(
    daemon: DaemonProcess, client: SessionClient, tmp_path: Path
) -> None:
    for sid in ("demo", "deploy-1", "other"):
        client.append(sid, Message.user("hi"))
    ws = daemon.workspace
    path = tmp_path / "claw-sessiond.bash"
    path.write_text(script("bash"))
    assert sorted(_complete_bash(path, "show", "de", cwd=ws)) == ["demo", "deploy-1"]
    assert sorted(_complete_bash(path, "delete", "--yes", "d", cwd=ws)) == ["demo", "deploy-1"]
    # From another folder: the --workspace on the line (before or after the command) names the daemon.
    assert _complete_bash(path, "--workspace", str(ws), "repair", "ot", cwd=tmp_path) == ["other"]
    assert _complete_bash(path, "clear", "--workspace", str(ws), "ot", cwd=tmp_path) == ["other"]
    assert _complete_bash(path, "show", "de", cwd=tmp_path) == []  # no daemon there: nothing, and no noise
    listed = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "completion", "--list-sessions"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert listed.returncode == 0 and listed.stdout == "" and listed.stderr == ""
    if shutil.which("fish"):
        fish = tmp_path / "c.fish"
        fish.write_text(script("fish"))
        proc = subprocess.run(
            ["fish", "--no-config", "-c", f"source {fish}; complete -C 'claw-sessiond show de'"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ws,
            env=ENV,
        )
        assert sorted(proc.stdout.split()) == ["demo", "deploy-1"], proc.stderr
