"""No request may end in INTERNAL or UNKNOWN, and a refused request changes nothing.

Requests go as raw bytes through generic channel calls (identity
serialisers) to a real daemon subprocess, so nothing client-side filters
them. First the inputs that used to end badly, one by one; then a
hypothesis property over EVERY RPC of the service with generated field
values (extreme and negative integers, long and odd strings, NUL, deep and
invalid JSON, mutated import lines, invalid UTF-8), asserting that the status
is never INTERNAL or UNKNOWN, that a refusal leaves the database unchanged
(a snapshot of everything stored, ``tests.helpers.inspect``), that the daemon keeps serving,
and that its log records no crash. ``CLAW_FULL=1`` runs more examples (500 per backend): every
example is a request through the daemon and a snapshot of the store, some 35 ms. The rules behind the
refusals have in-process properties of their own (``tests/unit/test_validate_requests.py``,
``test_rpc_convert.py``, ``test_json_depth_scan.py``; the storage properties of ``tests/storage``), so
this one proves the wiring: every RPC answers odd input with a clear status and a refusal changes nothing.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond_client import Message, SessionClient, ToolCall
from claw_sessiond_client import _status as B
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from tests.helpers.daemon import DaemonProcess
from tests.helpers.figures import record
from tests.helpers.inspect import stored
from tests.helpers.tiers import scale

SERVICE = "/claw.sessiond.v1.SessionService/"
C = grpc.StatusCode
BAD = (C.INTERNAL, C.UNKNOWN)
SEED = "seed"
OPTIONS = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
UNARY = (
    "Append",
    "RecordUsage",
    "Clear",
    "RecordEvent",
    "ListSessions",
    "GetUsage",
    "Delete",
    "Import",
    "GetStats",
    "Search",
    "GetUsageReport",
    "EditTail",
    "DeleteEntries",
    "CreateSession",
    "ForkSession",
    "UpdateSession",
    "GetScopeStates",
    "EndRun",
    "PingRun",
)
STREAMS = ("Load", "Export")
FOLLOWING = ("Watch", "Attach", "WatchAll")  # stay open while accepted
#: What the property sent (printed with the robustness figures).
TALLY: dict[str, int] = {"requests_sent": 0, "refused": 0}


# ---------------------------------------------------------------- the daemon and raw calls


@pytest.fixture(scope="module")
def edge_daemon(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DaemonProcess, list[str]]]:
    """A daemon with one seeded session (messages, a paired tool call, usage, an audit event) and its export."""
    d = DaemonProcess(tmp_path_factory.mktemp("edge")).start()
    try:
        with SessionClient(address=d.address, autostart=False) as c:
            c.append(SEED, [Message.user("hello"), Message.assistant("", [ToolCall("seed-call", "bash", '{"a":1}')])])
            c.append(SEED, Message.tool("seed-call", "done"))
            c.record_usage(SEED, input_tokens=10, output_tokens=2, cost_micros=100, currency="USD", model="m")
            c.record_event(SEED, "error", {"why": "seeded"})
            lines = list(c.export(SEED))
        yield d, lines
    finally:
        d.stop()


@dataclass
class Outcome:
    code: grpc.StatusCode
    details: str = ""
    replies: list[bytes] = field(default_factory=list)
    reason: str | None = None  # the ErrorInfo reason, if the daemon attached one


def rpc(address: str, method: str, request: bytes) -> Outcome:
    """Send raw request bytes and report the outcome (never raises for a status)."""
    out = Outcome(C.OK)
    with grpc.insecure_channel(address, options=OPTIONS) as channel:
        path = SERVICE + method
        try:
            if method in UNARY:
                out.replies.append(channel.unary_unary(path)(request, timeout=20))
            elif method in STREAMS:
                out.replies.extend(channel.unary_stream(path)(request, timeout=20))
            elif method == "AppendStream":
                out.replies.extend(channel.stream_stream(path)(iter((request,)), timeout=20))
            elif method == "Attach":
                call = channel.unary_stream(path)(request, timeout=20)
                out.replies.append(next(call))
                call.cancel()
            else:  # Watch: what is there, then it follows until the deadline
                out.replies.extend(channel.unary_stream(path)(request, timeout=0.3))
        except grpc.RpcError as exc:
            code = exc.code()  # type: ignore[attr-defined]
            if method in FOLLOWING and code in (C.DEADLINE_EXCEEDED, C.CANCELLED):
                return out
            info = B._error_info(exc.trailing_metadata())  # type: ignore[attr-defined]
            return Outcome(code, exc.details() or "", out.replies, info.reason if info else None)  # type: ignore[attr-defined]
    return out


def refused(
    daemon: DaemonProcess, method: str, request: bytes, code: grpc.StatusCode = C.INVALID_ARGUMENT
) -> tuple[str, str | None]:
    """Send a request that must be refused with ``code``; check nothing changed; return (details, reason)."""
    store = stored(daemon)
    before = store.snapshot()
    got = rpc(daemon.address, method, request)
    assert got.code == code, f"{method}: got {got.code.name} ({got.details[:300]}), want {code.name}"
    assert got.details.strip() and "Traceback" not in got.details
    assert store.snapshot() == before, f"{method}: the database changed"
    return got.details, got.reason


def appended(daemon: DaemonProcess, session_id: str) -> pb.AppendResponse:
    request = pb.AppendRequest(session_id=session_id, messages=[pb.Message(role=pb.ROLE_USER, content="after")])
    got = rpc(daemon.address, "Append", request.SerializeToString())
    assert got.code == C.OK, f"append to {session_id!r} after the refusal: {got.code.name} {got.details}"
    return pb.AppendResponse.FromString(got.replies[0])


def renamed(lines: list[str], session_id: str, edit: Callable[[list[dict[str, Any]]], None] | None = None) -> bytes:
    """The seed's export as an ImportRequest for ``session_id``, after ``edit`` of the parsed lines."""
    objs = [json.loads(line) for line in lines]
    for obj in objs:
        obj["session_id"] = session_id
    if edit is not None:
        edit(objs)
    return pb.ImportRequest(lines=[json.dumps(o) for o in objs]).SerializeToString()


