"""Which storage backend an end-to-end test's daemons use: SQLite or PostgreSQL, one test at a time.

An end-to-end test runs on SQLite (id ``[sqlite]``); one marked ``both_backends(reason)`` runs once
per backend (ids ``[sqlite]`` and ``[postgres]``): the module-scoped ``backend`` fixture of
``tests/e2e/conftest.py`` calls :func:`use` before the test's module fixtures are made, and every
daemon the test starts follows :func:`current`. On ``postgres`` each daemon (``DaemonProcess``,
and a daemon a client or the CLI starts on its own) serves a PostgreSQL database on the test
process's throwaway server (``tests/helpers/postgres.py``, one server per pytest worker) instead
of the workspace's SQLite file: one fresh database per workspace, the same one when that
workspace's daemon restarts.

``tests/e2e/conftest.py`` lists the markers (each needs a reason). Which backends a run keeps
(``CLAW_TEST_BACKEND``, the tier) is :func:`tests.helpers.tiers.selected_backends`; the others'
tests are deselected, not skipped (under ``CLAW_FULL=1`` a skip fails the run).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.postgres import SHARED as POSTGRES
from tests.helpers.tiers import BACKENDS

__all__ = ["BACKENDS", "current", "database_url_for", "on_postgres", "schema_version", "use"]

_current = ["sqlite"]


def use(backend: str) -> str:
    """Make ``backend`` the one the following daemons use; returns the one before."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}")
    before = _current[0]
    _current[0] = backend
    return before


def current() -> str:
    """The backend of the test running now (``sqlite`` outside the end-to-end suite)."""
    return _current[0]


def on_postgres() -> bool:
    """True when the running test's daemons use PostgreSQL."""
    return _current[0] == "postgres"


def database_url_for(workspace: Path) -> str:
    """The URL of the database of ``workspace``'s daemons (created at first use)."""
    return POSTGRES.database_for("ws:" + os.path.realpath(workspace))


def schema_version() -> int:
    """The schema version the running test's backend writes (what stats report)."""
    if on_postgres():
        from claw_sessiond.storage.postgres.schema import SCHEMA_VERSION as POSTGRES_SCHEMA

        return POSTGRES_SCHEMA
    from claw_sessiond.storage.sqlite.schema import SCHEMA_VERSION as SQLITE_SCHEMA

    return SQLITE_SCHEMA
