"""The client's request building (``_requests``): arguments checked in order, then the daemon's request.

Pure: every test builds requests and reads them back; nothing is sent.
"""

from __future__ import annotations

import json
import os

import pytest

from claw_sessiond_client import InvalidRequestError, Message, Reason, ToolCall
from claw_sessiond_client._requests import (
    append_request,
    clear_request,
    export_request,
    import_requests,
    list_sessions_page_request,
    list_sessions_request,
    load_request,
    record_event_request,
    record_usage_request,
)
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

_HEADER = json.dumps({"format": "claw-sessiond-export", "version": 1, "session_id": "s"})


def _append(messages: object, **kw: object) -> pb.AppendRequest:
    args: dict[str, object] = {
        "expected_last_position": 0,
        "request_id": None,
        "workdir": "",
        "run_id": "",
    }
    args.update(kw)
    return append_request("s", messages, **args)  # type: ignore[arg-type]


def test_append_carries_every_field_of_every_message_in_order() -> None:
    call = ToolCall("call_1", "bash", {"cmd": "ls"})
    request = _append(
        [Message.user("hi"), Message.assistant("on it", [call]), Message.tool("call_1", "README.md", name="bash")],
        expected_last_position=7,
        request_id="rid-1",
        workdir="/w",
        run_id="run-1",
    )
    assert (request.session_id, request.expected_last_position, request.request_id) == ("s", 7, "rid-1")
    assert (request.workdir, request.run_id) == ("/w", "run-1")
    assert [m.role for m in request.messages] == [pb.ROLE_USER, pb.ROLE_ASSISTANT, pb.ROLE_TOOL]
    assert [m.content for m in request.messages] == ["hi", "on it", "README.md"]
    [sent] = request.messages[1].tool_calls
    assert (sent.id, sent.name, sent.arguments) == ("call_1", "bash", '{"cmd":"ls"}')
    assert (request.messages[2].tool_call_id, request.messages[2].name) == ("call_1", "bash")


def test_append_takes_one_message_and_gives_each_request_a_fresh_id() -> None:
    one = _append(Message.user("a"))
    two = _append(Message.user("a"))
    assert [m.content for m in one.messages] == ["a"]
    assert len(one.request_id) == 32 and int(one.request_id, 16) >= 0
    assert one.request_id != two.request_id


@pytest.mark.parametrize(
    ("messages", "text"),
    [
        ({"role": "user", "content": "hi"}, "messages: expected a Message or a list of Message, got dict"),
        ("hello", "messages: expected a Message or a list of Message, got str"),
        ([Message.user("ok"), {"role": "user"}], "messages[1]: expected a Message, got dict"),
        ([Message("user", 5)], "messages[0].content: expected str, got int"),  # type: ignore[arg-type]
        ([Message("assistant", "", ("x",))], "messages[0].tool_calls[0]: expected a ToolCall, got str"),  # type: ignore[arg-type]
    ],
)
def test_append_names_the_wrong_item_before_anything_is_built(messages: object, text: str) -> None:
    with pytest.raises(TypeError) as raised:
        _append(messages)
    assert str(raised.value).startswith(text)


def test_append_checks_its_own_arguments_first() -> None:
    with pytest.raises(TypeError, match=r"^expected_last_position: expected int, got bool"):
        _append(Message.user("a"), expected_last_position=True)
    with pytest.raises(TypeError, match=r"^request_id: expected str or NoneType, got int"):
        _append(Message.user("a"), request_id=5)


def test_an_unknown_role_and_unencodable_text_are_invalid_requests() -> None:
    with pytest.raises(InvalidRequestError) as role:
        _append(Message("robot", "beep"))
    assert role.value.reason is Reason.INVALID_MESSAGE
    assert "unknown role 'robot'" in role.value.message
    with pytest.raises(InvalidRequestError) as text:
        _append(Message.user("half a pair: \ud800"))
    assert text.value.reason is Reason.INVALID_MESSAGE
    assert text.value.message.startswith("request cannot be encoded: ")


