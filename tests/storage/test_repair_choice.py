"""A Load's repair under either backend's choice (``storage/loading.py``, ``LoadHost.repairs_ahead``), on each backend.

In service SQLite plans a repair from the snapshot and writes it in paced chunks, and
PostgreSQL plans it again under the session's row lock in one transaction. The sequence and
both ports must repair alike under the other choice too: the choice is a cost, never a
behaviour (and a third backend may take either). This also runs the verbs only the other
choice asks (PostgreSQL's ``still_open`` and ``owned_open_calls``; SQLite's re-planning path).
"""

from __future__ import annotations

import pytest

from claw_sessiond.model import Message, ToolCall
from claw_sessiond.repair import REPAIR_CHUNK
from claw_sessiond.storage import Storage
from tests.storage._support import append, assistant, event_types, history, result, user

_CALLS = 2 * REPAIR_CHUNK + 44  # three chunks when planned ahead


@pytest.mark.parametrize("ahead", [True, False], ids=["ahead", "under-lock"])
async def test_either_choice_repairs_a_large_history_alike(
    storage: Storage, monkeypatch: pytest.MonkeyPatch, ahead: bool
) -> None:
    monkeypatch.setattr(storage.engine, "repairs_ahead", ahead)
    ids = [f"c-{i}" for i in range(_CALLS)]
    await append(storage, "s", user("q"), assistant(*ids), result("c-7", "real"), user("later"))
    loaded = await storage.load("s", "/w", "t")
    repaired = [i for i in ids if i != "c-7"]
    assert [r.tool_call_id for r in loaded.repairs] == repaired
    assert [r.position for r in loaded.repairs] == list(range(5, 5 + len(repaired)))
    assert {r.assistant_position for r in loaded.repairs} == {2}
    assert loaded.session.last_position == 4 + len(repaired)
    messages = await history(storage, loaded)
    tools = messages[2 : 2 + _CALLS]
    assert [m.tool_call_id for m in tools] == ["c-7", *repaired]
    assert [m.synthetic_reason for m in tools] == ["", *["interrupted"] * len(repaired)]
    assert messages[-1].content == "later" and len(messages) == 3 + _CALLS
    again = await storage.load("s", "/w", "t2")
    assert again.repairs == []
    assert (await event_types(storage, "s")).count("repair") == len(repaired)


@pytest.mark.parametrize("ahead", [True, False], ids=["ahead", "under-lock"])
async def test_either_choice_leaves_a_pending_call_in_flight(
    storage: Storage, monkeypatch: pytest.MonkeyPatch, ahead: bool
) -> None:
    monkeypatch.setattr(storage.engine, "repairs_ahead", ahead)
    waits = Message("assistant", "", (ToolCall("waits", "deploy", "{}", pending=True),))
    await append(storage, "s", assistant("open"), waits)
    loaded = await storage.load("s", "/w", "t")
    assert [r.tool_call_id for r in loaded.repairs] == ["open"]
    assert [(f.tool_call_id, f.run_id) for f in loaded.in_flight] == [("waits", "")]
