"""A small reference model of SPEC §2-§4, and random operation sequences that must agree with it.

The model (:class:`Model`) is written from SPEC §2-§4 and the README error
table, not from the daemon's code: positions 1, 2, 3 ... never reused; an
append is all or nothing; Clear empties the visible history and keeps usage;
Load repairs every unanswered call with a synthetic result and projects the
history with each assistant's results right after it (existing results
first, then synthetic ones in call order); a real result for a call whose
answer is a synthetic repair supersedes it (the repair leaves the projection,
the result names its position); a request id replays its first result and
refuses other content. Hypothesis generates valid and invalid
sequences (unknown or answered calls, duplicate call ids, negative usage,
request id reuse); after every step the answer must equal the
model's, and every Load must return exactly the model's projection.

The sequences run two ways: on a ``Storage`` in-process, both backends, with many examples
(tests/storage/test_property.py: :class:`InProcess` builds each request as the daemon's service does and
reads each reply as the wire carries it), and through a real daemon's generated stub with a few
(tests/e2e/test_property.py: :class:`Real`). The pure properties of ``history.project``, ``open_calls``,
``plan_repair`` and ``ids.check_session_id`` are in tests/unit/test_history_properties.py.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from hypothesis import strategies as st

from claw_sessiond.errors import SessiondError
from claw_sessiond.model import UsageDelta
from claw_sessiond.storage import Storage
from claw_sessiond.validate import prepare_usage
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.in_process import from_wire, refusal, rpc_error, wire_history
from tests.storage._support import job

WORKDIR = "/tmp"
CALL_IDS = ("c0", "c1", "c2", "c3", "c4")

# ---------------------------------------------------------------- the reference model


@dataclass
class MMsg:
    """A message as the model stores it."""

    position: int
    role: str
    content: str = ""
    calls: tuple[str, ...] = ()
    tool_call_id: str = ""
    synthetic: bool = False
    supersedes: int = 0


@dataclass
class MSession:
    stored: bool = False
    last: int = 0
    visible: list[MMsg] = field(default_factory=list)
    # call id in the visible history -> its answer: "" (none yet), "real", or the position of its synthetic repair
    answered: dict[str, str | int] = field(default_factory=dict)
    call_order: dict[str, tuple[int, int]] = field(default_factory=dict)  # call id -> (assistant position, index)
    usage: list[int] = field(default_factory=lambda: [0, 0])
    requests: dict[str, tuple[str, Any]] = field(default_factory=dict)  # rid -> (content key, result)


Outcome = tuple[str, Any]  # ("ok", result) or ("err", (code name, reason))


class Model:
    """SPEC §2-§4 in a few lines: what every operation must return and leave behind."""

    def __init__(self) -> None:
        self.sessions: dict[str, MSession] = {}
        self.superseded = 0  # synthetic repairs superseded by a real result (appends that succeeded)

    def _s(self, sid: str) -> MSession:
        return self.sessions.setdefault(sid, MSession())

    def append(self, sid: str, batch: list[dict[str, Any]], rid: str) -> Outcome:
        s = self._s(sid)
        seen: set[str] = set()
        for m in batch:  # refused before storage is looked at
            for c in m.get("calls", ()):
                if c in seen:
                    return ("err", ("INVALID_ARGUMENT", "DUPLICATE_TOOL_CALL_ID"))
                seen.add(c)
        key = repr(batch)
        if rid in s.requests:
            if s.requests[rid][0] != key:
                return ("err", ("INVALID_ARGUMENT", "REQUEST_ID_REUSED"))
            return ("ok", (*s.requests[rid][1], True))
        answered = dict(s.answered)
        order = dict(s.call_order)
        position = s.last
        new: list[MMsg] = []
        superseded: set[int] = set()
        for m in batch:
            position += 1
            supersedes = 0
            if m["role"] == "tool":
                cid = m["tool_call_id"]
                if cid not in answered:
                    return ("err", ("FAILED_PRECONDITION", "UNKNOWN_TOOL_CALL"))
                if answered[cid] == "real":
                    return ("err", ("FAILED_PRECONDITION", "TOOL_CALL_ALREADY_ANSWERED"))
                if answered[cid]:  # answered by a synthetic repair: this real result supersedes it
                    supersedes = int(answered[cid])
                    superseded.add(supersedes)
                answered[cid] = "real"
            for index, c in enumerate(m.get("calls", ())):
                if c in answered:
                    return ("err", ("INVALID_ARGUMENT", "DUPLICATE_TOOL_CALL_ID"))
                answered[c] = ""
                order[c] = (position, index)
            new.append(
                MMsg(
                    position,
                    m["role"],
                    m.get("content", ""),
                    tuple(m.get("calls", ())),
                    m.get("tool_call_id", ""),
                    supersedes=supersedes,
                )
            )
        first = s.last + 1
        s.stored, s.last, s.answered, s.call_order = True, position, answered, order
        s.visible = [v for v in s.visible if v.position not in superseded]
        self.superseded += len(superseded)
        s.visible.extend(new)
        s.requests[rid] = (key, (first, position))
        return ("ok", (first, position, False))

    def clear(self, sid: str) -> Outcome:
        s = self._s(sid)
        s.stored = True
        s.last += 1
        s.visible, s.answered, s.call_order = [], {}, {}
        return ("ok", s.last)

    def usage(self, sid: str, input_tokens: int, output_tokens: int) -> Outcome:
        if input_tokens < 0 or output_tokens < 0:
            return ("err", ("INVALID_ARGUMENT", "INVALID_USAGE"))
        s = self._s(sid)
        s.stored = True
        s.usage = [s.usage[0] + input_tokens, s.usage[1] + output_tokens]
        return ("ok", tuple(s.usage))

    def load(self, sid: str) -> tuple[list[tuple[str, int, int]], list[MMsg], tuple[int, int], int]:
        """(repairs, projected history, usage, last position); repairs are written like the daemon must."""
        s = self.sessions.get(sid)
        if s is None or not s.stored:
            return [], [], (0, 0), 0
        open_ = sorted((order, c) for c, order in s.call_order.items() if not s.answered[c])
        repairs = []
        for (assistant_position, _index), c in open_:
            s.last += 1
            s.answered[c] = s.last
            s.visible.append(MMsg(s.last, "tool", "", (), c, synthetic=True))
            repairs.append((c, assistant_position, s.last))
        return repairs, self.projection(s), (s.usage[0], s.usage[1]), s.last

    @staticmethod
    def projection(s: MSession) -> list[MMsg]:
        owner = {c: pos for c, (pos, _i) in s.call_order.items()}
        out: list[MMsg] = []
        for m in s.visible:
            if m.role == "tool":
                continue
            out.append(m)
            if m.role == "assistant":
                out.extend(t for t in s.visible if t.role == "tool" and owner.get(t.tool_call_id) == m.position)
        return out


# ---------------------------------------------------------------- the two sides

LoadAnswer = tuple[list[tuple[str, int, int]], list[MMsg], tuple[int, int], int]


class Side(Protocol):
    """Where the operations go: :class:`Real` (a daemon) or :class:`InProcess` (a storage)."""

    async def append(self, sid: str, batch: list[dict[str, Any]], rid: str) -> Outcome: ...

    async def clear(self, sid: str, rid: str) -> Outcome: ...

    async def usage(self, sid: str, input_tokens: int, output_tokens: int, rid: str) -> Outcome: ...

    async def load(self, sid: str) -> LoadAnswer: ...


def _pb_message(m: dict[str, Any]) -> pb.Message:
    role = {"user": pb.ROLE_USER, "assistant": pb.ROLE_ASSISTANT, "tool": pb.ROLE_TOOL}[m["role"]]
    return pb.Message(
        role=role,
        content=m.get("content", ""),
        tool_calls=[pb.ToolCall(id=c, name="bash", arguments='{"n": 1}') for c in m.get("calls", ())],
        tool_call_id=m.get("tool_call_id", ""),
    )


_ROLE = {pb.ROLE_USER: "user", pb.ROLE_ASSISTANT: "assistant", pb.ROLE_TOOL: "tool"}


def _mmsg(m: Any) -> MMsg:
    """A ``Message`` as the wire carries it, as the model keeps it."""
    return MMsg(
        m.position,
        _ROLE[m.role],
        "" if m.synthetic.reason else m.content,
        tuple(c.id for c in m.tool_calls),
        m.tool_call_id,
        m.synthetic.reason == pb.SYNTHETIC_REASON_INTERRUPTED,
        m.supersedes,
    )


class Real:
    """The operations against a daemon, through the generated stub (no client-side checks)."""

    def __init__(self, stub: pb_grpc.SessionServiceStub) -> None:
        self.stub = stub

    async def append(self, sid: str, batch: list[dict[str, Any]], rid: str) -> Outcome:
        req = pb.AppendRequest(session_id=sid, messages=[_pb_message(m) for m in batch], request_id=rid)
        try:
            r = self.stub.Append(req, timeout=30)
        except grpc.RpcError as exc:
            return ("err", rpc_error(exc))
        return ("ok", (r.first_position, r.last_position, r.replayed))

    async def clear(self, sid: str, rid: str) -> Outcome:
        try:
            return ("ok", self.stub.Clear(pb.ClearRequest(session_id=sid, request_id=rid), timeout=30).position)
        except grpc.RpcError as exc:
            return ("err", rpc_error(exc))

    async def usage(self, sid: str, input_tokens: int, output_tokens: int, rid: str) -> Outcome:
        req = pb.RecordUsageRequest(
            session_id=sid, input_tokens=input_tokens, output_tokens=output_tokens, request_id=rid
        )
        try:
            u = self.stub.RecordUsage(req, timeout=30).usage
        except grpc.RpcError as exc:
            return ("err", rpc_error(exc))
        return ("ok", (u.input_tokens, u.output_tokens))

    async def load(self, sid: str) -> LoadAnswer:
        chunks = list(self.stub.Load(pb.LoadRequest(session_id=sid, workdir=WORKDIR), timeout=30))
        first = chunks[0]
        repairs = [(r.tool_call_id, r.assistant_position, r.position) for r in first.repairs]
        u = first.session.usage
        history_ = [_mmsg(m) for chunk in chunks for m in chunk.messages]
        return repairs, history_, (u.input_tokens, u.output_tokens), first.session.last_position


class InProcess:
    """The same operations on a ``Storage``: each request built as the daemon's service builds it from the wire
    message, each message read back as the wire carries it (the daemon's own conversions)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def append(self, sid: str, batch: list[dict[str, Any]], rid: str) -> Outcome:
        try:
            r = await self.storage.append(job(sid, *from_wire(_pb_message(m) for m in batch), request_id=rid))
        except SessiondError as exc:
            return refusal(exc)
        return ("ok", (r.first_position, r.last_position, r.replayed))

    async def clear(self, sid: str, rid: str) -> Outcome:
        try:
            r = await self.storage.clear(
                sid, request_id=rid, expected_last_position=0, workdir="", trace_id="trace", erase=False
            )
        except SessiondError as exc:
            return refusal(exc)
        return ("ok", r.position)

    async def usage(self, sid: str, input_tokens: int, output_tokens: int, rid: str) -> Outcome:
        try:
            delta = prepare_usage(UsageDelta(input_tokens, output_tokens))
            r = await self.storage.record_usage(sid, delta, request_id=rid, workdir="", trace_id="trace")
        except SessiondError as exc:
            return refusal(exc)
        return ("ok", (r.usage.input_tokens, r.usage.output_tokens))

    async def load(self, sid: str) -> LoadAnswer:
        loaded = await self.storage.load(sid, WORKDIR, "trace")
        repairs = [(r.tool_call_id, r.assistant_position, r.position) for r in loaded.repairs]
        u = loaded.session.usage
        history_ = [_mmsg(m) for m in await wire_history(self.storage, loaded)]
        return repairs, history_, (u.input_tokens, u.output_tokens), loaded.session.last_position


# ---------------------------------------------------------------- operations


call_id = st.sampled_from(CALL_IDS)
text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
assistant_msg = st.builds(
    lambda content, calls: {"role": "assistant", "content": content, "calls": calls},
    text,
    st.lists(call_id, max_size=3),
)
user_msg = st.builds(lambda content: {"role": "user", "content": content}, text)
tool_msg = st.builds(lambda c, content: {"role": "tool", "tool_call_id": c, "content": content or "r"}, call_id, text)
batch = st.lists(st.one_of(user_msg, assistant_msg, tool_msg), min_size=1, max_size=4)
operation = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 1), batch),
    # One result alone: after a Load, often a late real result for a repaired call (it supersedes the repair).
    st.tuples(st.just("append"), st.integers(0, 1), st.lists(tool_msg, min_size=1, max_size=1)),
    st.tuples(st.just("clear"), st.integers(0, 1)),
    st.tuples(st.just("usage"), st.integers(0, 1), st.integers(-3, 1000), st.integers(-1, 100)),
    st.tuples(st.just("load"), st.integers(0, 1)),
    st.tuples(st.just("retry"), st.integers(0, 1)),
    st.tuples(st.just("reuse"), st.integers(0, 1), batch),
)


