"""Hostile and malformed input (SPEC §2, §6; README "Errors"): each refused with its documented code.

Requests are sent as raw bytes through a generic channel (``unary_unary`` /
``unary_stream`` with identity serialisers), so no client-side check stands
between the bytes and the daemon, and bytes a well-behaved client can never
produce (invalid UTF-8, out-of-range enums, garbage) reach it too. For every
case: the status code the README documents, the ``ErrorInfo.reason`` where
the daemon attaches one, a non-empty message, the client exception the
README names, and the database unchanged (a snapshot of everything stored,
``tests.helpers.inspect``, before and after).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from claw_sessiond_client import _status as B
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from tests.helpers.daemon import DaemonProcess
from tests.helpers.figures import record
from tests.helpers.inspect import stored

SERVICE = "/claw.sessiond.v1.SessionService/"
C = grpc.StatusCode
MIB = 1024 * 1024
SEED = "seed"


# ---------------------------------------------------------------- raw protobuf building


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64/enum values are 10-byte two's complement varints
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_bytes(number: int, value: bytes) -> bytes:
    """A length-delimited field (string, bytes or message)."""
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def field_varint(number: int, value: int) -> bytes:
    """A varint field (int64, enum, bool)."""
    return _varint(number << 3) + _varint(value)


def raw_message(role: int, content: bytes = b"", tool_call_id: bytes = b"") -> bytes:
    """A ``Message`` built by hand (field numbers from sessiond.proto)."""
    out = field_varint(1, role)
    if content:
        out += field_bytes(2, content)
    if tool_call_id:
        out += field_bytes(4, tool_call_id)
    return out


def raw_append(session_id: bytes, *messages: bytes, request_id: bytes = b"") -> bytes:
    out = field_bytes(1, session_id) + b"".join(field_bytes(2, m) for m in messages)
    if request_id:
        out += field_bytes(4, request_id)
    return out


# ---------------------------------------------------------------- the catalogue


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    request: Callable[[], bytes]
    code: grpc.StatusCode
    reason: str | None  # None: refused below the daemon's code (no ErrorInfo)
    client_error: str


def user(text: str = "hi") -> pb.Message:
    return pb.Message(role=pb.ROLE_USER, content=text)


def assistant(*calls: tuple[str, str, str], content: str = "") -> pb.Message:
    return pb.Message(
        role=pb.ROLE_ASSISTANT,
        content=content,
        tool_calls=[pb.ToolCall(id=i, name=n, arguments=a) for i, n, a in calls],
    )


def tool(call_id: str, text: str = "result") -> pb.Message:
    return pb.Message(role=pb.ROLE_TOOL, content=text, tool_call_id=call_id)


def append(session_id: str = "hostile", *messages: pb.Message, **kw: object) -> Callable[[], bytes]:
    msgs = list(messages) or [user()]
    return lambda: pb.AppendRequest(session_id=session_id, messages=msgs, **kw).SerializeToString()  # type: ignore[arg-type]


def call(method_cls: type, **kw: object) -> Callable[[], bytes]:
    return lambda: method_cls(**kw).SerializeToString()


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


IR, FP, NF, AB, RE, INT = (
    "InvalidRequestError",
    "ToolCallStateError",
    "SessionNotFoundError",
    "SequenceConflictError",
    "StorageFullError",
    "InternalError",
)

BAD_IDS = {
    "empty": "",
    "slash": "a/b",
    "backslash": "a\\b",
    "dotdot": "..",
    "dotdot_inside": "a..b",
    "dot": ".",
    "nul": "a\x00b",
    "newline": "a\nb",
    "escape": "a\x1b[31mred",
    "del": "a\x7f",
    "c1_control": "a\x85b",
    "tab": "a\tb",
    "leading_space": " a",
    "10kb": "x" * 10 * 1024,
    "257_bytes": "é" * 128 + "x",
    "traversal": "../../etc/passwd",
}

CASES: list[Case] = [
    *(
        Case(f"append_session_id_{k}", "Append", append(v), C.INVALID_ARGUMENT, "INVALID_SESSION_ID", IR)
        for k, v in BAD_IDS.items()
    ),
    Case(
        "load_session_id_traversal",
        "Load",
        call(pb.LoadRequest, session_id="../x", workdir="/tmp"),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    Case(
        "usage_session_id_nul",
        "RecordUsage",
        call(pb.RecordUsageRequest, session_id="a\x00", input_tokens=1),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    Case(
        "clear_session_id_slash",
        "Clear",
        call(pb.ClearRequest, session_id="seed/.."),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    Case(
        "delete_session_id_slash",
        "Delete",
        call(pb.DeleteRequest, session_id="seed/"),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    Case(
        "get_usage_session_id_empty",
        "GetUsage",
        call(pb.GetUsageRequest, session_id=""),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    Case(
        "event_session_id_control",
        "RecordEvent",
        call(pb.RecordEventRequest, session_id="\x01", kind=pb.EVENT_KIND_ERROR, payload="{}"),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    # roles and message shape
    Case(
        "role_unspecified",
        "Append",
        lambda: raw_append(b"hostile", raw_message(0, b"x")),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "role_out_of_range",
        "Append",
        lambda: raw_append(b"hostile", raw_message(99, b"x")),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "role_negative",
        "Append",
        lambda: raw_append(b"hostile", raw_message(-1, b"x")),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case("tool_without_call_id", "Append", append("hostile", tool("")), C.INVALID_ARGUMENT, "INVALID_MESSAGE", IR),
    Case(
        "call_id_on_user_message",
        "Append",
        append("hostile", pb.Message(role=pb.ROLE_USER, content="x", tool_call_id="c1")),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "tool_calls_on_user_message",
        "Append",
        append("hostile", pb.Message(role=pb.ROLE_USER, tool_calls=[pb.ToolCall(id="c", name="n", arguments="{}")])),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "tool_call_without_id",
        "Append",
        append("hostile", assistant(("", "bash", "{}"))),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "tool_call_without_name",
        "Append",
        append("hostile", assistant(("c", "", "{}"))),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    # arguments
    Case(
        "arguments_not_json",
        "Append",
        append("hostile", assistant(("c", "bash", '{"cmd": '))),
        C.INVALID_ARGUMENT,
        "ARGUMENTS_NOT_JSON",
        IR,
    ),
    Case(
        "arguments_nan",
        "Append",
        append("hostile", assistant(("c", "bash", '{"x": NaN}'))),
        C.INVALID_ARGUMENT,
        "ARGUMENTS_NOT_JSON",
        IR,
    ),
    Case(
        "arguments_empty_text",
        "Append",
        append("hostile", assistant(("c", "bash", ""))),
        C.INVALID_ARGUMENT,
        "ARGUMENTS_NOT_JSON",
        IR,
    ),
    Case(
        "arguments_nested_100k_deep",
        "Append",
        append("hostile", assistant(("c", "bash", nested(100_000)))),
        C.INVALID_ARGUMENT,
        "ARGUMENTS_NOT_JSON",
        IR,
    ),
    Case(
        "arguments_json_of_10_mb",
        "Append",
        append("hostile", assistant(("c", "bash", json.dumps({"blob": "a" * 10 * MIB})))),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    # tool-call ids and results
    Case(
        "duplicate_call_id_in_batch",
        "Append",
        append("hostile", assistant(("dup", "bash", "{}"), ("dup", "bash", "{}"))),
        C.INVALID_ARGUMENT,
        "DUPLICATE_TOOL_CALL_ID",
        IR,
    ),
    Case(
        "duplicate_call_id_across_messages_in_batch",
        "Append",
        append("hostile", assistant(("dup", "bash", "{}")), assistant(("dup", "bash", "{}"))),
        C.INVALID_ARGUMENT,
        "DUPLICATE_TOOL_CALL_ID",
        IR,
    ),
    Case(
        "duplicate_call_id_in_history",
        "Append",
        append(SEED, assistant(("seed-call", "bash", "{}"))),
        C.INVALID_ARGUMENT,
        "DUPLICATE_TOOL_CALL_ID",
        IR,
    ),
    Case(
        "result_for_unknown_call", "Append", append(SEED, tool("nope")), C.FAILED_PRECONDITION, "UNKNOWN_TOOL_CALL", FP
    ),
    Case(
        "result_for_unknown_call_new_session",
        "Append",
        append("hostile", tool("nope")),
        C.FAILED_PRECONDITION,
        "UNKNOWN_TOOL_CALL",
        FP,
    ),
    Case(
        "second_result_for_answered_call",
        "Append",
        append(SEED, tool("seed-call")),
        C.FAILED_PRECONDITION,
        "TOOL_CALL_ALREADY_ANSWERED",
        FP,
    ),
    Case(
        "two_results_for_one_call_in_batch",
        "Append",
        append("hostile", assistant(("c9", "bash", "{}")), tool("c9"), tool("c9")),
        C.FAILED_PRECONDITION,
        "TOOL_CALL_ALREADY_ANSWERED",
        FP,
    ),
    Case(
        "valid_messages_then_bad_one",
        "Append",
        append(SEED, user("fine"), tool("nope")),
        C.FAILED_PRECONDITION,
        "UNKNOWN_TOOL_CALL",
        FP,
    ),
    # sizes and batches
    Case(
        "empty_batch",
        "Append",
        lambda: pb.AppendRequest(session_id="hostile").SerializeToString(),
        C.INVALID_ARGUMENT,
        "EMPTY_BATCH",
        IR,
    ),
    Case(
        "batch_of_10001",
        "Append",
        append("hostile", *[user(str(i)) for i in range(10_001)]),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "huge_batch_100k_messages",
        "Append",
        append("hostile", *[user() for _ in range(100_000)]),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "content_over_1_mib",
        "Append",
        append("hostile", user("x" * (MIB + 1))),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "message_over_1_mib_in_tool_call_ids_and_names",
        "Append",
        append(
            "hostile",
            assistant(*[(f"{i:06d}" + "i" * 250, "n" * 256, "{}") for i in range(2200)]),
        ),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "name_over_256_bytes",
        "Append",
        append("hostile", pb.Message(role=pb.ROLE_USER, content="x", name="n" * 257)),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "tool_call_id_over_256_bytes",
        "Append",
        append("hostile", assistant(("c" * 257, "bash", "{}"))),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "request_over_64_mib",  # --max-request-bytes (64 MiB by default; was 16 MiB before entries had items)
        "Append",
        append("hostile", *[user("x" * (MIB - 64)) for _ in range(65)]),
        C.RESOURCE_EXHAUSTED,
        None,
        IR,
    ),
    # request ids, positions, workdirs, trace ids, runs
    Case(
        "request_id_over_128_bytes",
        "Append",
        append("hostile", request_id="r" * 129),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "request_id_control_char",
        "Append",
        append("hostile", request_id="r\x00"),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "request_id_reused_other_content",
        "Append",
        append(SEED, user("other content"), request_id="seed-rid"),
        C.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
        IR,
    ),
    Case(
        "request_id_reused_for_a_clear",
        "Clear",
        call(pb.ClearRequest, session_id=SEED, request_id="seed-rid"),
        C.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
        IR,
    ),
    Case(
        "request_id_reused_for_usage",
        "RecordUsage",
        call(pb.RecordUsageRequest, session_id=SEED, input_tokens=1, request_id="seed-rid"),
        C.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
        IR,
    ),
    Case(
        "expected_position_below_minus_one",
        "Append",
        append(SEED, expected_last_position=-2),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "expected_position_mismatch",
        "Append",
        append(SEED, expected_last_position=999),
        C.ABORTED,
        "SEQUENCE_CONFLICT",
        AB,
    ),
    Case(
        "expected_new_but_exists", "Append", append(SEED, expected_last_position=-1), C.ABORTED, "SEQUENCE_CONFLICT", AB
    ),
    Case(
        "clear_expected_mismatch",
        "Clear",
        call(pb.ClearRequest, session_id=SEED, expected_last_position=999),
        C.ABORTED,
        "SEQUENCE_CONFLICT",
        AB,
    ),
    Case(
        "clear_expected_below_minus_one",
        "Clear",
        call(pb.ClearRequest, session_id=SEED, expected_last_position=-7),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "load_without_workdir", "Load", call(pb.LoadRequest, session_id=SEED), C.INVALID_ARGUMENT, "INVALID_WORKDIR", IR
    ),
    Case(
        "load_items_format_not_a_tag",
        "Load",
        call(pb.LoadRequest, session_id=SEED, workdir="/tmp", items_format="Not A Tag"),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "load_relative_workdir",
        "Load",
        call(pb.LoadRequest, session_id=SEED, workdir="relative/dir"),
        C.INVALID_ARGUMENT,
        "INVALID_WORKDIR",
        IR,
    ),
    Case(
        "append_workdir_with_nul",
        "Append",
        append(SEED, workdir="/tmp/a\x00b"),
        C.INVALID_ARGUMENT,
        "INVALID_WORKDIR",
        IR,
    ),
    Case("trace_id_too_long", "Append", append(SEED, trace_id="t" * 200), C.INVALID_ARGUMENT, "FIELD_TOO_LARGE", IR),
    Case(
        "trace_id_not_printable",
        "Append",
        append(SEED, trace_id="t\nx"),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "unknown_run_id",
        "Append",
        append(SEED, run_id="no-such-run"),
        C.FAILED_PRECONDITION,
        "UNKNOWN_RUN",
        "PreconditionError",
    ),
    # usage
    *(
        Case(
            f"usage_negative_{f}",
            "RecordUsage",
            call(pb.RecordUsageRequest, session_id=SEED, **{f: -1}),
            C.INVALID_ARGUMENT,
            "INVALID_USAGE",
            IR,
        )
        for f in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros")
    ),
    Case(
        "usage_cost_without_currency",
        "RecordUsage",
        call(pb.RecordUsageRequest, session_id=SEED, cost_micros=5),
        C.INVALID_ARGUMENT,
        "INVALID_USAGE",
        IR,
    ),
    Case(
        "usage_currency_not_iso",
        "RecordUsage",
        call(pb.RecordUsageRequest, session_id=SEED, cost_micros=5, currency="dollars"),
        C.INVALID_ARGUMENT,
        "INVALID_USAGE",
        IR,
    ),
    Case(
        "usage_currency_mismatch",
        "RecordUsage",
        call(pb.RecordUsageRequest, session_id=SEED, cost_micros=5, currency="EUR"),
        C.FAILED_PRECONDITION,
        "CURRENCY_MISMATCH",
        "PreconditionError",
    ),
    Case(
        "usage_total_overflows_int64",
        "RecordUsage",
        call(pb.RecordUsageRequest, session_id=SEED, input_tokens=2**63 - 1),
        C.INVALID_ARGUMENT,
        "INVALID_USAGE",
        IR,
    ),
    Case(
        "usage_cost_overflows_int64",
        "RecordUsage",
        call(pb.RecordUsageRequest, session_id=SEED, cost_micros=2**63 - 1, currency="USD"),
        C.INVALID_ARGUMENT,
        "INVALID_USAGE",
        IR,
    ),
    Case(
        "usage_model_over_256_bytes",
        "RecordUsage",
        call(pb.RecordUsageRequest, session_id=SEED, input_tokens=1, model="m" * 257),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    # audit events, listings, lookups
    Case(
        "event_kind_unspecified",
        "RecordEvent",
        call(pb.RecordEventRequest, session_id=SEED, payload="{}"),
        C.INVALID_ARGUMENT,
        "INVALID_EVENT",
        IR,
    ),
    Case(
        "event_kind_out_of_range",
        "RecordEvent",
        lambda: field_bytes(1, b"seed") + field_varint(2, 77) + field_bytes(3, b"{}"),
        C.INVALID_ARGUMENT,
        "INVALID_EVENT",
        IR,
    ),
    Case(
        "event_payload_not_json",
        "RecordEvent",
        call(pb.RecordEventRequest, session_id=SEED, kind=pb.EVENT_KIND_ERROR, payload="{oops"),
        C.INVALID_ARGUMENT,
        "INVALID_EVENT",
        IR,
    ),
    Case(
        "event_payload_not_object",
        "RecordEvent",
        call(pb.RecordEventRequest, session_id=SEED, kind=pb.EVENT_KIND_ERROR, payload="[1, 2]"),
        C.INVALID_ARGUMENT,
        "INVALID_EVENT",
        IR,
    ),
    Case(
        "event_payload_deeply_nested",
        "RecordEvent",
        call(pb.RecordEventRequest, session_id=SEED, kind=pb.EVENT_KIND_ERROR, payload='{"a":' + nested(100_000) + "}"),
        C.INVALID_ARGUMENT,
        "INVALID_EVENT",
        IR,
    ),
    Case(
        "list_limit_negative",
        "ListSessions",
        call(pb.ListSessionsRequest, limit=-1),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "list_limit_huge",
        "ListSessions",
        call(pb.ListSessionsRequest, limit=2**31 - 1),
        C.INVALID_ARGUMENT,
        "FIELD_TOO_LARGE",
        IR,
    ),
    Case(
        "usage_of_unknown_session",
        "GetUsage",
        call(pb.GetUsageRequest, session_id="never-written"),
        C.NOT_FOUND,
        "SESSION_NOT_FOUND",
        NF,
    ),
    # bytes no well-behaved client can send: the daemon decodes requests itself and refuses these as INVALID_ARGUMENT
    Case(
        "invalid_utf8_session_id",
        "Append",
        lambda: raw_append(b"\xff\xfe", raw_message(pb.ROLE_USER, b"x")),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "invalid_utf8_content",
        "Append",
        lambda: raw_append(b"hostile", raw_message(pb.ROLE_USER, b"caf\xc3")),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "invalid_utf8_tool_call_id",
        "Append",
        lambda: raw_append(b"seed", raw_message(pb.ROLE_TOOL, b"x", b"\xed\xa0\x80")),  # an encoded surrogate
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "invalid_utf8_load_session_id",
        "Load",
        lambda: field_bytes(1, b"\xc0\xaf") + field_bytes(2, b"/tmp"),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    # streams and history tools
    Case(
        "watch_session_id_slash",
        "Watch",
        call(pb.WatchRequest, session_id="a/b"),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    Case(
        "watch_negative_after_position",
        "Watch",
        call(pb.WatchRequest, session_id=SEED, after_position=-5),
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
    Case(
        "attach_session_id_dotdot",
        "Attach",
        call(pb.AttachRequest, session_id=".."),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    Case(
        "export_session_id_nul",
        "Export",
        call(pb.ExportRequest, session_id="\x00"),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    Case(
        "export_unknown_session",
        "Export",
        call(pb.ExportRequest, session_id="never-written"),
        C.NOT_FOUND,
        "SESSION_NOT_FOUND",
        NF,
    ),
    Case("import_no_lines", "Import", call(pb.ImportRequest), C.INVALID_ARGUMENT, "INVALID_IMPORT", IR),
    Case(
        "import_not_json", "Import", call(pb.ImportRequest, lines=["{oops"]), C.INVALID_ARGUMENT, "INVALID_IMPORT", IR
    ),
    Case(
        "import_deeply_nested_line",
        "Import",
        call(pb.ImportRequest, lines=[nested(100_000)]),
        C.INVALID_ARGUMENT,
        "INVALID_IMPORT",
        IR,
    ),
    Case(
        "import_header_bad_session_id",
        "Import",
        lambda: pb.ImportRequest(lines=_export_with(session_id="../etc")).SerializeToString(),
        C.INVALID_ARGUMENT,
        "INVALID_SESSION_ID",
        IR,
    ),
    Case(
        "import_truncated",
        "Import",
        lambda: pb.ImportRequest(lines=_export_with(session_id="imp-trunc")[:-1]).SerializeToString(),
        C.INVALID_ARGUMENT,
        "INVALID_IMPORT",
        IR,
    ),
    Case(
        "import_second_header",
        "Import",
        lambda: pb.ImportRequest(lines=_export_with(session_id="imp-2h") * 2).SerializeToString(),
        C.INVALID_ARGUMENT,
        "INVALID_IMPORT",
        IR,
    ),
    Case(
        "import_events_of_another_session",
        "Import",
        lambda: pb.ImportRequest(lines=_export_with(session_id="imp-other", events_too=False)).SerializeToString(),
        C.INVALID_ARGUMENT,
        "INVALID_IMPORT",
        IR,
    ),
    Case(
        "import_existing_session_refused",
        "Import",
        lambda: pb.ImportRequest(lines=_export_with()).SerializeToString(),
        C.FAILED_PRECONDITION,
        "SESSION_EXISTS",
        "PreconditionError",
    ),
    Case(
        "import_mode_out_of_range",
        "Import",
        lambda: pb.ImportRequest(lines=_export_with(session_id="imp-mode"), mode=9).SerializeToString(),  # type: ignore[arg-type]
        C.INVALID_ARGUMENT,
        "INVALID_IMPORT",
        IR,
    ),
    Case("garbage_bytes", "Append", lambda: b"\xff\xff\xff\xff\xff", C.INVALID_ARGUMENT, "INVALID_MESSAGE", IR),
    Case(
        "truncated_message",
        "Append",
        lambda: pb.AppendRequest(session_id="hostile", messages=[user()]).SerializeToString()[:-2],
        C.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        IR,
    ),
]


#: The seed session's export (filled by the fixture), the base of the Import cases.
EXPORT: list[str] = []
STREAMS = frozenset({"Load", "Watch", "Attach", "Export"})


def _export_with(session_id: str | None = None, *, events_too: bool = True) -> list[str]:
    """The seed's export, renamed to ``session_id`` (in the header, and in the events if ``events_too``)."""
    assert EXPORT, "the fixture did not export the seed session"
    out = []
    for i, line in enumerate(EXPORT):
        obj = json.loads(line)
        if session_id is not None and (i == 0 or events_too):
            obj["session_id"] = session_id
        out.append(json.dumps(obj))
    return out