def rename_call(objs: list[dict[str, Any]], call_id: str) -> None:
    """Give the seed's tool call (and its result) another id."""
    for o in objs[1:]:
        for call in o["payload"].get("tool_calls", ()):
            call["id"] = call_id
        if o["payload"].get("tool_call_id"):
            o["payload"]["tool_call_id"] = call_id


def first_history_event(objs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objs[1:] if o["position"] is not None)


# ---------------------------------------------------------------- the inputs that used to end badly


@pytest.mark.both_backends("positions near 2**63 against PostgreSQL's bigint")
def test_import_with_a_position_near_2_63_is_refused_and_the_session_stays_usable(
    edge_daemon: tuple[DaemonProcess, list[str]],
) -> None:
    """It used to be stored; every later Append then overflowed int64 and failed with INTERNAL."""
    daemon, lines = edge_daemon

    def near_max(objs: list[dict[str, Any]]) -> None:
        history = [o for o in objs[1:] if o["position"] is not None]
        for i, o in enumerate(history):
            o["position"] = 2**63 - 1 - len(history) + 1 + i

    details, reason = refused(daemon, "Import", renamed(lines, "poisoned", near_max))
    assert reason == "INVALID_IMPORT" and "position" in details
    reply = appended(daemon, "poisoned")
    assert reply.first_position == 1

    # The largest position Import takes is 2**53 - 1; Append goes on from there.
    def high(objs: list[dict[str, Any]]) -> None:
        for i, o in enumerate(o for o in objs[1:] if o["position"] is not None):
            o["position"] = 2**53 - 8 + i

    got = rpc(daemon.address, "Import", renamed(lines, "high", high))
    assert got.code == C.OK, got.details
    assert appended(daemon, "high").last_position <= 2**53 + 1


def test_merge_that_would_push_positions_past_the_bound_is_refused(
    edge_daemon: tuple[DaemonProcess, list[str]],
) -> None:
    daemon, lines = edge_daemon

    def top(objs: list[dict[str, Any]]) -> None:
        for i, o in enumerate(o for o in objs[1:] if o["position"] is not None):
            o["position"] = 2**53 - 10 + i

    assert rpc(daemon.address, "Import", renamed(lines, "merge-top", top)).code == C.OK

    def low(objs: list[dict[str, Any]]) -> None:
        for o in objs[1:]:
            o["trace_id"] = "other-trace"  # not the same events: merge appends them after the stored ones
            for call in o["payload"].get("tool_calls", ()):
                call["id"] = "other-call"
            if o["payload"].get("tool_call_id"):
                o["payload"]["tool_call_id"] = "other-call"
        history = [o for o in objs[1:] if o["position"] is not None]
        for i, o in enumerate(history[1:]):  # a span of 2**52: merged after 2**53 - 8, it would pass the bound
            o["position"] = 2**52 + i

    request = pb.ImportRequest.FromString(renamed(lines, "merge-top", low))
    request.mode = pb.IMPORT_MODE_MERGE
    details, reason = refused(daemon, "Import", request.SerializeToString())
    assert reason == "INVALID_IMPORT" and "positions" in details


@pytest.mark.smoke
def test_id_contains_of_50_kb_is_refused_at_once(edge_daemon: tuple[DaemonProcess, list[str]]) -> None:
    """It used to reach SQLite ("LIKE pattern too complex": UNAVAILABLE, which the client retried for 15 s)."""
    daemon, _ = edge_daemon
    started = time.monotonic()
    details, reason = refused(
        daemon, "ListSessions", pb.ListSessionsRequest(id_contains="x" * 50_000).SerializeToString()
    )
    assert reason == "FIELD_TOO_LARGE" and "256" in details
    with daemon.client() as c, pytest.raises(Exception) as err:
        c.list_sessions("x" * 50_000)
    assert type(err.value).__name__ == "InvalidRequestError"
    assert time.monotonic() - started < 5
    refused(daemon, "ListSessions", pb.ListSessionsRequest(id_contains="se\x00").SerializeToString())
    # The bound itself is allowed: 256 bytes.
    at_bound = pb.ListSessionsRequest(id_contains="é" * 128).SerializeToString()
    assert rpc(daemon.address, "ListSessions", at_bound).code == C.OK


