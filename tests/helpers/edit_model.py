"""Random sequences of Append, EditTail and Clear (erasing or not), and the reference model they must agree with.

The model (:class:`Model`) is written from the EditTail and Clear comments of the proto and
docs/plans/issue-14-design.md, not from the daemon's code: an edit removes the last N visible
entries (or every visible entry after a position), refusing more than are visible; a removed
assistant's calls leave the history and a removed result reopens its call; one edit event takes
the next position and the replacements follow it with Append's rules, all or nothing; an edit is
conditional on the last position and idempotent by request id (a replay has no removed entries).
A real result for a call answered by a synthetic repair supersedes it. A Clear with erase empties
the history like a Clear, says how many events of the log it erased,
keeps usage, and keeps the first result of every request id (a retry still replays). Load repairs
every unanswered call and projects each assistant's results right after it.

Hypothesis draws the sequences (valid and invalid: both removal modes, more than visible, a wrong
expected position, reused request ids, results for removed calls); after every step the answer must
equal the model's, and every Load its projection. Written-out sequences around a
superseded repair are in tests/helpers/edit_sequences.py.

The sequences run on a ``Storage`` in-process, both backends, with many examples
(tests/storage/test_edit_property.py, :class:`InProcess`: each request
built as the daemon's service builds it from the wire message, each reply read as the wire carries it),
and through a real daemon's generated stub with a few (tests/e2e/, :class:`Real`).
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import grpc
from hypothesis import strategies as st

from claw_sessiond.errors import SessiondError
from claw_sessiond.model import UsageDelta
from claw_sessiond.storage import Storage
from claw_sessiond.validate import prepare_edit, prepare_usage
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.in_process import from_wire, refusal, rpc_error, wire_history
from tests.storage._support import job

WORKDIR = "/tmp"
CALL_IDS = ("c0", "c1", "c2", "c3")
Outcome = tuple[str, Any]  # ("ok", result) or ("err", (code name, reason))
INVALID = "INVALID_ARGUMENT"


# ---------------------------------------------------------------- the reference model


@dataclass(frozen=True)
class Entry:
    position: int
    role: str
    content: str = ""
    calls: tuple[str, ...] = ()
    tool_call_id: str = ""
    synthetic: bool = False


@dataclass
class Request:
    kind: str
    key: Any
    result: Any
    erased: bool = False  # its content was erased since: any retry of the same kind replays


@dataclass
class Session:
    stored: bool = False
    last: int = 0
    logged: int = 0  # history events in the log (an erasing clear reports how many it removed)
    visible: list[Entry] = field(default_factory=list)
    # call id -> (assistant position, index, answered, answered by a synthetic repair)
    calls: dict[str, tuple[int, int, bool, bool]] = field(default_factory=dict)
    usage: int = 0
    requests: dict[str, Request] = field(default_factory=dict)


class Model:
    """What every operation must return and leave behind."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}

    def _s(self, sid: str) -> Session:
        return self.sessions.setdefault(sid, Session())

    @staticmethod
    def _batch_error(batch: list[dict[str, Any]]) -> Outcome | None:
        seen: set[str] = set()
        for m in batch:
            for c in m.get("calls", ()):
                if c in seen:
                    return ("err", (INVALID, "DUPLICATE_TOOL_CALL_ID"))
                seen.add(c)
        return None

    @staticmethod
    def _replay(s: Session, rid: str, kind: str, key: Any) -> Outcome | None:
        found = s.requests.get(rid)
        if found is None:
            return None
        if found.kind != kind or (found.key != key and not found.erased):
            return ("err", (INVALID, "REQUEST_ID_REUSED"))
        return ("ok", found.result)

    @staticmethod
    def _write(s: Session, batch: list[dict[str, Any]]) -> Outcome:
        """Append ``batch`` to ``s`` with Append's rules (``s`` is a scratch copy: dropped on refusal)."""
        for m in batch:
            s.last += 1
            s.logged += 1
            if m["role"] == "tool":
                found = s.calls.get(m["tool_call_id"])
                if found is None:
                    return ("err", ("FAILED_PRECONDITION", "UNKNOWN_TOOL_CALL"))
                if found[2] and not found[3]:
                    return ("err", ("FAILED_PRECONDITION", "TOOL_CALL_ALREADY_ANSWERED"))
                if found[3]:  # a real result supersedes the synthetic one: the log keeps it, hidden
                    s.visible = [e for e in s.visible if not (e.synthetic and e.tool_call_id == m["tool_call_id"])]
                s.calls[m["tool_call_id"]] = (found[0], found[1], True, False)
            for index, c in enumerate(m.get("calls", ())):
                if c in s.calls:
                    return ("err", (INVALID, "DUPLICATE_TOOL_CALL_ID"))
                s.calls[c] = (s.last, index, False, False)
            s.visible.append(
                Entry(s.last, m["role"], m.get("content", ""), tuple(m.get("calls", ())), m.get("tool_call_id", ""))
            )
        return ("ok", None)

    def _commit(self, sid: str, scratch: Session, rid: str, request: Request) -> None:
        scratch.stored = True
        scratch.requests = {**scratch.requests, rid: request}
        self.sessions[sid] = scratch

    @staticmethod
    def _copy(s: Session) -> Session:
        return replace(s, visible=list(s.visible), calls=dict(s.calls), requests=dict(s.requests))

    def append(self, sid: str, batch: list[dict[str, Any]], rid: str) -> Outcome:
        bad = self._batch_error(batch)
        if bad:
            return bad
        s = self._s(sid)
        replayed = self._replay(s, rid, "append", repr(batch))
        if replayed:
            return replayed if replayed[0] == "err" else ("ok", (*replayed[1], True))
        scratch = self._copy(s)
        first = s.last + 1
        written = self._write(scratch, batch)
        if written[0] == "err":
            return written
        self._commit(sid, scratch, rid, Request("append", repr(batch), (first, scratch.last)))
        return ("ok", (first, scratch.last, False))

    def edit(
        self, sid: str, remove_last: int, after: int, batch: list[dict[str, Any]], expected: int, rid: str
    ) -> Outcome:
        if remove_last < 0 or after < 0 or (remove_last and after):
            return ("err", (INVALID, "INVALID_MESSAGE"))
        if not (remove_last or after or batch):
            return ("err", (INVALID, "EMPTY_BATCH"))
        bad = self._batch_error(batch)
        if bad:
            return bad
        s = self._s(sid)
        key = (remove_last, after, repr(batch), expected)
        replayed = self._replay(s, rid, "edit", key)
        if replayed:
            return replayed if replayed[0] == "err" else ("ok", ((), *replayed[1], True))
        if expected and expected != s.last:
            return ("err", ("ABORTED", "SEQUENCE_CONFLICT"))
        if remove_last > len(s.visible) or after > s.last:
            return ("err", (INVALID, "INVALID_MESSAGE"))
        by_position = sorted(s.visible, key=lambda e: e.position)
        if remove_last:
            removed = by_position[len(by_position) - remove_last :]
        elif after:
            removed = [e for e in by_position if e.position > after]
        else:
            removed = []
        scratch = self._copy(s)
        gone = {e.position for e in removed}
        scratch.visible = [e for e in s.visible if e.position not in gone]
        for e in removed:
            if e.tool_call_id and e.tool_call_id in scratch.calls:
                assistant, index, _, _ = scratch.calls[e.tool_call_id]
                scratch.calls[e.tool_call_id] = (assistant, index, False, False)
        for e in removed:
            for c in e.calls:
                scratch.calls.pop(c, None)
        scratch.last += 1
        scratch.logged += 1
        edit_position = scratch.last
        written = self._write(scratch, batch)
        if written[0] == "err":
            return written
        first, last = (edit_position + 1, scratch.last) if batch else (0, 0)
        self._commit(sid, scratch, rid, Request("edit", key, (edit_position, first, last)))
        return ("ok", (tuple(sorted(gone)), edit_position, first, last, False))

    def clear(self, sid: str, erase: bool, rid: str) -> Outcome:
        s = self._s(sid)
        replayed = self._replay(s, rid, "clear", erase)
        if replayed:
            return replayed if replayed[0] == "err" else ("ok", (replayed[1][0], True, replayed[1][1]))
        scratch = self._copy(s)
        erased = scratch.logged if erase else 0
        if erase:
            scratch.logged = 0
            for r in scratch.requests.values():
                if r.kind in ("append", "edit"):
                    r.erased = True
        scratch.last += 1
        scratch.logged += 1
        scratch.visible, scratch.calls = [], {}
        self._commit(sid, scratch, rid, Request("clear", erase, (scratch.last, erased)))
        return ("ok", (scratch.last, False, erased))

    def usage(self, sid: str, tokens: int) -> Outcome:
        s = self._s(sid)
        s.stored = True
        s.usage += tokens
        return ("ok", s.usage)

    def load(self, sid: str) -> tuple[Any, ...]:
        """(repairs, projection, usage, last position, message count); repairs are written as the daemon must."""
        s = self.sessions.get(sid)
        if s is None or not s.stored:
            return [], [], 0, 0, 0
        repairs = []
        for (assistant, _index), c in sorted((v[:2], c) for c, v in s.calls.items() if not v[2]):
            s.last += 1
            s.logged += 1
            s.calls[c] = (assistant, _index, True, True)
            s.visible.append(Entry(s.last, "tool", "", (), c, synthetic=True))
            repairs.append((c, assistant, s.last))
        owner = {c: v[0] for c, v in s.calls.items()}
        by_position = sorted(s.visible, key=lambda e: e.position)
        projection: list[Entry] = []
        for e in by_position:
            if e.role == "tool":
                continue
            projection.append(e)
            if e.role == "assistant":
                projection.extend(
                    t for t in by_position if t.role == "tool" and owner.get(t.tool_call_id) == e.position
                )
        return repairs, projection, s.usage, s.last, len(s.visible)


