"""Which storage backend an end-to-end test's daemons use: SQLite or PostgreSQL, one test at a time.

Every end-to-end test runs once per backend (ids ``[sqlite]`` and ``[postgres]``): the module-scoped
``backend`` fixture of ``tests/e2e/conftest.py`` calls :func:`use` before the test's module
fixtures are made, and every daemon the test starts follows :func:`current`. On ``postgres``
each daemon (``DaemonProcess``, and a daemon a client or the CLI starts on its own) serves a
PostgreSQL database on the test process's throwaway server (``tests/helpers/postgres.py``, one
server per pytest worker) instead of the workspace's SQLite file: one fresh database per
workspace, the same one when that workspace's daemon restarts.

A test that runs on one backend only says why with a marker (``tests/e2e/conftest.py`` refuses
one without a reason): ``sqlite_only(reason)`` for a test about the SQLite file or SQLite's own
behaviour, ``backend_neutral(reason)`` for a test whose outcome does not depend on storage at
all (help text, packaging, the socket's peer checks...); both run on SQLite.

``CLAW_TEST_BACKEND`` (``sqlite`` or ``postgres``; unset: both) keeps one backend's tests by hand;
the others are deselected, not skipped (under ``CLAW_FULL=1`` a skip fails the run).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from tests.helpers.postgres import SHARED as POSTGRES

__all__ = ["BACKENDS", "current", "database_url_for", "on_postgres", "schema_version", "selected", "use"]

#: Every backend the end-to-end suite runs on, in the order of the ids.
BACKENDS: Final = ("sqlite", "postgres")

_current = ["sqlite"]


def selected() -> tuple[str, ...]:
    """The backends this run keeps: ``CLAW_TEST_BACKEND`` if set, else all of them."""
    chosen = os.environ.get("CLAW_TEST_BACKEND", "")
    if not chosen:
        return BACKENDS
    if chosen not in BACKENDS:
        raise RuntimeError(f"CLAW_TEST_BACKEND must be sqlite or postgres (or unset for both), not {chosen!r}")
    return (chosen,)


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