@pytest.mark.parametrize(
    ("name", "edit"),
    [
        ("ts_month_13", lambda objs: first_history_event(objs).update(ts="2026-13-01T00:00:00.000000Z")),
        ("header_feb_30", lambda objs: objs[0].update(updated_at="2026-02-30T00:00:00.000000Z")),
        ("year_zero", lambda objs: objs[0].update(created_at="0000-01-01T00:00:00.000000Z")),
        ("type_is_a_list", lambda objs: first_history_event(objs).update(type=["user_message"])),
        ("type_is_an_object", lambda objs: first_history_event(objs).update(type={"a": 1})),
        (
            "usage_count_over_int64",
            lambda objs: next(o for o in objs[1:] if o["type"] == "usage")["payload"].update(input_tokens=2**64),
        ),
        ("content_lone_surrogate", lambda objs: first_history_event(objs)["payload"].update(content="\ud800")),
        ("payload_nan", lambda objs: first_history_event(objs)["payload"].update(extra=float("nan"))),
        ("workdir_over_4096_bytes", lambda objs: objs[0].update(workdir="/" + "w" * 5000)),
        ("position_2_64", lambda objs: first_history_event(objs).update(position=2**64)),
        ("tool_call_id_over_256_bytes", lambda objs: rename_call(objs, "c" * 257)),
        ("usage_currency_not_a_code", lambda objs: objs[4]["payload"].update(currency="ÄÖÜ")),
        ("usage_model_over_256_bytes", lambda objs: objs[4]["payload"].update(model="m" * 257)),
    ],
)
def test_import_lines_that_used_to_end_badly_are_refused(
    edge_daemon: tuple[DaemonProcess, list[str]], name: str, edit: Callable[[list[dict[str, Any]]], None]
) -> None:
    """Each of these was stored (and then broke Load, ListSessions or Export) or crashed Import with INTERNAL."""
    daemon, lines = edge_daemon
    _, reason = refused(daemon, "Import", renamed(lines, f"imp-{name}", edit))
    assert reason == "INVALID_IMPORT"
    assert rpc(daemon.address, "ListSessions", pb.ListSessionsRequest().SerializeToString()).code == C.OK


def test_import_with_very_deep_tool_arguments_is_refused(edge_daemon: tuple[DaemonProcess, list[str]]) -> None:
    """Arguments are JSON text inside the line; 5,000 levels made the import's check raise RecursionError (INTERNAL)."""
    daemon, lines = edge_daemon

    def deep(objs: list[dict[str, Any]]) -> None:
        call = next(o for o in objs[1:] if o["type"] == "assistant_message")["payload"]["tool_calls"][0]
        call["arguments"] = "[" * 5000 + "]" * 5000

    _, reason = refused(daemon, "Import", renamed(lines, "imp-deep-args", deep))
    assert reason == "INVALID_IMPORT"


@pytest.mark.parametrize(
    "payload",
    ['{"a":"\\ud800"}', '{"\\udfff":1}', '{"a":1e400}', '{"a":-1e999}'],
    ids=["lone_high_surrogate", "lone_low_surrogate_key", "overflowing_number", "overflowing_negative"],
)
def test_event_payloads_that_cannot_be_stored_or_exported_are_refused(
    edge_daemon: tuple[DaemonProcess, list[str]], payload: str
) -> None:
    """A lone surrogate could not be encoded for SQLite (INTERNAL); 1e400 was stored as Infinity (not JSON)."""
    daemon, _ = edge_daemon
    request = pb.RecordEventRequest(session_id=SEED, kind=pb.EVENT_KIND_ERROR, payload=payload)
    _, reason = refused(daemon, "RecordEvent", request.SerializeToString())
    assert reason == "INVALID_EVENT"
    args = pb.AppendRequest(
        session_id=SEED,
        messages=[pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[pb.ToolCall(id="x1", name="n", arguments=payload)])],
    )
    _, reason = refused(daemon, "Append", args.SerializeToString())
    assert reason == "ARGUMENTS_NOT_JSON"


def test_oversized_run_ids_and_attach_fields_are_refused(edge_daemon: tuple[DaemonProcess, list[str]]) -> None:
    daemon, _ = edge_daemon
    request = pb.AppendRequest(
        session_id=SEED, messages=[pb.Message(role=pb.ROLE_USER, content="x")], run_id="r" * 100_000
    )
    _, reason = refused(daemon, "Append", request.SerializeToString())
    assert reason == "FIELD_TOO_LARGE"
    for bad in (pb.AttachRequest(session_id="att", pid=-1), pb.AttachRequest(session_id="att", pid=2**62)):
        _, reason = refused(daemon, "Attach", bad.SerializeToString())
        assert reason == "INVALID_MESSAGE"
    _, reason = refused(daemon, "Attach", pb.AttachRequest(session_id="att", label="l" * 257).SerializeToString())
    assert reason == "FIELD_TOO_LARGE"