#: What the comparisons covered, summed over the sequences (a test reports them as figures).
COUNTS = {"sequences": 0, "operations": 0, "loads_compared": 0, "errors_compared": 0, "repairs_superseded": 0}


async def run_sequence(real: Side, ops: list[tuple[Any, ...]]) -> None:
    """Every operation on the side and on a new model, on two new sessions; the answers must be equal."""
    model = Model()
    prefix = uuid.uuid4().hex[:12]
    sids = [f"prop-{prefix}-a", f"prop-{prefix}-b"]
    rids = (f"{prefix}-{n}" for n in itertools.count())
    last_append: dict[int, tuple[list[dict[str, Any]], str]] = {}
    for op in ops:
        kind, which = op[0], op[1]
        sid = sids[which]
        expected: Outcome = ("ok", None)
        if kind in ("append", "reuse", "retry"):
            if kind == "append":
                b, rid = op[2], next(rids)
            elif kind == "reuse":  # the last request id of this session, with other content
                if which not in last_append:
                    continue
                b, rid = op[2], last_append[which][1]
            else:  # exactly the last append again: a retry
                if which not in last_append:
                    continue
                b, rid = last_append[which]
            expected, got = model.append(sid, b, rid), await real.append(sid, b, rid)
            assert got == expected, f"append {b} rid={rid}: got {got}, model {expected}"
            if kind == "append":
                last_append[which] = (b, rid)
        elif kind == "clear":
            rid = next(rids)
            assert await real.clear(sid, rid) == model.clear(sid)
        elif kind == "usage":
            rid = next(rids)
            expected, got = model.usage(sid, op[2], op[3]), await real.usage(sid, op[2], op[3], rid)
            assert got == expected, f"usage {op[2:]}: got {got}, model {expected}"
        else:
            expected_load, got_load = model.load(sid), await real.load(sid)
            assert got_load == expected_load, f"load: got {got_load}, model {expected_load}"
            COUNTS["loads_compared"] += 1
        COUNTS["operations"] += 1
        COUNTS["errors_compared"] += expected[0] == "err"
    for sid in sids:  # the end state, with a second Load repairing nothing
        assert await real.load(sid) == model.load(sid)
        again = await real.load(sid)
        assert again[0] == [], "a second Load repaired again"
        assert again == model.load(sid)
        COUNTS["loads_compared"] += 2
    COUNTS["sequences"] += 1
    COUNTS["repairs_superseded"] += model.superseded


async def check_comparison_can_fail(real: Side) -> None:
    """Guard: a model that forgets one rule (repairs appended at the end) must disagree with ``real``."""
    model = Model()
    sid = f"prop-guard-{uuid.uuid4().hex[:8]}"
    await real.append(sid, [{"role": "assistant", "content": "", "calls": ["c0"]}], "g1")
    await real.append(sid, [{"role": "user", "content": "later"}], "g2")
    model.append(sid, [{"role": "assistant", "content": "", "calls": ["c0"]}], "g1")
    model.append(sid, [{"role": "user", "content": "later"}], "g2")
    good = model.load(sid)
    got = await real.load(sid)
    assert got == good
    wrong = [m for m in good[1] if not m.synthetic] + [m for m in good[1] if m.synthetic]
    assert wrong != got[1], "placement of repairs is not observable: the property test could not catch it"
