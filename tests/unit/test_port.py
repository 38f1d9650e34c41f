"""Every port has the verbs of ``storage/port.py``'s Protocol, with its parameters and answers.

The SQL ports' verbs (``storage/sql/port.py``, both backends) are coroutines, which mypy cannot hold
against a Protocol typed by answers, so this test does: same names, same parameters with the same
annotations, same return annotation, each an ``async def``. The reference backend's
(``storage/memory/``) is synchronous: mypy proves it conforms.
"""

from __future__ import annotations

import inspect

import pytest

from claw_sessiond.storage.memory.port import MemoryPort
from claw_sessiond.storage.port import Port
from claw_sessiond.storage.postgres.port import PostgresPort
from claw_sessiond.storage.sqlite.port import SQLitePort


def _verbs(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(fn)
        for name, fn in inspect.getmembers(cls)
        if inspect.isfunction(fn) and not name.startswith("_") and name != "as_port"
    }


PROTOCOL = _verbs(Port)


def test_the_protocol_has_the_core_verbs() -> None:
    for verb in ("session_row", "ensure_session", "stored_request", "remember", "insert_event", "insert_entries"):
        assert verb in PROTOCOL


@pytest.mark.parametrize("port", [SQLitePort, PostgresPort, MemoryPort], ids=["sqlite", "postgres", "memory"])
def test_a_port_has_exactly_the_protocols_verbs_with_its_signatures(port: type) -> None:
    verbs = _verbs(port)
    assert sorted(verbs) == sorted(PROTOCOL)
    for name, signature in PROTOCOL.items():
        assert verbs[name] == signature, name


def test_the_sql_verbs_are_coroutines_and_the_reference_ones_are_not() -> None:
    """SQLite's verbs are PostgreSQL's, written once (``storage/sql/port.py``): coroutines, which ``run_sync`` runs
    to their end at once on the writer thread."""
    for name in PROTOCOL:
        assert inspect.iscoroutinefunction(getattr(PostgresPort, name)), name
        assert inspect.iscoroutinefunction(getattr(SQLitePort, name)), name
        assert not inspect.iscoroutinefunction(getattr(MemoryPort, name)), name
