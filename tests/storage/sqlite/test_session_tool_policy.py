"""The session's tool policy as SQLite stores it (``sessions.tool_policy``, JSON), and a Load that writes nothing.

CreateSession / UpdateSession set the column; here it is written directly (the storage closed), in the
JSON shape they write (``policy.policy_json``), to pin what Append and Load do with it. The look-only Load is
checked on the file itself: neither ``PRAGMA data_version`` (seen from another connection) nor the bytes of
the database and its WAL change, through a real daemon on a real socket.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from claw_sessiond.config import Config
from claw_sessiond.errors import InvalidRequestError, Reason
from claw_sessiond.model import InFlightCall, Message, Repair, ToolCall
from claw_sessiond.policy import ToolPolicy, policy_json
from claw_sessiond.storage import Storage, open_storage
from claw_sessiond.storage.port import ReadPort
from claw_sessiond.storage.steps import Steps
from claw_sessiond_client import Message as CMessage
from claw_sessiond_client import ToolCall as CToolCall
from claw_sessiond_client import ToolPolicy as CToolPolicy
from tests.helpers.daemon import DaemonProcess
from tests.helpers.sqlite_file import db_path, file_digests, read_only
from tests.storage._support import append, assistant, history, read, result, user
from tests.storage.test_tool_policy import put

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)


async def _open(workspace: Path) -> Storage:
    (workspace / ".claw").mkdir(mode=0o700, parents=True, exist_ok=True)
    return await open_storage(Config(workspace=workspace))


def _set_policy(workspace: Path, session_id: str, policy: ToolPolicy) -> None:
    """What UpdateSession stores (here with the storage closed: never a second writer beside it)."""
    conn = sqlite3.connect(db_path(workspace), isolation_level=None)
    try:
        conn.execute("UPDATE sessions SET tool_policy = ? WHERE session_id = ?", (policy_json(policy), session_id))
    finally:
        conn.close()


async def _with_policy(workspace: Path, session_id: str, policy: ToolPolicy) -> Storage:
    store = await _open(workspace)
    await append(store, session_id, user("hello"))
    await store.close()
    _set_policy(workspace, session_id, policy)
    return await _open(workspace)


def _policy(port: ReadPort, session_id: str) -> Steps[ToolPolicy]:
    return (yield port.session_policy(session_id))  # type: ignore[no-any-return]


async def _stored_policy(store: Storage, session_id: str) -> ToolPolicy:
    """The session's stored tool policy as a Load's snapshot reads it."""
    return await store.engine.load_snapshot(lambda port, _live: _policy(port, session_id))


async def test_the_stored_policy_is_read_back(tmp_path: Path) -> None:
    store = await _with_policy(tmp_path, "s", ToolPolicy("off", True, False))
    try:
        assert await _stored_policy(store, "s") == ToolPolicy("off", True, False)
        assert await _stored_policy(store, "never") == ToolPolicy()
    finally:
        await store.close()


async def test_the_session_s_repair_mode_applies_unless_the_call_s_append_set_one(tmp_path: Path) -> None:
    store = await _with_policy(tmp_path, "s", ToolPolicy("drop"))
    try:
        await append(store, "s", assistant("d1"))
        await put(store, "s", assistant("c2"), policy=ToolPolicy("synthesize"))
        await put(store, "s", assistant("o3"), policy=ToolPolicy("off"))
        loaded = await store.load("s", "/w", "t")
        assert loaded.repairs == [Repair("c2", 3, 5)]
        shown = await history(store, loaded)
        assert [(m.position, [c.id for c in m.tool_calls]) for m in shown if m.role == "assistant"] == [
            (3, ["c2"]),
            (4, ["o3"]),
        ]
        assert loaded.session.message_count == 4  # hello, c2, o3, the repair of c2 (d1's entry is hidden)
    finally:
        await store.close()


async def test_the_session_s_allowances_apply_to_every_append(tmp_path: Path) -> None:
    store = await _with_policy(tmp_path, "s", ToolPolicy(allow_orphan_results=True, allow_unparsed_calls=True))
    try:
        await append(store, "s", result("nobody", "orphan"), Message("assistant", "", (ToolCall("", "x", "free"),)))
        shown = await read(store, "s")
        assert [(m.orphan, [c.arguments_not_json for c in m.tool_calls]) for m in shown[1:]] == [
            (True, []),
            (False, [True]),
        ]
    finally:
        await store.close()
    other = await _open(tmp_path)
    try:  # another session has no policy: refused as today
        with pytest.raises(InvalidRequestError) as caught:
            await append(other, "t", Message("assistant", "", (ToolCall("c", "x", "free"),)))
        assert caught.value.reason == Reason.ARGUMENTS_NOT_JSON
    finally:
        await other.close()


async def test_a_pending_call_survives_a_restart_unrepaired(tmp_path: Path) -> None:
    store = await _open(tmp_path)
    await append(store, "s", Message("assistant", "", (ToolCall("p", "deploy", "{}", pending=True),)))
    await store.close()
    again = await _open(tmp_path)
    try:
        loaded = await again.load("s", "/w", "t")
        assert loaded.repairs == [] and loaded.in_flight == [InFlightCall("p", 1, "")]
    finally:
        await again.close()


def test_a_look_only_load_changes_neither_the_data_version_nor_the_files(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path).start()
    try:
        with d.client() as c:
            c.append(
                "s",
                [
                    CMessage.user("q"),
                    CMessage.assistant(tool_calls=[CToolCall("p", "deploy", "{}", pending=True)]),
                    CMessage.assistant(tool_calls=[CToolCall("c", "bash", "{}")]),
                ],
            )
            c.append(
                "s", CMessage.assistant(tool_calls=[CToolCall("d", "bash", "{}")]), tool_policy=CToolPolicy("drop")
            )
            c.append("s", CMessage.assistant(tool_calls=[CToolCall("o", "bash", "{}")]), tool_policy=CToolPolicy("off"))
            db = db_path(tmp_path)
            with read_only(db) as watcher:
                version = watcher.execute("PRAGMA data_version").fetchone()[0]
                digests = file_digests(db)
                for workdir in (str(tmp_path), "/somewhere/else"):  # another workdir is not stored either
                    looked = c.load("s", workdir, no_repair=True)
                    assert looked.repairs == [] and [f.tool_call_id for f in looked.in_flight] == ["p"]
                    assert [t.id for m in looked.messages for t in m.tool_calls] == ["p", "c", "o"]
                    c.load("never-stored", workdir, no_repair=True)
                assert watcher.execute("PRAGMA data_version").fetchone()[0] == version
                assert file_digests(db) == digests
                # The check can fail: a Load that repairs commits, and both move.
                assert [r.tool_call_id for r in c.load("s", str(tmp_path)).repairs] == ["c"]
                assert watcher.execute("PRAGMA data_version").fetchone()[0] != version
                assert file_digests(db) != digests
    finally:
        d.stop()