# ---------------------------------------------------------------- the two sides

LoadAnswer = tuple[Any, ...]  # (repairs, projection, input tokens, last position, message count)


class Side(Protocol):
    """Where the operations go: :class:`Real` (a daemon) or :class:`InProcess` (a storage)."""

    async def append(self, sid: str, batch: list[dict[str, Any]], rid: str) -> Outcome: ...

    async def edit(
        self, sid: str, remove_last: int, after: int, batch: list[dict[str, Any]], expected: int, rid: str
    ) -> Outcome: ...

    async def clear(self, sid: str, erase: bool, rid: str) -> Outcome: ...

    async def usage(self, sid: str, tokens: int) -> Outcome: ...

    async def load(self, sid: str) -> LoadAnswer: ...


def _pb(m: dict[str, Any]) -> pb.Message:
    role = {"user": pb.ROLE_USER, "assistant": pb.ROLE_ASSISTANT, "tool": pb.ROLE_TOOL}[m["role"]]
    return pb.Message(
        role=role,
        content=m.get("content", ""),
        tool_calls=[pb.ToolCall(id=c, name="bash", arguments="{}") for c in m.get("calls", ())],
        tool_call_id=m.get("tool_call_id", ""),
    )


_ROLE = {pb.ROLE_USER: "user", pb.ROLE_ASSISTANT: "assistant", pb.ROLE_TOOL: "tool"}