@pytest.fixture(scope="module")
def hostile_daemon(backend: str, tmp_path_factory: pytest.TempPathFactory) -> object:
    ws = tmp_path_factory.mktemp("hostile")
    d = DaemonProcess(ws).start()
    with SessionClient(address=d.address, autostart=False) as c:
        c.append(
            SEED,
            [Message.user("hello"), Message.assistant("", [ToolCall("seed-call", "bash", "{}")])],
            request_id="seed-rid",
        )
        c.append(SEED, Message.tool("seed-call", "done"))
        c.record_usage(SEED, input_tokens=10, output_tokens=2, cost_micros=100, currency="USD", model="m")
    with grpc.insecure_channel(d.address) as channel:
        export = channel.unary_stream(SERVICE + "Export")(pb.ExportRequest(session_id=SEED).SerializeToString())
        EXPORT[:] = [pb.ExportResponse.FromString(r).line for r in export]
    yield d
    d.stop()


def _send(address: str, case: Case) -> grpc.RpcError:
    options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
    with grpc.insecure_channel(address, options=options) as channel:
        path = SERVICE + case.method
        try:
            if case.method in STREAMS:
                list(channel.unary_stream(path)(case.request(), timeout=30))
            else:
                channel.unary_unary(path)(case.request(), timeout=30)
        except grpc.RpcError as exc:
            return exc
    raise AssertionError(f"{case.name}: accepted")