def test_load_makes_the_workdir_absolute_and_returns_it() -> None:
    request, wd = load_request("s", "rel/dir", True)
    assert wd == os.path.abspath("rel/dir") == request.workdir
    assert not request.no_repair
    look, none = load_request("s", None, False)  # a look-only Load given no workdir sends none
    assert look.no_repair and look.workdir == "" == none
    given, _ = load_request("s", "rel/dir", False)
    assert given.no_repair and given.workdir == os.path.abspath("rel/dir")
    repairing, _ = load_request("s", None, True)
    assert repairing.workdir == os.getcwd()


def test_mutations_store_the_loaded_workdir_and_check_arguments_before_reading_it() -> None:
    workdirs = {"s": "/loaded"}
    clear = clear_request("s", 3, None, workdirs)
    assert (clear.workdir, clear.expected_last_position, len(clear.request_id)) == ("/loaded", 3, 32)
    assert clear_request("other", 0, "rid", workdirs).workdir == ""
    # an unhashable session id is named as the wrong type, not as a dict lookup failure
    with pytest.raises(TypeError, match=r"^session_id: expected str, got list"):
        clear_request(["s"], 0, None, workdirs)  # type: ignore[arg-type]
    usage = dict(
        input_tokens=1,
        output_tokens=2,
        cache_read_tokens=3,
        cache_write_tokens=4,
        cost_micros=5,
        currency="USD",
        model="m",
        pricing_version="v1",
        request_id=None,
        workdirs=workdirs,
    )
    recorded = record_usage_request("s", **usage)  # type: ignore[arg-type]
    assert (recorded.input_tokens, recorded.cost_micros, recorded.workdir) == (1, 5, "/loaded")
    with pytest.raises(TypeError, match=r"^session_id: expected str, got list"):
        record_usage_request(["s"], **usage)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^cost_micros: expected int, got float"):
        record_usage_request("s", **{**usage, "cost_micros": 1.5})  # type: ignore[arg-type]


def test_record_event_checks_kind_and_payload() -> None:
    request = record_event_request("s", "error", {"what": "ünïcode"}, "rid")
    assert request.kind == pb.EVENT_KIND_ERROR
    assert json.loads(request.payload) == {"what": "ünïcode"}
    with pytest.raises(InvalidRequestError) as kind:
        record_event_request("s", "chat", {}, None)
    assert kind.value.reason is Reason.INVALID_EVENT
    with pytest.raises(TypeError, match=r"^payload: expected dict, got list"):
        record_event_request("s", "nonsense", [], None)  # type: ignore[arg-type]  # payload before kind


def test_list_sessions_checks_types_but_a_page_leaves_them_to_the_encoder() -> None:
    assert list_sessions_request("ab", 5).limit == 5
    with pytest.raises(TypeError, match=r"^limit: expected int, got str"):
        list_sessions_request("", "5")  # type: ignore[arg-type]
    assert list_sessions_page_request("", 5, "tok").page_token == "tok"
    with pytest.raises(InvalidRequestError):
        list_sessions_page_request("", "5", "")  # type: ignore[arg-type]


def test_export_of_all_sessions_is_an_empty_id() -> None:
    assert export_request(None).session_id == ""
    assert export_request("s").session_id == "s"


def test_import_checks_mode_and_every_line_before_the_first_request() -> None:
    lines = [_HEADER, '{"kind": "message"}', "", _HEADER.replace('"s"', '"t"'), '{"kind": "clear"}\n']
    requests = import_requests(lines, "merge")
    first = next(requests)
    assert first.mode == pb.IMPORT_MODE_MERGE
    assert list(first.lines) == [_HEADER, '{"kind": "message"}']
    [second] = list(requests)
    assert list(second.lines)[1] == '{"kind": "clear"}'
    with pytest.raises(InvalidRequestError) as mode:
        next(import_requests(lines, "overwrite"))
    assert mode.value.reason is Reason.INVALID_IMPORT
    with pytest.raises(InvalidRequestError, match="export line 3 is not valid JSON"):
        next(import_requests([_HEADER, "{}", "{not json"], "refuse"))
    with pytest.raises(InvalidRequestError, match="an export starts with a header line"):
        next(import_requests(['{"kind": "message"}'], "refuse"))
    with pytest.raises(TypeError, match=r"^lines: expected an iterable of str"):
        next(import_requests("one string", "refuse"))
