"""Export and import (SPEC §5): a faithful round trip, the refuse / replace / merge modes, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.errors import InvalidRequestError, PreconditionError, Reason, ToolCallStateError
from claw_sessiond.events import decode_events
from claw_sessiond.export import parse_session
from claw_sessiond.model import Message
from claw_sessiond.storage import Storage
from tests.storage._support import (
    Stores,
    append,
    assistant,
    clear,
    contents,
    export_lines,
    history,
    import_lines,
    renamed,
    result,
    snapshot,
    usage,
    user,
)


async def fill(storage: Storage, sid: str) -> None:
    """A session with every event type, a clear, a repair and an open tool call."""
    await append(storage, sid, Message("system", "be brief"), user("before clear"))
    await clear(storage, sid)
    await append(storage, sid, user("list files"), assistant("c1"))
    await append(storage, sid, result("c1", "a.txt\nb.txt"))
    await append(storage, sid, assistant("c2"))
    await storage.load(sid, "/w", "t")  # repairs c2
    await append(storage, sid, assistant("c3"))  # left open
    await usage(storage, sid, input_tokens=10, output_tokens=3, cost_micros=7, currency="USD", model="m1")
    await usage(storage, sid, input_tokens=5, cache_read_tokens=2, cost_micros=11, currency="USD", model="m2")
    await storage.record_event(sid, "permission_denial", json.dumps({"tool": "bash"}), request_id="", trace_id="t")


def view(messages: list[Any]) -> list[tuple[Any, ...]]:
    return [(m.role, m.content, m.position, m.tool_call_id, m.synthetic_reason) for m in messages]


async def test_a_round_trip_into_another_storage_keeps_every_event_and_all_derived_state(
    stores: Stores, tmp_path: Path
) -> None:
    one, two = await stores.open(tmp_path / "one"), await stores.open(tmp_path / "two")
    await fill(one, "s")
    lines = await export_lines(one, "s")
    header = json.loads(lines[0])
    assert header["session_id"] == "s" and header["events"] == len(lines) - 1 == 12
    assert [json.loads(x)["event_id"] for x in lines[1:]] == list(range(1, 13))

    assert await import_lines(two, lines) == 12
    assert await export_lines(two, "s") == lines
    a = await one.load("s", "/w", "t", repair=False)
    b = await two.load("s", "/w", "t", repair=False)
    assert view(await history(one, a)) == view(await history(two, b))
    assert (a.session.last_position, a.session.message_count, a.session.usage, a.session.created_at) == (
        b.session.last_position,
        b.session.message_count,
        b.session.usage,
        b.session.created_at,
    )
    assert await one.usage_by_model("s") == await two.usage_by_model("s")
    # the tool-call index was rebuilt: c3 is open (repaired at Load), c1 and c2 are answered
    assert [r.tool_call_id for r in (await two.load("s", "/w", "t")).repairs] == ["c3"]
    with pytest.raises(ToolCallStateError) as answered:
        await append(two, "s", result("c1", "again"))
    assert answered.value.reason == Reason.TOOL_CALL_ALREADY_ANSWERED
    with pytest.raises(ToolCallStateError) as unknown:
        await append(two, "s", result("nope"))
    assert unknown.value.reason == Reason.UNKNOWN_TOOL_CALL


async def test_refuse_mode_refuses_a_stored_session_and_writes_nothing(storage: Storage) -> None:
    await append(storage, "s", user("one"))
    lines = await export_lines(storage, "s")
    await append(storage, "s", user("two"))
    before = await snapshot(storage, "s")
    with pytest.raises(PreconditionError) as caught:
        await import_lines(storage, lines)
    assert caught.value.reason == Reason.SESSION_EXISTS
    assert await snapshot(storage, "s") == before


async def test_merge_adds_only_events_not_stored_after_the_history(stores: Stores, tmp_path: Path) -> None:
    source, target = await stores.open(tmp_path / "src"), await stores.open(tmp_path / "dst")
    await append(source, "s", user("one"), user("two"))
    old = await export_lines(source, "s")
    await import_lines(target, old)
    assert await import_lines(target, old, "merge") == 0
    await append(source, "s", user("three"))
    await usage(source, "s", input_tokens=4, model="m")
    newer = await export_lines(source, "s")
    await append(target, "s", user("local only"))
    assert await import_lines(target, newer, "merge") == 2
    assert await contents(target, "s") == ["one", "two", "local only", "three"]
    assert (await target.usage_by_model("s"))[0].input_tokens == 4
    assert [json.loads(x)["position"] for x in (await export_lines(target, "s"))[1:]] == [1, 2, 3, 4, None]
    assert await import_lines(target, newer, "merge") == 0


async def test_replace_erases_the_stored_session_first(storage: Storage) -> None:
    await append(storage, "s", user("one"), user("two"))
    old = await export_lines(storage, "s")
    await append(storage, "s", user("three"), assistant("c"))
    await usage(storage, "s", cost_micros=3, currency="USD")
    assert await import_lines(storage, old, "replace") == 2
    assert await export_lines(storage, "s") == old
    assert (await storage.usage_by_model("s"))[0].cost_micros == 0
    await append(storage, "s", assistant("c"))  # the replaced history's call id is gone with it


def _inconsistent(good: list[str]) -> dict[str, list[str]]:
    """Blocks that parse as export lines but are not a consistent history."""

    def event(position: int | None, event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"position": position, "type": event_type, "payload": payload}

    header = json.loads(good[0])
    template = json.loads(good[1])

    def block(*events: dict[str, Any]) -> list[str]:
        out = [json.dumps({**header, "events": len(events)})]
        out += [json.dumps({**template, **e, "event_id": i}) for i, e in enumerate(events, 1)]
        return out

    def call(call_id: str) -> dict[str, Any]:
        return {"role": "assistant", "tool_calls": [{"id": call_id, "name": "bash", "arguments": "{}"}]}

    usd = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0, "model": ""}
    return {
        "a result for an unknown call": block(
            event(1, "user_message", {"role": "user", "content": "q"}),
            event(2, "tool_result", {"role": "tool", "tool_call_id": "zz", "content": "x"}),
        ),
        "two results for one call": block(
            event(1, "assistant_message", call("k1")),
            event(2, "tool_result", {"role": "tool", "tool_call_id": "k1", "content": "x"}),
            event(3, "tool_result", {"role": "tool", "tool_call_id": "k1", "content": "y"}),
        ),
        "a duplicate call id": block(
            event(1, "assistant_message", call("k2")), event(2, "assistant_message", {**call("k2"), "content": "again"})
        ),
        "two currencies": block(
            event(None, "usage", {**usd, "cost_micros": 1, "currency": "USD", "pricing_version": ""}),
            event(None, "usage", {**usd, "cost_micros": 1, "currency": "EUR", "pricing_version": ""}),
        ),
    }


async def test_an_inconsistent_import_writes_nothing(stores: Stores, tmp_path: Path) -> None:
    source, target = await stores.open(tmp_path / "src"), await stores.open(tmp_path / "dst")
    await append(source, "s", user("q"), assistant("k"))
    await append(source, "s", result("k"))
    good = await export_lines(source, "s")
    cases = _inconsistent(good)
    for name, lines in cases.items():
        parse_session(lines)  # well-formed lines: the storage is what must refuse them
        with pytest.raises(InvalidRequestError) as caught:
            await import_lines(target, lines)
        assert caught.value.reason == Reason.INVALID_IMPORT, name
        assert (await target.figures()).sessions == 0, name
    await import_lines(target, good)
    before = await snapshot(target, "s")
    for mode in ("replace", "merge"):
        for name, lines in cases.items():
            with pytest.raises(InvalidRequestError):
                await import_lines(target, lines, mode)
            assert await snapshot(target, "s") == before, (mode, name)


async def test_an_import_beyond_the_open_call_limit_writes_nothing(stores: Stores, tmp_path: Path) -> None:
    source = await stores.open(tmp_path / "src")
    target = await stores.open(tmp_path / "dst", max_open_tool_calls=2)
    await append(source, "s", assistant("a", "b", "c"))
    with pytest.raises(InvalidRequestError) as caught:
        await import_lines(target, await export_lines(source, "s"))
    assert caught.value.reason == Reason.INVALID_IMPORT
    assert (await target.figures()).sessions == 0


async def test_an_export_reads_one_snapshot(storage: Storage) -> None:
    await append(storage, "s", user("a"), user("b"))
    await usage(storage, "s", input_tokens=1)
    found = await storage.export_start("s")
    assert found is not None
    header, cursor, max_event_id = found
    assert header.events == 3
    await append(storage, "s", user("c"))  # written after the export started
    await clear(storage, "s")
    rows = [row async for page in storage.export_pages(cursor, max_event_id) for row in page]
    assert [e.type for e in decode_events(rows)] == ["user_message", "user_message", "usage"]
    assert len(rows) == header.events


async def test_every_session_is_listed_for_a_full_export_oldest_first(storage: Storage) -> None:
    for sid in ("b", "c", "a"):
        await append(storage, sid, user(f"hello {sid}"))
    await append(storage, "b", user("b again"))  # a later write does not move a session in this order
    assert await storage.session_ids() == ["b", "c", "a"]
    assert await storage.export_start("missing") is None


async def test_an_import_into_another_id_is_a_separate_session(storage: Storage) -> None:
    await append(storage, "s", user("x"), assistant("c"))
    assert await import_lines(storage, renamed(await export_lines(storage, "s"), "t")) == 2
    await append(storage, "t", result("c"))
    assert (await storage.load("s", "/w", "t", repair=False)).session.last_position == 2
    assert len(await contents(storage, "t")) == 3