def test_a_refusal_quoting_a_huge_input_still_reaches_the_client(edge_daemon: tuple[DaemonProcess, list[str]]) -> None:
    """Messages travel in trailers; one quoting 1 MB of input would exceed the client's metadata limit."""
    daemon, lines = edge_daemon

    def huge_type(objs: list[dict[str, Any]]) -> None:
        first_history_event(objs)["type"] = "t" * 1_000_000

    details, reason = refused(daemon, "Import", renamed(lines, "imp-huge-type", huge_type))
    assert reason == "INVALID_IMPORT" and len(details) <= 1024


@pytest.mark.parametrize(
    ("method", "raw"),
    [
        ("Append", b"\x0a\x02\xff\xfe"),  # session_id of invalid UTF-8
        ("Load", b"\x0a\x02\xc0\xaf\x12\x04/tmp"),
        ("ListSessions", b"\x0a\x01\xff"),
        ("Import", b"\x0a\x03\xed\xa0\x80"),  # an encoded surrogate
        ("GetStats", b"\xff\xff\xff"),  # not a message at all
        ("Watch", b"\x0a\x01\x80"),
    ],
)
def test_undecodable_requests_are_invalid_argument(
    edge_daemon: tuple[DaemonProcess, list[str]], method: str, raw: bytes
) -> None:
    """grpcio's own deserializer answered these with UNKNOWN; the daemon now decodes requests itself."""
    daemon, _ = edge_daemon
    details, reason = refused(daemon, method, raw)
    assert reason == "INVALID_MESSAGE" and "not a valid claw.sessiond.v1." in details
    with grpc.insecure_channel(daemon.address) as channel, pytest.raises(grpc.RpcError) as err:
        channel.unary_unary(SERVICE + method)(raw, timeout=20)
    assert type(B.error_from_rpc(err.value)).__name__ == "InvalidRequestError"


def test_undecodable_append_in_a_stream_ends_the_stream_with_invalid_argument(
    edge_daemon: tuple[DaemonProcess, list[str]],
) -> None:
    daemon, _ = edge_daemon
    store = stored(daemon)
    before = store.snapshot()
    got = rpc(daemon.address, "AppendStream", b"\x0a\x04\x0a\x02\xff\xfe")
    assert got.code == C.INVALID_ARGUMENT and got.reason == "INVALID_MESSAGE", (got.code, got.details)
    assert store.snapshot() == before


# ---------------------------------------------------------------- the property over every RPC

INT64 = st.one_of(
    st.sampled_from([0, 1, -1, -2, 2**31 - 1, -(2**31), 2**53 - 1, 2**53, 2**62, 2**63 - 1, -(2**63)]),
    st.integers(-(2**63), 2**63 - 1),
)
INT32 = st.one_of(st.sampled_from([0, 1, -1, 10000, 10001, 2**31 - 1, -(2**31)]), st.integers(-(2**31), 2**31 - 1))
ODD = [
    "",
    "\x00",
    "a\x00b",
    SEED,
    " seed",
    "../x",
    "%",
    "_",
    "\\",
    "\u202e",
    "\U0001f4a5" * 70,
    "é" * 129,
    "x" * 257,
    "x" * 50_000,
    "/tmp",
    "/" + "w" * 5000,
]
TEXT = st.one_of(st.sampled_from(ODD), st.text(st.characters(codec="utf-8"), max_size=30))
IDS_VALID = st.sampled_from([SEED, "p1", "p2", "p-new"])
IDS = st.one_of(IDS_VALID, TEXT)
DEPTHS = [0, 1, 63, 64, 65, 200, 999, 1000, 5000]
JSON = st.one_of(
    st.sampled_from(['{"a":1}', "{}", "[]", "null", "", "{", "NaN", "1e400", '"\\ud800"', '{"a":"\\udfff"}']),
    st.sampled_from(DEPTHS).map(lambda n: "[" * n + "]" * n),
    st.sampled_from(DEPTHS).map(lambda n: '{"a":' + "[" * n + "]" * n + "}"),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
        max_leaves=8,
    ).map(json.dumps),
    TEXT,
)
ROLE = st.sampled_from([0, 1, 2, 3, 4, 5, -1, 99])
TIMESTAMPS = st.builds(Timestamp, seconds=INT64, nanos=INT32)


