"""Bytes and None reach SQLite as they are: the SQLite backend binds them through adapters returning
the value itself (``storage/sqlite/files.py``), so a stored item, encoded form or NULL is unchanged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from claw_sessiond.storage.sqlite.files import open_write_connection


def test_the_backend_adapters_return_bytes_and_none_themselves() -> None:
    adapt = sqlite3.adapters
    for value in (b"", b"\x00item\xff", b"x" * 70_000):
        assert adapt[(bytes, sqlite3.PrepareProtocol)](value) is value
    assert adapt[(type(None), sqlite3.PrepareProtocol)](None) is None


def test_bytes_none_and_text_are_stored_and_read_back_unchanged(tmp_path: Path) -> None:
    conn = open_write_connection(tmp_path / "binds.db", 1000)
    try:
        conn.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, v)")
        values = [b"", b"\x00item\xff", b"x" * 70_000, None, "text \x00 with NUL", 7, bytearray(b"ba")]
        conn.executemany("INSERT INTO t(k, v) VALUES (?, ?)", enumerate(values))
        rows = conn.execute("SELECT v, typeof(v) FROM t ORDER BY k").fetchall()
    finally:
        conn.close()
    assert [r[0] for r in rows] == [b"", b"\x00item\xff", b"x" * 70_000, None, "text \x00 with NUL", 7, b"ba"]
    assert [r[1] for r in rows] == ["blob", "blob", "blob", "null", "text", "integer", "blob"]
