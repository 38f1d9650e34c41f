"""Entries and windows, without a daemon: ``history.project_window``, ``entries.py``, the export line of an item.

``project_window`` is checked against its definition: the full projection of
a (repaired) history, restricted to a window's positions, for every window.
"""

from __future__ import annotations

import base64
import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claw_sessiond.entries import check_client_ids, check_entry, check_load_window
from claw_sessiond.errors import AlreadyExistsError, InvalidRequestError, Reason
from claw_sessiond.events import encode_message, fingerprint
from claw_sessiond.export import ExportHeader, event_line, header_line, is_header, parse_session
from claw_sessiond.history import open_calls, project, project_window
from claw_sessiond.model import AppendJob, Event, LoadWindow, Message, ToolCall, UsageDelta
from claw_sessiond.repair import plan_repair
from claw_sessiond.validate import APPEND_FINGERPRINT_MARK, prepare_append
from tests.helpers.tiers import scale


@st.composite
def repaired_histories(draw: st.DrawFn) -> list[Message]:
    """Position-ordered histories with results near and far (repairs appended at the end), and other entries."""
    out: list[Message] = []
    open_ids: list[str] = []
    ids = (f"k{n}" for n in itertools.count())
    for position in range(1, draw(st.integers(0, 16)) + 1):
        kinds = ["user", "assistant", "other"] + (["tool"] if open_ids else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "assistant":
            calls = tuple(ToolCall(next(ids), "bash", "{}") for _ in range(draw(st.integers(0, 3))))
            open_ids.extend(c.id for c in calls)
            out.append(Message("assistant", tool_calls=calls, position=position))
        elif kind == "tool":
            cid = draw(st.sampled_from(open_ids))
            open_ids.remove(cid)
            out.append(Message("tool", "r", tool_call_id=cid, position=position))
        elif kind == "other":
            out.append(Message("other", format="x", item=b"i", position=position))
        else:
            out.append(Message("user", "u", position=position))
    plan, _ = plan_repair(open_calls(out), lambda _r: False)
    last = out[-1].position if out else 0
    out += [
        Message("tool", "x", tool_call_id=c.tool_call_id, synthetic_reason="interrupted", position=last + i + 1)
        for i, c in enumerate(plan)
    ]
    return out


def _lead(history: list[Message], start: int) -> list[int]:
    """What the storage computes: window results of calls made before ``start``, by (assistant, position)."""
    owner = {c.id: m.position for m in history for c in m.tool_calls}
    found = [
        (owner[m.tool_call_id], m.position)
        for m in history
        if m.role == "tool" and m.position >= start and owner.get(m.tool_call_id, start) < start
    ]
    return [p for _a, p in sorted(found)]


@settings(max_examples=scale(200, 1000), deadline=None)
@given(repaired_histories())
def test_a_window_is_the_full_projection_restricted_to_it(history: list[Message]) -> None:
    full = project(history)
    for start in range(1, (history[-1].position if history else 0) + 2):
        window = [m for m in history if m.position >= start]
        got = project_window(window, _lead(history, start))
        assert got == [m for m in full if m.position >= start], start


def test_check_entry_names_each_field() -> None:
    def refused(msg: Message, limit: int = 1 << 20) -> str:
        with pytest.raises(InvalidRequestError) as caught:
            check_entry("messages[3]", 3, msg, limit)
        assert caught.value.metadata["index"] == "3"
        return str(caught.value)

    assert "format" in refused(Message("user", format="UPPER", item=b"x"))
    assert "needs a format" in refused(Message("user", item=b"x"))
    assert "item is empty" in refused(Message("user", format="x"))
    assert "needs an item" in refused(Message("other", "text"))
    assert "client_id" in refused(Message("user", client_id="é" * 129))
    assert "metadata must be a JSON object" in refused(Message("user", metadata='"text"'))
    assert "--max-entry-bytes" in refused(Message("user", "ab", format="x", item=b"123", metadata="{}"), limit=6)
    check_entry("m", 0, Message("user", "ab", format="x", item=b"12", metadata="{}"), 6)  # exactly the limit
    check_entry("m", 0, Message("other", format="a" * 64, item=b"\x00"), 1)
    check_entry("m", 0, Message("user", client_id="é" * 128), 1 << 20)  # 256 bytes


def test_a_refused_format_of_any_length_is_not_kept_in_memory() -> None:
    # The tag check caches what it matched; a long refused format must not stay cached.
    from claw_sessiond import entries

    entries._matched_tag.cache_clear()
    for i in range(3):
        with pytest.raises(InvalidRequestError, match="not a format tag"):
            check_entry("m", 0, Message("user", format=f"{i}" + "a" * (1 << 20), item=b"x"), 1 << 22)
    assert entries._matched_tag.cache_info().currsize == 0
    check_entry("m", 0, Message("user", format="a" * 64, item=b"x"), 1 << 20)
    with pytest.raises(InvalidRequestError, match="not a format tag"):
        check_entry("m", 0, Message("user", format="a" * 65, item=b"x"), 1 << 20)
    assert entries._matched_tag.cache_info().currsize == 1


def test_client_ids_twice_in_one_request_are_already_existing() -> None:
    check_client_ids([Message("user", client_id="a"), Message("user", client_id="b"), Message("user")])
    with pytest.raises(AlreadyExistsError) as caught:
        check_client_ids([Message("user", client_id="a"), Message("user"), Message("user", client_id="a")])
    assert caught.value.reason == Reason.CLIENT_ID_EXISTS and "messages[2]" in str(caught.value)


def test_a_load_takes_at_most_one_bound() -> None:
    assert check_load_window(0, 0, "") is None
    assert check_load_window(5, 0, "") == LoadWindow(last=5)
    with pytest.raises(InvalidRequestError, match="last and after_time"):
        check_load_window(5, 0, "2026-01-01T00:00:00.000000Z")
    with pytest.raises(InvalidRequestError):
        check_load_window(-1, 0, "")


def _prepare(*messages: Message) -> str:
    return _job(*messages).fingerprint


def _prepare_earlier(*messages: Message) -> str:
    earlier = _job(*messages).earlier_fingerprint
    assert earlier is not None
    return earlier()


def _job(*messages: Message) -> AppendJob:
    return prepare_append(
        "s",
        list(messages),
        expected_last_position=0,
        request_id="r",
        workdir="",
        run_id="",
        trace_id="t",
        max_message_bytes=1 << 20,
        max_batch_messages=10,
    )


def test_the_fingerprint_of_a_plain_message_is_unchanged_and_items_count() -> None:
    plain = _prepare(Message("user", "hi"))
    # The spelling every stored request record was hashed with before entries existed (the earlier form).
    assert _prepare_earlier(Message("user", "hi")) == fingerprint(
        "append", "s", [encode_message(Message("user", "hi"))], 0
    )
    with_item = _prepare(Message("user", "hi", format="x", item=b"1"))
    assert len({plain, with_item, _prepare(Message("user", "hi", format="x", item=b"2"))}) == 3
    assert _prepare(Message("user", "hi", format="y", item=b"1")) != with_item
    assert _prepare(Message("user", "hi", client_id="c")) != plain
    assert _prepare(Message("user", "hi", metadata='{"a":1}')) != _prepare(Message("user", "hi", metadata='{"a": 1}'))
    assert _prepare(Message("user", "hi", usage=UsageDelta(1))) != _prepare(Message("user", "hi", usage=UsageDelta(2)))


def test_today_s_fingerprint_tells_apart_where_items_split_and_what_they_carry() -> None:
    """The marked form joins each section's parts: the same bytes split between items at another place,
    a format moved to another entry, or an entry more or less must each hash otherwise."""
    a, b = Message("user", "x", format="f", item=b"ab"), Message("user", "x", format="f", item=b"c")
    shifted = (Message("user", "x", format="f", item=b"a"), Message("user", "x", format="f", item=b"bc"))
    assert _prepare(a, b) != _prepare(*shifted)
    assert _prepare(a, Message("user", "x")) != _prepare(Message("user", "x"), a)
    assert _prepare(Message("user", "x", format="f", item=b"1"), Message("user", "y")) != _prepare(
        Message("user", "x", format="f", item=b"1y")
    )
    assert _prepare(a) != _prepare(a, a) and _prepare(a, b) == _prepare(a, b)
    assert all(f.startswith(APPEND_FINGERPRINT_MARK) for f in (_prepare(a), _prepare(Message("user", "x"))))
    assert not _prepare_earlier(a).startswith(APPEND_FINGERPRINT_MARK)


HEADER = header_line(ExportHeader("s", "/w", "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z", 1))


def _line(event_type: str = "other_entry", payload: dict[str, object] | None = None, **extra: object) -> str:
    event = Event(1, "s", 1, event_type, "t", "2026-01-01T00:00:00.000000Z", 1, payload or {"role": "other"})
    obj = json.loads(event_line(1, "s", event))
    obj.update(extra)
    return json.dumps(obj)


def test_an_item_line_round_trips_and_is_not_a_header() -> None:
    item = bytes(range(256))
    line = event_line(1, "s", Event(1, "s", 1, "other_entry", "t", "2026-01-01T00:00:00.000000Z", 1,
                                    {"role": "other"}, "x.y", item))  # fmt: skip
    assert line.endswith(f',"format":"x.y","item_b64":"{base64.b64encode(item).decode()}"}}')
    assert not is_header(json.loads(line)) and is_header(json.loads(HEADER))
    (event,) = parse_session([HEADER, line]).events
    assert (event.format, event.item) == ("x.y", item)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (_line(), "needs format and item_b64"),
        (_line(format="x"), "item_b64 must be"),
        (_line(item_b64="AAAA"), "format must be a format tag"),
        (_line(format="Bad Tag", item_b64="AAAA"), "format must be a format tag"),
        (_line(format="x", item_b64="not base64!"), "not valid base64"),
        (_line(format="x", item_b64=""), "item_b64 must be"),
        (_line("clear", {}, format="x", item_b64="AAAA"), "carries no item"),
        (_line("user_message", {"role": "user", "client_id": 5}), "client_id"),
        (_line("user_message", {"role": "user", "metadata": "[1]"}), "metadata must be a JSON object"),
        (_line("user_message", {"role": "user", "usage": {"input_tokens": -1}}), "payload.usage.input_tokens"),
        (_line(format="x", item_b64="AAAA", extra_key=1), "exactly the keys"),
    ],
)
def test_bad_item_lines_are_refused(line: str, says: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        parse_session([HEADER, line])
    assert caught.value.reason == Reason.INVALID_IMPORT and says in str(caught.value)


def test_an_item_over_the_bound_is_refused() -> None:
    line = _line(format="x", item_b64=base64.b64encode(b"12345").decode())
    parse_session([HEADER, line], max_item_bytes=5)
    with pytest.raises(InvalidRequestError, match=r"larger than 4 bytes|1 to 4 bytes"):
        parse_session([HEADER, line], max_item_bytes=4)
