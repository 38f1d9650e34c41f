"""The event payload codec (``events.py``), without a database: exact bytes, round trips, the role map.

The stored spelling is part of the database format and of request fingerprints,
so the byte-exact cases below are pinned literally: a change to key order,
separators or escaping fails here before it reaches a file or a retry.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond import events
from claw_sessiond.model import Message, ToolCall, UsageDelta

_text = st.text(max_size=40)
_ids = st.text(alphabet="abcdefghij0123456789_-", min_size=1, max_size=12)


@st.composite
def messages(draw: st.DrawFn) -> Message:
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    calls: tuple[ToolCall, ...] = ()
    if role == "assistant":
        n = draw(st.integers(0, 3))
        names = draw(st.lists(_ids, min_size=n, max_size=n, unique=True))
        args = st.dictionaries(_ids, st.integers() | _text, max_size=3).map(json.dumps)
        calls = tuple(ToolCall(i, draw(_ids), draw(args)) for i in names)
    return Message(
        role=role,
        content=draw(_text),
        tool_calls=calls,
        tool_call_id=draw(_ids) if role == "tool" else "",
        name=draw(st.sampled_from(["", "bash", "Ünïcode"])),
    )


@given(
    messages(),
    st.text(max_size=20),
    st.sampled_from(["", '{"a": "\u00e9\\n"}']),
    st.booleans(),
    st.sampled_from([None, UsageDelta(1, 2)]),
)
def test_a_payload_of_text_fields_is_spelled_as_json_dumps_spells_it(
    msg: Message, client_id: str, metadata: str, cancelled: bool, usage: UsageDelta | None
) -> None:
    """``encode_message`` joins a payload of strings itself: byte for byte ``json.dumps(..., ensure_ascii=False)``."""
    full = Message(
        msg.role, msg.content, msg.tool_calls, msg.tool_call_id, msg.name, client_id=client_id, metadata=metadata
    )
    for m in (msg, full, Message(msg.role, msg.content, cancelled=cancelled, usage=usage)):
        assert events.encode_message(m) == json.dumps(events.message_payload(m), ensure_ascii=False)


def test_a_message_payload_is_spelled_exactly_as_stored() -> None:
    msg = Message("assistant", "héllo", (ToolCall("c1", "bash", '{"cmd": "ls"}'),), name="agent")
    assert events.encode_message(msg) == (
        '{"role": "assistant", "content": "héllo", "tool_calls": [{"id": "c1", "name": "bash", '
        '"arguments": "{\\"cmd\\": \\"ls\\"}"}], "name": "agent"}'
    )
    assert events.encode_message(Message("user")) == '{"role": "user"}'
    assert events.encode_message(Message("tool", "ok", tool_call_id="c1")) == (
        '{"role": "tool", "content": "ok", "tool_call_id": "c1"}'
    )


def test_a_repair_payload_is_spelled_exactly_as_stored() -> None:
    text = events.encode_repair("c9", "bäsh")
    assert text.startswith('{"role": "tool", "content": "[claw-sessiond] This tool call did not complete')
    assert text.endswith('", "tool_call_id": "c9", "synthetic": "interrupted", "name": "b\\u00e4sh"}')
    assert '"name"' not in events.encode_repair("c9", "")


def test_a_usage_payload_is_spelled_exactly_as_stored() -> None:
    delta = UsageDelta(1, 2, 3, 4, 5, "EUR", "m", "v1")
    assert events.encode_usage(delta) == (
        '{"model": "m", "pricing_version": "v1", "input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 3, '
        '"cache_write_tokens": 4, "cost_micros": 5, "currency": "EUR"}'
    )


@given(messages(), st.integers(1, 2**40), _text, _text)
def test_a_message_reads_back_as_written(msg: Message, position: int, trace: str, ts: str) -> None:
    event_type = events.EVENT_TYPE_OF_ROLE[msg.role]
    back = events.message_from_payload(position, event_type, trace, ts, events.encode_message(msg))
    assert back == Message(msg.role, msg.content, msg.tool_calls, msg.tool_call_id, msg.name, "", position, ts, trace)


def test_a_repair_reads_back_as_a_synthetic_tool_result_named_after_its_call() -> None:
    back = events.message_from_payload(7, "repair", "t", "ts", events.encode_repair("c1", "bash"))
    assert (back.role, back.tool_call_id, back.name, back.synthetic_reason) == ("tool", "c1", "bash", "interrupted")
    assert back.content == events.INTERRUPTED_CONTENT
    # The same payload under a non-repair type is not synthetic: the type decides, not the payload.
    plain = events.message_from_payload(7, "tool_result", "t", "ts", events.encode_repair("c1", ""))
    assert plain.synthetic_reason == ""


@given(st.builds(UsageDelta, *(st.integers(0, 2**62),) * 5, _text, _text, _text))
def test_usage_reads_back_as_written(delta: UsageDelta) -> None:
    assert events.usage_from_payload(json.loads(events.encode_usage(delta))) == delta


def test_usage_of_an_older_payload_counts_missing_keys_as_zero() -> None:
    assert events.usage_from_payload({"input_tokens": 3}) == UsageDelta(input_tokens=3)


@given(messages())
def test_call_names_are_the_assistants_calls(msg: Message) -> None:
    assert events.call_names(events.encode_message(msg)) == {c.id: c.name for c in msg.tool_calls}


def test_the_role_map_and_the_event_types_agree() -> None:
    for role, event_type in events.EVENT_TYPE_OF_ROLE.items():
        assert events.ROLE_OF_EVENT_TYPE[event_type] == role
    assert events.ROLE_OF_EVENT_TYPE["repair"] == "tool"
    assert events.MESSAGE_EVENT_TYPES | {"clear", "edit"} == events.HISTORY_EVENT_TYPES
    assert (
        events.HISTORY_EVENT_TYPES | {"usage", "permission_denial", "error", "state", "session_settings"}
        == events.EVENT_TYPES
    )
    assert "usage" not in events.HISTORY_EVENT_TYPES and "clear" not in events.MESSAGE_EVENT_TYPES


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(_text, _json, max_size=5))
def test_canonical_json_is_one_spelling_whatever_the_key_order(value: dict[str, object]) -> None:
    shuffled = dict(reversed(list(value.items())))
    assert events.canonical_json(value) == events.canonical_json(shuffled)
    assert json.loads(events.canonical_json(value)) == value
    assert events.canonical_json(json.loads(events.canonical_json(value))) == events.canonical_json(value)


def test_decoded_event_rows_carry_their_payload_as_an_object() -> None:
    row = (3, "s", None, "usage", "t", "2026-01-01T00:00:00.000000Z", 1, '{"input_tokens": 2}')
    (event,) = events.decode_events([row])
    assert (event.event_id, event.position, event.type, event.payload) == (3, None, "usage", {"input_tokens": 2})


def test_a_fingerprint_depends_on_content_not_on_key_order() -> None:
    assert events.fingerprint("append", "s", {"a": 1, "b": 2}) == events.fingerprint("append", "s", {"b": 2, "a": 1})
    assert events.fingerprint("append", "s", [1]) != events.fingerprint("append", "s", [2])
    assert events.fingerprint("append", "s") != events.fingerprint("clear", "s")
    # Pinned (computed by the code before the move): a retry after an upgrade must hash as before,
    # or it would be refused as a reused request id.
    assert events.fingerprint("clear", "s", 0) == "c0df516612ccbf02658d5129f0854240b527b90b5d83acc46be25a572a8b9f53"


def test_an_append_is_prepared_with_the_stored_payload_and_both_forms_of_its_fingerprint() -> None:
    """Today's marked form and the form of before it (what a retry across an upgrade is matched against),
    both pinned: the earlier one as the code before the mark computed it."""
    from claw_sessiond.validate import prepare_append

    job = prepare_append(
        "s",
        [Message("user", "hi")],
        expected_last_position=0,
        request_id="r",
        workdir="",
        run_id="",
        trace_id="t",
        max_message_bytes=1024,
        max_batch_messages=10,
    )
    assert [(p.event_type, p.payload) for p in job.messages] == [("user_message", '{"role": "user", "content": "hi"}')]
    assert job.earlier_fingerprint is not None
    assert job.earlier_fingerprint() == "80532c0b4b90b20001de1dbfb0de1d6a69c4b33bccd7704c2f1e8baca771af11"
    assert job.fingerprint == "v2:34ffd6fe4f74a3a717cf8688145cf0ba7690d8c3f09d5ec8e382a9b850eaf650"


def test_an_append_of_items_hashes_and_stores_as_before() -> None:
    """Item entries (format and item beside a payload), an ``other`` entry, a call under a tool policy
    and a plain message: the payloads and the earlier form of the fingerprint pinned as main ``d4f0a08``
    computed them, so a retry sent before an upgrade is still recognised after it; today's form pinned too."""
    from claw_sessiond.policy import ToolPolicy
    from claw_sessiond.validate import prepare_append

    item = "openai.responses"
    job = prepare_append(
        "s",
        [
            Message("user", 'héllo "quoted"\n', format=item, item=b'{"role":"user","content":"h\\u00e9llo"}'),
            Message(
                "assistant",
                "",
                (ToolCall("c1", "ls", '{"a": 1}', pending=True),),
                format=item,
                item=b'{"type":"function_call"}',
            ),
            Message("other", format=item, item=b'{"type":"reasoning"}'),
            Message("system", "plain"),
        ],
        expected_last_position=0,
        request_id="r",
        workdir="",
        run_id="",
        trace_id="t",
        max_message_bytes=4096,
        max_batch_messages=10,
        tool_policy=ToolPolicy(repair="off", allow_orphan_results=True, allow_unparsed_calls=True),
    )
    assert [p.payload for p in job.messages] == [
        '{"role": "user", "content": "héllo \\"quoted\\"\\n"}',
        '{"role": "assistant", "tool_calls": [{"id": "c1", "name": "ls", "arguments": "{\\"a\\": 1}", '
        '"pending": true, "repair_mode": "off"}]}',
        '{"role": "other"}',
        '{"role": "system", "content": "plain"}',
    ]
    assert job.earlier_fingerprint is not None
    assert job.earlier_fingerprint() == "a7891f386bf8a36c4a60a929c8a1b1adf483da041df3505efe925c4735dfe3fb"
    assert job.fingerprint == "v2:a45660af9f025eee7495b52ef60e5084d4d8394d7568761d1015082832f7093d"
