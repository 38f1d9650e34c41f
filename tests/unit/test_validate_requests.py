"""The stateless request checks that moved from the servicer into ``validate.py``, called directly."""

from __future__ import annotations

import base64
import json
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond.bounds import utf8_len
from claw_sessiond.errors import InvalidRequestError, Reason
from claw_sessiond.events import encode_message
from claw_sessiond.ids import check_session_id
from claw_sessiond.model import Message, ToolCall
from claw_sessiond.validate import (
    MAX_TRACE_ID_CHARS,
    check_clear_expected,
    check_follow_start,
    check_search_limit,
    check_trace_id,
    check_watch_after,
    page_after,
    page_key,
    page_token,
    prepare_append,
)


def _reason(call: object) -> Reason:
    assert callable(call)
    with pytest.raises(InvalidRequestError) as info:
        call()
    return info.value.reason


def test_trace_id_is_short_printable_text() -> None:
    assert check_trace_id("a" * MAX_TRACE_ID_CHARS) == "a" * MAX_TRACE_ID_CHARS
    assert check_trace_id("4bf92f3577b34da6a3ce929d0e0e4736") == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert _reason(lambda: check_trace_id("a" * (MAX_TRACE_ID_CHARS + 1))) is Reason.FIELD_TOO_LARGE
    assert _reason(lambda: check_trace_id("line\nbreak")) is Reason.FIELD_TOO_LARGE
    assert _reason(lambda: check_trace_id("nul\x00")) is Reason.FIELD_TOO_LARGE


@pytest.mark.parametrize("value", [-1, 0, 1, 10**12])
def test_clear_takes_minus_one_zero_or_a_position(value: int) -> None:
    check_clear_expected(value)


def test_clear_refuses_below_minus_one() -> None:
    with pytest.raises(InvalidRequestError, match="expected_last_position must be -1, 0 or a position") as info:
        check_clear_expected(-2)
    assert info.value.reason is Reason.INVALID_MESSAGE


def test_watch_starts_at_zero_or_a_position() -> None:
    check_watch_after(0)
    check_watch_after(5)
    with pytest.raises(InvalidRequestError, match="after_position must be 0") as info:
        check_watch_after(-1)
    assert info.value.reason is Reason.INVALID_MESSAGE


def test_search_limit_zero_means_the_default_and_the_bound_is_inclusive() -> None:
    assert check_search_limit(0, max_hits=50, default_hits=20) == 20
    assert check_search_limit(1, max_hits=50, default_hits=20) == 1
    assert check_search_limit(50, max_hits=50, default_hits=20) == 50
    with pytest.raises(InvalidRequestError, match=r"limit must be between 1 and 50 \(0: 20\)") as info:
        check_search_limit(51, max_hits=50, default_hits=20)
    assert info.value.reason is Reason.FIELD_TOO_LARGE
    assert _reason(lambda: check_search_limit(-1, max_hits=50, default_hits=20)) is Reason.FIELD_TOO_LARGE


def test_follow_start_bounds() -> None:
    check_follow_start(0, 0, max_last=10)
    check_follow_start(99, 10, max_last=10)
    for after, last in [(-1, 0), (0, -1), (0, 11)]:
        with pytest.raises(InvalidRequestError, match="last between 0 and 10") as info:
            check_follow_start(after, last, max_last=10)
        assert info.value.reason is Reason.FIELD_TOO_LARGE


# ---------------------------------------------------------------- the ListSessions page token


_KEY_TEXT = st.characters(blacklist_categories=("Cc",))  # a stored key holds no control character


@given(st.text(_KEY_TEXT, max_size=40), st.text(_KEY_TEXT, max_size=300))
def test_a_page_token_decodes_to_the_key_of_the_row_it_was_made_from(updated_at: str, session_id: str) -> None:
    row = SimpleNamespace(updated_at=updated_at, id=session_id)
    token = page_token(row)
    assert token.isascii() and token.isprintable()
    assert page_after(token) == page_key(row) == (updated_at, session_id)


def test_the_token_of_the_longest_non_ascii_session_id_is_accepted() -> None:
    """256 bytes of two-byte characters: the token is over 1,024 characters (once refused)."""
    session_id = "é" * 128
    check_session_id(session_id)
    row = SimpleNamespace(updated_at="2026-12-03T10:04:37.784425Z", id=session_id)
    token = page_token(row)
    assert len(token) > 1024
    assert page_after(token) == (row.updated_at, session_id)


def _b64(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


@pytest.mark.parametrize(
    "token",
    [
        "not base64 at all!",
        base64.urlsafe_b64encode(b"\xff\xfe not json").decode(),
        _b64(["2026-01-01T00:00:00Z"]),
        _b64(["2026-01-01T00:00:00Z", 5]),
        _b64(["a", "b", "c"]),
        _b64(["a", "b" * 4000]),  # longer than any token ListSessions makes
        _b64(["\x00", "s"]),  # no stored key holds a control character (PostgreSQL's text no NUL: UNAVAILABLE)
        _b64(["2026-01-01T00:00:00Z", "s\n"]),
    ],
)
def test_a_token_not_made_by_list_sessions_is_refused(token: str) -> None:
    with pytest.raises(InvalidRequestError, match="page_token is not a token ListSessions returned") as info:
        page_after(token)
    assert info.value.reason is Reason.INVALID_MESSAGE


@pytest.mark.parametrize(
    "session_id",
    ["", "../../etc/passwd", "a/b", "a\\b", "..", "nul\x00here", "tab\there", "x" * 257, " padded "],
)
def test_invalid_session_ids_are_refused_saying_so(session_id: str) -> None:
    """The cases tests/e2e/test_core.py sends through a daemon, decided here by the rule alone."""
    with pytest.raises(InvalidRequestError) as info:
        check_session_id(session_id)
    assert info.value.reason is Reason.INVALID_SESSION_ID and "session id" in str(info.value)


@pytest.mark.parametrize("text", ["", "plain ascii", "é" * 3, "\U0001f600", "a\ud800b", "\x00\x7f"])
def test_utf8_len_counts_bytes_as_utf8_writes_them(text: str) -> None:
    assert utf8_len(text) == len(text.encode("utf-8", "surrogatepass"))


def test_a_message_that_needs_no_rebuilding_is_stored_as_given_and_others_are_rebuilt() -> None:
    plain = Message("user", "hi", client_id="c")
    marked = Message("user", "hi", position=4, trace_id="t", orphan=True)
    job = prepare_append(
        "s",
        [plain, marked, Message("assistant", "x", (ToolCall("c1", "ls", "{}"),))],
        expected_last_position=0,
        request_id="",
        workdir="",
        run_id="",
        trace_id="t",
        max_message_bytes=1 << 20,
        max_batch_messages=10,
    )
    first, second, third = (p.message for p in job.messages)
    assert first is plain and second == Message("user", "hi") and third.tool_calls[0].arguments == "{}"
    assert [p.payload for p in job.messages[:2]] == [encode_message(plain), encode_message(Message("user", "hi"))]
