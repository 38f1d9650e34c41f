"""``load_items``: the stored items of one format, in the order written, with no Message built per entry.

What a framework adapter reads each turn (the OpenAI Agents SDK's ``get_items`` goes through it):
the items byte for byte, by position (parallel calls' outputs stay after both calls, as written),
other formats and plain messages left out, ``last`` counting the visible entries, and a look
that writes nothing: an unknown session has no items and stays unknown. Both clients agree.
"""

from __future__ import annotations

import asyncio
import functools
import os
from pathlib import Path

import grpc
import pytest

from claw_sessiond.rpc.loading import LOAD_CHUNK_BYTES
from claw_sessiond_client import AsyncSessionClient, Message, SessionClient, ToolCall
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess

FORMAT = "test.items"
MIB = 1024 * 1024


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


# ---------------------------------------------------------------- LoadRequest.items_format on the wire

BOTH = pytest.mark.both_backends(
    "the items' own reads (storage/sql/read_port.py's item_page, items_at) on each backend"
)


def _items_reply(daemon: DaemonProcess, **fields: object) -> list[pb.LoadResponse]:
    options = [("grpc.max_receive_message_length", 64 * MIB)]
    with grpc.insecure_channel(daemon.address, options=options) as channel:
        return list(pb_grpc.SessionServiceStub(channel).Load(pb.LoadRequest(**fields), timeout=60))


@BOTH
def test_items_alone_come_back_by_pages_in_position_order_with_no_entries(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    # Over two pages (paging.ITEM_PAGE_ROWS = 2,048) of items, with parallel calls whose results come in
    # reverse order, plain messages and another format between them.
    written: list[bytes] = []
    for turn in range(700):
        a, b = f"a{turn}", f"b{turn}"
        batch = [
            Message.assistant(
                "", tool_calls=[ToolCall(a, "f", "{}"), ToolCall(b, "g", "{}")], format=FORMAT, item=_item(4 * turn)
            ),
            Message.user("plain"),
            Message.tool(b, "rb", format=FORMAT, item=_item(4 * turn + 1)),
            Message.other("another.format", b"[]"),
            Message.tool(a, "ra", format=FORMAT, item=_item(4 * turn + 2)),
        ]
        written += [_item(4 * turn), _item(4 * turn + 1), _item(4 * turn + 2)]
        module_client.append(sid, batch)
    chunks = _items_reply(module_daemon, session_id=sid, no_repair=True, items_format=FORMAT)
    assert [item for ch in chunks for item in ch.items] == written
    assert not any(ch.messages for ch in chunks)  # no entry at all: the items alone
    assert len(chunks) >= 2 and chunks[-1].done and not any(ch.done for ch in chunks[:-1])
    assert chunks[-1].items  # the last page's chunk ends the reply (no chunk of its own for done)
    first = chunks[0]
    assert first.complete and first.session.message_count == 3500 and first.start_position == 0
    assert _both(module_daemon, sid, FORMAT) == written


@BOTH
def test_items_of_a_window_and_of_chosen_client_ids(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    module_client.append(
        sid, [Message.other(FORMAT, _item(n), client_id=f"k{n}") if n % 2 else Message.user(f"u{n}") for n in range(20)]
    )
    read = functools.partial(_items_reply, module_daemon, session_id=sid, no_repair=True, items_format=FORMAT)
    assert [i for ch in read(last=5) for i in ch.items] == [_item(15), _item(17), _item(19)]
    assert [i for ch in read(after_position=16) for i in ch.items] == [_item(17), _item(19)]
    # entry n is at position n + 1
    assert [i for ch in read(after_position=4, before_position=10) for i in ch.items] == [_item(5), _item(7)]
    chosen = read(client_ids=["k13", "k3", "nope"])
    assert [i for ch in chosen for i in ch.items] == [_item(3), _item(13)] and not chosen[0].complete
    assert [i for ch in read(client_id_prefix="k1") for i in ch.items] == [_item(n) for n in (1, 11, 13, 15, 17, 19)]


@BOTH
def test_a_repairing_items_load_repairs_in_its_transaction_and_reports_it(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str, tmp_path: Path
) -> None:
    call = Message.assistant("", tool_calls=[ToolCall("open", "f", "{}")], format=FORMAT, item=_item(0))
    module_client.append(sid, [call, Message.user("later", format=FORMAT, item=_item(1))])
    chunks = _items_reply(module_daemon, session_id=sid, workdir=str(tmp_path), items_format=FORMAT)
    assert [r.tool_call_id for r in chunks[0].repairs] == ["open"]
    assert [i for ch in chunks for i in ch.items] == [_item(0), _item(1)]  # a synthetic result has no item
    stored = module_client.load(sid, no_repair=True).messages
    assert [m.tool_call_id for m in stored if m.synthetic_reason] == ["open"]
    again = _items_reply(module_daemon, session_id=sid, workdir=str(tmp_path), items_format=FORMAT)
    assert not again[0].repairs  # repaired once, written: nothing left to repair


def test_a_bad_items_format_is_refused_and_writes_nothing(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str, tmp_path: Path
) -> None:
    for bad in ("Upper", "has space", "x" * 65, "-lead"):
        with pytest.raises(grpc.RpcError) as caught:
            _items_reply(module_daemon, session_id=sid, workdir=str(tmp_path), items_format=bad)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "items_format" in (caught.value.details() or "")
    assert sid not in [s.id for s in module_client.list_sessions(id_contains=sid)]


@BOTH
def test_item_chunks_stay_near_a_mib_and_a_large_item_travels_alone(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    small = [Message.other(FORMAT, b"%d" % n + b" " * 3000) for n in range(400)]
    module_client.append(sid, small)
    large = os.urandom(3 * MIB)
    module_client.append(sid, Message.other(FORMAT, large))
    module_client.append(sid, small)
    chunks = _items_reply(module_daemon, session_id=sid, no_repair=True, items_format=FORMAT)
    got = [i for ch in chunks for i in ch.items]
    assert got == [m.item for m in small] + [large] + [m.item for m in small]
    for chunk in chunks:
        if large in chunk.items:
            assert len(chunk.items) == 1
        else:
            assert chunk.ByteSize() <= LOAD_CHUNK_BYTES + 64 * 1024


@BOTH
def test_an_item_read_sees_a_clear_made_between_its_pages_as_a_conflict(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    # 12 MB of items, far more than a stream's flow-control window holds ahead of the reader
    for at in range(0, 3000, 500):
        module_client.append(sid, [Message.other(FORMAT, _item(n) + b" " * 4000) for n in range(at, at + 500)])
    options = [("grpc.max_receive_message_length", 64 * MIB)]
    with grpc.insecure_channel(module_daemon.address, options=options) as channel:
        stream = pb_grpc.SessionServiceStub(channel).Load(
            pb.LoadRequest(session_id=sid, no_repair=True, items_format=FORMAT), timeout=60
        )
        first = next(stream)  # the first page; the next is read only when asked for
        assert first.items and not first.done
        module_client.clear(sid)  # the entries the stream has not sent yet are gone
        with pytest.raises(grpc.RpcError) as caught:
            list(stream)
    assert caught.value.code() == grpc.StatusCode.ABORTED
