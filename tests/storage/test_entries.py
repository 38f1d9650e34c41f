"""Entries stored verbatim (issue 14): items byte for byte, client ids, metadata, per-entry usage, role other."""

from __future__ import annotations

from pathlib import Path

import pytest

from claw_sessiond.errors import AlreadyExistsError, InvalidRequestError, PreconditionError, Reason
from claw_sessiond.model import LoadWindow, Message, ModelUsage, Usage, UsageDelta
from claw_sessiond.queries import SearchFilter
from claw_sessiond.storage import Storage
from tests.storage._support import (
    Stores,
    append,
    assistant,
    event_types,
    export_lines,
    history,
    import_lines,
    read,
    renamed,
    result,
    snapshot,
    user,
)

ITEM = b'{"type":"reasoning","encrypted_content":"gAAA"}\x00\xff\xfe binary tail'


def with_item(role: str, content: str = "", **fields: object) -> Message:
    return Message(role, content, format="openai.responses", item=ITEM + content.encode(), **fields)  # type: ignore[arg-type]


async def test_items_metadata_and_client_ids_come_back_exactly(storage: Storage) -> None:
    metadata = '{"b": 1,   "a": [true, null], "ü": "x"}'  # spacing, key order and escapes kept as given
    await append(
        storage,
        "s",
        with_item("user", "hi", client_id="u-1", metadata=metadata),
        Message("other", format="adk.event", item=b"\x00" * 3),
        assistant("c1", text="calling"),
        result("c1"),
    )
    messages = await read(storage, "s")
    assert [(m.role, m.format, m.item, m.client_id, m.metadata) for m in messages] == [
        ("user", "openai.responses", ITEM + b"hi", "u-1", metadata),
        ("other", "adk.event", b"\x00" * 3, "", ""),
        ("assistant", "", b"", "", ""),
        ("tool", "", b"", "", ""),
    ]
    # the same through a bounded read, the change feed's reads and a follow-all
    window = await storage.load("s", "/w", "t", repair=False, window=LoadWindow(last=4))
    assert [(m.format, m.item) for m in await history(storage, window)] == [(m.format, m.item) for m in messages]
    _inc, watched, _more = await storage.watch_batch("s", 0, 100)
    assert [(p, m.item if m else None) for p, m in watched][:2] == [(1, ITEM + b"hi"), (2, b"\x00" * 3)]
    rows, _more = await storage.follow_batch(0, 100)
    assert [r[3].item for r in rows if r[3] is not None][:2] == [ITEM + b"hi", b"\x00" * 3]


async def test_a_plain_message_is_stored_as_before(storage: Storage) -> None:
    await append(storage, "s", user("plain"))
    lines = await export_lines(storage, "s")
    assert lines[1].endswith('"payload":{"content":"plain","role":"user"}}')


async def test_a_duplicate_client_id_is_refused_and_nothing_is_written(storage: Storage) -> None:
    await append(storage, "s", Message("user", "one", client_id="k"))
    before = await snapshot(storage, "s")
    with pytest.raises(AlreadyExistsError) as caught:
        await append(storage, "s", user("fine"), Message("assistant", "two", client_id="k"))
    assert caught.value.reason == Reason.CLIENT_ID_EXISTS
    assert caught.value.metadata["position"] == "1"
    assert await snapshot(storage, "s") == before
    # within one request: refused before anything reaches storage
    with pytest.raises(AlreadyExistsError):
        await append(storage, "t", Message("user", "a", client_id="z"), Message("user", "b", client_id="z"))
    assert await read(storage, "t") == []
    # another session may use the same id
    await append(storage, "other", Message("user", "one", client_id="k"))


async def test_a_cleared_entry_frees_its_client_id(storage: Storage) -> None:
    await append(storage, "s", Message("user", "one", client_id="k"))
    await storage.clear("s", request_id="", expected_last_position=0, workdir="", trace_id="t")
    await append(storage, "s", Message("user", "again", client_id="k"))
    assert [m.client_id for m in await read(storage, "s")] == ["k"]


async def test_entry_usage_adds_to_the_totals_and_the_models(storage: Storage) -> None:
    u1 = UsageDelta(10, 2, 1, 0, 500, "USD", "m1", "v1")
    u2 = UsageDelta(5, 0, 0, 3, 0, "", "m2", "")
    await append(storage, "s", Message("assistant", "a", usage=u1), Message("assistant", "b", usage=u2))
    total, by_model = await storage.usage_by_model("s")
    assert total == Usage(15, 2, 1, 3, 500, "USD")
    assert by_model == [
        ModelUsage("m1", "v1", Usage(10, 2, 1, 0, 500, "USD")),
        ModelUsage("m2", "", Usage(5, 0, 0, 3, 0, "")),
    ]
    assert [m.usage for m in await read(storage, "s")] == [u1, u2]
    assert await event_types(storage, "s") == ["assistant_message", "usage", "assistant_message", "usage"]
    rows, _truncated = await storage.usage_report(
        "2000-01-01T00:00:00.000000Z", "2100-01-01T00:00:00.000000Z", by_session=False
    )
    assert sorted((r.model, r.input_tokens, r.cost_micros) for r in rows) == [("m1", 10, 500), ("m2", 5, 0)]


