"""One statement text for both SQL backends (``storage/sql/dialect.py``): how each dialect renders it.

The statements run against a real SQLite database through the writer's connection shape
(``sqlite/conns.py``); PostgreSQL's rendering is checked as text here and run by the storage
contract suite (``tests/storage``, ``[postgres]``).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from claw_sessiond.model import EntrySelection
from claw_sessiond.storage.postgres.dialect import POSTGRES
from claw_sessiond.storage.sql.dialect import IDS_PER_QUERY
from claw_sessiond.storage.sql.entry_select import select_positions
from claw_sessiond.storage.sqlite.conns import SQLITE, WriterConn
from claw_sessiond.storage.sqlite.schema import migrate

T = TypeVar("T")

NEUTRAL = "SELECT k FROM t WHERE s = $1 AND n > $2 AND k = ANY($3::bigint[]){for_update}"


def _done(coro: Coroutine[Any, Any, T]) -> T:
    """A coroutine that never waits, run to its end (as ``steps.run_sync`` does on the writer thread)."""
    with pytest.raises(StopIteration) as done:
        coro.send(None)
    return done.value.value  # type: ignore[no-any-return]


def test_each_dialect_renders_the_placeholders_the_spots_and_the_list() -> None:
    assert POSTGRES.render(NEUTRAL) == ("SELECT k FROM t WHERE s = $1 AND n > $2 AND k = ANY($3::bigint[]) FOR UPDATE")
    assert SQLITE.render(NEUTRAL) == "SELECT k FROM t WHERE s = ?1 AND n > ?2 AND k IN ({ids})"
    assert SQLITE.render("SELECT '$.x', $10 FROM t") == "SELECT '$.x', ?10 FROM t"  # a JSON path is not a placeholder


def test_a_spot_the_dialect_does_not_name_is_refused() -> None:
    with pytest.raises(KeyError, match="no_such_spot"):
        SQLITE.render("SELECT 1{no_such_spot}")
    with pytest.raises(KeyError, match="no_such_spot"):
        POSTGRES.render("SELECT 1{no_such_spot}")


def test_a_statement_is_rendered_once_and_kept() -> None:
    first = SQLITE.sql[NEUTRAL]
    assert SQLITE.sql[NEUTRAL] is first
    assert SQLITE.sql[NEUTRAL] == SQLITE.render(NEUTRAL)


def test_a_list_longer_than_one_statement_takes_is_read_in_slices_on_sqlite() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (s TEXT, n INTEGER, k INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?)", [("a", k, k) for k in range(3 * IDS_PER_QUERY)])
    db.executemany("INSERT INTO t VALUES (?, ?, ?)", [("b", k, k) for k in range(10)])
    conn = WriterConn(db)
    wanted = list(range(1, 3 * IDS_PER_QUERY + 7, 2))  # 2.5 slices, some not stored
    rows = _done(SQLITE.each(conn, NEUTRAL, wanted, "a", 0))
    assert sorted(r[0] for r in rows) == [k for k in wanted if k < 3 * IDS_PER_QUERY]
    assert _done(SQLITE.each(conn, NEUTRAL, [], "a", 0)) == []


def test_the_writer_connection_answers_at_once_and_counts_changes() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)")
    conn = WriterConn(db)
    insert = SQLITE.sql["INSERT INTO t(v) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id"]
    assert _done(conn.fetchval(insert, "x")) == 1
    assert _done(conn.fetchval(insert, "x")) is None  # nothing inserted, nothing returned
    assert _done(conn.execute(SQLITE.sql["DELETE FROM t WHERE v = $1"], "x")) == 1
    assert asyncio.iscoroutine(coro := conn.fetch("SELECT 1"))
    assert _done(coro) == [(1,)]


class _Recording(WriterConn):
    """The writer's connection, keeping each statement it ran (to ask SQLite for its plan)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self.ran: list[tuple[str, tuple[Any, ...]]] = []

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        self.ran.append((sql, args))
        return await super().fetch(sql, *args)


@pytest.mark.parametrize(
    ("chosen", "plan"),
    [
        (EntrySelection(client_ids=("a", "b"), upto=10), "(session_id=? AND client_id=?)"),
        (EntrySelection(client_id_prefix="a", upto=10), "(session_id=? AND client_id>? AND client_id<?)"),
        (EntrySelection(after=2, upto=10), "(session_id=? AND position>? AND position<?)"),
    ],
)
def test_an_entry_selection_reads_through_the_index_that_bounds_it_on_sqlite(chosen: EntrySelection, plan: str) -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)
    migrate(db)
    conn = _Recording(db)
    assert _done(select_positions(SQLITE, conn, "s", chosen, 5)) == []
    (sql, args), *_ = conn.ran
    detail = [str(r[3]) for r in db.execute("EXPLAIN QUERY PLAN " + sql, args)]
    assert any(d.startswith("SEARCH events USING ") and d.endswith(plan) for d in detail), detail
