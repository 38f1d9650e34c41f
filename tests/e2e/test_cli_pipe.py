"""``ls`` in a pipe and at 80 columns: ids are never cut off a terminal, ``--no-trunc``, ``-q``.

The installed ``claw-sessiond`` command in a real shell pipe (``ls | awk | xargs show``), and the
CLI on a real pseudo-terminal of 80 columns; one daemon for the file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client import Message
from tests.helpers.cli import on_pty
from tests.helpers.daemon import DaemonProcess

SGR = re.compile("\x1b\\[[0-9;]*m")
#: The console script pip installed beside this interpreter: the command a user runs.
INSTALLED = Path(sys.executable).with_name("claw-sessiond")
LONG_ID = "long-" + "x" * 115
UUIDS = [str(uuid.UUID(int=n + 1)) for n in range(3)]


@pytest.fixture(scope="module")
def listed(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """Three UUID sessions, one with long labels, and one 120-character id."""
    ws = tmp_path_factory.mktemp("pipe") / "ws"
    ws.mkdir()
    daemon = DaemonProcess(ws).start()
    try:
        with daemon.client() as client:
            for sid in UUIDS:
                client.append(sid, Message.user("hello"))
            client.create_session("labelled", labels={"app": "weather-" * 6, "owner": "someone-with-a-long-name"})
            client.append(LONG_ID, Message.user("a long id"))
        yield daemon
    finally:
        daemon.stop()


def shell(daemon: DaemonProcess, script: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``script`` in ``sh`` in the workspace, ``$CLAW`` the installed command (no ``COLUMNS``)."""
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    environment.update({"CLAW": str(INSTALLED), "CLAW_SESSIOND_WORKSPACE": str(daemon.workspace), **(env or {})})
    return subprocess.run(
        ["sh", "-c", script], capture_output=True, text=True, cwd=daemon.workspace, env=environment, timeout=120
    )


def every_id(daemon: DaemonProcess) -> list[str]:
    with daemon.client() as client:
        return [s.id for s in client.list_sessions("", 100)]


@pytest.mark.smoke
def test_ls_in_a_pipe_keeps_every_id_whole(listed: DaemonProcess) -> None:
    assert INSTALLED.exists(), INSTALLED
    ids = every_id(listed)
    assert len(ids) == 5
    # what the user ran: every id reaches show whole
    proc = shell(listed, """"$CLAW" ls | awk 'NR > 1 {print $1}' | xargs -n 1 env COLUMNS=500 "$CLAW" show""")
    assert proc.returncode == 0, proc.stderr
    assert sorted(re.findall(r"^session (\S+)", proc.stdout, re.M)) == sorted(ids)
    assert "…" not in proc.stdout

    table = shell(listed, '"$CLAW" ls | cat')
    lines = table.stdout.splitlines()
    assert [line.split()[0] for line in lines[1:]] == ids
    # the long id alone passes 80 columns, so the other columns were left out, and stderr says so
    assert lines[0].split() == ["ID"]
    assert table.stderr == "columns not shown: MESSAGES, TOKENS, COST, UPDATED, LABELS (--no-trunc shows them)\n"

    short = shell(listed, '"$CLAW" ls --contains 0000 | cat')
    rows = short.stdout.splitlines()
    assert rows[0].split()[:2] == ["ID", "MESSAGES"] and "UPDATED" in rows[0] and len(rows) == 4, short.stdout
    assert all(len(row) <= 80 for row in rows) and [r.split()[0] for r in rows[1:]] == UUIDS[::-1]


def test_ls_quiet_prints_the_ids_alone(listed: DaemonProcess) -> None:
    proc = shell(listed, '"$CLAW" ls -q | cat')
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.splitlines() == every_id(listed)
    one = shell(listed, '"$CLAW" ls --quiet --limit 1')
    assert one.stdout.splitlines() == every_id(listed)[:1]
    assert one.stderr.strip() == "showing 1 of 5 sessions (--all for every one, --limit N)"


def test_ls_no_trunc_prints_every_column_whole(listed: DaemonProcess) -> None:
    proc = shell(listed, '"$CLAW" ls --no-trunc | cat')
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["ID", "MESSAGES", "TOKENS", "COST", "UPDATED", "LABELS"]
    assert [line.split()[0] for line in lines[1:]] == every_id(listed)
    assert any("app=" + "weather-" * 6 + " owner=someone-with-a-long-name" in line for line in lines)
    data = json.loads(shell(listed, '"$CLAW" ls --json').stdout)
    assert [s["id"] for s in data["sessions"]] == every_id(listed)


def on_terminal(daemon: DaemonProcess, *args: str, cols: int = 80) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    run = on_pty(
        "ls", "--workspace", str(daemon.workspace), *args, cwd=daemon.workspace, env=environment, size=(24, cols)
    )
    assert run.code == 0, run.text()
    return SGR.sub("", run.text().replace("\r\n", "\n"))


def test_ls_on_an_80_column_terminal_fits_and_keeps_uuids_whole(listed: DaemonProcess) -> None:
    text = on_terminal(listed)
    lines = [line for line in text.splitlines() if line.strip()]
    table = [line for line in lines if not line.startswith("columns not shown:")]
    assert len(table) == 6 and all(len(line) <= 80 for line in lines), lines
    assert table[0].split()[:2] == ["ID", "MESSAGES"]
    firsts = [line.split()[0] for line in table[1:]]
    assert all(u in firsts for u in UUIDS) and "labelled" in firsts  # long labels cut nobody's id
    assert any(f.startswith("long-x") and f.endswith("…") for f in firsts)  # only what cannot fit is cut

    labels = on_terminal(listed, "--contains", "labelled")
    assert "LABELS" in labels and "app=weather-" in labels and "…" in labels
    assert all(len(line) <= 80 for line in labels.splitlines())

    whole = on_terminal(listed, "--no-trunc")
    assert LONG_ID in whole.replace("\n", "") and "…" not in whole
