"""DeleteEntries through the storage interface (every backend): removing visible entries anywhere in a history.

The entries chosen (by client ids, a prefix or a position range) leave the projection and stay in
the log, hidden by an ``edit`` event that Export shows and followers see; positions are never
reused; a retry with the same request id replays; a refused request writes nothing; a later
EditTail's walk from the end does not step over the entries a delete left between its removals.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond.errors import (
    InvalidRequestError,
    PreconditionError,
    Reason,
    SequenceConflictError,
    SessionNotFoundError,
)
from claw_sessiond.model import DeleteEntriesResult, HistoryMark, LoadWindow, Message
from claw_sessiond.storage import Storage
from tests.helpers.tiers import scale
from tests.storage._support import (
    WORKDIR,
    Stores,
    append,
    assistant,
    edit,
    export_lines,
    history,
    import_lines,
    read,
    result,
    snapshot,
    user,
)
from tests.storage._support import (
    delete_entries as delete,
)


def tagged(client_id: str) -> Message:
    return dataclasses.replace(user(client_id), client_id=client_id)


async def shown(storage: Storage, session_id: str) -> list[int]:
    return [m.position for m in await read(storage, session_id)]


async def last_position(storage: Storage, session_id: str) -> tuple[int, int]:
    meta = (await storage.load(session_id, WORKDIR, "t", repair=False)).session
    return meta.last_position, meta.message_count


async def test_each_selector_removes_its_visible_entries_and_positions_move_on(storage: Storage) -> None:
    await append(storage, "s", *(tagged(i) for i in ("a", "k/1", "b", "k/2", "c", "d", "e", "f")))  # 1..8
    got = await delete(storage, "s", client_ids=("b", "nope", "e"))
    assert (got.removed_positions, got.edit_position, got.replayed) == ((3, 7), 9, False)
    assert await shown(storage, "s") == [1, 2, 4, 5, 6, 8]
    got = await delete(storage, "s", client_id_prefix="k/")
    assert (got.removed_positions, got.edit_position) == ((2, 4), 10)
    got = await delete(storage, "s", from_position=5, to_position=6)
    assert (got.removed_positions, got.edit_position) == ((5, 6), 11)
    assert await shown(storage, "s") == [1, 8]
    assert await last_position(storage, "s") == (11, 2)
    # Nothing matched: nothing written.
    assert await delete(storage, "s", client_ids=("b",)) == DeleteEntriesResult((), 0, "trace")
    assert await last_position(storage, "s") == (11, 2)
    # A range up to the end (to_position 0); then the next entry takes a new position.
    got = await delete(storage, "s", from_position=8)
    assert (got.removed_positions, got.edit_position) == ((8,), 12)
    added = await append(storage, "s", tagged("b"))  # a removed entry's client id is free again
    assert added.first_position == 13
    assert await shown(storage, "s") == [1, 13]


async def test_export_shows_the_removal_and_imports_to_the_same_history(
    storage: Storage, stores: Stores, tmp_path: Path
) -> None:
    await append(storage, "s", *(tagged(i) for i in ("a", "b", "c", "d")))
    await delete(storage, "s", client_ids=("b", "d"))
    lines = await export_lines(storage, "s")
    events = [json.loads(line) for line in lines[1:]]
    assert [(e["position"], e["type"]) for e in events] == [
        (1, "user_message"),
        (2, "user_message"),
        (3, "user_message"),
        (4, "user_message"),
        (5, "edit"),
    ]
    assert events[-1]["payload"] == {"removed": [2, 4], "scattered": True}
    other = await stores.open(tmp_path / "other")
    await import_lines(other, lines)
    assert await shown(other, "s") == await shown(storage, "s") == [1, 3]
    assert await export_lines(other, "s") == lines


async def test_followers_see_the_removal_as_an_edit(storage: Storage) -> None:
    await append(storage, "s", tagged("a"), tagged("b"), tagged("c"))
    await delete(storage, "s", client_ids=("b",))
    _incarnation, items, _more = await storage.watch_batch("s", 3, 10)
    assert items == [(4, HistoryMark(removed=(2,)))]


async def test_a_retry_replays_and_another_request_under_its_id_is_refused(storage: Storage) -> None:
    await append(storage, "s", *(tagged(i) for i in ("a", "b", "c")))
    first = await delete(storage, "s", client_ids=("b",), request_id="r1")
    again = await delete(storage, "s", client_ids=("b",), request_id="r1")
    assert again == dataclasses.replace(first, replayed=True)
    assert await last_position(storage, "s") == (4, 2)
    with pytest.raises(InvalidRequestError) as caught:
        await delete(storage, "s", client_ids=("c",), request_id="r1")
    assert caught.value.reason is Reason.REQUEST_ID_REUSED
    assert await shown(storage, "s") == [1, 3]


async def test_refused_deletes_write_nothing(storage: Storage) -> None:
    await append(storage, "s", *(tagged(f"k/{i}") for i in range(3)), assistant("c1"), result("c1"))  # 1..5
    before = await snapshot(storage, "s", "nobody")
    with pytest.raises(SessionNotFoundError):
        await delete(storage, "nobody", client_ids=("a",))
    with pytest.raises(SequenceConflictError):
        await delete(storage, "s", client_ids=("k/0",), expected_last_position=4)
    with pytest.raises(InvalidRequestError) as caught:
        await delete(storage, "s", client_id_prefix="k/", max_entries=2)
    assert caught.value.reason is Reason.FIELD_TOO_LARGE
    for start, end in ((4, 4), (5, 5), (3, 4)):  # the call without its result, the result without its call
        with pytest.raises(PreconditionError) as refused:
            await delete(storage, "s", from_position=start, to_position=end)
        assert refused.value.reason is Reason.EDIT_SPLITS_CALL
    assert await snapshot(storage, "s", "nobody") == before
    assert (await storage.load("nobody", WORKDIR, "t", repair=False)).session.last_position == 0


async def test_a_call_and_its_result_go_together_or_with_discard_pending(storage: Storage) -> None:
    await append(storage, "s", user("q"), assistant("c1"), result("c1"), assistant("c2"), result("c2"))  # 1..5
    got = await delete(storage, "s", from_position=2, to_position=3)
    assert got.removed_positions == (2, 3)
    got = await delete(storage, "s", from_position=5, to_position=5, discard_pending=True)
    assert got.removed_positions == (5,)
    # c2's result went: the call is open again and a Load repairs it.
    loaded = await storage.load("s", WORKDIR, "t")
    assert [r.tool_call_id for r in loaded.repairs] == ["c2"]


async def test_a_later_edit_tail_walks_over_what_a_delete_left_visible(storage: Storage) -> None:
    await append(storage, "s", *(tagged(str(i)) for i in range(1, 7)))  # 1..6
    await delete(storage, "s", client_ids=("2", "4"))  # edit event at 7
    edited = await edit(storage, "s", remove_last=3)
    assert [m.position for m in edited.removed] == [3, 5, 6]
    assert await shown(storage, "s") == [1]


async def test_the_reads_skip_what_a_delete_removed(storage: Storage) -> None:
    await append(storage, "s", *(tagged(f"k/{i}") for i in range(5)))
    await delete(storage, "s", client_ids=("k/1", "k/3"))
    loaded = await storage.load("s", WORKDIR, "t", repair=False, window=LoadWindow(client_id_prefix="k/"))
    assert [m.position for m in await history(storage, loaded)] == [1, 3, 5]
    loaded = await storage.load("s", WORKDIR, "t", repair=False, window=LoadWindow(client_ids=("k/1", "k/2")))
    assert [m.position for m in await history(storage, loaded)] == [3]


_OPS = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 4)),
    st.tuples(st.just("ids"), st.lists(st.integers(0, 30), max_size=4)),
    st.tuples(st.just("range"), st.integers(1, 40), st.integers(0, 6)),
    st.tuples(st.just("prefix"), st.sampled_from(["a", "b", "a1"])),
    st.tuples(st.just("pop"), st.integers(1, 2)),
)


@settings(
    max_examples=scale(25, 150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(_OPS, min_size=3, max_size=12))
async def test_deletes_and_tail_edits_match_a_model(storage: Storage, ops: list[tuple[Any, ...]]) -> None:
    """Appends, deletes by ids, prefix and range, and EditTail pops, interleaved: the visible history and the
    last position are the model's after every step (an EditTail never steps over what a delete left)."""
    sid = f"p-{uuid.uuid4().hex}"
    visible: dict[int, str] = {}  # position -> client id
    last = n = 0
    for op in ops:
        kind = op[0]
        if kind == "append":
            ids = [f"{'ab'[(n + k) % 2]}{n + k}" for k in range(op[1])]
            n += op[1]
            added = await append(storage, sid, *(tagged(i) for i in ids))
            visible.update(zip(range(added.first_position, added.last_position + 1), ids, strict=True))
            last = added.last_position
            continue
        if kind == "pop":
            if len(visible) < op[1]:
                continue
            want = sorted(visible)[-op[1] :]
            assert [m.position for m in (await edit(storage, sid, remove_last=op[1], expected=last)).removed] == want
        else:
            if kind == "ids":
                names = {f"{'ab'[i % 2]}{i}" for i in op[1]}
                if not names:
                    continue
                selector: dict[str, Any] = {"client_ids": tuple(sorted(names))}
                want = sorted(p for p, c in visible.items() if c in names)
            elif kind == "prefix":
                selector = {"client_id_prefix": op[1]}
                want = sorted(p for p, c in visible.items() if c.startswith(op[1]))
            else:
                end = op[1] + op[2] if op[2] else 0
                selector = {"from_position": op[1], "to_position": end}
                want = sorted(p for p in visible if p >= op[1] and (not end or p <= end))
            if last == 0:
                with pytest.raises(SessionNotFoundError):
                    await delete(storage, sid, **selector)
                continue
            got = await delete(storage, sid, expected_last_position=last, **selector)
            assert list(got.removed_positions) == want
            if not want:
                assert got.edit_position == 0
                continue
            assert got.edit_position == last + 1
        for p in want:
            del visible[p]
        last += 1
        assert await shown(storage, sid) == sorted(visible)
        assert await last_position(storage, sid) == (last, len(visible))


async def test_more_ids_than_one_statement_lists_are_all_removed(storage: Storage) -> None:
    await append(storage, "s", *(tagged(f"m{i}") for i in range(900)))  # 1..900
    await append(storage, "s", *(tagged(f"m{i}") for i in range(900, 1300)))  # 901..1300
    wanted = (*(f"m{i}" for i in range(0, 1300, 2)), "nope")  # 650 stored: two slices of SQLite's IN lists
    got = await delete(storage, "s", client_ids=wanted)  # bound 1000: the statement's LIMIT after the list
    assert got.removed_positions == tuple(range(1, 1300, 2))
    assert await shown(storage, "s") == list(range(2, 1301, 2))
