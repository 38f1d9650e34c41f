"""Entries' property: random sequences must agree with a small reference model.

The model is written from the proto's comments and docs/api.md, not from the
daemon's code: an entry's item, metadata and client id come back exactly; a
client id is unique among the visible entries (a duplicate, also within one
append, is ALREADY_EXISTS and writes nothing; twice in one append is wrong in itself, refused
before its request id is looked at, like any invalid request); Clear frees the ids and keeps
usage; an entry's usage adds to the totals, one currency per session (another
currency is FAILED_PRECONDITION and writes nothing); a request id replays its
first result (the usage counted once) and refuses other content; a bounded
Load (``last``) is the last N visible entries, ``complete`` when nothing was
left out. No tool calls here: their pairing is the other property tests'.

The sequences run on a ``Storage`` in-process, both backends, with many examples
(tests/storage/test_property_entries.py, :class:`InProcess`: each request built as the daemon's service
builds it from the wire message, each entry read back as the wire carries it), and through a real
daemon's generated stub with a few (tests/e2e/test_property_entries.py, :class:`Real`).
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from hypothesis import strategies as st

from claw_sessiond.entries import check_load_window
from claw_sessiond.errors import SessiondError
from claw_sessiond.storage import Storage
from claw_sessiond_client._status import error_from_rpc
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.in_process import from_wire, wire_history
from tests.storage._support import job

WORKDIR = "/tmp"

#: (role, content, format, item, client id, metadata, (input tokens, cost, currency) or None)
Entry = tuple[str, str, str, bytes, str, str, tuple[int, int, str] | None]
Outcome = tuple[str, Any]


@dataclass
class MSession:
    stored: bool = False
    last: int = 0
    visible: list[tuple[int, Entry]] = field(default_factory=list)
    tokens: int = 0
    cost: int = 0
    currency: str = ""
    requests: dict[str, tuple[list[Entry], tuple[int, int]]] = field(default_factory=dict)


class Model:
    def __init__(self) -> None:
        self.sessions: dict[str, MSession] = {}

    def _s(self, sid: str) -> MSession:
        return self.sessions.setdefault(sid, MSession())

    def append(self, sid: str, batch: list[Entry], rid: str) -> Outcome:
        s = self._s(sid)
        ids = [e[4] for e in batch if e[4]]
        if len(ids) != len(set(ids)):  # wrong in itself: refused before its request id is looked at
            return ("err", "CLIENT_ID_EXISTS")
        if rid in s.requests:
            first, result = s.requests[rid]
            return ("replayed", result) if first == batch else ("err", "REQUEST_ID_REUSED")
        taken = {e[4] for _p, e in s.visible if e[4]}
        currency = s.currency
        for e in batch:  # entry by entry, in order: its client id, then its usage
            if e[4] in taken:
                return ("err", "CLIENT_ID_EXISTS")
            if e[6] is not None and e[6][1]:
                if currency and e[6][2] != currency:
                    return ("err", "CURRENCY_MISMATCH")
                currency = e[6][2]
        for e in batch:
            s.last += 1
            s.visible.append((s.last, e))
            if e[6] is not None:
                s.tokens += e[6][0]
                s.cost += e[6][1]
        s.currency, s.stored = currency, True
        result = (s.last - len(batch) + 1, s.last)
        s.requests[rid] = (list(batch), result)
        return ("ok", result)

    def clear(self, sid: str) -> None:
        s = self._s(sid)
        s.last += 1
        s.visible, s.stored = [], True

    def load(self, sid: str, last: int) -> tuple[list[tuple[int, Entry]], bool, tuple[int, int, str]]:
        s = self._s(sid)
        shown = s.visible[-last:] if last else s.visible
        return shown, len(shown) == len(s.visible), (s.tokens, s.cost, s.currency)


LoadAnswer = tuple[list[tuple[int, Entry]], bool, tuple[int, int, str]]


class Side(Protocol):
    """Where the operations go: :class:`Real` (a daemon) or :class:`InProcess` (a storage)."""

    async def append(self, sid: str, batch: list[Entry], rid: str) -> Outcome: ...

    async def clear(self, sid: str) -> None: ...

    async def load(self, sid: str, last: int) -> LoadAnswer: ...


def _pb_messages(batch: list[Entry]) -> list[pb.Message]:
    messages = []
    for role, content, fmt, item, client_id, metadata, usage in batch:
        m = pb.Message(
            role=pb.ROLE_OTHER if role == "other" else pb.ROLE_USER,
            content=content,
            format=fmt,
            item=item,
            client_id=client_id,
            metadata=metadata,
        )
        if usage is not None:
            m.usage.input_tokens, m.usage.cost_micros, m.usage.currency = usage
        messages.append(m)
    return messages


def _entry(m: Any) -> tuple[int, Entry]:
    """A wire ``Message`` as the model keeps it."""
    usage = (m.usage.input_tokens, m.usage.cost_micros, m.usage.currency) if m.HasField("usage") else None
    role = "other" if m.role == pb.ROLE_OTHER else "user"
    return m.position, (role, m.content, m.format, m.item, m.client_id, m.metadata, usage)


class Real:
    """The operations against a daemon, through the generated stub (no client-side checks)."""

    def __init__(self, stub: pb_grpc.SessionServiceStub) -> None:
        self.stub = stub

    async def append(self, sid: str, batch: list[Entry], rid: str) -> Outcome:
        request = pb.AppendRequest(session_id=sid, messages=_pb_messages(batch), request_id=rid)
        try:
            r = self.stub.Append(request, timeout=30)
        except grpc.RpcError as exc:
            return ("err", str(error_from_rpc(exc).reason))
        return ("replayed" if r.replayed else "ok", (r.first_position, r.last_position))

    async def clear(self, sid: str) -> None:
        self.stub.Clear(pb.ClearRequest(session_id=sid), timeout=30)

    async def load(self, sid: str, last: int) -> LoadAnswer:
        chunks = list(self.stub.Load(pb.LoadRequest(session_id=sid, workdir=WORKDIR, last=last), timeout=30))
        u = chunks[0].session.usage
        shown = [_entry(m) for c in chunks for m in c.messages]
        return shown, chunks[0].complete, (u.input_tokens, u.cost_micros, u.currency)


class InProcess:
    """The same operations on a ``Storage``, requests and replies through the daemon's own conversions."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def append(self, sid: str, batch: list[Entry], rid: str) -> Outcome:
        try:
            r = await self.storage.append(job(sid, *from_wire(_pb_messages(batch)), request_id=rid))
        except SessiondError as exc:
            return ("err", exc.reason.name)
        return ("replayed" if r.replayed else "ok", (r.first_position, r.last_position))

    async def clear(self, sid: str) -> None:
        await self.storage.clear(sid, request_id="", expected_last_position=0, workdir="", trace_id="trace")

    async def load(self, sid: str, last: int) -> LoadAnswer:
        window = check_load_window(last, 0, "")
        loaded = await self.storage.load(sid, WORKDIR, "trace", window=window)
        u = loaded.session.usage
        shown = [_entry(m) for m in await wire_history(self.storage, loaded)]
        return shown, loaded.complete, (u.input_tokens, u.cost_micros, u.currency)