@st.composite
def messages(draw: st.DrawFn) -> pb.Message:
    return pb.Message(
        role=draw(ROLE),  # type: ignore[arg-type]
        content=draw(TEXT),
        tool_calls=[
            pb.ToolCall(
                id=draw(st.sampled_from(["c1", "c2", "seed-call", ""]) | TEXT),
                name=draw(TEXT),
                arguments=draw(JSON | TEXT),
                pending=draw(st.booleans()),
                arguments_not_json=draw(st.booleans()),
            )
            for _ in range(draw(st.integers(0, 2)))
        ],
        tool_call_id=draw(st.sampled_from(["", "c1", "seed-call"]) | TEXT),
        name=draw(TEXT),
        # issue 14's entry fields
        format=draw(st.sampled_from(["", "openai.responses", "x", "Bad Tag", "-x"]) | TEXT),
        item=draw(st.sampled_from([b"", b"\x00\xff", b'{"a":1}']) | st.binary(max_size=20)),
        client_id=draw(st.sampled_from(["", "k1", "seed-call", "x" * 257]) | TEXT),
        metadata=draw(JSON),
        usage=draw(
            st.none()
            | st.builds(
                pb.EntryUsage,
                input_tokens=INT64,
                cost_micros=st.sampled_from([0, 1, 2**63 - 1]),
                currency=st.sampled_from(["", "USD", "EUR", "usd"]),
                model=TEXT,
            )
        ),
        cancelled=draw(st.booleans()),
        orphan=draw(st.booleans()),
        supersedes=draw(st.integers(-1, 5)),
    )


#: Tool policies, unknown repair modes included (the daemon refuses those: INVALID_ARGUMENT).
TOOL_POLICIES = st.builds(
    pb.ToolPolicy,
    repair=st.sampled_from([0, 1, 2, 3, 4, -1, 99]),
    allow_orphan_results=st.booleans(),
    allow_unparsed_calls=st.booleans(),
)