async def test_entry_usage_follows_the_usage_rules_all_or_nothing(storage: Storage) -> None:
    await append(storage, "s", Message("user", "x", usage=UsageDelta(cost_micros=1, currency="USD")))
    before = await snapshot(storage, "s")
    with pytest.raises(PreconditionError) as caught:
        await append(storage, "s", user("y"), Message("user", "z", usage=UsageDelta(cost_micros=1, currency="EUR")))
    assert caught.value.reason == Reason.CURRENCY_MISMATCH
    with pytest.raises(InvalidRequestError) as invalid:
        await append(
            storage,
            "s",
            Message("user", "y", usage=UsageDelta(input_tokens=2**63 - 1)),
            Message("user", "z", usage=UsageDelta(input_tokens=1)),
        )
    assert invalid.value.reason == Reason.INVALID_USAGE
    assert await snapshot(storage, "s") == before


async def test_a_full_batch_is_stored_in_order_with_each_usage_event_after_its_entry(storage: Storage) -> None:
    """1,000 entries in one Append (SQLite writes them 500 rows a statement): every position, item, client id
    and call pairing as sent, each usage event logged right after its entry, every entry found by search."""
    u = UsageDelta(input_tokens=3, model="m")
    messages: list[Message] = []
    for i in range(1, 1001):
        if i % 250 == 0:  # usage in the middle of each statement's rows, and on the very last entry
            messages.append(Message("assistant", f"zebra {i}", usage=u))
        elif i == 499:
            messages.append(assistant("c1", text="zebra calling"))
        elif i == 501:  # its result in the next statement's rows
            messages.append(result("c1", "zebra done"))
        elif i % 3 == 0:
            messages.append(with_item("user", f"zebra {i}", client_id=f"k{i}"))
        else:
            messages.append(user(f"zebra {i}"))
    appended = await append(storage, "s", *messages)
    assert (appended.first_position, appended.last_position) == (1, 1000)
    stored = sorted(await read(storage, "s"), key=lambda m: m.position)  # a Load puts each result after its call
    assert [m.position for m in stored] == list(range(1, 1001))
    assert [(m.role, m.content, m.item, m.client_id) for m in stored] == [
        (m.role, m.content, m.item, m.client_id) for m in messages
    ]
    types = await event_types(storage, "s")
    assert len(types) == 1004 and [i for i, t in enumerate(types) if t == "usage"] == [250, 501, 752, 1003]
    assert (await storage.load("s", "/w", "t")).repairs == []  # the call and its result paired
    assert (await storage.usage_by_model("s"))[0].input_tokens == 12
    hits, _more = await storage.search("zebra", SearchFilter(session_id="s"), 1000)
    assert sorted(h.position for h in hits) == list(range(1, 1001))


async def test_other_entries_are_kept_in_order_and_never_paired(storage: Storage) -> None:
    other = Message("other", format="openai.responses", item=b'{"type":"web_search_call"}')
    await append(storage, "s", user("q"), assistant("c1"), other, result("c1"), other, user("next"))
    messages = await read(storage, "s")
    assert [m.role for m in messages] == ["user", "assistant", "tool", "other", "other", "user"]
    assert [m.position for m in messages] == [1, 2, 4, 3, 5, 6]
    loaded = await storage.load("s", "/w", "t")
    assert loaded.repairs == []


async def test_items_survive_export_and_import_byte_for_byte(storage: Storage, stores: Stores, tmp_path: Path) -> None:
    await append(
        storage,
        "s",
        with_item("user", "q", client_id="c-1", metadata='{"k": "v"}'),
        Message("other", format="x.y_z-1", item=bytes(range(256))),
        Message("assistant", "a", usage=UsageDelta(1, 2, model="m")),
    )
    lines = await export_lines(storage, "s")
    target = await stores.open(tmp_path / "copy")
    assert await import_lines(target, lines) == len(lines) - 1
    assert await export_lines(target, "s") == lines
    copied = await read(target, "s")
    assert [(m.format, m.item, m.client_id, m.metadata, m.usage) for m in copied] == [
        (m.format, m.item, m.client_id, m.metadata, m.usage) for m in await read(storage, "s")
    ]
    assert (await target.usage_by_model("s"))[0] == Usage(1, 2)
    # the imported client ids are taken
    with pytest.raises(AlreadyExistsError):
        await append(target, "s", Message("user", "dup", client_id="c-1"))


async def test_an_import_with_a_client_id_twice_is_refused(storage: Storage) -> None:
    await append(storage, "a", Message("user", "one", client_id="k"))
    await append(storage, "b", Message("user", "two", client_id="k"))
    a, b = await export_lines(storage, "a"), await export_lines(storage, "b")
    with pytest.raises(InvalidRequestError) as caught:
        await import_lines(storage, renamed(b, "a"), "merge")
    assert caught.value.reason == Reason.INVALID_IMPORT
    assert await export_lines(storage, "a") == a
