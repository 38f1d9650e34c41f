"""The end-to-end suite's backends (``tests/helpers/backend.py``): SQLite, and PostgreSQL where a test says why.

Every test gets the module-scoped ``backend`` fixture, parametrized ``sqlite`` (id ``[sqlite]``).
PostgreSQL's parity with SQLite is proven one level down, by the storage contract suite
(``tests/storage/``, both backends); an end-to-end test runs on PostgreSQL too only where it tests
the daemon's wiring to it, marked ``both_backends(reason)`` (ids ``[sqlite]`` and ``[postgres]``;
pytest runs a file's SQLite half, then its PostgreSQL half, so its module fixtures are made once
per backend: a module fixture that starts a daemon takes ``backend`` as an argument). Two more
markers, each needing a reason, say why a test must never be given a second backend:

- ``sqlite_only(reason)``: about the SQLite file or SQLite's own behaviour (file modes, FTS5's
  raw query syntax, a corrupt ``sessions.db``); id ``[sqlite]``;
- ``backend_neutral(reason)``: the outcome does not depend on storage (help text, completion
  scripts, packaging, the socket's peer checks) or the test picks its databases itself; not
  parametrized, its daemons use SQLite unless it picks a database itself.

A marker without a reason is a usage error, and so are two on one test. docs/postgres.md,
"What runs where", lists the files of each (``tests/unit/test_backend_markers.py`` checks it).
Which backends a run keeps is ``tests/helpers/tiers.py``'s rule (``tests/conftest.py`` deselects).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from claw_sessiond_client import SessionClient
from tests.helpers.backend import BACKENDS, database_url_for, use
from tests.helpers.daemon import DaemonProcess

#: The markers that choose a test's backends, each with a reason.
BACKEND_MARKERS = ("both_backends", "sqlite_only", "backend_neutral")


def backend_marker(node: pytest.Item) -> str | None:
    """The name of the marker that chooses ``node``'s backends, or None (SQLite); a marker without a
    reason is a usage error, and so are two markers on one test."""
    found = []
    for name in BACKEND_MARKERS:
        mark = node.get_closest_marker(name)
        if mark is None:
            continue
        reason = mark.args[0] if mark.args else mark.kwargs.get("reason", "")
        if not (isinstance(reason, str) and reason.strip()):
            raise pytest.UsageError(f"{node.nodeid}: @pytest.mark.{name} needs a reason")
        found.append(name)
    if len(found) > 1:
        raise pytest.UsageError(f"{node.nodeid}: one of {', '.join(BACKEND_MARKERS)}, not {' and '.join(found)}")
    return found[0] if found else None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``[sqlite]``, or both backends for ``both_backends``; a ``backend_neutral`` test runs once,
    unparametrized (its daemons use SQLite unless it picks a database itself)."""
    if "backend" not in metafunc.fixturenames:
        return
    marker = backend_marker(metafunc.definition)
    if marker == "backend_neutral":
        return
    backends = list(BACKENDS) if marker == "both_backends" else ["sqlite"]
    metafunc.parametrize("backend", backends, ids=backends, indirect=True, scope="module")


def _check_wider_fixtures(items: list[pytest.Item]) -> None:
    """A module-scoped fixture of an end-to-end file takes ``backend``: made before the test's own
    fixtures, it would otherwise serve both halves of the file from one backend's daemon."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        for name, defs in info.name2fixturedefs.items() if info is not None else ():
            fixture = defs[-1]
            wide = fixture.scope in ("class", "module", "package", "session")
            if wide and name != "backend" and "e2e/test_" in fixture.baseid and "backend" not in fixture.argnames:
                raise pytest.UsageError(
                    f"{fixture.baseid}: the {fixture.scope}-scoped fixture {name} must take backend"
                )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _check_wider_fixtures(items)


@pytest.fixture(scope="module", autouse=True)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """The storage backend of this test's daemons (``sqlite`` or ``postgres``)."""
    name = str(getattr(request, "param", "sqlite"))  # backend_neutral: not parametrized
    before = use(name)
    try:
        yield name
    finally:
        use(before)


@pytest.fixture(autouse=True)
def _backend_of_test(backend: str, request: pytest.FixtureRequest) -> Iterator[None]:
    """On PostgreSQL, a daemon that a client or the CLI starts on its own serves the database of the
    test's ``workspace`` (``CLAW_DATABASE_URL``); on SQLite that variable is unset."""
    use(backend)  # a module fixture of another file may have changed it since
    with pytest.MonkeyPatch.context() as patch:
        if backend == "postgres":
            patch.setenv("CLAW_DATABASE_URL", database_url_for(request.getfixturevalue("tmp_path") / "ws"))
        else:
            patch.delenv("CLAW_DATABASE_URL", raising=False)
        yield


@pytest.fixture(scope="module")
def module_daemon(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """One daemon with default flags for a module's tests that each work on sessions of their own
    (``sid``): started once per file and backend instead of once per test. A test that changes the
    daemon (flags, restarts, kills, signals) or reads the whole store keeps a ``daemon`` of its own."""
    workspace = tmp_path_factory.mktemp("module") / "ws"
    workspace.mkdir()
    shared = DaemonProcess(workspace).start()  # after ``backend``: on PostgreSQL, the workspace's database
    try:
        yield shared
    finally:
        shared.stop()


@pytest.fixture
def module_client(module_daemon: DaemonProcess) -> Iterator[SessionClient]:
    """A sync client of ``module_daemon`` (no auto-start), closed after the test."""
    with module_daemon.client() as c:
        yield c


@pytest.fixture
def sid() -> str:
    """A session id no other test uses, for a test on ``module_daemon``."""
    return f"t-{uuid.uuid4().hex[:16]}"