entry = st.builds(
    lambda role, content, item, client_id, metadata, usage: (
        role,
        content,
        "x.item" if item or role == "other" else "",
        (item or b"\x00") if role == "other" else item,
        client_id,
        metadata,
        usage,
    ),
    st.sampled_from(["user", "other"]),
    st.sampled_from(["", "text", "é\n"]),
    st.sampled_from([b"", b"\x00\xff", b'{"a": 1}']),
    st.sampled_from(["", "", "k1", "k2", "k3"]),
    st.sampled_from(["", '{"a": [1,  2]}', "{}"]),
    st.none() | st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from(["USD", "USD", "EUR"])),
).map(lambda e: e if e[6] is None or e[6][1] else (*e[:6], (e[6][0], 0, "")))
operation = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 1), st.lists(entry, min_size=1, max_size=3)),
    st.tuples(st.just("retry"), st.integers(0, 1)),
    st.tuples(st.just("reuse"), st.integers(0, 1), st.lists(entry, min_size=1, max_size=2)),
    st.tuples(st.just("clear"), st.integers(0, 1)),
    st.tuples(st.just("load"), st.integers(0, 1), st.integers(0, 4)),
)


async def run_sequence(real: Side, ops: list[Any]) -> None:
    """Every operation on the side and on a new model, on two new sessions; the answers must be equal."""
    model = Model()
    prefix = uuid.uuid4().hex[:12]
    sids = [f"pe-{prefix}-a", f"pe-{prefix}-b"]
    rids = (f"{prefix}-{n}" for n in itertools.count())
    last: dict[int, tuple[list[Entry], str]] = {}
    for op in ops:
        kind, sid = op[0], sids[op[1]]
        if kind in ("append", "retry", "reuse"):
            if kind == "append":
                batch, rid = op[2], next(rids)
            elif op[1] not in last:
                continue
            elif kind == "retry":
                batch, rid = last[op[1]]
            else:
                batch, rid = op[2], last[op[1]][1]
            expected, got = model.append(sid, batch, rid), await real.append(sid, batch, rid)
            assert got == expected, f"append {batch} rid={rid}: got {got}, model {expected}"
            if kind == "append":
                last[op[1]] = (batch, rid)
        elif kind == "clear":
            model.clear(sid)
            await real.clear(sid)
        else:
            assert await real.load(sid, op[2]) == model.load(sid, op[2]), f"load last={op[2]}"
    for sid in sids:
        assert await real.load(sid, 0) == model.load(sid, 0)


async def check_comparison_can_fail(real: Side) -> None:
    """Guard: a model that let a client id repeat would disagree with ``real``."""
    sid = f"pe-guard-{uuid.uuid4().hex[:8]}"
    one: Entry = ("user", "a", "", b"", "same", "", None)
    assert (await real.append(sid, [one], "g1"))[0] == "ok"
    assert await real.append(sid, [one], "g2") == ("err", "CLIENT_ID_EXISTS")