def _entry(m: Any) -> Entry:
    """A wire ``Message`` as the model keeps it."""
    return Entry(
        m.position,
        _ROLE[m.role],
        "" if m.synthetic.reason else m.content,
        tuple(c.id for c in m.tool_calls),
        m.tool_call_id,
        m.synthetic.reason == pb.SYNTHETIC_REASON_INTERRUPTED,
    )


class Real:
    """The operations through a daemon's generated stub (no client-side checks)."""

    def __init__(self, stub: pb_grpc.SessionServiceStub) -> None:
        self.stub = stub

    def _call(self, method: str, request: Any) -> Any:
        try:
            return ("ok", getattr(self.stub, method)(request, timeout=30))
        except grpc.RpcError as exc:
            return ("err", rpc_error(exc))

    async def append(self, sid: str, batch: list[dict[str, Any]], rid: str) -> Outcome:
        got = self._call("Append", pb.AppendRequest(session_id=sid, messages=[_pb(m) for m in batch], request_id=rid))
        if got[0] == "err":
            return got  # type: ignore[no-any-return]
        return ("ok", (got[1].first_position, got[1].last_position, got[1].replayed))

    async def edit(
        self, sid: str, remove_last: int, after: int, batch: list[dict[str, Any]], expected: int, rid: str
    ) -> Outcome:
        request = pb.EditTailRequest(
            session_id=sid,
            remove_last=remove_last,
            after_position=after,
            replacements=[_pb(m) for m in batch],
            expected_last_position=expected,
            request_id=rid,
        )
        got = self._call("EditTail", request)
        if got[0] == "err":
            return got  # type: ignore[no-any-return]
        r = got[1]
        return (
            "ok",
            (tuple(m.position for m in r.removed), r.edit_position, r.first_position, r.last_position, r.replayed),
        )

    async def clear(self, sid: str, erase: bool, rid: str) -> Outcome:
        got = self._call("Clear", pb.ClearRequest(session_id=sid, erase=erase, request_id=rid))
        if got[0] == "err":
            return got  # type: ignore[no-any-return]
        return ("ok", (got[1].position, got[1].replayed, got[1].events_erased))

    async def usage(self, sid: str, tokens: int) -> Outcome:
        got = self._call("RecordUsage", pb.RecordUsageRequest(session_id=sid, input_tokens=tokens))
        return got if got[0] == "err" else ("ok", got[1].usage.input_tokens)  # type: ignore[no-any-return]

    async def load(self, sid: str) -> LoadAnswer:
        chunks = list(self.stub.Load(pb.LoadRequest(session_id=sid, workdir=WORKDIR), timeout=30))
        first = chunks[0]
        repairs = [(r.tool_call_id, r.assistant_position, r.position) for r in first.repairs]
        projection = [_entry(m) for chunk in chunks for m in chunk.messages]
        s = first.session
        return repairs, projection, s.usage.input_tokens, s.last_position, s.message_count


