"""The example unit of the PostgreSQL deployment (systemd/claw-sessiond-postgres.service, docs/postgres.md).

``systemd-analyze verify`` prints nothing for it (and does print for a misspelled key, so the check
can fail), its sandbox rates 2.0 or better, the password comes from a credential (never from the
unit), and the command it runs is one the daemon accepts: ``--database-file`` reading the URL from
a file, as the daemon finds it in ``$CREDENTIALS_DIRECTORY``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claw_sessiond.cli import build_parser
from tests.helpers.daemon import ROOT

UNIT = ROOT / "systemd" / "claw-sessiond-postgres.service"

needs_systemd_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")


pytestmark = pytest.mark.backend_neutral("checks the example unit file; no daemon runs")


def _analyze(*args: str, cwd: Path) -> str:
    env = {**os.environ, "SYSTEMD_LOG_COLOR": "0", "SYSTEMD_COLORS": "0"}
    done = subprocess.run(
        ["systemd-analyze", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout
    return done.stdout


@needs_systemd_analyze
def test_verify_prints_nothing_and_catches_a_typo(tmp_path: Path) -> None:
    shutil.copy(UNIT, tmp_path / UNIT.name)
    assert _analyze("verify", f"./{UNIT.name}", cwd=tmp_path) == ""
    (tmp_path / "typo.service").write_text(UNIT.read_text().replace("LoadCredential=", "LoadCredentail="))
    assert "LoadCredentail" in _analyze("verify", "./typo.service", cwd=tmp_path)


@needs_systemd_analyze
def test_security_exposure(tmp_path: Path) -> None:
    shutil.copy(UNIT, tmp_path / UNIT.name)
    out = _analyze("security", "--offline=yes", f"./{UNIT.name}", cwd=tmp_path)
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", out)
    assert match and float(match.group(1)) <= 2.0, out


@pytest.mark.smoke
def test_the_password_comes_from_a_credential_and_the_command_parses() -> None:
    text = UNIT.read_text()
    assert "LoadCredential=database:/etc/claw-sessiond/database-url" in text
    assert not re.search(r"postgres(ql)?://[^@\s]*:[^@\s]*@", text.replace("claw:SECRET@", "")), (
        "a password in the unit"
    )
    assert "PGPASSWORD" not in text and "CLAW_DATABASE_URL" not in text
    (command,) = [line.split("=", 1)[1] for line in text.splitlines() if line.startswith("ExecStart=")]
    words = command.replace("%d", "/run/credentials/claw-sessiond-postgres.service").split()
    assert words[:3] == ["/usr/bin/env", "claw-sessiond", "serve"]
    args = build_parser({}).parse_args(words[2:])
    assert args.database_file == "/run/credentials/claw-sessiond-postgres.service/database"
    assert args.workspace == "/srv/agents"


def test_database_file_errors_are_configuration_errors(tmp_path: Path) -> None:
    url_file = tmp_path / "database"
    url_file.write_text("postgresql://claw:pw-in-file@127.0.0.1:1/x\n")

    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(tmp_path), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    both = serve("--database", "postgresql://claw@h/x", "--database-file", str(url_file))
    assert both.returncode == 2 and "not both" in both.stderr, both.stderr
    missing = serve("--database-file", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr, missing.stderr
    assert "pw-in-file" not in both.stderr + missing.stderr
