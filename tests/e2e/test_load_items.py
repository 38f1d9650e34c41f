"""``load_items``: the stored items of one format, in the order written, with no Message built per entry.

What a framework adapter reads each turn (the OpenAI Agents SDK's ``get_items`` goes through it):
the items byte for byte, by position (parallel calls' outputs stay after both calls, as written),
other formats and plain messages left out, ``last`` counting the visible entries, and a look
that writes nothing: an unknown session has no items and stays unknown. Both clients agree.
"""

from __future__ import annotations

import asyncio

import pytest

from claw_sessiond_client import AsyncSessionClient, Message, SessionClient, ToolCall
from tests.helpers.daemon import DaemonProcess

FORMAT = "test.items"


def _item(n: int) -> bytes:
    return b'{"n": %d}' % n


def _both(daemon: DaemonProcess, sid: str, fmt: str, last: int | None = None) -> list[bytes]:
    async def read() -> list[bytes]:
        async with AsyncSessionClient(address=daemon.address, autostart=False) as c:
            return await c.load_items(sid, fmt, last=last)

    with daemon.client() as c:
        synced = c.load_items(sid, fmt, last=last)
    assert asyncio.run(read()) == synced
    return synced


@pytest.mark.smoke
def test_items_come_back_byte_for_byte_in_the_order_written(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    odd = bytes(range(256))  # not JSON, not UTF-8: stored and returned as given
    calls = Message.assistant(
        "", tool_calls=[ToolCall("c1", "f", "{}"), ToolCall("c2", "g", "{}")], format=FORMAT, item=_item(1)
    )
    module_client.append(
        sid,
        [
            Message.user("hi", format=FORMAT, item=_item(0)),
            calls,
            Message.user("a plain message: no item"),
            Message.other("another.format", b"{}"),
            Message.tool("c2", "r2", format=FORMAT, item=_item(2)),
            Message.tool("c1", "r1", format=FORMAT, item=_item(3)),
            Message.other(FORMAT, odd),
        ],
    )
    loaded = module_client.load(sid, no_repair=True).messages
    # a Load's reply puts each result right after its call: not the order written
    assert [m.position for m in loaded] != sorted(m.position for m in loaded)
    assert _both(module_daemon, sid, FORMAT) == [_item(0), _item(1), _item(2), _item(3), odd]
    assert _both(module_daemon, sid, "another.format") == [b"{}"]
    assert _both(module_daemon, sid, "no.such.format") == []


def test_last_counts_visible_entries_and_a_removed_entry_is_gone(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    module_client.append(sid, [Message.other(FORMAT, _item(n)) for n in range(10)])
    module_client.append(sid, Message.user("plain"))
    assert _both(module_daemon, sid, FORMAT, last=3) == [_item(8), _item(9)]
    module_client.edit_tail(sid, remove_last=2)
    assert _both(module_daemon, sid, FORMAT) == [_item(n) for n in range(9)]


def test_an_unknown_session_has_no_items_and_stays_unknown(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    assert _both(module_daemon, sid, FORMAT) == []
    assert sid not in [s.id for s in module_client.list_sessions(id_contains=sid)]


def test_a_bad_bound_is_refused_before_sending(module_client: SessionClient, sid: str) -> None:
    from claw_sessiond_client import InvalidRequestError

    with pytest.raises(InvalidRequestError, match="last must be"):
        module_client.load_items(sid, FORMAT, last=0)
