"""A Load's sequences (``storage/loading.py``), its read port and the paged reads' rule, without a database.

The contract suite (``tests/storage/``: repair, bounded loads, reads, tool policy, on both
backends) runs the sequences over the real ports; here: the read ports have the
``ReadPort`` Protocol's verbs with its signatures, the verbs ``Port`` and ``ReadPort`` share
answer alike, and the decisions a sequence takes between its calls, driven step by step with
scripted answers (each test names the calls it expects, so a sequence that asks something
else, or in another order, fails).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from claw_sessiond import repair
from claw_sessiond.events import encode_clear, encode_edit, encode_message
from claw_sessiond.history import OpenCall, moves_bound
from claw_sessiond.model import HistoryCursor, LoadWindow, Message, Repair, ToolCall, Usage
from claw_sessiond.policy import ToolPolicy
from claw_sessiond.storage import loading
from claw_sessiond.storage.memory.read_port import MemoryReadPort
from claw_sessiond.storage.port import Port, ReadPort, SessionRow
from claw_sessiond.storage.postgres.reads import PostgresReadPort
from claw_sessiond.storage.sqlite.reads import SQLiteReadPort
from claw_sessiond.storage.steps import Steps


def _verbs(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(fn)
        for name, fn in inspect.getmembers(cls)
        if inspect.isfunction(fn) and not name.startswith("_") and name != "as_port"
    }


@pytest.mark.parametrize(
    "port", [SQLiteReadPort, PostgresReadPort, MemoryReadPort], ids=["sqlite", "postgres", "memory"]
)
def test_a_read_port_has_exactly_the_protocols_verbs_as_coroutines(port: type) -> None:
    protocol, verbs = _verbs(ReadPort), _verbs(port)
    assert sorted(verbs) == sorted(protocol)
    for name, signature in protocol.items():
        assert verbs[name] == signature, name
        assert inspect.iscoroutinefunction(getattr(port, name)), name


def test_the_verbs_both_ports_have_are_the_same_verbs() -> None:
    read, write = _verbs(ReadPort), _verbs(Port)
    shared = set(read) & set(write)
    assert {"session_and_settings", "open_calls", "session_policy", "entries_at"} <= shared
    for name in shared:
        assert read[name] == write[name], name


def test_call_names_of_reads_every_assistant_payload() -> None:
    first = encode_message(Message("assistant", tool_calls=(ToolCall("a", "bash", "{}"), ToolCall("b", "", "{}"))))
    second = encode_message(Message("assistant", tool_calls=(ToolCall("c", "read", "{}"),)))
    assert repair.call_names_of([first, second]) == {"a": "bash", "b": "", "c": "read"}
    assert repair.call_names_of([]) == {}


# ---------------------------------------------------------------- sequences, step by step


def _drive(steps: Callable[[Any], Steps[Any]], script: list[tuple[str, Callable[..., Any]]]) -> Any:
    """Run ``steps`` over a port that expects exactly ``script``'s calls, in order, and answers each."""

    class Scripted:
        def __getattr__(self, name: str) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                assert script, f"unexpected call {name}{args}"
                expected, answer = script.pop(0)
                assert name == expected, f"asked {name}, expected {expected}"
                return answer(*args)

            return call

    gen = steps(Scripted())
    answer: Any = None
    while True:
        try:
            answer = gen.send(answer)
        except StopIteration as done:
            assert not script, f"calls not made: {[n for n, _a in script]}"
            return done.value


def _row(last: int, clear: int = 0, created: str = "2026-01-01T00:00:00.000000Z") -> SessionRow:
    return SessionRow("s", "/w", created, created, last, clear, last, Usage())


def _live(ids: set[str]) -> set[str]:
    return {r for r in ids if r == "live-run"}


def test_an_unchanged_plan_is_written_as_it_is_and_only_owned_calls_are_read() -> None:
    calls = (OpenCall("a", 2, 0), OpenCall("b", 2, 1))
    plan = repair.RepairPlan(_row(3).created_at, 0, 3, calls, ("pa", "pb"), ("d",), 1)
    owned = [OpenCall("x", 1, 0, run_id="live-run"), OpenCall("y", 1, 1, run_id="gone")]
    written: list[Any] = []
    result = _drive(
        lambda port: loading.repair_steps(port, _live, "s", "", "t", plan),
        [
            ("session_row", lambda _s: (_row(3), "now")),
            ("owned_open_calls", lambda _s: owned),
            ("write_repairs", lambda *a: written.append(a)),
            ("advance_session", lambda *a: written.append(a)),
            ("session_and_settings", lambda _s: (_row(5), None)),
        ],
    )
    assert written[0] == ("s", [Repair("a", 2, 4), Repair("b", 2, 5)], ("pa", "pb"), "t", "now")
    assert written[1] == ("s", 5, 2, "now", "")
    assert [f.tool_call_id for f in result.in_flight] == ["x"]  # the run that ended is not in flight
    assert result.cursor.dropped_ids == ("d",) and result.session.message_count == 5 - 1