@pytest.mark.smoke
def test_catalogue_is_large_and_distinct() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 40


@pytest.mark.both_backends("bad input never reaches PostgreSQL as a server error (NUL text, sizes, 2**63)")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_request_gets_documented_status_and_writes_nothing(case: Case, hostile_daemon: DaemonProcess) -> None:
    store = stored(hostile_daemon)
    before = store.snapshot()
    exc = _send(hostile_daemon.address, case)
    code, details = exc.code(), exc.details()  # type: ignore[attr-defined]
    assert code == case.code, f"{case.name}: got {code} ({details}), documented {case.code}"
    assert details and details.strip(), f"{case.name}: empty message"
    info = B._error_info(exc.trailing_metadata())  # type: ignore[attr-defined]
    if case.reason is None:
        assert info is None, f"{case.name}: unexpected ErrorInfo {info}"
    else:
        assert info is not None and info.reason == case.reason, f"{case.name}: reason {info and info.reason}"
    client_error = B.error_from_rpc(exc)
    assert type(client_error).__name__ == case.client_error, f"{case.name}: client raises {client_error!r}"
    assert "Traceback" not in details
    assert store.snapshot() == before, f"{case.name}: the database changed"
    assert hostile_daemon.proc is not None and hostile_daemon.proc.poll() is None, "the daemon died"
    record("hostile", bad_inputs_tried=1, database_unchanged=1)


