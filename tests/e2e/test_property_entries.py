"""Property test of entries (issue 14): random sequences against a real daemon and a small reference model.

The model is written from the proto's comments and docs/api.md, not from the
daemon's code: an entry's item, metadata and client id come back exactly; a
client id is unique among the visible entries (a duplicate, also within one
append, is ALREADY_EXISTS and writes nothing; twice in one append is wrong in itself, refused
before its request id is looked at, like any invalid request); Clear frees the ids and keeps
usage; an entry's usage adds to the totals, one currency per session (another
currency is FAILED_PRECONDITION and writes nothing); a request id replays its
first result (the usage counted once) and refuses other content; a bounded
Load (``last``) is the last N visible entries, ``complete`` when nothing was
left out. No tool calls here: their pairing is the other property test's.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess, scale

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


class Real:
    def __init__(self, stub: pb_grpc.SessionServiceStub) -> None:
        self.stub = stub

    def append(self, sid: str, batch: list[Entry], rid: str) -> Outcome:
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
        try:
            r = self.stub.Append(pb.AppendRequest(session_id=sid, messages=messages, request_id=rid), timeout=30)
        except grpc.RpcError as exc:
            from claw_sessiond_client._status import error_from_rpc

            return ("err", str(error_from_rpc(exc).reason))
        return ("replayed" if r.replayed else "ok", (r.first_position, r.last_position))

    def clear(self, sid: str) -> None:
        self.stub.Clear(pb.ClearRequest(session_id=sid), timeout=30)

    def load(self, sid: str, last: int) -> tuple[list[tuple[int, Entry]], bool, tuple[int, int, str]]:
        chunks = list(self.stub.Load(pb.LoadRequest(session_id=sid, workdir=WORKDIR, last=last), timeout=30))
        shown = []
        for m in (m for c in chunks for m in c.messages):
            usage = (m.usage.input_tokens, m.usage.cost_micros, m.usage.currency) if m.HasField("usage") else None
            role = "other" if m.role == pb.ROLE_OTHER else "user"
            shown.append((m.position, (role, m.content, m.format, m.item, m.client_id, m.metadata, usage)))
        u = chunks[0].session.usage
        return shown, chunks[0].complete, (u.input_tokens, u.cost_micros, u.currency)


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


@pytest.fixture(scope="module")
def daemon_stub(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[pb_grpc.SessionServiceStub]:
    d = DaemonProcess(tmp_path_factory.mktemp("property-entries")).start()
    channel = grpc.insecure_channel(d.address)
    try:
        yield pb_grpc.SessionServiceStub(channel)
    finally:
        channel.close()
        d.stop()


@settings(
    max_examples=scale(40, 200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(operation, min_size=6, max_size=scale(20, 40)))
def test_entries_match_the_reference_model(daemon_stub: pb_grpc.SessionServiceStub, ops: list[Any]) -> None:
    model, real = Model(), Real(daemon_stub)
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
            expected, got = model.append(sid, batch, rid), real.append(sid, batch, rid)
            assert got == expected, f"append {batch} rid={rid}: daemon {got}, model {expected}"
            if kind == "append":
                last[op[1]] = (batch, rid)
        elif kind == "clear":
            model.clear(sid)
            real.clear(sid)
        else:
            assert real.load(sid, op[2]) == model.load(sid, op[2]), f"load last={op[2]}"
    for sid in sids:
        assert real.load(sid, 0) == model.load(sid, 0)


def test_the_comparison_can_fail(daemon_stub: pb_grpc.SessionServiceStub) -> None:
    """Guard: a model that let a client id repeat would disagree with the daemon."""
    real = Real(daemon_stub)
    sid = f"pe-guard-{uuid.uuid4().hex[:8]}"
    one: Entry = ("user", "a", "", b"", "same", "", None)
    assert real.append(sid, [one], "g1")[0] == "ok"
    assert real.append(sid, [one], "g2") == ("err", "CLIENT_ID_EXISTS")
