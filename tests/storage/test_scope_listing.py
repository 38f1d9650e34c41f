"""Listing and storing shared scope states verbatim (what ``claw-sessiond copy`` uses): the storage contract.

States are written by UpdateSession's deltas (as a daemon writes them) and by ``put_scope_states``, and
read back through the interface only: ``list_scope_states`` and ``scope_states``.
"""

from __future__ import annotations

import json
from pathlib import Path

from claw_sessiond.state import CreateJob, ScopeState
from claw_sessiond.storage import Storage
from claw_sessiond.validate_sessions import prepare_create, prepare_update
from tests.storage._support import Stores


async def _set(storage: Storage, sid: str, scope: str, value: object) -> None:
    await storage.update_session(
        prepare_update(
            sid,
            state_deltas=[(scope, json.dumps(value))],
            set_labels={},
            remove_labels=[],
            tool_policy=None,
            expected_last_position=0,
            request_id="",
            trace_id="t",
        )
    )


def _new(sid: str) -> CreateJob:
    return prepare_create(sid, workdir="", state="{}", labels={}, tool_policy="{}", request_id="", trace_id="t")


async def _everything(storage: Storage, page: int) -> list[ScopeState]:
    found: list[ScopeState] = []
    after = ""
    for _ in range(100):  # bounded: the test stores far fewer than 100 pages
        rows = await storage.list_scope_states(after, page)
        assert len(rows) <= page
        found.extend(rows)
        if len(rows) < page:
            return found
        after = rows[-1].scope
    raise AssertionError("the listing never ended")


async def test_the_listing_pages_every_stored_scope_in_byte_order(storage: Storage) -> None:
    assert await storage.list_scope_states("", 10) == []
    await storage.create_session(_new("s"))
    names = ["user:w/Bob", "app:w", "user:w/alice", "app:W", "temp-never", "app:w/é", "app:w/z"]
    for i, name in enumerate(names):
        await _set(storage, "s", name, {"i": i})
    listed = await _everything(storage, 3)
    assert [s.scope for s in listed] == sorted(names, key=lambda n: n.encode())
    assert listed == await storage.scope_states([s.scope for s in listed])  # the same rows as GetScopeStates
    assert all(s.updated_at for s in listed)
    assert await storage.list_scope_states(listed[-1].scope, 10) == []
    assert [s.scope for s in await storage.list_scope_states("app:w", 2)] == ["app:w/z", "app:w/é"]


async def test_put_stores_states_verbatim_and_replaces_only_the_scopes_it_names(stores: Stores, tmp_path: Path) -> None:
    storage = await stores.open(tmp_path / "main")
    await storage.create_session(_new("s"))
    await _set(storage, "s", "app:kept", {"k": 1})
    await _set(storage, "s", "app:replaced", {"old": True})
    kept = (await storage.scope_states(["app:kept"]))[0]
    put = [
        ScopeState("app:replaced", '{"new":true}', "2020-01-02T03:04:05.678901Z"),
        ScopeState("user:w/alice", '{"lang":"fr"}', "2019-12-31T23:59:59.000001Z"),
    ]
    await storage.put_scope_states(put)
    await storage.put_scope_states([])
    await stores.close(storage)  # durable: read after a reopen
    again = await stores.open(tmp_path / "main")
    assert await _everything(again, 10) == sorted([kept, *put], key=lambda s: s.scope.encode())
    # a delta after a put merges into the stored state, as into any other
    await _set(again, "s", "user:w/alice", {"n": 2})
    assert json.loads((await again.scope_states(["user:w/alice"]))[0].state) == {"lang": "fr", "n": 2}
