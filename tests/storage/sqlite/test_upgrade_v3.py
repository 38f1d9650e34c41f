"""A database and an export written by the version before issue 14 (schema 3) work with this one.

Both were written by the code of :data:`SCHEMA_3_COMMIT` with its own daemon and client
(tests/storage/sqlite/fixtures/make_fixtures.py, ``V3``):

- "chat": system "be brief", user "list the files" (request id "req-v3"), an assistant
  calling call-1 (bash), its result "a.txt b.txt", an assistant "two files" calling call-2,
  user "never mind", a Load that repaired call-2 (position 7), an assistant calling call-3
  (left open), usage 100/20 tokens and 1500 micro-USD (model m1, pricing 2026-01) and 7
  tokens (model m2), a permission denial;
- "cleared": user "said before the clear", a clear, user "said after the clear";
- ``schema-v3.export.jsonl``: that version's export of both.

The upgrade runs in place when this daemon opens the file; what was stored still loads,
and the new entry features work on the upgraded sessions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.storage.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from claw_sessiond_client import AlreadyExistsError, EntryUsage, Message, ModelUsage, PreconditionError, Usage
from tests.helpers.daemon import DaemonProcess
from tests.helpers.sqlite_file import OLD_DATABASES, db_path, install_old_database, read_only

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)

#: The last commit with schema version 3 (before items, client ids, edits and session state).
SCHEMA_3_COMMIT = "6f8a5df"
EXPORT = OLD_DATABASES / "schema-v3.export.jsonl"


def _roles(messages: list[Message]) -> list[tuple[int, str, str]]:
    return [(m.position, m.role, m.tool_call_id or m.content[:20]) for m in messages]


@pytest.fixture
def upgraded(spawn_daemon: Any, workspace: Path) -> DaemonProcess:
    install_old_database(workspace, "schema-v3.sessions.db")
    with read_only(db_path(workspace)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
    # Keep request records forever: the fixture's were written when it was made, and a retry must
    # replay them however long ago that was (the default window would prune them a day later).
    daemon: DaemonProcess = spawn_daemon("--request-id-retention-s", "0")
    return daemon


def test_the_upgrade_runs_in_place_and_everything_still_loads(upgraded: DaemonProcess, workspace: Path) -> None:
    with upgraded.client() as c:
        assert c.stats()["schema_version"] == SCHEMA_VERSION >= 4
        retry = c.append("chat", [Message.system("be brief"), Message.user("list the files")], request_id="req-v3")
        assert retry.replayed and (retry.first_position, retry.last_position) == (1, 2)
        loaded = c.load("chat", "/w", repair=False)
        assert _roles(loaded.messages) == [
            (1, "system", "be brief"),
            (2, "user", "list the files"),
            (3, "assistant", ""),
            (4, "tool", "call-1"),
            (5, "assistant", "two files"),
            (7, "tool", "call-2"),
            (6, "user", "never mind"),
            (8, "assistant", ""),
        ]
        assert loaded.messages[5].synthetic and loaded.complete
        assert [m.format for m in loaded.messages] == [""] * 8
        repaired = c.load("chat", "/w")
        assert [r.tool_call_id for r in repaired.repairs] == ["call-3"]
        assert c.usage("chat").total == Usage(107, 20, 0, 0, 1500, "USD")
        assert c.usage("chat").by_model == [
            ModelUsage("m1", "2026-01", Usage(100, 20, 0, 0, 1500, "USD")),
            ModelUsage("m2", "", Usage(7, 0, 0, 0, 0, "")),
        ]
        assert [m.content for m in c.load("cleared", "/w").messages] == ["said after the clear"]
        assert [h.session_id for h in c.search("files").hits] == ["chat", "chat"]
    assert upgraded.terminate() == 0
    with read_only(db_path(workspace)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        recorded = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert recorded == [(m.version, m.name) for m in MIGRATIONS]


def test_new_entries_work_on_an_upgraded_session(upgraded: DaemonProcess, workspace: Path) -> None:
    with upgraded.client() as c:
        c.load("chat", "/w")  # repairs call-3 (position 9)
        c.append(
            "chat",
            [
                Message.user("and now?", client_id="u-10", metadata='{"ui": "web"}'),
                Message.other("openai.responses", b'{"type":"reasoning"}', client_id="r-11"),
                Message.assistant("done", usage=EntryUsage(3, 4, cost_micros=5, currency="USD", model="m1")),
            ],
        )
        tail = c.load("chat", "/w", last=3)
        assert [(m.position, m.role, m.client_id) for m in tail.messages] == [
            (10, "user", "u-10"),
            (11, "other", "r-11"),
            (12, "assistant", ""),
        ]
        assert not tail.complete and tail.start_position == 10
        assert c.usage("chat").total == Usage(110, 24, 0, 0, 1505, "USD")
        with pytest.raises(AlreadyExistsError):
            c.append("chat", Message.user("again", client_id="u-10"))
        with pytest.raises(PreconditionError):  # the session's currency stays USD
            c.append("chat", Message.user("x", usage=EntryUsage(cost_micros=1, currency="EUR")))
        windows = c.load("chat", "/w", after_position=6)
        # 7 (the repair of call-2, made at 5) leads: in the full order it follows 5, before 6
        assert [m.position for m in windows.messages] == [7, 8, 9, 10, 11, 12]
        windows = c.load("chat", "/w", after_position=5)
        assert [m.position for m in windows.messages] == [7, 6, 8, 9, 10, 11, 12]
        (other,) = [line for line in c.export("chat") if '"type":"other_entry"' in line]
        assert '"format":"openai.responses","item_b64":"eyJ0eXBlIjoicmVhc29uaW5nIn0="}' in other


def test_an_export_written_by_the_previous_version_imports_unchanged(daemon: DaemonProcess, workspace: Path) -> None:
    old = EXPORT.read_text(encoding="utf-8").splitlines()
    with daemon.client() as c:
        results = c.import_lines(old)
        assert [(r.session_id, r.events_imported) for r in results] == [("chat", 11), ("cleared", 3)]
        assert list(c.export()) == old  # byte for byte the same lines
        assert c.usage("chat").total == Usage(107, 20, 0, 0, 1500, "USD")
        assert [r.tool_call_id for r in c.load("chat", "/w").repairs] == ["call-3"]


def test_the_fixture_files_are_the_ones_described() -> None:
    assert EXPORT.exists() and (OLD_DATABASES / "schema-v3.sessions.db").exists()
    text = (Path(__file__).parent / "fixtures" / "make_fixtures.py").read_text()
    assert f'("{SCHEMA_3_COMMIT}", "schema-v3.sessions.db", V3)' in text
