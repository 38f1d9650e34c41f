"""Which storage backend the end-to-end suite's daemons use: ``CLAW_TEST_BACKEND`` (``sqlite``, the default,
or ``postgres``).

With ``postgres`` every daemon a test starts (``DaemonProcess``, and a daemon a client or the CLI
starts on its own) serves a PostgreSQL database on the test process's throwaway server
(``tests/helpers/postgres.py``, one server per pytest worker) instead of the workspace's SQLite
file: one fresh database per workspace, the same one when that workspace's daemon restarts.
Tests about the SQLite file itself carry ``@pytest.mark.sqlite_only(reason)`` and are left out
of that pass (deselected, not skipped: under ``CLAW_FULL=1`` a skip fails the run).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from tests.helpers.postgres import SHARED as POSTGRES

__all__ = ["BACKEND", "ON_POSTGRES", "database_url_for", "schema_version"]

#: The backend of this test run.
BACKEND: Final = os.environ.get("CLAW_TEST_BACKEND", "sqlite") or "sqlite"
if BACKEND not in ("sqlite", "postgres"):
    raise RuntimeError(f"CLAW_TEST_BACKEND must be sqlite or postgres, not {BACKEND!r}")
#: True when this run's daemons use PostgreSQL.
ON_POSTGRES: Final = BACKEND == "postgres"


def database_url_for(workspace: Path) -> str:
    """The URL of the database of ``workspace``'s daemons (created at first use)."""
    return POSTGRES.database_for("ws:" + os.path.realpath(workspace))


def schema_version() -> int:
    """The schema version the backend of this run writes (what stats report)."""
    if ON_POSTGRES:
        from claw_sessiond.storage.postgres.schema import SCHEMA_VERSION as POSTGRES_SCHEMA

        return POSTGRES_SCHEMA
    from claw_sessiond.storage.sqlite.schema import SCHEMA_VERSION as SQLITE_SCHEMA

    return SQLITE_SCHEMA
