"""A database whose rows held each item twice (schema 6) Loads and exports byte for byte as it did; from schema 7
an item is stored once.

Written by the code of :data:`SCHEMA_6_COMMIT` with its own daemon and client
(tests/storage/sqlite/fixtures/make_fixtures.py, ``V6``): session "items" holds 200 Responses items
(``Message.other``, the item the last field of the encoded form), a user with an item, an item with a client
id and metadata (fields after the item), an assistant with an item, usage and a call that a Load repaired, the
call's result with an item (it superseded the repair: a payload the write changed), a plain user and a
binary item. ``schema-v6.loads.json`` holds that version's raw Load replies (whole, bounded, items alone) and
its export of the session.

The upgrade adds ``events.item_at`` and rewrites nothing: old rows keep their whole encoded form (``item_at``
NULL) and are read as they are. Entries appended after it store their form less the item's bytes, and a read
puts the row's item back in at ``item_at``: a Load sends the same bytes as the form encoded on the fly.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Final

import pytest

from claw_sessiond.storage.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from claw_sessiond_client import EntryUsage, Message, ToolCall
from tests.helpers.daemon import DaemonProcess
from tests.helpers.raw_loads import raw_loads
from tests.helpers.sqlite_file import OLD_DATABASES, db_path, install_old_database, read_only

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)

#: The last commit with schema version 6 (an entry's item in its row twice).
SCHEMA_6_COMMIT: Final = "1c338cd"
RECORDED: Final = OLD_DATABASES / "schema-v6.loads.json"
F: Final = "openai.responses"
#: The Loads the fixture recorded, by name: (session, extra LoadRequest fields).
READS: Final = {
    "full": ("items", {}),
    "last3": ("items", {"last": 3}),
    "after190": ("items", {"after_position": 190}),
    "items": ("items", {"items_format": F}),
}
#: The fixture's last position in "items" (the repair of call-1 included).
OLD_LAST: Final = 207


@pytest.fixture
def upgraded(spawn_daemon: Any, workspace: Path) -> DaemonProcess:
    install_old_database(workspace, "schema-v6.sessions.db")
    with read_only(db_path(workspace)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 6
        assert conn.execute("SELECT max(position) FROM events WHERE session_id = 'items'").fetchone()[0] == OLD_LAST
    daemon: DaemonProcess = spawn_daemon()
    return daemon


def test_an_upgraded_database_loads_and_exports_byte_for_byte_as_before(
    upgraded: DaemonProcess, workspace: Path
) -> None:
    want = json.loads(RECORDED.read_text(encoding="utf-8"))
    with upgraded.client() as c:
        assert c.stats()["schema_version"] == SCHEMA_VERSION == 7
        assert list(c.export("items")) == want.pop("export")
    assert raw_loads(upgraded.address, READS) == want
    assert upgraded.terminate() == 0
    with read_only(db_path(workspace)) as conn:
        recorded = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        rows = conn.execute("SELECT count(*), count(encoded), count(item_at) FROM events").fetchone()
    assert recorded == [(m.version, m.name) for m in MIGRATIONS]
    assert rows[0] > 200 and rows[1] > 200 and rows[2] == 0  # no rewrite: old rows keep their whole form


def _append_every_shape(c: Any) -> None:
    """After the upgrade: entries of every shape the fixture holds, on top of its history."""
    c.append("items", [Message.other(F, b'{"type":"message","content":"new %d"}' % i) for i in range(300)])
    c.append("items", Message.user("hi again", format=F, item=b'{"role":"user","content":"hi again"}'))
    c.append("items", Message.other(F, b'{"type":"reasoning","n":2}', client_id="r-2", metadata='{"ui": "cli"}'))
    c.append(
        "items",
        Message.assistant(
            "",
            [ToolCall("call-2", "look", "{}")],
            format=F,
            item=b'{"type":"function_call","n":2}',
            usage=EntryUsage(1),
        ),
    )
    assert [r.tool_call_id for r in c.load("items", "/w").repairs] == ["call-2"]
    c.append("items", Message.tool("call-2", "late again", format=F, item=b'{"type":"function_call_output","n":2}'))
    c.append("items", [Message.user("plain again"), Message.other(F, b"\xff\x00" * 300)])


def test_items_appended_after_the_upgrade_are_stored_once_and_load_as_encoded_on_the_fly(
    upgraded: DaemonProcess, spawn_daemon: Any, workspace: Path
) -> None:
    with upgraded.client() as c:
        before = c.load("items", "/w", repair=False).messages
        _append_every_shape(c)
        after = c.load("items", "/w", repair=False).messages
    reads = {**READS, "new": ("items", {"after_position": OLD_LAST})}
    stored = raw_loads(upgraded.address, reads)
    assert upgraded.terminate() == 0
    with read_only(db_path(workspace)) as conn:
        rows = conn.execute(
            "SELECT position, item, encoded, item_at FROM events WHERE session_id = 'items' AND encoded IS NOT NULL"
        ).fetchall()
    new = [r for r in rows if r[0] > OLD_LAST]
    assert len(new) == 306  # every appended entry stored its form (the repair is encoded when loaded)
    for _position, item, encoded, item_at in new:
        if item:  # the item's bytes are in the row once: in ``item``, not in the form
            assert item_at is not None and item not in encoded
        else:
            assert item_at is None
    assert sum(1 for r in new if r[1] and r[3] != len(r[2])) == 3  # fields after the item: client id, usage, supersedes
    assert all(r[3] is None and r[1] in r[2] for r in rows if r[0] <= OLD_LAST and r[1])  # old rows: whole forms
    # The forms erased: a Load encodes every entry on the fly, and must send the very same bytes.
    with sqlite3.connect(db_path(workspace)) as conn:
        conn.execute("UPDATE events SET encoded = NULL, item_at = NULL")
    again = spawn_daemon()
    assert raw_loads(again.address, reads) == stored
    with again.client() as c:
        assert c.load("items", "/w", repair=False).messages == after
    assert after[: len(before)] == before and after[-1].item == b"\xff\x00" * 300
    assert [m.client_id for m in after if m.client_id] == ["r-1", "r-2"]


def test_the_fixture_files_are_the_ones_described() -> None:
    assert RECORDED.exists() and (OLD_DATABASES / "schema-v6.sessions.db").exists()
    text = (Path(__file__).parent / "fixtures" / "make_fixtures.py").read_text()
    assert f'("{SCHEMA_6_COMMIT}", "schema-v6.sessions.db", V6)' in text
