"""A database written by the version before stored encoded reply forms (schema 4) Loads byte for byte as it did.

Written by the code of :data:`SCHEMA_4_COMMIT` with its own daemon and client
(tests/storage/sqlite/fixtures/make_fixtures.py, ``V4``):

- "chat": system, user (client id, metadata), an assistant calling call-1, its result (non-ASCII text),
  an assistant with usage calling call-2, user "never mind", a Load that repaired call-2, an item
  entry (``openai.responses``), an assistant calling call-3 (left open), two users of which an
  EditTail replaced the last;
- "long": 700 users (more than one page of rows), an assistant calling call-9, 20 users, call-9's
  result (a far result: it comes right after its assistant, pages later);
- "cleared": a user, a clear, a user;
- ``schema-v4.loads.json``: the raw bytes of that version's Load replies (each chunk), full and
  bounded, with a fixed trace id and no repair.

The upgrade adds the column and writes nothing into it (no backfill): old rows are encoded on the
fly. New appends store their form; a Load then sends the same bytes as it does with the forms erased.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.storage.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from claw_sessiond_client import EntryUsage, Message, ToolCall
from tests.helpers.daemon import DaemonProcess
from tests.helpers.raw_loads import raw_loads
from tests.helpers.sqlite_file import OLD_DATABASES, db_path, install_old_database, read_only

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)

#: The last commit with schema version 4 (before stored encoded reply forms).
SCHEMA_4_COMMIT = "ae9f4b7"
LOADS = OLD_DATABASES / "schema-v4.loads.json"
READS: dict[str, dict[str, int]] = {
    "full": {},
    "last3": {"last": 3},
    "after5": {"after_position": 5},
    "after700": {"after_position": 700},
}


def _loads(address: str, sessions: tuple[str, ...]) -> dict[str, list[str]]:
    """Each Load reply's chunks as hex, as the fixture records them."""
    return raw_loads(address, {f"{sid}/{name}": (sid, extra) for sid in sessions for name, extra in READS.items()})


@pytest.fixture
def upgraded(spawn_daemon: Any, workspace: Path) -> DaemonProcess:
    install_old_database(workspace, "schema-v4.sessions.db")
    with read_only(db_path(workspace)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
    daemon: DaemonProcess = spawn_daemon()
    return daemon


def test_an_upgraded_database_loads_byte_for_byte_as_before(upgraded: DaemonProcess, workspace: Path) -> None:
    want = json.loads(LOADS.read_text(encoding="utf-8"))
    assert _loads(upgraded.address, ("chat", "long", "cleared")) == want
    with upgraded.client() as c:
        assert c.stats()["schema_version"] == SCHEMA_VERSION
    assert upgraded.terminate() == 0
    with read_only(db_path(workspace)) as conn:
        recorded = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        stored = conn.execute("SELECT count(*), count(encoded) FROM events").fetchone()
    assert recorded == [(m.version, m.name) for m in MIGRATIONS]
    assert stored[0] > 700 and stored[1] == 0  # no backfill: old rows are encoded when loaded


def test_stored_forms_load_as_the_forms_encoded_on_the_fly(
    upgraded: DaemonProcess, spawn_daemon: Any, workspace: Path
) -> None:
    with upgraded.client() as c:
        c.append(
            "chat",
            [
                Message.user("and now? \u00e9", client_id="u-20", metadata='{"ui": "cli"}'),
                Message.other("openai.responses", b"\x00\xff" * 50, client_id="r-21"),
                Message.assistant(
                    "calls", [ToolCall("call-5", "ls", "{}"), ToolCall("call-6", "cat", '{"path": "\u00e9"}')]
                ),
                Message.tool("call-5", "out", name="ls"),
            ],
        )
        c.append("chat", Message.assistant("priced", usage=EntryUsage(1, 2, cost_micros=3, currency="USD")))
        c.append("chat", [Message.system("new rules"), Message.user("gone soon"), Message.user("gone too")])
        c.edit_tail("chat", remove_last=2, replacements=[Message.user("replaced")])
        c.append("long", [Message.user(f"new {i} " + "y" * 30) for i in range(30)])
        c.clear("cleared")
        c.append("cleared", Message.user("after the second clear"))
    stored = _loads(upgraded.address, ("chat", "long", "cleared"))
    assert upgraded.terminate() == 0
    with sqlite3.connect(db_path(workspace)) as conn:
        count = conn.execute("SELECT count(encoded) FROM events").fetchone()[0]
        assert count >= 40  # the appends stored their forms
        conn.execute("UPDATE events SET encoded = NULL")
    again = spawn_daemon()
    assert _loads(again.address, ("chat", "long", "cleared")) == stored
    with again.client() as c:
        full = c.load("chat", "/w", repair=False).messages
        assert [m.content for m in full[-3:]] == ["priced", "new rules", "replaced"]
        assert full[-4].tool_call_id == "call-5" and full[-5].tool_calls[1].arguments == '{"path": "\u00e9"}'


def test_the_fixture_files_are_the_ones_described() -> None:
    assert LOADS.exists() and (OLD_DATABASES / "schema-v4.sessions.db").exists()
    text = (Path(__file__).parent / "fixtures" / "make_fixtures.py").read_text()
    assert f'("{SCHEMA_4_COMMIT}", "schema-v4.sessions.db", V4)' in text