@pytest.mark.smoke
def test_client_refuses_a_string_that_is_not_utf8_before_sending(hostile_daemon: DaemonProcess) -> None:
    """A Python str can hold a lone surrogate; the client library refuses it as InvalidRequestError."""
    from claw_sessiond_client import InvalidRequestError

    store = stored(hostile_daemon)
    before = store.snapshot()
    with hostile_daemon.client() as c:
        for bad in (Message.user("\ud800"), Message("user", "x", name="\udfff")):
            with pytest.raises(InvalidRequestError) as err:
                c.append(SEED, bad)
            assert err.value.message
        with pytest.raises(InvalidRequestError):
            c.append("\ud83d", Message.user("x"))
    assert store.snapshot() == before
    record("hostile", bad_inputs_tried=3, database_unchanged=3)


def test_daemon_still_serves_after_the_catalogue(hostile_daemon: DaemonProcess) -> None:
    with hostile_daemon.client() as c:
        loaded = c.load(SEED, workdir=str(Path("/tmp")))
        assert [m.content for m in loaded.messages] == ["hello", "", "done"]
        assert loaded.session.usage.input_tokens == 10
        assert c.append(SEED, Message.user("still fine")).replayed is False


def test_requests_exactly_at_the_limits_are_accepted(hostile_daemon: DaemonProcess) -> None:
    """Positive control for the size cases: the documented limits themselves are allowed (no off-by-one)."""
    cases = {
        "session id of 256 bytes": append("é" * 128, user("x")),
        "request id of 128 bytes": append("limits", user("x"), request_id="r" * 128),
        "batch of 1000": append("limits", *[user(str(i)) for i in range(1000)]),
        "message of 1 MiB": append("limits", user("x" * MIB)),
        "arguments nested 64 deep": append("limits", assistant(("deep", "bash", nested(64)))),
        "usage near int64": call(pb.RecordUsageRequest, session_id="limits-usage", input_tokens=2**63 - 1),
    }
    options = [("grpc.max_send_message_length", -1)]
    with grpc.insecure_channel(hostile_daemon.address, options=options) as channel:
        for name, request in cases.items():
            method = "RecordUsage" if "usage" in name else "Append"
            try:
                channel.unary_unary(SERVICE + method)(request(), timeout=30)
            except grpc.RpcError as exc:
                raise AssertionError(f"{name}: refused with {exc.code()} {exc.details()}") from None  # type: ignore[attr-defined]