def shaped(cls: Any, valid: dict[str, Any], hostile: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Requests of ``cls``: every field valid except at most two drawn from ``hostile``.

    One bad field is enough for a refusal, so mostly-valid requests are what
    reach the deeper checks (storage, import, repair) with one odd value.
    """

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        bad = draw(st.sets(st.sampled_from(sorted(hostile)), max_size=2)) if hostile else set()
        return cls(**{name: draw(hostile[name] if name in bad else valid[name]) for name in valid})

    return build()


SMALL = st.integers(0, 1000)
NOTHING = st.just("")
CONTENT = st.builds(pb.Message, role=st.just(pb.ROLE_USER), content=TEXT)
LABELS = st.dictionaries(st.one_of(st.sampled_from(["app", "user", "a b", ""]), TEXT), TEXT, max_size=3)
SCOPES = st.lists(st.one_of(st.sampled_from(["app:x", "user:x/y"]), TEXT), max_size=3)
DELTAS = st.lists(st.builds(pb.StateDelta, scope=st.one_of(NOTHING, TEXT), delta=JSON), max_size=3)
POLICY = st.builds(
    pb.ToolPolicy,
    repair=st.sampled_from([0, 1, 2, 3, 4, -1]),
    allow_orphan_results=st.booleans(),
    allow_unparsed_calls=st.booleans(),
)


def append_requests() -> st.SearchStrategy[pb.AppendRequest]:
    return shaped(  # type: ignore[no-any-return]
        pb.AppendRequest,
        valid={
            "session_id": IDS_VALID,
            "messages": st.lists(CONTENT, min_size=1, max_size=2),
            "expected_last_position": st.just(0),
            "request_id": NOTHING,
            "workdir": NOTHING,
            "run_id": NOTHING,
            "trace_id": NOTHING,
            "tool_policy": st.none(),
            "state_deltas": st.just([]),
        },
        hostile={
            "session_id": TEXT,
            "messages": st.lists(messages(), max_size=3),
            "expected_last_position": INT64,
            "request_id": TEXT,
            "workdir": TEXT,
            "run_id": TEXT,
            "trace_id": TEXT,
            "tool_policy": TOOL_POLICIES,
            "state_deltas": DELTAS,
        },
    )


def _import_request(lines: list[str]) -> st.SearchStrategy[bytes]:
    value = st.one_of(
        INT64,
        TEXT,
        st.none(),
        st.booleans(),
        st.builds(list),
        st.builds(dict),
        st.floats(),
        JSON.map(lambda t: {"x": t}),
    )

    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        objs = [json.loads(line) for line in lines]
        sid = draw(IDS)
        for o in objs:
            o["session_id"] = sid
        for _ in range(draw(st.integers(0, 2))):
            obj = objs[draw(st.integers(0, len(objs) - 1))]
            # An earlier corruption may have made the payload a scalar or a list:
            # only a dict can take a key.
            payload = obj.get("payload")
            target = payload if isinstance(payload, dict) and draw(st.booleans()) else obj
            key = draw(st.sampled_from([*sorted(target), "extra"]) if target else st.just("extra"))
            target[key] = draw(value)
        texts = [json.dumps(o) for o in objs]
        if draw(st.booleans()):
            texts.insert(draw(st.integers(0, len(texts))), draw(JSON))
        if draw(st.booleans()):
            texts = texts[: draw(st.integers(0, len(texts)))]
        mode = draw(st.sampled_from([0, 1, 2, 7, -1]))
        return pb.ImportRequest(lines=texts, mode=mode).SerializeToString()  # type: ignore[arg-type]

    return build()


def request_strategies(lines: list[str]) -> dict[str, st.SearchStrategy[bytes]]:
    """A strategy of raw request bytes for every RPC of the service."""

    def ser(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
        return strategy.map(lambda m: m.SerializeToString())

    usage_ints = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros")
    return {
        "Load": ser(
            shaped(
                pb.LoadRequest,
                {
                    "session_id": IDS_VALID,
                    "workdir": st.just("/tmp"),
                    "trace_id": NOTHING,
                    "last": st.sampled_from([0, 1, 3]),
                    "after_position": st.just(0),
                    "after_time": st.none(),
                    "scopes": st.just([]),
                    "client_ids": st.just([]),
                    "client_id_prefix": NOTHING,
                    "before_position": st.just(0),
                },
                {
                    "session_id": TEXT,
                    "workdir": TEXT,
                    "trace_id": TEXT,
                    "last": INT32,
                    "after_position": INT64,
                    "after_time": TIMESTAMPS,
                    "scopes": SCOPES,
                    "client_ids": st.lists(TEXT, max_size=3),
                    "client_id_prefix": TEXT,
                    "before_position": INT64,
                },
            )
        ),
        "Append": ser(append_requests()),
        "AppendStream": ser(st.builds(pb.AppendStreamRequest, appends=st.lists(append_requests(), max_size=3))),
        "RecordUsage": ser(
            shaped(
                pb.RecordUsageRequest,
                {
                    "session_id": IDS_VALID,
                    **dict.fromkeys(usage_ints, SMALL),
                    "currency": st.just("USD"),
                    "model": NOTHING,
                    "pricing_version": NOTHING,
                    "request_id": NOTHING,
                    "workdir": NOTHING,
                    "trace_id": NOTHING,
                },
                {
                    "session_id": TEXT,
                    **dict.fromkeys(usage_ints, INT64),
                    "currency": TEXT,
                    "model": TEXT,
                    "pricing_version": TEXT,
                    "request_id": TEXT,
                    "workdir": TEXT,
                    "trace_id": TEXT,
                },
            )
        ),
        "Clear": ser(
            shaped(
                pb.ClearRequest,
                {
                    "session_id": IDS_VALID,
                    "request_id": NOTHING,
                    "expected_last_position": st.just(0),
                    "workdir": NOTHING,
                    "trace_id": NOTHING,
                    "erase": st.booleans(),
                },
                {
                    "session_id": TEXT,
                    "request_id": TEXT,
                    "expected_last_position": INT64,
                    "workdir": TEXT,
                    "trace_id": TEXT,
                },
            )
        ),
        "EditTail": ser(
            shaped(
                pb.EditTailRequest,
                {
                    "session_id": IDS_VALID,
                    "remove_last": st.sampled_from([0, 1, 2]),
                    "after_position": st.just(0),
                    "replacements": st.lists(CONTENT, max_size=2),
                    "expected_last_position": st.just(0),
                    "request_id": NOTHING,
                    "workdir": NOTHING,
                    "run_id": NOTHING,
                    "trace_id": NOTHING,
                    "discard_pending": st.booleans(),
                },
                {
                    "session_id": TEXT,
                    "remove_last": INT32,
                    "after_position": INT64,
                    "replacements": st.lists(messages(), max_size=3),
                    "expected_last_position": INT64,
                    "request_id": TEXT,
                    "workdir": TEXT,
                    "run_id": TEXT,
                    "trace_id": TEXT,
                },
            )
        ),
        "DeleteEntries": ser(
            shaped(
                pb.DeleteEntriesRequest,
                {
                    "session_id": IDS_VALID,
                    "client_ids": st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2),
                    "client_id_prefix": NOTHING,
                    "from_position": st.just(0),
                    "to_position": st.just(0),
                    "expected_last_position": st.just(0),
                    "request_id": NOTHING,
                    "trace_id": NOTHING,
                    "discard_pending": st.booleans(),
                },
                {
                    "session_id": TEXT,
                    "client_ids": st.lists(TEXT, max_size=3),
                    "client_id_prefix": TEXT,
                    "from_position": INT64,
                    "to_position": INT64,
                    "expected_last_position": INT64,
                    "request_id": TEXT,
                    "trace_id": TEXT,
                },
            )
        ),
        "RecordEvent": ser(
            shaped(
                pb.RecordEventRequest,
                {
                    "session_id": IDS_VALID,
                    "kind": st.sampled_from([1, 2]),
                    "payload": st.just('{"a":1}'),
                    "request_id": NOTHING,
                    "trace_id": NOTHING,
                },
                {
                    "session_id": TEXT,
                    "kind": st.sampled_from([0, 3, -5]),
                    "payload": JSON,
                    "request_id": TEXT,
                    "trace_id": TEXT,
                },
            )
        ),
        "Attach": ser(
            shaped(
                pb.AttachRequest,
                {"session_id": IDS_VALID, "pid": st.just(1234), "label": NOTHING, "ping_timeout_seconds": st.just(0)},
                {"session_id": TEXT, "pid": INT64, "label": TEXT, "ping_timeout_seconds": INT64},
            )
        ),
        "EndRun": ser(shaped(pb.EndRunRequest, {"run_id": st.just("0" * 32)}, {"run_id": TEXT})),
        "PingRun": ser(shaped(pb.PingRunRequest, {"run_id": st.just("0" * 32)}, {"run_id": TEXT})),
        "Watch": ser(
            shaped(
                pb.WatchRequest,
                {"session_id": IDS_VALID, "after_position": st.just(0)},
                {"session_id": TEXT, "after_position": INT64},
            )
        ),
        "ListSessions": ser(
            shaped(
                pb.ListSessionsRequest,
                {
                    "id_contains": st.sampled_from(["", "se", "p"]),
                    "limit": st.sampled_from([0, 10]),
                    "labels": st.just({}),
                },
                {"id_contains": TEXT, "limit": INT32, "labels": LABELS},
            )
        ),
        "GetUsage": ser(shaped(pb.GetUsageRequest, {"session_id": IDS_VALID}, {"session_id": TEXT})),
        "Delete": ser(shaped(pb.DeleteRequest, {"session_id": st.sampled_from(["p1", "p2"])}, {"session_id": TEXT})),
        "Export": ser(
            shaped(pb.ExportRequest, {"session_id": st.sampled_from(["", SEED, "p1"])}, {"session_id": TEXT})
        ),
        "Import": _import_request(lines),
        "GetStats": st.just(pb.GetStatsRequest().SerializeToString()),
        "Backup": st.just(pb.BackupRequest().SerializeToString()),
        "Search": ser(
            shaped(
                pb.SearchRequest,
                {
                    "query": st.sampled_from(["seed", "hello world", 'a "b" c*']),
                    "raw": st.just(False),
                    "session_id": st.sampled_from(["", SEED]),
                    "role": st.just(0),
                    "since": st.none(),
                    "until": st.none(),
                    "limit": st.sampled_from([0, 5]),
                    "include_cleared": st.booleans(),
                },
                {
                    "query": TEXT,
                    "raw": st.booleans(),
                    "session_id": TEXT,
                    "role": ROLE,
                    "since": TIMESTAMPS,
                    "until": TIMESTAMPS,
                    "limit": INT32,
                },
            )
        ),
        "WatchAll": ser(
            shaped(
                pb.WatchAllRequest,
                {"after_event_id": st.just(0), "last": st.sampled_from([0, 3]), "resume": st.booleans()},
                {"after_event_id": INT64, "last": INT32},
            )
        ),
        "GetUsageReport": ser(
            shaped(
                pb.GetUsageReportRequest,
                {"since": st.none(), "until": st.none(), "by_session": st.booleans()},
                {"since": TIMESTAMPS, "until": TIMESTAMPS},
            )
        ),
        **session_strategies(ser),
    }


def session_strategies(ser: Callable[[Any], st.SearchStrategy[bytes]]) -> dict[str, st.SearchStrategy[bytes]]:
    """CreateSession, ForkSession, UpdateSession, GetScopeStates."""
    state = st.sampled_from(["", '{"a":1}', '{"a":null}'])
    return {
        "CreateSession": ser(
            shaped(
                pb.CreateSessionRequest,
                {
                    "session_id": st.sampled_from(["p1", "p-new", SEED]),
                    "state": state,
                    "labels": st.just({"app": "x"}),
                    "tool_policy": st.none(),
                    "request_id": NOTHING,
                },
                {"session_id": TEXT, "state": JSON, "labels": LABELS, "tool_policy": POLICY, "request_id": TEXT},
            )
        ),
        "ForkSession": ser(
            shaped(
                pb.ForkSessionRequest,
                {
                    "source_session_id": st.just(SEED),
                    "session_id": st.sampled_from(["p1", "p-new", SEED]),
                    "up_to_position": st.sampled_from([0, 1, 2]),
                    "labels": st.just({}),
                    "workdir": NOTHING,
                },
                {
                    "source_session_id": IDS,
                    "session_id": TEXT,
                    "up_to_position": INT64,
                    "labels": LABELS,
                    "workdir": TEXT,
                },
            )
        ),
        "UpdateSession": ser(
            shaped(
                pb.UpdateSessionRequest,
                {
                    "session_id": st.sampled_from([SEED, "p1"]),
                    "state_deltas": st.just([pb.StateDelta(delta='{"n":1}')]),
                    "set_labels": st.just({"k": "v"}),
                    "remove_labels": st.just([]),
                    "tool_policy": st.none(),
                    "expected_last_position": st.just(0),
                },
                {
                    "session_id": TEXT,
                    "state_deltas": DELTAS,
                    "set_labels": LABELS,
                    "remove_labels": st.lists(TEXT, max_size=3),
                    "tool_policy": POLICY,
                    "expected_last_position": INT64,
                },
            )
        ),
        "GetScopeStates": ser(
            shaped(pb.GetScopeStatesRequest, {"scopes": st.just(["app:x"])}, {"scopes": SCOPES | st.lists(TEXT)})
        ),
    }


@functools.cache
def strategies_for(lines: tuple[str, ...]) -> dict[str, st.SearchStrategy[bytes]]:
    """:func:`request_strategies` of one daemon's export lines, built once for all of the property's examples.

    A strategy is a description, drawn from as often as one likes; built again for every example, Hypothesis
    described its lambdas again each time (reading their source), most of the property's time on the client.
    """
    return request_strategies(list(lines))


#: Raw bytes no client library sends: invalid UTF-8 in field 1 (a string in every request), or garbage.
CORRUPTIONS = st.sampled_from([b"", b"", b"", b"\x0a\x02\xff\xfe", b"\x0a\x03\xed\xa0\x80", b"\xff\xff\xff", b"\x0a"])


def test_the_property_covers_every_rpc() -> None:
    names = {m.name for m in pb.DESCRIPTOR.services_by_name["SessionService"].methods}
    assert names == set(request_strategies(['{"format":"claw-sessiond-export"}'])), "a new RPC needs a strategy here"


@settings(
    max_examples=scale(150, 500),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(data=st.data())
def test_no_request_ends_in_internal_or_unknown_and_refusals_change_nothing(
    edge_daemon: tuple[DaemonProcess, list[str]], data: st.DataObject
) -> None:
    daemon, lines = edge_daemon
    strategies = strategies_for(tuple(lines))
    method = data.draw(st.sampled_from(sorted(strategies)), label="method")
    request = data.draw(strategies[method], label="request") + data.draw(CORRUPTIONS, label="corruption")
    store = stored(daemon)
    before = store.snapshot()
    got = rpc(daemon.address, method, request)
    code, details, replies = got.code, got.details, got.replies
    assert code not in BAD, f"{method}: {code.name} {details[:500]}"
    assert "Traceback" not in details
    changed_nothing = code != C.OK
    if code != C.OK:
        assert details.strip(), f"{method}: {code.name} without a message"
    elif method == "AppendStream":  # the stream succeeded; each append has its own reply
        outcomes = [r for raw in replies for r in pb.AppendStreamResponse.FromString(raw).replies]
        errors = [r.error.code for r in outcomes if r.HasField("error")]
        assert not set(errors) & {C.INTERNAL.value[0], C.UNKNOWN.value[0]}, f"AppendStream replies {errors}"
        assert all(r.error.message.strip() for r in outcomes if r.HasField("error"))
        changed_nothing = len(errors) == len(outcomes)
    if changed_nothing:
        assert store.snapshot() == before, f"{method}: refused ({code.name} {details[:200]}) but the database changed"
    assert daemon.proc is not None and daemon.proc.poll() is None, "the daemon died"
    TALLY["requests_sent"] += 1
    TALLY["refused"] += int(changed_nothing)


def test_the_daemon_logged_no_crash_and_still_serves(edge_daemon: tuple[DaemonProcess, list[str]]) -> None:
    """Runs after the property: an INTERNAL hidden in an AppendStream reply or a log line would show here."""
    daemon, _ = edge_daemon
    log = daemon.log()
    assert "rpc_crashed" not in log and "Unexpected [" not in log, log[-3000:]
    record("no_internal", **TALLY)
    with daemon.client() as c:
        assert c.append("after-property", Message.user("fine")).first_position >= 1
        assert c.stats()["sessions"] >= 1


def test_a_currency_must_be_three_ascii_capitals(edge_daemon: tuple[DaemonProcess, list[str]]) -> None:
    """``str.isupper`` let "ÄÖÜ" through RecordUsage, and that session's export could not be imported again."""
    daemon, _ = edge_daemon
    request = pb.RecordUsageRequest(session_id="cur", input_tokens=1, cost_micros=5, currency="ÄÖÜ")
    _, reason = refused(daemon, "RecordUsage", request.SerializeToString())
    assert reason == "INVALID_USAGE"


def test_everything_the_property_left_behind_exports_and_imports_into_a_fresh_daemon(
    edge_daemon: tuple[DaemonProcess, list[str]], tmp_path: Path
) -> None:
    """Whatever was accepted must round-trip: export every session, import each into a new workspace, same bytes."""
    daemon, _ = edge_daemon
    with daemon.client() as c:
        everything = list(c.export())
    blocks: list[list[str]] = []
    for line in everything:
        if json.loads(line).get("format"):
            blocks.append([])
        blocks[-1].append(line)
    assert len(blocks) >= 2
    (tmp_path / "fresh").mkdir()
    fresh = DaemonProcess(tmp_path / "fresh").start()
    try:
        with fresh.client() as c:
            for block in blocks:
                c.import_lines(block)
            assert list(c.export()) == everything
    finally:
        fresh.stop()
