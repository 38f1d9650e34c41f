"""Request ids (SPEC §4): a retry returns the first result and writes nothing; other content is refused."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from claw_sessiond.errors import InvalidRequestError, Reason, SequenceConflictError
from claw_sessiond.model import Message, Usage
from claw_sessiond.storage import Storage
from tests.storage._support import Stores, append, clear, contents, job, snapshot, usage, user


async def test_a_replayed_append_returns_the_first_result_and_writes_nothing(storage: Storage) -> None:
    first = await append(storage, "s", user("x"), user("y"), request_id="req-1", trace_id="first-trace")
    after_first = await snapshot(storage, "s")
    again = await append(storage, "s", user("x"), user("y"), request_id="req-1", trace_id="retry-trace")
    assert not first.replayed and again.replayed
    assert (again.first_position, again.last_position, again.created_at, again.trace_id) == (
        first.first_position,
        first.last_position,
        first.created_at,
        "first-trace",
    )
    assert await snapshot(storage, "s") == after_first
    assert await contents(storage, "s") == ["x", "y"]


async def test_other_content_under_a_used_request_id_is_refused_and_writes_nothing(storage: Storage) -> None:
    await append(storage, "s", user("x"), request_id="req-1")
    before = await snapshot(storage, "s")
    with pytest.raises(InvalidRequestError) as caught:
        await append(storage, "s", user("other content"), request_id="req-1")
    assert caught.value.reason == Reason.REQUEST_ID_REUSED
    with pytest.raises(InvalidRequestError) as other_kind:
        await clear(storage, "s", request_id="req-1")
    assert other_kind.value.reason == Reason.REQUEST_ID_REUSED
    assert await snapshot(storage, "s") == before


async def test_an_append_recorded_before_today_s_fingerprint_form_still_replays(storage: Storage) -> None:
    """A version before the marked fingerprint stored its records with the earlier form (written here
    through the same write path, as that version wrote them): a retry after the upgrade replays it,
    items and all, and other content under its id is still refused."""
    messages = (user("x"), Message("user", "y", format="openai.responses", item=b'{"role":"user"}'))
    today = job("s", *messages, request_id="req-1", expected=-1, trace_id="first-trace")
    assert today.earlier_fingerprint is not None
    stored_before = dataclasses.replace(today, fingerprint=today.earlier_fingerprint(), earlier_fingerprint=None)
    first = await storage.append(stored_before)
    before = await snapshot(storage, "s")
    again = await storage.append(job("s", *messages, request_id="req-1", expected=-1, trace_id="retry-trace"))
    assert again.replayed and (again.first_position, again.last_position, again.trace_id) == (
        first.first_position,
        first.last_position,
        "first-trace",
    )
    with pytest.raises(InvalidRequestError) as caught:
        await storage.append(job("s", user("x"), request_id="req-1"))
    assert caught.value.reason == Reason.REQUEST_ID_REUSED
    assert await snapshot(storage, "s") == before


async def test_a_replay_wins_over_the_expected_position(storage: Storage) -> None:
    """A retry of a conditional append that succeeded must replay, not conflict with its own write."""
    first = await append(storage, "s", user("once"), expected=-1, request_id="r")
    again = await append(storage, "s", user("once"), expected=-1, request_id="r")
    assert again.replayed and again.first_position == first.first_position
    with pytest.raises(SequenceConflictError):  # the same content without the id is a new request
        await append(storage, "s", user("once"), expected=-1)


async def test_request_ids_belong_to_their_session(storage: Storage) -> None:
    a = await append(storage, "a", user("x"), request_id="same")
    b = await append(storage, "b", user("x"), request_id="same")
    assert not a.replayed and not b.replayed
    assert await contents(storage, "a") == await contents(storage, "b") == ["x"]


async def test_usage_clears_and_audit_events_replay_too(storage: Storage) -> None:
    await append(storage, "s", user("x"))
    u1 = await usage(storage, "s", "u-1", input_tokens=10, cost_micros=5, currency="USD")
    u2 = await usage(storage, "s", "u-1", input_tokens=10, cost_micros=5, currency="USD")
    assert not u1.replayed and u2.replayed and u2.usage == u1.usage == Usage(10, 0, 0, 0, 5, "USD")
    with pytest.raises(InvalidRequestError) as caught:
        await usage(storage, "s", "u-1", input_tokens=11)
    assert caught.value.reason == Reason.REQUEST_ID_REUSED

    e1 = await storage.record_event("s", "error", json.dumps({"e": 1}), request_id="e-1", trace_id="t")
    e2 = await storage.record_event("s", "error", json.dumps({"e": 1}), request_id="e-1", trace_id="t")
    assert not e1.replayed and e2.replayed and e2.event_id == e1.event_id

    c1 = await clear(storage, "s", request_id="c-1")
    c2 = await clear(storage, "s", request_id="c-1")
    assert not c1.replayed and c2.replayed and c2.position == c1.position == 2

    assert (await storage.usage_by_model("s"))[0] == Usage(10, 0, 0, 0, 5, "USD")
    assert (await storage.load("s", "/w", "t")).session.last_position == 2
    assert (await storage.figures()).events == 4  # message, usage, error, clear: once each


async def test_a_replay_survives_reopening(stores: Stores, tmp_path: Path) -> None:
    first_store = await stores.open(tmp_path / "ws")
    first = await append(first_store, "s", user("once"), request_id="r-restart")
    await stores.close(first_store)
    again_store = await stores.open(tmp_path / "ws")
    retry = await append(again_store, "s", user("once"), request_id="r-restart")
    assert retry.replayed and retry.first_position == first.first_position
    assert await contents(again_store, "s") == ["once"]


async def test_pruned_records_make_a_retry_a_new_request(storage: Storage) -> None:
    await append(storage, "s", user("x"), request_id="r1")
    await usage(storage, "s", "r2", input_tokens=1)
    assert (await storage.figures()).request_records == 2
    assert await storage.prune_requests("2000-01-01T00:00:00.000000Z", 100) == 0  # none that old
    assert await storage.prune_requests("9999-01-01T00:00:00.000000Z", 1) == 1  # at most the limit
    assert await storage.prune_requests("9999-01-01T00:00:00.000000Z", 100) == 1
    assert (await storage.figures()).request_records == 0
    assert storage.counters.requests_pruned == 2  # each record counted once
    retry = await append(storage, "s", user("x"), request_id="r1")
    assert not retry.replayed and retry.first_position == 2
