"""Usage (SPEC §2, §5): exact running totals per session and per model, kept by Clear, refused when unsound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claw_sessiond.errors import InvalidRequestError, PreconditionError, Reason, SessionNotFoundError
from claw_sessiond.model import ModelUsage, Usage
from claw_sessiond.rules import MAX_INT64
from claw_sessiond.storage import Storage
from tests.storage._support import Stores, append, clear, event_types, read, snapshot, usage, user


async def test_totals_add_up_per_session_and_per_model(storage: Storage) -> None:
    await usage(storage, "bill", input_tokens=3, output_tokens=1, cost_micros=100_000, currency="USD", model="m1")
    await usage(storage, "bill", input_tokens=4, cache_read_tokens=2, cost_micros=200_000, currency="USD", model="m1")
    await usage(storage, "bill", output_tokens=5, cache_write_tokens=1, cost_micros=1, currency="USD", model="m2")
    await usage(storage, "bill", input_tokens=1, model="m2", pricing_version="2026-06")
    total, by_model = await storage.usage_by_model("bill")
    assert total == Usage(8, 6, 2, 1, 300_001, "USD")
    assert sorted(by_model, key=lambda m: (m.model, m.pricing_version)) == [
        ModelUsage("m1", "", Usage(7, 1, 2, 0, 300_000, "USD")),
        ModelUsage("m2", "", Usage(0, 5, 0, 1, 1, "USD")),
        ModelUsage("m2", "2026-06", Usage(1, 0, 0, 0, 0, "")),
    ]
    assert (await storage.load("bill", "/w", "t")).session.usage == total
    assert [s.usage for s in await storage.list_sessions("bill", 10)] == [total]


async def test_usage_creates_the_session_and_is_no_message(storage: Storage) -> None:
    result = await usage(storage, "new", input_tokens=2)
    assert result.usage == Usage(input_tokens=2)
    loaded = await storage.load("new", "/w", "t")
    assert loaded.session.stored and loaded.messages == [] and loaded.session.last_position == 0
    assert await event_types(storage, "new") == ["usage"]


async def test_clear_keeps_usage(storage: Storage) -> None:
    await append(storage, "s", user("hi"))
    await usage(storage, "s", input_tokens=10, output_tokens=3, cost_micros=7, currency="USD", model="m")
    before = await storage.usage_by_model("s")
    await clear(storage, "s")
    assert await read(storage, "s") == []
    assert await storage.usage_by_model("s") == before
    assert (await storage.load("s", "/w", "t")).session.usage == before[0]


async def test_a_cost_in_another_currency_is_refused_and_writes_nothing(storage: Storage) -> None:
    await usage(storage, "s", input_tokens=1, cost_micros=5, currency="USD", model="m")
    before = (await snapshot(storage, "s"), await storage.usage_by_model("s"))
    with pytest.raises(PreconditionError) as caught:
        await usage(storage, "s", input_tokens=1, cost_micros=1, currency="EUR", model="m")
    assert caught.value.reason == Reason.CURRENCY_MISMATCH
    assert (await snapshot(storage, "s"), await storage.usage_by_model("s")) == before
    # tokens without a cost carry no currency and are accepted
    assert (await usage(storage, "s", input_tokens=1, model="m")).usage == Usage(2, 0, 0, 0, 5, "USD")


async def test_totals_beyond_64_bits_are_refused_and_write_nothing(storage: Storage) -> None:
    await usage(storage, "s", input_tokens=MAX_INT64 - 1, cost_micros=MAX_INT64, currency="USD")
    before = (await snapshot(storage, "s"), await storage.usage_by_model("s"))
    for counts in ({"input_tokens": 2}, {"cost_micros": 1, "currency": "USD"}):
        with pytest.raises(InvalidRequestError) as caught:
            await usage(storage, "s", **counts)
        assert caught.value.reason == Reason.INVALID_USAGE
    assert (await snapshot(storage, "s"), await storage.usage_by_model("s")) == before
    assert (await usage(storage, "s", input_tokens=1)).usage.input_tokens == MAX_INT64  # up to the edge is fine


async def test_usage_of_an_unknown_session_is_not_found(storage: Storage) -> None:
    with pytest.raises(SessionNotFoundError):
        await storage.usage_by_model("never-stored")


async def test_totals_survive_reopening(stores: Stores, tmp_path: Path) -> None:
    first = await stores.open(tmp_path / "ws")
    for i in range(30):
        await usage(first, "budget", f"r{i}", input_tokens=1 + i % 5, cost_micros=333_333, currency="USD", model="m")
    report = await first.usage_by_model("budget")
    await stores.close(first)
    again = await stores.open(tmp_path / "ws")
    assert await again.usage_by_model("budget") == report
    assert report[0] == Usage(sum(1 + i % 5 for i in range(30)), 0, 0, 0, 30 * 333_333, "USD")


async def test_audit_events_are_logged_and_are_not_messages(storage: Storage) -> None:
    await append(storage, "a", user("hi"))
    denial = await storage.record_event(
        "a", "permission_denial", json.dumps({"tool": "rm"}), request_id="", trace_id="t1"
    )
    error = await storage.record_event("a", "error", json.dumps({"e": 1}), request_id="", trace_id="t2")
    assert error.event_id > denial.event_id and error.trace_id == "t2"
    assert [m.content for m in await read(storage, "a")] == ["hi"]
    assert await event_types(storage, "a") == ["user_message", "permission_denial", "error"]
    assert (await storage.load("a", "/w", "t")).session.last_position == 1
