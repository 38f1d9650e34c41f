"""The end-to-end suite runs on both storage backends (``tests/helpers/backend.py``).

Every test gets the module-scoped ``backend`` fixture, parametrized ``sqlite`` and ``postgres``
(ids ``[sqlite]``/``[postgres]``; pytest runs a file's SQLite half, then its PostgreSQL half, so
its module fixtures are made once per backend: a module fixture that starts a daemon takes
``backend`` as an argument). A test that runs once says why, with one of two markers, each
needing a reason (a marker without one is a usage error):

- ``sqlite_only(reason)``: about the SQLite file or SQLite's own behaviour (file modes, FTS5's
  raw query syntax, a corrupt ``sessions.db``);
- ``backend_neutral(reason)``: the outcome does not depend on storage (help text, completion
  scripts, packaging, the socket's peer checks) or the test picks its databases itself.

A ``sqlite_only`` test has the id ``[sqlite]``; a ``backend_neutral`` one is not parametrized and
its daemons use SQLite. docs/postgres.md, "What runs where", lists both.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.backend import BACKENDS, database_url_for, selected, use

#: The markers that make a test run on SQLite only, each with a reason.
ONE_BACKEND_MARKERS = ("sqlite_only", "backend_neutral")


def one_backend_marker(node: pytest.Item) -> str | None:
    """The name of the marker that makes ``node`` run once, or None; a marker without a reason is a
    usage error, and so are both markers on one test."""
    found = []
    for name in ONE_BACKEND_MARKERS:
        mark = node.get_closest_marker(name)
        if mark is None:
            continue
        reason = mark.args[0] if mark.args else mark.kwargs.get("reason", "")
        if not (isinstance(reason, str) and reason.strip()):
            raise pytest.UsageError(f"{node.nodeid}: @pytest.mark.{name} needs a reason")
        found.append(name)
    if len(found) > 1:
        raise pytest.UsageError(f"{node.nodeid}: sqlite_only or backend_neutral, not both")
    return found[0] if found else None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Both backends, or ``[sqlite]`` alone for ``sqlite_only``; a ``backend_neutral`` test runs once,
    unparametrized (its daemons use SQLite unless it picks a database itself)."""
    if "backend" not in metafunc.fixturenames:
        return
    marker = one_backend_marker(metafunc.definition)
    if marker == "backend_neutral":
        return
    backends = ["sqlite"] if marker == "sqlite_only" else list(BACKENDS)
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
    """``CLAW_TEST_BACKEND=sqlite|postgres`` keeps that backend's end-to-end tests; the others are
    deselected (not skipped: ``CLAW_FULL=1`` fails a skip)."""
    _check_wider_fixtures(items)
    keep = selected()
    if keep == BACKENDS:
        return
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("backend") if callspec is not None else None
        (dropped if backend is not None and backend not in keep else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


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
