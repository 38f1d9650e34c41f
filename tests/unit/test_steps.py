"""The two drivers of a write's sequence (``storage/steps.py``) run the same generator alike."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from claw_sessiond.storage.steps import Steps, run_async, run_sync


class SyncPort:
    def __init__(self) -> None:
        self.rows: dict[str, int] = {}
        self.calls: list[str] = []

    def get(self, key: str) -> int | None:
        self.calls.append(f"get {key}")
        return self.rows.get(key)

    def put(self, key: str, value: int) -> None:
        self.calls.append(f"put {key}")
        if value < 0:
            raise ValueError("negative")
        self.rows[key] = value


class AsyncPort(SyncPort):
    async def get(self, key: str) -> int | None:  # type: ignore[override]
        await asyncio.sleep(0)
        return SyncPort.get(self, key)

    async def put(self, key: str, value: int) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        SyncPort.put(self, key, value)


def bump(port: Any, key: str, by: int) -> Steps[int]:
    old = yield port.get(key)
    new = (old or 0) + by
    try:
        yield port.put(key, new)
    except ValueError:
        yield port.put(key, 0)  # the sequence handles its port's error where it happened
        return -1
    return new


def twice(port: Any, key: str) -> Steps[tuple[int, int]]:
    first = yield from bump(port, key, 2)
    second = yield from bump(port, key, 3)
    return first, second


def test_sync_and_async_drivers_make_the_same_calls_and_result() -> None:
    sync, aio = SyncPort(), AsyncPort()
    assert run_sync(twice(sync, "a")) == (2, 5)
    assert asyncio.run(run_async(twice(aio, "a"))) == (2, 5)
    assert sync.calls == aio.calls == ["get a", "put a", "get a", "put a"]
    assert sync.rows == aio.rows == {"a": 5}


def test_a_port_error_reaches_the_sequence_at_its_yield_in_both_drivers() -> None:
    sync, aio = SyncPort(), AsyncPort()
    assert run_sync(bump(sync, "b", -4)) == -1
    assert asyncio.run(run_async(bump(aio, "b", -4))) == -1
    assert sync.rows == aio.rows == {"b": 0}


def test_an_unhandled_port_error_propagates_from_both_drivers() -> None:
    def failing(port: Any) -> Steps[None]:
        yield port.put("c", -1)

    with pytest.raises(ValueError, match="negative"):
        run_sync(failing(SyncPort()))
    with pytest.raises(ValueError, match="negative"):
        asyncio.run(run_async(failing(AsyncPort())))


class NoWaitPort(SyncPort):
    """Coroutine verbs that never wait (SQLite's, over the writer's connection)."""

    async def get(self, key: str) -> int | None:  # type: ignore[override]
        return SyncPort.get(self, key)

    async def put(self, key: str, value: int) -> None:  # type: ignore[override]
        SyncPort.put(self, key, value)


def test_the_sync_driver_runs_coroutines_that_never_wait_and_throws_their_errors_in() -> None:
    port = NoWaitPort()
    assert run_sync(twice(port, "a")) == (2, 5)
    assert run_sync(bump(port, "b", -4)) == -1  # the error reached the sequence's ``except`` at its yield
    assert port.rows == {"a": 5, "b": 0}
    assert port.calls == ["get a", "put a", "get a", "put a", "get b", "put b", "put b"]


def test_the_sync_driver_refuses_a_port_call_that_waits() -> None:
    port = AsyncPort()
    with pytest.raises(TypeError, match="waits"):
        run_sync(bump(port, "d", 1))
    assert port.rows == {}
