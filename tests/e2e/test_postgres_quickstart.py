"""docs/postgres.md's quick start runs as written, against a real PostgreSQL server.

The docs test skips the page's quick-start blocks (they need a server the reader administers);
this test runs exactly those blocks, in order, as one bash script, as the reader would: ``psql``
as a superuser (the throwaway server's, through the ``PG*`` variables libpq reads), a fresh
``HOME``, the venv's ``claw-sessiond`` and ``python`` on ``PATH``. The only change to the text is
the server's address: ``localhost:5432`` becomes the throwaway server's ``127.0.0.1:<port>``,
where it asks for the password (scram-sha-256), so the password file is what lets the daemons in.
Then both workspaces' daemons served the one database: the Python block, run in the second
workspace, printed what the first one wrote.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.e2e.test_docs import ROOT, _stop_daemons, code_blocks
from tests.helpers.postgres import SHARED as POSTGRES

pytestmark = pytest.mark.backend_neutral("runs the PostgreSQL quick start on a server of its own database")

PAGE = ROOT / "docs" / "postgres.md"
_MARK = "tests/e2e/test_postgres_quickstart.py"


def _quick_start_script(port: int) -> str:
    """The page's blocks whose skip reason names this test, as one script, on the throwaway server's port."""
    parts = ["set -euo pipefail\n"]
    blocks = [b for b in code_blocks(PAGE) if b.marker == "skip" and _MARK in (b.reason or "")]
    assert [b.lang for b in blocks] == ["sh", "python", "sh"], "the quick start is a shell, a Python and a shell block"
    for b in blocks:
        body = b.body.replace("localhost:5432", f"127.0.0.1:{port}")
        parts.append(f"python - <<'CLAW_DOC_EOF'\n{body}CLAW_DOC_EOF\n" if b.lang == "python" else body)
    return "".join(parts)


def test_the_quick_start_serves_one_database_from_two_workspaces() -> None:
    server = POSTGRES.server()
    scratch = Path(tempfile.mkdtemp(prefix="clawqs-", dir="/tmp"))  # short: the sockets' paths
    try:
        os.chmod(scratch, 0o700)
        (scratch / "run").mkdir(mode=0o700)
        venv_bin = str(Path(sys.executable).parent)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAW_", "PYTEST_", "PG"))}
        env.update(
            HOME=str(scratch),
            XDG_RUNTIME_DIR=str(scratch / "run"),
            PATH=os.pathsep.join([str(server.data_dir.parent), venv_bin, env.get("PATH", "")]),
            PGHOST=str(server.socket_dir),
            PGPORT=str(server.port),
            PGUSER="claw",
            PGDATABASE="postgres",
        )
        proc = subprocess.run(
            ["bash", "-c", _quick_start_script(server.port)],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 0, f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        assert '["written through proj-a\'s daemon"]' in proc.stdout.splitlines(), proc.stdout
        assert proc.stdout.count("stopped claw-sessiond pid") == 2, proc.stdout
        # Both workspaces recorded the database, not a SQLite file.
        for ws in ("proj-a", "proj-b"):
            claw = scratch / ws / ".claw"
            assert "sessiond@127.0.0.1" in (claw / "config.toml").read_text()
            assert not (claw / "sessions.db").exists()
        assert server.psql("SELECT count(*) FROM claw_sessiond.sessions", database="sessiond") == "1"
    finally:
        _stop_daemons(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
        server.psql("DROP DATABASE IF EXISTS sessiond WITH (FORCE)")
        server.psql("DROP ROLE IF EXISTS sessiond")
