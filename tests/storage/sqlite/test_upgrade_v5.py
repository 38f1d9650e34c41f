"""A database written by the version whose search index a trigger kept (schema 5) is searched as before.

Written by the code of :data:`SCHEMA_5_COMMIT` with its own daemon and client
(tests/storage/sqlite/fixtures/make_fixtures.py, ``V5``): "chat" (system, user, an assistant
calling call-1, a user, the repair of call-1), "copy" (its fork, then a user of its own, then
replaced by an import of its own export), "gone" (a user, a clear).

The upgrade drops the insert trigger (schema 6): from then on each verb that inserts history
entries indexes them itself. The rows already stored stay indexed; FTS5's ``integrity-check``
(which compares the index with the content it is built from, row by row) proves that every
message row, old or new, is in the index and nothing else is.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.storage.sqlite.schema import INDEXED_TYPES, MIGRATIONS, SCHEMA_VERSION
from claw_sessiond_client import EntryUsage, Message, ToolCall
from tests.helpers.daemon import DaemonProcess
from tests.helpers.sqlite_file import db_path, install_old_database, read_only

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)

#: The last commit with schema version 5 (the search index kept by a trigger).
SCHEMA_5_COMMIT = "671516c"


def _triggers(path: Path) -> list[str]:
    with read_only(path) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'trigger' ORDER BY name")]


def _index_matches_the_log(path: Path, tmp: Path) -> None:
    """FTS5's own check of the index against its content (raises on any row missing or extra), on a copy."""
    copy = tmp / "check.db"
    shutil.copyfile(path, copy)
    with sqlite3.connect(copy) as conn:
        conn.execute("INSERT INTO message_fts(message_fts) VALUES ('integrity-check')")
        indexed = conn.execute(f"SELECT count(*) FROM events WHERE type IN {INDEXED_TYPES}").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM message_fts").fetchone()[0] == indexed


@pytest.fixture
def upgraded(spawn_daemon: Any, workspace: Path) -> DaemonProcess:
    install_old_database(workspace, "schema-v5.sessions.db")
    with read_only(db_path(workspace)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 5
    assert _triggers(db_path(workspace)) == ["message_fts_delete", "message_fts_insert"]
    daemon: DaemonProcess = spawn_daemon()
    return daemon


def test_every_entry_written_before_and_after_the_upgrade_is_searchable(
    upgraded: DaemonProcess, workspace: Path, tmp_path: Path
) -> None:
    def count(word: str) -> int:
        return len(c.search(word, limit=100).hits)

    with upgraded.client() as c:
        assert c.stats()["schema_version"] == SCHEMA_VERSION
        assert (count("zebra"), count("quokka"), count("pangolin")) == (2, 2, 1)  # indexed by the old trigger
        # Each verb that inserts entries: appends (one entry, many, one split by usage), a repair, a fork, an import.
        c.append("chat", Message.user("a lone ibex"))
        c.append("chat", [Message.user(f"ibex herd member {i}") for i in range(600)])
        c.append(
            "chat",
            [
                Message.assistant("a tapir paid", [ToolCall("call-7", "look", "{}")], usage=EntryUsage(3, 4)),
                Message.user("the tapir again"),
            ],
        )
        assert [r.tool_call_id for r in c.load("chat", "/w").repairs] == ["call-7"]
        c.fork_session("chat", "branch")
        lines = list(c.export("copy"))
        event = json.loads(lines[-1])
        event["payload"]["content"] = "an imported okapi"
        c.import_lines([lines[0], *lines[1:-1], json.dumps(event)], mode="replace")
        c.record_event("chat", "error", {"text": "a dugong in an audit event"})
        assert (count("lone ibex"), count("ibex 0"), count("ibex 599"), count("tapir")) == (2, 2, 2, 4)
        assert count("okapi") == 1
        assert count("pangolin") == 0 and count("dugong") == 0  # replaced; audit events are not history
        assert count("interrupted") == 5  # the repairs of call-1 (chat, copy, branch) and call-7 (chat, branch)
        c.delete("branch")
        assert (count("ibex 599"), count("tapir"), count("zebra"), count("interrupted")) == (1, 2, 2, 3)
    assert upgraded.terminate() == 0
    path = db_path(workspace)
    assert _triggers(path) == ["message_fts_delete"]
    with read_only(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        recorded = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert recorded == [(m.version, m.name) for m in MIGRATIONS]
    _index_matches_the_log(path, tmp_path)
