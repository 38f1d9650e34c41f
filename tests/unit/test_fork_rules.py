"""A fork's two decisions, without a database: which index rows it keeps (``history.forked_calls``) and how a
copied result loses the mark of the repair it superseded (``events.without_supersedes``)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond.events import encode_message, without_supersedes
from claw_sessiond.history import IndexedCall, forked_calls
from claw_sessiond.model import Message


def test_a_call_made_by_a_copied_entry_moves_with_it_and_one_made_after_stays_behind() -> None:
    new_of = {2: 1, 5: 2, 7: 3}  # the copied entries: 2, 5 and 7 of the source
    calls = [
        IndexedCall("answered", 2, 0, result_position=5),
        IndexedCall("answered later", 2, 1, result_position=9, pending=True, repair_mode="drop"),
        IndexedCall("repaired", 7, 0, result_position=8, synthetic_position=8),
        IndexedCall("not copied", 3, 0, result_position=5),
    ]
    assert forked_calls(calls, new_of) == [
        IndexedCall("answered", 1, 0, result_position=2),
        # Its result lies beyond the copied range: open in the fork, keeping what its append set.
        IndexedCall("answered later", 1, 1, result_position=None, pending=True, repair_mode="drop"),
        IndexedCall("repaired", 3, 0, result_position=None, synthetic_position=None),
    ]


@given(
    positions=st.lists(st.integers(1, 60), unique=True, max_size=20),
    calls=st.lists(
        st.tuples(st.integers(1, 60), st.one_of(st.none(), st.integers(1, 60))),
        max_size=20,
    ),
)
def test_every_kept_row_points_at_fork_positions_only(
    positions: list[int], calls: list[tuple[int, int | None]]
) -> None:
    new_of = {p: i for i, p in enumerate(sorted(positions), 1)}
    rows = [IndexedCall(f"c{i}", at, 0, result_position=result) for i, (at, result) in enumerate(calls)]
    kept = forked_calls(rows, new_of)
    assert [k.call_id for k in kept] == [r.call_id for r in rows if r.assistant_position in new_of]
    for row, k in zip([r for r in rows if r.assistant_position in new_of], kept, strict=True):
        assert k.assistant_position == new_of[row.assistant_position]
        assert k.result_position == (None if row.result_position is None else new_of.get(row.result_position))


def test_a_result_loses_its_mark_and_keeps_the_rest_as_append_wrote_it() -> None:
    plain = Message("tool", "late ü \u0000", tool_call_id="c1", name="b", metadata='{"k": 1}')
    marked = encode_message(
        Message("tool", "late ü \u0000", tool_call_id="c1", name="b", metadata='{"k": 1}', supersedes=4)
    )
    assert without_supersedes(marked) == encode_message(plain)
    assert json.loads(marked)["supersedes"] == 4


def test_a_payload_without_a_mark_is_left_alone() -> None:
    assert without_supersedes(encode_message(Message("tool", "r", tool_call_id="c1"))) is None
    assert without_supersedes(encode_message(Message("assistant", 'says "supersedes"'))) is None