def test_a_plan_the_session_moved_past_is_made_again_from_the_open_calls() -> None:
    plan = repair.RepairPlan(_row(3).created_at, 0, 3, (OpenCall("a", 2, 0),), ("stale",))
    assistant = encode_message(Message("assistant", tool_calls=(ToolCall("a", "bash", "{}"),)))
    written: list[Any] = []
    result = _drive(
        lambda port: loading.repair_steps(port, _live, "s", "/here", "t", plan),
        [
            ("session_row", lambda _s: (_row(4), "now")),  # an append landed since the plan
            ("open_calls", lambda _s: [OpenCall("a", 2, 0)]),
            ("session_policy", lambda _s: ToolPolicy()),
            ("entries_at", lambda _s, positions: [(p, assistant, False) for p in positions]),
            ("write_repairs", lambda *a: written.append(a)),
            ("advance_session", lambda *a: written.append(a)),
            ("session_and_settings", lambda _s: (_row(5), None)),
        ],
    )
    (_sid, repairs, payloads, _trace, _now), advance = written
    assert repairs == [Repair("a", 2, 5)] and "stale" not in payloads and "bash" in payloads[0]
    assert advance == ("s", 5, 1, "now", "/here")
    assert result.repairs == repairs


def test_a_chunk_skips_calls_answered_since_and_gives_way_to_a_cleared_session() -> None:
    created = _row(3).created_at
    chunk = repair.RepairPlan(created, 0, 3, (OpenCall("a", 2, 0), OpenCall("b", 2, 1)), ("pa", "pb"))
    written: list[Any] = []
    done = _drive(
        lambda port: loading.repair_chunk_steps(port, "s", "t", chunk),
        [
            ("session_row", lambda _s: (_row(7), "now")),
            ("still_open", lambda _s, ids: {"b"} & set(ids)),
            ("write_repairs", lambda *a: written.append(a)),
            ("advance_session", lambda *a: written.append(a)),
        ],
    )
    assert done == ([Repair("b", 2, 8)], 8)
    assert written == [("s", [Repair("b", 2, 8)], ["pb"], "t", "now"), ("s", 8, 1, "now", "")]
    cleared = _drive(
        lambda port: loading.repair_chunk_steps(port, "s", "t", chunk),
        [("session_row", lambda _s: (_row(7, clear=5), "now"))],
    )
    assert cleared is None


def _at(verb: str, answer: int | None) -> tuple[str, Callable[..., Any]]:
    return verb, lambda *_a: answer


@pytest.mark.parametrize(
    ("window", "script", "start_after", "complete"),
    [
        (LoadWindow(last=3), [_at("nth_visible_back", 8), _at("last_visible_before", 7)], 7, False),
        (LoadWindow(last=50), [_at("nth_visible_back", None), _at("last_visible_before", None)], 2, True),
        (
            LoadWindow(after_time="t"),
            [_at("first_position_after_time", None), _at("last_visible_before", 9)],
            10,
            False,
        ),
        (LoadWindow(after_position=1), [_at("last_visible_before", None)], 2, True),
        (LoadWindow(after_position=6), [_at("last_visible_before", 6)], 6, False),
    ],
)
def test_where_a_window_starts(window: LoadWindow, script: list[Any], start_after: int, complete: bool) -> None:
    cursor = HistoryCursor("s", "c", 2, 10)
    found = _drive(
        lambda port: loading.read_window(port, cursor, window),
        [*script, ("lead_positions", lambda *a: ()), ("history_page", lambda *a: (None, 0))],
    )
    assert (found.start_after, found.complete, found.messages) == (start_after, complete, None)


# ---------------------------------------------------------------- what a stream aborts for


@pytest.mark.parametrize(
    ("event_type", "payload", "clears", "moves"),
    [
        ("edit", encode_edit([4, 5]), True, True),  # an edit reaching into what a history stream reads
        ("edit", encode_edit([11]), True, False),  # an edit after its bound
        ("edit", encode_edit([]), True, False),
        ("edit", encode_edit([4]), False, False),  # an export still has every event
        ("clear", encode_clear(12), False, True),  # an erasing clear took events an export still sends
        ("clear", encode_clear(), False, False),  # a clear that kept the log
        ("clear", encode_clear(12), True, False),  # a history stream checks clears by the clear position
    ],
)
def test_what_moves_a_streams_bound(event_type: str, payload: str, clears: bool, moves: bool) -> None:
    assert moves_bound(event_type, payload, 10, clears) is moves
