"""EditTail and the erasing Clear meeting a real result that superseded a synthetic repair (every backend).

The rules (docs/api.md, docs/plans/issue-14-design.md): a real result for a call whose only
answer is a synthetic repair supersedes it (the repair is hidden, the result names it); a
removed tool result reopens its call, whatever kind of result it was; an open call that is
not pending is repaired by the next Load. A superseded repair stays hidden: an edit never
brings an entry back. So removing the real result leaves the call open (a second repair at
the next Load, or a new result that pairs without superseding anything), and removing the
repair itself reopens the call the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claw_sessiond.errors import Reason, ToolCallStateError
from claw_sessiond.model import Message
from claw_sessiond.storage import Storage
from claw_sessiond.validate_sessions import prepare_fork
from tests.storage._support import (
    WORKDIR,
    Stores,
    append,
    assistant,
    export_lines,
    history,
    import_lines,
    read,
    renamed,
    result,
    snapshot,
)
from tests.storage.test_edits import edit, erase


def tools(messages: list[Message]) -> list[tuple[int, str, str, int]]:
    """The tool results of a history: (position, content or "synthetic", call id, supersedes)."""
    return [
        (m.position, "synthetic" if m.synthetic_reason else m.content, m.tool_call_id, m.supersedes)
        for m in messages
        if m.role == "tool"
    ]


async def repaired(storage: Storage, session_id: str) -> list[tuple[str, int]]:
    """Load (repairing): the repairs it wrote, as (call id, position)."""
    loaded = await storage.load(session_id, WORKDIR, "t")
    return [(r.tool_call_id, r.position) for r in loaded.repairs]


async def superseded(storage: Storage) -> None:
    """Session "s": a call (1), its repair (2), and the late real result that superseded it (3)."""
    await append(storage, "s", assistant("c1"))
    assert await repaired(storage, "s") == [("c1", 2)]
    late = await append(storage, "s", result("c1", "late"))
    assert late.first_position == 3
    assert tools(await read(storage, "s")) == [(3, "late", "c1", 2)]


async def assert_already_answered(storage: Storage, session_id: str) -> None:
    before = await snapshot(storage, session_id)
    with pytest.raises(ToolCallStateError) as caught:
        await append(storage, session_id, result("c1", "once more"))
    assert caught.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
    assert await snapshot(storage, session_id) == before


async def test_removing_the_result_that_superseded_a_repair_reopens_the_call_once(storage: Storage) -> None:
    await superseded(storage)
    done = await edit(storage, "s", remove_last=1)
    assert [m.position for m in done.removed] == [3] and done.edit_position == 4
    # The superseded repair stays hidden; the call is open and shown without a result.
    assert tools(await read(storage, "s")) == []
    loaded = await storage.load("s", WORKDIR, "t", repair=False)
    assert loaded.session.message_count == 1
    # The next Load repairs it again, once; a second Load writes nothing.
    assert await repaired(storage, "s") == [("c1", 5)]
    assert await repaired(storage, "s") == []
    assert tools(await read(storage, "s")) == [(5, "synthetic", "c1", 0)]
    # The tool's result sent again supersedes the new repair, and only once.
    again = await append(storage, "s", result("c1", "late, again"))
    assert again.first_position == 6
    assert tools(await read(storage, "s")) == [(6, "late, again", "c1", 5)]
    await assert_already_answered(storage, "s")
    assert (await storage.load("s", WORKDIR, "t", repair=False)).session.message_count == 2


async def test_a_result_sent_again_after_the_edit_pairs_with_the_reopened_call(storage: Storage) -> None:
    await superseded(storage)
    await edit(storage, "s", remove_last=1)
    again = await append(storage, "s", result("c1", "late, again"))
    assert again.first_position == 5
    # It answers an open call: it supersedes nothing (the first repair is still hidden).
    assert tools(await read(storage, "s")) == [(5, "late, again", "c1", 0)]
    await assert_already_answered(storage, "s")
    assert await repaired(storage, "s") == []


async def test_an_edit_after_the_call_removes_the_real_result_and_steps_over_the_hidden_repair(
    storage: Storage,
) -> None:
    await superseded(storage)
    done = await edit(storage, "s", result("c1", "replaced"), after=1)
    assert [m.position for m in done.removed] == [3]
    assert tools(await read(storage, "s")) == [(5, "replaced", "c1", 0)]
    await assert_already_answered(storage, "s")
    # Popping the replacement reopens the call again: one repair.
    await edit(storage, "s", remove_last=1)
    assert await repaired(storage, "s") == [("c1", 7)]


async def test_removing_the_repair_reopens_the_call(storage: Storage) -> None:
    await append(storage, "s", assistant("c1"))
    assert await repaired(storage, "s") == [("c1", 2)]
    done = await edit(storage, "s", remove_last=1)
    assert [(m.position, m.synthetic_reason) for m in done.removed] == [(2, "interrupted")]
    # A late result now pairs with the open call (nothing to supersede) ...
    paired = await append(storage, "s", result("c1", "late"))
    assert tools(await read(storage, "s")) == [(paired.first_position, "late", "c1", 0)]
    await assert_already_answered(storage, "s")
    # ... and without it, the next Load repairs the call once more.
    await edit(storage, "s", remove_last=1)
    assert await repaired(storage, "s") == [("c1", 6)]
    assert await repaired(storage, "s") == []


async def test_removing_the_call_with_its_superseding_result_frees_the_id(storage: Storage) -> None:
    await superseded(storage)
    await edit(storage, "s", remove_last=2)  # the assistant and the real result (the repair is hidden)
    assert await read(storage, "s") == []
    with pytest.raises(ToolCallStateError) as caught:
        await append(storage, "s", result("c1", "late"))
    assert caught.value.reason == Reason.UNKNOWN_TOOL_CALL
    assert await repaired(storage, "s") == []
    # The id is free: a new call with it is repaired and superseded on its own.
    await append(storage, "s", assistant("c1"))
    assert await repaired(storage, "s") == [("c1", 6)]
    await append(storage, "s", result("c1", "new"))
    assert tools(await read(storage, "s")) == [(7, "new", "c1", 6)]


async def test_an_erasing_clear_between_forgets_the_call_and_its_repairs(storage: Storage) -> None:
    await superseded(storage)
    await edit(storage, "s", remove_last=1)
    cleared = await erase(storage, "s")
    assert cleared.events_erased == 4  # the call, the repair, the real result and the edit
    assert await repaired(storage, "s") == []
    with pytest.raises(ToolCallStateError) as caught:
        await append(storage, "s", result("c1", "late"))
    assert caught.value.reason == Reason.UNKNOWN_TOOL_CALL
    # The same id made again after the erasure: repaired and superseded as a new call.
    await append(storage, "s", assistant("c1"))
    assert await repaired(storage, "s") == [("c1", 7)]
    await append(storage, "s", result("c1", "new"))
    assert tools(await read(storage, "s")) == [(8, "new", "c1", 7)]
    await assert_already_answered(storage, "s")


async def test_an_erasing_clear_after_a_supersede_then_the_result_again_is_unknown(storage: Storage) -> None:
    await superseded(storage)
    await erase(storage, "s")
    with pytest.raises(ToolCallStateError) as caught:
        await append(storage, "s", result("c1", "late, again"))
    assert caught.value.reason == Reason.UNKNOWN_TOOL_CALL
    assert await read(storage, "s") == []


async def test_the_history_round_trips_through_export_and_import(
    storage: Storage, stores: Stores, tmp_path: Path
) -> None:
    await superseded(storage)
    await edit(storage, "s", remove_last=1)
    await repaired(storage, "s")
    await append(storage, "s", result("c1", "late, again"))
    lines = await export_lines(storage, "s")
    other = await stores.open(tmp_path / "other")
    await import_lines(other, renamed(lines, "t"))
    loaded = await other.load("t", WORKDIR, "t")
    assert loaded.repairs == []
    assert tools(await history(other, loaded)) == [(6, "late, again", "c1", 5)]
    await assert_already_answered(other, "t")


async def test_a_fork_copies_the_superseding_result_without_its_mark(storage: Storage) -> None:
    await superseded(storage)
    job = prepare_fork("s", "f", up_to_position=0, workdir="", labels=None, request_id="", trace_id="f")
    # The hidden repair is not copied, so the result that superseded it names nothing in the fork.
    assert (await storage.fork_session(job)).entries_copied == 2
    assert tools(await read(storage, "f")) == [(2, "late", "c1", 0)]
    # The call is answered there by that result: nothing to repair, and no second result.
    assert await repaired(storage, "f") == []
    await assert_already_answered(storage, "f")
    assert tools(await read(storage, "s")) == [(3, "late", "c1", 2)]  # the source keeps its mark
