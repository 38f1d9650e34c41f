"""Errors say which are transient (``SessiondError.retryable``), as a real daemon produces them.

A stopped daemon (UNAVAILABLE, nothing listening) and a full Watch slot (RESOURCE_EXHAUSTED /
``TOO_MANY_STREAMS``) come out retryable in the sync and the asyncio client; a request the daemon
refuses as invalid or stale does not. The TypeScript client's twin is in clients/typescript/test.
"""

from __future__ import annotations

import asyncio

import pytest

from claw_sessiond_client import (
    AsyncSessionClient,
    DaemonUnavailableError,
    InvalidRequestError,
    Message,
    Reason,
    ResourceLimitError,
    SequenceConflictError,
    SessionClient,
)
from tests.helpers.daemon import DaemonProcess

pytestmark = pytest.mark.backend_neutral("how the clients classify the daemon's statuses; storage decides none of them")


@pytest.mark.smoke
def test_sync_a_full_watch_slot_and_a_stopped_daemon_are_retryable_a_bad_request_is_not(spawn_daemon: object) -> None:
    d: DaemonProcess = spawn_daemon("--max-watchers", "1")  # type: ignore[operator]
    with d.client() as c:
        c.append("s", Message.user("one"))
        with pytest.raises(InvalidRequestError) as bad:
            c.append("bad/id", Message.user("x"))
        assert bad.value.reason == Reason.INVALID_SESSION_ID and bad.value.retryable is False
        with pytest.raises(SequenceConflictError) as stale:
            c.append("s", Message.user("x"), expected_last_position=9)
        assert stale.value.retryable is False
        held = c.watch("s")
        assert next(held).position == 1  # holds the only slot
        try:
            with d.client() as other, pytest.raises(ResourceLimitError) as full:
                next(iter(other.watch("s")))
            assert full.value.reason == Reason.TOO_MANY_STREAMS and full.value.retryable is True
        finally:
            held.close()
    assert d.terminate() == 0
    gone_client = SessionClient(d.workspace, autostart=False, retry_window_s=0.5)
    with gone_client, pytest.raises(DaemonUnavailableError) as gone:
        gone_client.load("s")
    assert gone.value.retryable is True


def test_async_a_full_watch_slot_and_a_stopped_daemon_are_retryable_a_bad_request_is_not(spawn_daemon: object) -> None:
    d: DaemonProcess = spawn_daemon("--max-watchers", "1")  # type: ignore[operator]

    async def while_up() -> None:
        async with AsyncSessionClient(address=d.address, autostart=False) as c:
            await c.append("s", Message.user("one"))
            with pytest.raises(InvalidRequestError) as bad:
                await c.append("bad/id", Message.user("x"))
            assert bad.value.retryable is False
            with pytest.raises(SequenceConflictError) as stale:
                await c.append("s", Message.user("x"), expected_last_position=9)
            assert stale.value.retryable is False
            held = c.watch("s")
            assert (await anext(held)).position == 1
            try:
                with pytest.raises(ResourceLimitError) as full:
                    await anext(c.watch("s"))
                assert full.value.reason == Reason.TOO_MANY_STREAMS and full.value.retryable is True
            finally:
                await held.aclose()

    async def once_stopped() -> None:
        async with AsyncSessionClient(d.workspace, autostart=False, retry_window_s=0.5) as c:
            with pytest.raises(DaemonUnavailableError) as gone:
                await c.load("s")
            assert gone.value.retryable is True

    asyncio.run(while_up())
    assert d.terminate() == 0
    asyncio.run(once_stopped())