def _stream_cases() -> list[Case]:
    """The Append cases that decode as an AppendRequest and fit in a stream message."""
    out = []
    for case in CASES:
        if case.method != "Append" or case.code == C.RESOURCE_EXHAUSTED:
            continue
        try:
            pb.AppendRequest.FromString(case.request())
        except Exception:  # bytes the protobuf layer refuses (tested above as unary calls)
            continue
        out.append(case)
    return out


def test_append_stream_gives_each_bad_append_the_unary_code_and_writes_nothing(
    hostile_daemon: DaemonProcess,
) -> None:
    """The same bad appends through AppendStream: one reply each, with the code and reason of the unary call."""
    cases = _stream_cases()
    assert len(cases) >= 40
    store = stored(hostile_daemon)
    before = store.snapshot()

    def requests() -> Iterator[bytes]:
        for case in cases:
            yield pb.AppendStreamRequest(appends=[pb.AppendRequest.FromString(case.request())]).SerializeToString()

    options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
    replies: list[pb.AppendReply] = []
    with grpc.insecure_channel(hostile_daemon.address, options=options) as channel:
        for raw in channel.stream_stream(SERVICE + "AppendStream")(requests(), timeout=60):
            replies.extend(pb.AppendStreamResponse.FromString(raw).replies)
    assert len(replies) == len(cases), f"{len(replies)} replies for {len(cases)} appends"
    for case, reply in zip(cases, replies, strict=True):
        assert reply.HasField("error"), f"{case.name}: accepted through AppendStream"
        assert reply.error.code == case.code.value[0], f"{case.name}: code {reply.error.code}, documented {case.code}"
        assert reply.error.reason == case.reason, f"{case.name}: reason {reply.error.reason}"
        assert reply.error.message.strip(), f"{case.name}: empty message"
    assert store.snapshot() == before, "the database changed"
    record("hostile", bad_inputs_tried=len(cases), database_unchanged=len(cases), via_append_stream=len(cases))