class InProcess:
    """The same operations on a ``Storage``, requests and replies through the daemon's own conversions."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def append(self, sid: str, batch: list[dict[str, Any]], rid: str) -> Outcome:
        try:
            r = await self.storage.append(job(sid, *from_wire(_pb(m) for m in batch), request_id=rid))
        except SessiondError as exc:
            return refusal(exc)
        return ("ok", (r.first_position, r.last_position, r.replayed))

    async def edit(
        self, sid: str, remove_last: int, after: int, batch: list[dict[str, Any]], expected: int, rid: str
    ) -> Outcome:
        try:
            edit = prepare_edit(
                sid,
                from_wire(_pb(m) for m in batch),
                remove_last=remove_last,
                after_position=after,
                expected_last_position=expected,
                request_id=rid,
                workdir="",
                run_id="",
                trace_id="trace",
                discard_pending=False,
                max_message_bytes=1 << 20,
                max_batch_messages=1000,
            )
            r = await self.storage.edit_tail(edit)
        except SessiondError as exc:
            return refusal(exc)
        removed = tuple(m.position for m in r.removed)
        return ("ok", (removed, r.edit_position, r.first_position, r.last_position, r.replayed))

    async def clear(self, sid: str, erase: bool, rid: str) -> Outcome:
        try:
            r = await self.storage.clear(
                sid, request_id=rid, expected_last_position=0, workdir="", trace_id="trace", erase=erase
            )
        except SessiondError as exc:
            return refusal(exc)
        return ("ok", (r.position, r.replayed, r.events_erased))

    async def usage(self, sid: str, tokens: int) -> Outcome:
        try:
            r = await self.storage.record_usage(
                sid, prepare_usage(UsageDelta(tokens)), request_id="", workdir="", trace_id="trace"
            )
        except SessiondError as exc:
            return refusal(exc)
        return ("ok", r.usage.input_tokens)

    async def load(self, sid: str) -> LoadAnswer:
        loaded = await self.storage.load(sid, WORKDIR, "trace")
        repairs = [(r.tool_call_id, r.assistant_position, r.position) for r in loaded.repairs]
        projection = [_entry(m) for m in await wire_history(self.storage, loaded)]
        s = loaded.session
        return repairs, projection, s.usage.input_tokens, s.last_position, s.message_count


# ---------------------------------------------------------------- operations

call_id = st.sampled_from(CALL_IDS)
text = st.text(alphabet="abcxyz é", max_size=6)
assistant_msg = st.builds(
    lambda content, calls: {"role": "assistant", "content": content, "calls": calls},
    text,
    st.lists(call_id, max_size=2),
)
user_msg = st.builds(lambda content: {"role": "user", "content": content}, text)
tool_msg = st.builds(lambda c, content: {"role": "tool", "tool_call_id": c, "content": content or "r"}, call_id, text)
batch = st.lists(st.one_of(user_msg, assistant_msg, tool_msg), min_size=1, max_size=3)
removal = st.tuples(
    # "last": at most the visible entries; "over": one more than visible; "after": how far back from the last
    # position (-1: beyond it); "both" and "negative" are refused.
    st.sampled_from(["last", "last", "last", "after", "after", "over", "both", "negative"]),
    st.integers(-1, 4),
)
replacements = st.lists(st.one_of(user_msg, user_msg, assistant_msg, tool_msg), max_size=3)
expectation = st.sampled_from(["none", "none", "right", "wrong"])
operation = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 1), batch),
    st.tuples(st.just("append"), st.integers(0, 1), batch),
    st.tuples(st.just("edit"), st.integers(0, 1), removal, replacements).map(lambda t: (*t, "none")),
    st.tuples(st.just("edit"), st.integers(0, 1), removal, replacements).map(lambda t: (*t, "none")),
    st.tuples(st.just("edit"), st.integers(0, 1), removal, replacements, expectation),
    st.tuples(st.just("clear"), st.integers(0, 1), st.booleans()),
    st.tuples(st.just("usage"), st.integers(0, 1), st.integers(1, 50)),
    st.tuples(st.just("load"), st.integers(0, 1)),
    st.tuples(st.just("retry"), st.integers(0, 1)),
    st.tuples(st.just("reuse"), st.integers(0, 1), batch),
)


#: What the comparisons covered, summed over the sequences (a test reports them as figures).
COUNTS = {"sequences": 0, "operations": 0, "edits": 0, "erasing_clears": 0, "loads_compared": 0, "refusals": 0}


def _edit_arguments(model: Model, sid: str, how: tuple[str, int], expect: str) -> tuple[int, int, int]:
    """(remove_last, after_position, expected_last_position) of a drawn edit, from the model's last position."""
    session = model.sessions.get(sid)
    last, visible = (session.last, len(session.visible)) if session else (0, 0)
    kind, n = how
    remove_last, after = {
        "last": (max(1, min(n, visible)), 0),
        "over": (visible + 1, 0),
        "after": (0, max(last - n, 0)),
        "both": (1, max(last, 1)),
        "negative": (-1, 0),
    }[kind]
    expected = {"none": 0, "right": last, "wrong": last + 1}[expect]
    return remove_last, after, expected


