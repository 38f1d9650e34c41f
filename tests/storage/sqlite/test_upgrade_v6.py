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

With the daemon down, the offline views (``SQLiteStorage.open_read_only``: show, ls, export, search) read the
file of schema 6 as it is (no ``item_at``, nothing migrated) and give what that version gave.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any, Final

import pytest

from claw_sessiond.cli.offline import OfflineClient
from claw_sessiond.entries import check_items_format, check_load_window
from claw_sessiond.model import HistoryCursor
from claw_sessiond.rpc.convert import session_pb
from claw_sessiond.rpc.loading import item_chunks, message_chunks, one_page
from claw_sessiond.rpc.service import _items_of
from claw_sessiond.storage import open_read_only
from claw_sessiond.storage.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from claw_sessiond.storage.store import Storage
from claw_sessiond_client import EntryUsage, Message, ToolCall
from claw_sessiond_client._responses import message_of
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from tests.helpers.cli import in_workspace, in_workspace_json
from tests.helpers.daemon import DaemonProcess
from tests.helpers.raw_loads import TRACE, raw_loads
from tests.helpers.sqlite_file import OLD_DATABASES, db_path, file_digests, install_old_database, read_only

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


async def _offline_loads(store: Storage) -> dict[str, list[str]]:
    """:data:`READS` as the daemon answers them (``rpc/service.py``'s Load: its chunks, from the store's reads
    for a reply), each chunk serialized again by protobuf as :func:`~tests.helpers.raw_loads.raw_loads` does."""
    out: dict[str, list[str]] = {}
    for name, (sid, extra) in READS.items():
        window = check_load_window(extra.get("last", 0), extra.get("after_position", 0), "")
        item_format = check_items_format(extra.get("items_format", ""))
        result = await store.load(
            sid, "/w", TRACE, repair=False, window=window, reply_only=True, items_format=item_format
        )
        first = pb.LoadResponse(complete=result.complete, session=session_pb(result.session), trace_id=TRACE)
        if item_format:
            chunks = item_chunks(first, _items_of(store, result, item_format))
        else:
            pages = store.history_pages(result.cursor) if result.cursor is not None else one_page(result.messages)
            chunks = message_chunks(first, pages)
        out[name] = [pb.LoadResponse.FromString(c).SerializeToString().hex() async for c in chunks]
    return out


async def _paged(store: Storage, session_id: str, reply_only: bool) -> list[Any]:
    """The whole visible history of a session never cleared by the page reads (``Storage.history_pages``: a
    Load's cursor)."""
    result = await store.load(session_id, "/w", TRACE, repair=False)
    s = result.session
    cursor = HistoryCursor(session_id, s.created_at, 0, s.last_position, reply_only=reply_only)
    async with contextlib.aclosing(store.history_pages(cursor)) as pages:
        return [m async for page in pages for m in page]


async def _loaded(store: Storage, reply_only: bool, window: Any = None) -> list[Any]:
    """The messages of a Load of "items" without repair: its first page, then its cursor's."""
    result = await store.load("items", "/w", TRACE, repair=False, window=window, reply_only=reply_only)
    if result.cursor is None:
        return list(result.messages)
    async with contextlib.aclosing(store.history_pages(result.cursor)) as pages:
        return [*result.messages, *[m async for page in pages for m in page]]


async def _read_only_reads(db: Path) -> dict[str, Any]:
    """Every read of the offline views on ``db`` opened read-only."""
    store = await open_read_only(db)
    r1 = check_load_window(0, 0, "", client_ids=["r-1"], max_ids=10)
    try:
        return {
            "loads": await _offline_loads(store),
            "whole": await _loaded(store, reply_only=False),
            "paged": await _paged(store, "items", reply_only=False),
            "paged_reply": await _paged(store, "items", reply_only=True),
            "r-1": await _loaded(store, reply_only=False, window=r1),
            "r-1_reply": await _loaded(store, reply_only=True, window=r1),
        }
    finally:
        await store.close()


def test_a_database_of_schema_6_opened_read_only_reads_as_that_version_did_and_is_left_as_it_was(
    tmp_path: Path,
) -> None:
    """No daemon: the offline views' store (``open_read_only``) on a copy of the fixture. Every read (whole, for a
    reply, by pages, by client id, the items alone, search, export) gives what 1c338cd gave, and the file is
    unchanged (nothing migrated: no ``item_at``)."""
    install_old_database(tmp_path, "schema-v6.sessions.db")
    db = db_path(tmp_path)
    before = file_digests(db)
    want = json.loads(RECORDED.read_text(encoding="utf-8"))
    got = asyncio.run(_read_only_reads(db))
    assert got["loads"] == {name: want[name] for name in READS}  # the reply bytes of 1c338cd's Loads
    recorded = [message_of(m) for m in pb.LoadResponse.FromString(bytes.fromhex(want["full"][0])).messages]
    assert len(recorded) == OLD_LAST - 1  # every entry but the repair's (hidden behind the late result)
    with OfflineClient(tmp_path) as view:
        shown = view.load("items", repair=False).messages
        assert shown == recorded
        assert list(view.export("items")) == want["export"]
        found = view.search("late")
        assert [(h.session_id, h.position) for h in found.hits] == [("items", shown[-3].position)]
    positions = [m.position for m in recorded]
    for name in ("paged", "paged_reply"):
        assert [m.position for m in got[name]] == positions, name
    assert [m.position for m in got["whole"]] == positions
    assert (
        [m.encoded for m in got["paged"]]
        == [m.encoded for m in got["whole"]]
        == [m.encoded for m in got["paged_reply"]]
    )
    assert [m.item for m in got["paged"]] == [m.item for m in shown]
    (r1,) = [m for m in recorded if m.client_id == "r-1"]
    assert [m.position for m in got["r-1"]] == [m.position for m in got["r-1_reply"]] == [r1.position]
    assert got["r-1"][0].item == r1.item and got["r-1"][0].encoded == got["r-1_reply"][0].encoded
    assert file_digests(db) == before, "a read-only view changed the database"
    with read_only(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 6


def test_the_offline_cli_shows_exports_and_searches_a_database_of_schema_6_as_the_upgraded_daemon(
    spawn_daemon: Any, workspace: Path
) -> None:
    """The CLI with no daemon on a file of schema 6, then the daemon that upgrades it: the same answers, and the
    export is 1c338cd's."""
    install_old_database(workspace, "schema-v6.sessions.db")
    db = db_path(workspace)
    before = file_digests(db)
    offline = {
        args: in_workspace(workspace, *args)
        for args in (("show", "items", "--json"), ("search", "late", "--json"), ("export", "items"))
    }
    for proc in offline.values():
        assert proc.returncode == 0 and "no daemon running; read-only view" in proc.stderr, proc.stderr
    assert file_digests(db) == before, "an offline read changed the database"
    want = json.loads(RECORDED.read_text(encoding="utf-8"))["export"]
    assert offline[("export", "items")].stdout.splitlines() == want
    daemon: DaemonProcess = spawn_daemon()
    for args in (("show", "items"), ("search", "late")):
        assert json.loads(offline[(*args, "--json")].stdout) == in_workspace_json(workspace, *args), args
    assert daemon.terminate() == 0


def test_the_fixture_files_are_the_ones_described() -> None:
    assert RECORDED.exists() and (OLD_DATABASES / "schema-v6.sessions.db").exists()
    text = (Path(__file__).parent / "fixtures" / "make_fixtures.py").read_text()
    assert f'("{SCHEMA_6_COMMIT}", "schema-v6.sessions.db", V6)' in text
