"""The pure rules of EditTail and of the erasing Clear (edits.py, the fold, validation, the export format)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond import edits, rules
from claw_sessiond.errors import InvalidRequestError, PreconditionError, Reason
from claw_sessiond.events import edit_removed, encode_clear, encode_edit, erased_count
from claw_sessiond.export import parse_session
from claw_sessiond.model import ClearResult, EditResult, HistoryMark, Message
from claw_sessiond.validate import prepare_edit

# ---------------------------------------------------------------- the walk


def _walk(log: dict[int, tuple[str, bool, str | None]], last: int, **how: int) -> tuple[list[int], int]:
    """Run a TailWalk over an in-memory log ``{position: (type, hidden, edit payload)}``; (removed, rows read)."""
    walk = edits.TailWalk(
        remove_last=how.get("remove_last", 0),
        after_position=how.get("after", 0),
        clear_position=how.get("clear", 0),
        last_position=last,
    )
    read = 0
    while not walk.done:
        floor, cursor = walk.window()
        rows = [p for p in sorted(log, reverse=True) if floor < p <= cursor][: walk.batch()]
        if not rows:
            walk.exhausted()
            break
        for p in rows:
            read += 1
            kind, hidden, payload = log[p]
            walk.see(p, kind, hidden, payload, 10)
    return sorted(walk.removed), read


def _log_of(ops: list[tuple[str, int]]) -> tuple[dict[int, tuple[str, bool, str | None]], list[int]]:
    """A log of appends (``("append", n)``) and pops (``("pop", n)``), and its visible positions."""
    log: dict[int, tuple[str, bool, str | None]] = {}
    visible: list[int] = []
    last = 0
    for kind, n in ops:
        if kind == "append":
            for _ in range(n):
                last += 1
                log[last] = ("user_message", False, None)
                visible.append(last)
        else:
            gone = visible[len(visible) - min(n, len(visible)) :]
            last += 1
            log[last] = ("edit", False, encode_edit(gone))
            for p in gone:
                log[p] = (log[p][0], True, None)
            visible = visible[: len(visible) - len(gone)]
    return log, visible


@given(st.lists(st.tuples(st.sampled_from(["append", "pop"]), st.integers(0, 4)), max_size=40), st.integers(0, 6))
def test_the_walk_removes_the_last_visible_entries(ops: list[tuple[str, int]], n: int) -> None:
    log, visible = _log_of(ops)
    last = max(log, default=0)
    if n > len(visible):
        return
    removed, read = _walk(log, last, remove_last=n)
    assert removed == (visible[len(visible) - n :] if n else [])
    # It reads the entries it removes and the edit events it steps over (each read takes at most n + 1 rows).
    edits_between = sum(1 for p, (k, _h, _x) in log.items() if k == "edit" and p > (removed or [last + 1])[0])
    assert read <= (n + 1) * (edits_between + 1)


@given(st.lists(st.tuples(st.sampled_from(["append", "pop"]), st.integers(0, 4)), max_size=40), st.integers(0, 30))
def test_the_walk_after_a_position_removes_every_visible_entry_after_it(ops: list[tuple[str, int]], after: int) -> None:
    log, visible = _log_of(ops)
    last = max(log, default=0)
    removed, _read = _walk(log, last, after=min(after, last))
    if after:
        assert removed == [p for p in visible if p > min(after, last)]
    else:
        assert removed == []  # neither set: only appends


def test_a_run_of_pops_is_stepped_over_in_one_jump_per_edit() -> None:
    log, _visible = _log_of([("append", 1000), *[("pop", 1)] * 100])
    removed, read = _walk(log, max(log), remove_last=1)
    assert removed == [900] and read <= 4, read  # two reads of two rows: the last edit, then the entry


def test_the_walk_refuses_removed_entries_larger_than_one_reply() -> None:
    walk = edits.TailWalk(remove_last=3, after_position=0, clear_position=0, last_position=3)
    walk.see(3, "user_message", False, None, edits.REPLY_BYTES + 1)  # one entry alone may be large
    with pytest.raises(InvalidRequestError) as caught:
        walk.see(2, "user_message", False, None, 1)
    assert caught.value.reason == Reason.FIELD_TOO_LARGE


def test_counts_positions_and_pending_calls_are_checked() -> None:
    edits.check_remove_count(2, 2)
    with pytest.raises(InvalidRequestError, match="1 visible entry"):
        edits.check_remove_count(2, 5, found=1)
    edits.check_after_position(4, 4)
    with pytest.raises(InvalidRequestError, match="last position is 4"):
        edits.check_after_position(5, 4)
    edits.check_pending([], False)
    edits.check_pending(["c1"], True)
    with pytest.raises(PreconditionError) as caught:
        edits.check_pending(["c2", "c1"], False)
    assert caught.value.reason == Reason.EDIT_SPLITS_CALL and caught.value.metadata["tool_call_ids"] == "c1,c2"


# ---------------------------------------------------------------- records, payloads, followers


def test_an_edit_result_replays_without_its_removed_entries() -> None:
    first = EditResult([Message("user", "gone", position=2)], 3, 4, 5, "trace")
    record = edits.edit_record(first)
    assert "gone" not in record
    assert edits.edit_from_record(record) == EditResult([], 3, 4, 5, "trace", replayed=True)


def test_erasing_clears_keep_their_count_and_erased_requests_replay_any_retry() -> None:
    record = rules.result_record(ClearResult(7, "t", events_erased=6))
    assert rules.clear_from_record(record) == ClearResult(7, "t", replayed=True, events_erased=6)
    assert json.loads(rules.result_record(ClearResult(7, "t"))) == {"position": 7, "trace": "t"}  # as before
    erased = rules.StoredRequest("append", rules.ERASED_FINGERPRINT, '{"first": 1}')
    assert rules.replay_record("r", "append", "any content", erased) == '{"first": 1}'
    with pytest.raises(InvalidRequestError):
        rules.replay_record("r", "edit", "any content", erased)


def test_payloads_and_what_followers_are_sent() -> None:
    assert edit_removed(encode_edit([5, 2])) == (2, 5)
    assert encode_clear() == "{}" and erased_count(encode_clear()) is None and erased_count(encode_clear(3)) == 3
    assert edits.history_item(4, "edit", "t", "ts", encode_edit([2])) == HistoryMark(removed=(2,))
    assert edits.history_item(4, "clear", "t", "ts", "{}") is None
    assert edits.history_item(4, "clear", "t", "ts", encode_clear(0)) == HistoryMark(erased=True)
    message = edits.history_item(4, "user_message", "t", "ts", '{"role": "user", "content": "hi"}')
    assert isinstance(message, Message) and (message.position, message.content) == (4, "hi")


# ---------------------------------------------------------------- the import fold and the export format


def _fold(*events: tuple[int | None, str, dict[str, object]]) -> rules.ImportFold:
    return rules.fold_events("s", [(p, t, json.dumps(payload)) for p, t, payload in events])


def test_the_fold_applies_edits() -> None:
    fold = _fold(
        (1, "user_message", {"role": "user", "content": "go"}),
        (2, "assistant_message", {"role": "assistant", "tool_calls": [{"id": "c1", "name": "t", "arguments": "{}"}]}),
        (3, "tool_result", {"role": "tool", "tool_call_id": "c1", "content": "r"}),
        (4, "edit", {"removed": [3]}),
        (5, "tool_result", {"role": "tool", "tool_call_id": "c1", "content": "r2"}),
        (6, "edit", {"removed": [2, 5]}),
        (7, "assistant_message", {"role": "assistant", "tool_calls": [{"id": "c1", "name": "t", "arguments": "{}"}]}),
    )
    assert (fold.message_count, fold.last_position, fold.hidden) == (2, 7, {3: 4, 2: 6, 5: 6})
    assert fold.calls["c1"].assistant_position == 7 and fold.calls["c1"].result_position is None
    with pytest.raises(InvalidRequestError) as caught:
        _fold((1, "user_message", {"role": "user"}), (2, "edit", {"removed": [1]}), (3, "edit", {"removed": [1]}))
    assert caught.value.reason == Reason.INVALID_IMPORT
    with pytest.raises(InvalidRequestError):  # an edit never reaches behind a clear
        _fold((1, "user_message", {"role": "user"}), (2, "clear", {}), (3, "edit", {"removed": [1]}))
    assert json.loads(rules.shifted_edit(encode_edit([2, 3]), 10)) == {"removed": [12, 13]}


def _block(*events: tuple[int, str, dict[str, object]]) -> list[str]:
    header = {
        "format": "claw-sessiond-export",
        "version": 1,
        "session_id": "s",
        "workdir": "",
        "created_at": "2026-01-02T03:04:05.000006Z",
        "updated_at": "2026-01-02T03:04:05.000006Z",
        "events": len(events),
    }
    lines = [json.dumps(header)]
    for n, (position, kind, payload) in enumerate(events, 1):
        event = {"event_id": n, "session_id": "s", "position": position, "type": kind}
        event |= {"ts": header["created_at"], "trace_id": "t", "schema_version": 1, "payload": payload}
        lines.append(json.dumps(event))
    return lines


@pytest.mark.parametrize(
    "payload",
    [{}, {"removed": "1"}, {"removed": [2]}, {"removed": [0]}, {"removed": [1, 1]}, {"removed": [True]}],
)
def test_an_export_line_of_an_edit_lists_earlier_positions(payload: dict[str, object]) -> None:
    user = (1, "user_message", {"role": "user", "content": "x"})
    assert len(parse_session(_block(user, (2, "edit", {"removed": [1]}))).events) == 2
    with pytest.raises(InvalidRequestError) as caught:
        parse_session(_block(user, (2, "edit", payload)))
    assert caught.value.reason == Reason.INVALID_IMPORT


def test_an_export_line_of_a_clear_may_say_how_many_events_it_erased() -> None:
    assert parse_session(_block((5, "clear", {"erased": 4}))).events[0].payload == '{"erased":4}'
    for bad in ({"erased": -1}, {"erased": "4"}, {"erased": None}):
        with pytest.raises(InvalidRequestError):
            parse_session(_block((5, "clear", bad)))


# ---------------------------------------------------------------- validation


def _prepare(*replacements: Message, **how: int) -> object:
    return prepare_edit(
        "s",
        list(replacements),
        remove_last=how.get("remove_last", 0),
        after_position=how.get("after", 0),
        expected_last_position=how.get("expected", 0),
        request_id="",
        workdir="",
        run_id="",
        trace_id="t",
        discard_pending=False,
        max_message_bytes=1024,
        max_batch_messages=2,
    )


def test_an_edit_request_is_checked_before_storage() -> None:
    for how, reason in (
        ({"remove_last": 1, "after": 1}, Reason.INVALID_MESSAGE),
        ({"remove_last": -1}, Reason.INVALID_MESSAGE),
        ({"after": -1}, Reason.INVALID_MESSAGE),
        ({}, Reason.EMPTY_BATCH),
        ({"remove_last": 1, "expected": -2}, Reason.INVALID_MESSAGE),
    ):
        with pytest.raises(InvalidRequestError) as caught:
            _prepare(**how)
        assert caught.value.reason == reason, how
    with pytest.raises(InvalidRequestError, match=r"^replacements\[1\]: unknown role"):
        _prepare(Message("user", "ok"), Message("robot", "x"))
    with pytest.raises(InvalidRequestError, match="an edit takes at most 2"):
        _prepare(*(Message("user", "x") for _ in range(3)))
    one, other = _prepare(Message("user", "a"), remove_last=1), _prepare(Message("user", "b"), remove_last=1)
    assert one.fingerprint != other.fingerprint  # type: ignore[attr-defined]
    assert one.fingerprint == _prepare(Message("user", "a"), remove_last=1).fingerprint  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "ts", ["2026-01-02T03:04:05.000006Z\n", "2026-01-02T03:04:05.000006Z ", "2026-02-30T03:04:05.000006Z"]
)
def test_an_export_line_s_time_is_the_whole_field(ts: str) -> None:
    """A time with a newline after it matched the pattern's ``$`` and was stored as it was."""
    lines = _block((1, "user_message", {"role": "user", "content": "x"}))
    event = json.loads(lines[1])
    event["ts"] = ts
    with pytest.raises(InvalidRequestError) as caught:
        parse_session([lines[0], json.dumps(event)])
    assert caught.value.reason == Reason.INVALID_IMPORT
