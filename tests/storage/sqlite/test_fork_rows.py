"""ForkSession in SQLite, row by row: the event columns an entry carries beside its payload are copied.

The item bytes, format tag and client id of an entry live in ``events`` columns (schema v4). Until
Append writes them, this test puts them into the stored rows directly (the storage closed), then
forks through the interface and reads the fork's rows back: every column byte for byte, and the
tool-call index at the new positions with no run ownership.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from claw_sessiond.config import Config
from claw_sessiond.events import encode_message
from claw_sessiond.model import Message, ToolCall
from claw_sessiond.storage import open_storage
from claw_sessiond.validate import prepare_append
from claw_sessiond.validate_sessions import prepare_fork
from tests.helpers.sqlite_file import db_path, read_only

COLUMNS = "type, trace_id, ts, schema_version, payload, format, item, client_id"


def _job(session_id: str, *messages: Message, run_id: str = ""):  # type: ignore[no-untyped-def]
    return prepare_append(
        session_id,
        list(messages),
        expected_last_position=0,
        request_id="",
        workdir="",
        run_id=run_id,
        trace_id="t",
        max_message_bytes=1 << 20,
        max_batch_messages=100,
    )


async def test_a_fork_copies_every_column_of_its_entries(tmp_path: Path) -> None:
    (tmp_path / ".claw").mkdir(mode=0o700)
    config = Config(workspace=tmp_path)
    store = await open_storage(config)
    await store.append(_job("src", Message("user", "q"), Message("assistant", tool_calls=(ToolCall("c1", "b", "{}"),))))
    await store.close()
    item = bytes(range(256)) * 3
    with contextlib.closing(sqlite3.connect(db_path(tmp_path))) as conn, conn:
        conn.execute(
            "UPDATE events SET format = 'raw.bytes', item = ?, client_id = 'client-1' WHERE position = 2", (item,)
        )
        conn.execute("UPDATE events SET format = 'x.json', item = CAST('{}' AS BLOB) WHERE position = 1")
    store = await open_storage(config)
    try:
        run = store.runs.register("src", 1, "live")
        await store.append(
            _job("src", Message("assistant", tool_calls=(ToolCall("c2", "b", "{}"),)), run_id=run.run_id)
        )
        await store.append(_job("src", Message("tool", "r1", tool_call_id="c1")))
        job = prepare_fork("src", "dst", up_to_position=4, workdir="", labels=None, request_id="", trace_id="f")
        assert (await store.fork_session(job)).entries_copied == 4
        with read_only(db_path(tmp_path)) as conn:
            src = conn.execute(
                f"SELECT {COLUMNS} FROM events WHERE session_id = 'src' AND position IS NOT NULL ORDER BY position"
            ).fetchall()
            dst = conn.execute(
                f"SELECT {COLUMNS} FROM events WHERE session_id = 'dst' AND position IS NOT NULL ORDER BY position"
            ).fetchall()
            calls = conn.execute(
                "SELECT call_id, assistant_position, call_index, result_position, run_id FROM tool_calls "
                "WHERE session_id = 'dst' ORDER BY call_id"
            ).fetchall()
        assert dst == src and dst[1][6] == item and dst[1][7] == "client-1"
        assert calls == [("c1", 2, 0, 4, ""), ("c2", 3, 0, None, "")]  # c2's live run stays the source's
        loaded = await store.load("dst", "/w", "t")  # so the fork's Load repairs c2: no live run owns it there
        assert [r.tool_call_id for r in loaded.repairs] == ["c2"]
        assert [c.tool_call_id for c in (await store.load("src", "/w", "t", repair=False)).in_flight] == ["c2"]
    finally:
        await store.close()


async def test_a_forked_result_that_superseded_a_repair_keeps_its_payload_as_written_less_the_mark(
    tmp_path: Path,
) -> None:
    (tmp_path / ".claw").mkdir(mode=0o700)
    store = await open_storage(Config(workspace=tmp_path))
    try:
        await store.append(_job("src", Message("assistant", tool_calls=(ToolCall("c1", "b", "{}"),))))
        assert [r.position for r in (await store.load("src", "/w", "t")).repairs] == [2]
        await store.append(_job("src", Message("tool", "late ü", tool_call_id="c1", name="b")))  # supersedes 2
        job = prepare_fork("src", "dst", up_to_position=0, workdir="", labels=None, request_id="", trace_id="f")
        assert (await store.fork_session(job)).entries_copied == 2
        with read_only(db_path(tmp_path)) as conn:
            (source,) = conn.execute("SELECT payload FROM events WHERE session_id = 'src' AND position = 3").fetchone()
            (copy,) = conn.execute("SELECT payload FROM events WHERE session_id = 'dst' AND position = 2").fetchone()
        assert source.endswith(', "supersedes": 2}')
        # As Append spells a result that supersedes nothing (UTF-8 kept, the usual separators).
        assert copy == source.removesuffix(', "supersedes": 2}') + "}"
        assert copy == encode_message(Message("tool", "late ü", tool_call_id="c1", name="b"))
    finally:
        await store.close()