async def _run(model: Model, real: Side, op: tuple[Any, ...], sid: str, rid: str) -> Outcome:
    kind = op[0]
    if kind == "append":
        expected, got = model.append(sid, op[2], rid), await real.append(sid, op[2], rid)
    elif kind == "edit":
        remove_last, after, expect = _edit_arguments(model, sid, op[2], op[4])
        args = (sid, remove_last, after, op[3], expect, rid)
        expected, got = model.edit(*args), await real.edit(*args)
    elif kind == "clear":
        expected, got = model.clear(sid, op[2], rid), await real.clear(sid, op[2], rid)
    else:
        expected, got = model.usage(sid, op[2]), await real.usage(sid, op[2])
    assert got == expected, f"{op} rid={rid}: got {got}, model {expected}"
    return expected


async def run_sequence(real: Side, ops: list[tuple[Any, ...]]) -> None:
    """Every operation on the side and on a new model, on two new sessions; the answers must be equal."""
    model = Model()
    prefix = uuid.uuid4().hex[:12]
    sids = [f"edit-{prefix}-a", f"edit-{prefix}-b"]
    rids = (f"{prefix}-{n}" for n in itertools.count())
    last_write: dict[int, tuple[tuple[Any, ...], str]] = {}
    for op in ops:
        kind, which = op[0], op[1]
        sid = sids[which]
        if kind == "load":
            assert await real.load(sid) == model.load(sid)
            COUNTS["loads_compared"] += 1
            continue
        if kind in ("retry", "reuse"):  # the last write of this session again: as it was, or with other content
            if which not in last_write:
                continue
            previous, rid = last_write[which]
            op = previous if kind == "retry" else ("append", which, op[2])
        else:
            rid = next(rids)
        outcome = await _run(model, real, op, sid, rid)
        if kind not in ("retry", "reuse", "usage"):
            last_write[which] = (op, rid)
        COUNTS["operations"] += 1
        COUNTS["refusals"] += outcome[0] == "err"
        COUNTS["edits"] += op[0] == "edit" and outcome[0] == "ok"
        COUNTS["erasing_clears"] += op[0] == "clear" and op[2] and outcome[0] == "ok"
    for sid in sids:
        assert await real.load(sid) == model.load(sid)
        again = await real.load(sid)
        assert again[0] == [] and again == model.load(sid)
        COUNTS["loads_compared"] += 2
    COUNTS["sequences"] += 1


async def check_comparison_can_fail(real: Side) -> None:
    """Guard: a model that forgets one rule (a removed result reopens its call) must disagree with ``real``."""
    model = Model()
    sid = f"edit-guard-{uuid.uuid4().hex[:8]}"
    batch = [{"role": "assistant", "content": "", "calls": ["c0"]}, {"role": "tool", "tool_call_id": "c0"}]
    model.append(sid, batch, "g1")
    model.edit(sid, 1, 0, [], 0, "g2")
    await real.append(sid, batch, "g1")
    await real.edit(sid, 1, 0, [], 0, "g2")
    good = model.load(sid)
    assert await real.load(sid) == good and good[0] == [("c0", 1, 4)], "the removed result's call was repaired"
    forgetful = Model()
    forgetful.append(sid, batch, "g1")
    forgetful.sessions[sid].visible.pop()  # removes the result but leaves its call answered
    forgetful.sessions[sid].last += 1
    assert forgetful.load(sid) != good
