"""Crash under load (SPEC §2, §4): SIGKILL the daemon at random moments while 8 processes append.

Each writer (``tests/helpers/crash_writer.py``; two of the eight pipeline 4 appends
at a time over AppendStream) retries every append with the same request id
until it is acknowledged, across kills and restarts, and logs the
acknowledgement. After every kill (daemon down, storage read directly through
``tests.helpers.inspect``) and at the end:

* every acknowledged append is present exactly once, at the positions it was
  acknowledged with, its messages contiguous and in order;
* an append that was never acknowledged is present entirely or not at all;
* no message is stored twice; each writer's appends to a session keep their order;
* a loader process Loads (and so repairs) the sessions all along: no tool call ever
  gets two results, no pending call (awaiting approval) is ever repaired, and at the end every
  call but the pending ones has exactly one result, placed after its assistant; the pending
  ones are listed in flight with no owner, and then take their real results;
* usage totals count every acknowledged RecordUsage exactly once (a budget survives kills);
* some kills hit the daemon while it starts up, some in the middle of a graceful stop;
* the storage's own integrity check (SQLite: ``PRAGMA integrity_check``) finds nothing wrong at the end.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond_client import InvalidRequestError, Message
from tests.helpers import inspect
from tests.helpers.crash_writer import BATCH_SIZES, item_fields
from tests.helpers.daemon import DaemonProcess
from tests.helpers.figures import record
from tests.helpers.process import wait_for
from tests.helpers.tiers import FULL, scale

WRITERS = 8
STREAM_WRITERS = 2  # of the 8, these pipeline their appends over AppendStream
SESSIONS = ("crash-a", "crash-b", "crash-c")
#: The writer process, run as a module (a script's own folder would come first on its sys.path).
WRITER = (sys.executable, "-m", "tests.helpers.crash_writer")


@dataclass
class Acks:
    """What the writers' logs say was acknowledged."""

    by_rid: dict[str, dict[str, object]] = field(default_factory=dict)
    usage: dict[str, tuple[str, int]] = field(default_factory=dict)  # usage request id -> (session, input tokens)
    replayed: int = 0
    gave_up: list[str] = field(default_factory=list)


def read_acks(logs: list[Path]) -> Acks:
    acks = Acks()
    for log in logs:
        try:
            text = log.read_text()
        except FileNotFoundError:
            continue
        for line in text.splitlines(keepends=True):
            if not line.endswith("\n"):
                continue  # being written right now
            entry = json.loads(line)
            if "usage" in entry:
                acks.usage[str(entry["usage"])] = (str(entry["session"]), int(entry["input_tokens"]))
                continue
            if entry.get("gave_up"):
                acks.gave_up.append(str(entry["rid"]))
                continue
            acks.by_rid[str(entry["rid"])] = entry
            acks.replayed += bool(entry["replayed"])
    return acks


def stored_messages(store: inspect.Stored, *, repairs: bool = False) -> dict[str, list[tuple[int, str]]]:
    """(position, content) of every stored client message (or of every repair), per session, in position order."""
    out: dict[str, list[tuple[int, str]]] = defaultdict(list)
    rows = sorted(
        (
            (e.session_id, e.position, e.payload)
            for e in store.events()
            if e.position is not None and e.type != "clear" and (e.type == "repair") == repairs
        ),
        key=lambda row: (row[0], row[1]),
    )
    for session, position, data in rows:
        out[session].append((int(position), str(data.get("tool_call_id" if repairs else "content", ""))))
    return out


def check_usage(store: inspect.Stored, acks: Acks, *, exact: bool) -> int:
    """Usage totals hold every acknowledged RecordUsage exactly once (at most one more per writer in flight)."""
    acked: dict[str, int] = defaultdict(int)
    for session, tokens in acks.usage.values():
        acked[session] += tokens
    stored = {s.session_id: s.input_tokens for s in store.sessions()}
    for session in SESSIONS:
        total = int(stored.get(session, 0))
        if exact:
            assert total == acked[session], f"{session}: usage {total}, acknowledged {acked[session]}"
        else:  # daemon killed: an unacknowledged RecordUsage may have committed, never one counted twice
            assert total >= acked[session], f"{session}: usage {total} lost some of {acked[session]}"
    return len(acks.usage)


def pending_calls(store: inspect.Stored) -> set[tuple[str, str]]:
    """(session, call id) of every stored call marked pending."""
    return {
        (e.session_id, c["id"])
        for e in store.events()
        if e.position is not None
        for c in e.payload.get("tool_calls", ())
        if c.get("pending")
    }


def check_tool_results(store: inspect.Stored) -> int:
    """Every call has at most one result (live or repair), no pending call a repair; return the number of repairs."""
    results: dict[tuple[str, str], int] = defaultdict(int)
    calls: set[tuple[str, str]] = set()
    repaired: set[tuple[str, str]] = set()
    for event in store.events():
        if event.position is None:
            continue
        session, data = event.session_id, event.payload
        calls.update((session, c["id"]) for c in data.get("tool_calls", ()))
        if data.get("role") == "tool":
            results[(session, data["tool_call_id"])] += 1
        if event.type == "repair":
            repaired.add((session, data["tool_call_id"]))
    twice = sorted(k for k, n in results.items() if n > 1)
    assert not twice, f"tool calls with more than one result (repaired twice?): {twice[:5]}"
    assert set(results) <= calls, "a result for a call that was never stored"
    wrongly = sorted(repaired & pending_calls(store))
    assert not wrongly, f"pending calls were repaired: {wrongly[:5]}"
    repairs = stored_messages(store, repairs=True)
    return sum(len(v) for v in repairs.values())


def check(store: inspect.Stored, acks: Acks) -> tuple[int, int]:
    """Assert the promises; return (acknowledged appends checked, unacknowledged appends found)."""
    stored = stored_messages(store)
    at: dict[tuple[str, int], str] = {}
    seen: dict[str, int] = defaultdict(int)
    for session, rows in stored.items():
        positions = [p for p, _ in rows]
        assert len(positions) == len(set(positions)), f"{session}: a position is used twice"
        for position, content in rows:
            at[(session, position)] = content
            seen[content] += 1
    duplicated = sorted(c for c, n in seen.items() if n > 1)
    assert not duplicated, f"stored more than once: {duplicated[:10]}"
    items = 0
    for event in store.events():  # items and client ids survive whole, with their entry
        content = str(event.payload.get("content", "")) if isinstance(event.payload, dict) else ""
        if event.format or event.payload.get("client_id"):
            items += 1
            rid = content.rpartition("/")[0]
            want = item_fields(rid)
            assert (event.format, event.item, event.payload.get("client_id")) == (
                want["format"],
                want["item"],
                want["client_id"],
            ), f"{content}: item or client id not stored whole"

    for rid, entry in acks.by_rid.items():
        session, first, last = str(entry["session"]), int(entry["first"]), int(entry["last"])  # type: ignore[call-overload]
        texts = list(entry["texts"])  # type: ignore[call-overload]
        assert last - first + 1 == len(texts), f"{rid}: acknowledged {first}..{last} for {len(texts)} messages"
        got = [at.get((session, p)) for p in range(first, last + 1)]
        assert got == texts, f"{rid}: acknowledged at {session}:{first}..{last} but stored {got} (lost or moved)"

    # Group what is stored by request id: every group is whole (all of its batch, contiguous).
    groups: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for (session, position), content in at.items():
        rid, _, index = content.rpartition("/")
        if rid.startswith("w"):
            groups[rid].append((session, position, int(index)))
    unacked = 0
    for rid, items in groups.items():
        items.sort(key=lambda x: x[1])
        sessions = {s for s, _, _ in items}
        assert len(sessions) == 1, f"{rid}: stored in several sessions {sessions}"
        indexes = [i for _, _, i in items]
        assert indexes == list(range(len(items))), f"{rid}: partial or out of order {indexes}"
        positions = [p for _, p, _ in items]
        assert positions == list(range(positions[0], positions[0] + len(items))), f"{rid}: not contiguous"
        expected_size = BATCH_SIZES[int(rid.split("-")[1]) % len(BATCH_SIZES)]
        assert len(items) == expected_size, f"{rid}: {len(items)} of {expected_size} messages stored (partial append)"
        if rid not in acks.by_rid:
            unacked += 1

    # Each writer's appends to one session keep their order.
    last_pos: dict[tuple[str, str], tuple[int, int]] = {}
    for rid, entry in sorted(acks.by_rid.items(), key=lambda kv: (kv[0].split("-")[0], int(kv[0].split("-")[1]))):
        writer, i = rid.split("-")[0], int(rid.split("-")[1])
        key = (writer, str(entry["session"]))
        prev = last_pos.get(key)
        if prev is not None:
            assert int(entry["first"]) > prev[1], f"{rid} stored before {writer}-{prev[0]} in {key[1]}"  # type: ignore[call-overload]
        last_pos[key] = (i, int(entry["last"]))  # type: ignore[call-overload]
    assert items or not any(int(rid.split("-")[1]) % 4 == 1 for rid in acks.by_rid), "no item was checked"
    return len(acks.by_rid), unacked


def _writer_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


@pytest.mark.smoke
@pytest.mark.slow
def test_sigkill_under_load_loses_and_duplicates_nothing(workspace: Path, tmp_path: Path) -> None:
    # Two rounds of the four kinds of kill (k % 4). Each kill waits for fresh acknowledgements, so it lands
    # with all eight writers (and the loader) in flight: one kill samples as many moments of the write path
    # as there are writers, and each run draws a new seed. A third round (12 kills) repeated the kinds.
    kills = scale(5, 8)
    seed = int(os.environ.get("CLAW_CRASH_SEED", str(time.time_ns() % 1_000_000)))
    rng = random.Random(seed)
    print(f"crash test seed={seed} kills={kills} (CLAW_CRASH_SEED={seed} repeats it)")
    store = inspect.stored(workspace)
    stop_file = tmp_path / "stop"
    logs = [tmp_path / f"writer-{w}.log" for w in range(WRITERS)]
    deadline = time.time() + (300 if FULL else 120)
    daemon = DaemonProcess(workspace).start()
    writers: list[subprocess.Popen[bytes]] = []
    errs = [open(tmp_path / f"writer-{w}.err", "wb") for w in range(WRITERS + 1)]  # noqa: SIM115 - closed below
    survived = checked_while_down = unacked_while_down = killed_in_startup = killed_in_shutdown = 0
    pending_checked = 0
    try:
        for w in range(WRITERS):
            args = [daemon.address, str(w), ",".join(SESSIONS), str(logs[w]), str(stop_file), str(deadline)]
            writers.append(
                subprocess.Popen(
                    [*WRITER, *args],
                    env={**_writer_env(), "CLAW_CRASH_STREAM": "1" if w >= WRITERS - STREAM_WRITERS else "0"},
                    stdout=subprocess.DEVNULL,
                    stderr=errs[w],
                )
            )
        loader_args = [daemon.address, "loader", ",".join(SESSIONS), "-", str(stop_file), str(deadline)]
        writers.append(
            subprocess.Popen(
                [*WRITER, *loader_args],
                env=_writer_env(),
                stdout=subprocess.DEVNULL,
                stderr=errs[WRITERS],
            )
        )
        before = 0
        for k in range(kills):
            # Let the load run a random while (and make sure it is running) before the kill.
            end = time.monotonic() + 20
            time.sleep(rng.uniform(0.15, 0.9))
            while len(read_acks(logs).by_rid) <= before and time.monotonic() < end:
                time.sleep(0.05)
            if k % 4 == 1:  # SIGKILL in the middle of a graceful stop (draining, final checkpoint)
                daemon.proc.send_signal(signal.SIGTERM)  # type: ignore[union-attr]
                time.sleep(rng.uniform(0.0, 0.3))
                killed_in_shutdown += 1
            daemon.kill()  # SIGKILL
            acks = read_acks(logs)
            assert len(acks.by_rid) > before, f"kill {k}: no progress since the last kill"
            before = len(acks.by_rid)
            unacked_while_down += check(store, acks)[1]  # daemon down: what is on disk is all there is
            check_tool_results(store)
            check_usage(store, acks, exact=False)
            checked_while_down += len(acks.by_rid)
            if k % 4 == 3:  # also kill one while it starts up (lock, checks, migration, bind)
                early = DaemonProcess(workspace)
                early.spawn()
                time.sleep(rng.uniform(0.0, 0.6))
                early.kill()
                killed_in_startup += 1
                check(store, read_acks(logs))
            daemon = DaemonProcess(workspace).start()
            survived += 1
        time.sleep(0.5)
        stop_file.touch()
        for w, proc in enumerate(writers):
            code = proc.wait(max(5.0, deadline - time.time()))
            err = (tmp_path / f"writer-{w}.err").read_text(errors="replace")
            assert code == 0, f"writer {w} exited {code}:\n{err}"
        acks = read_acks(logs)
        assert not acks.gave_up, f"requests never acknowledged before the deadline: {acks.gave_up}"
        with daemon.client() as c:  # the daemon's own view agrees with the file
            for session in SESSIONS:
                c.load(session)  # repairs what the loader has not repaired yet
            stored, repaired = stored_messages(store), stored_messages(store, repairs=True)
            for session in SESSIONS:
                loaded = c.load(session)
                assert loaded.repairs == [], "a second Load repaired again"
                live = [(m.position, m.content) for m in loaded.messages if not m.synthetic]
                assert sorted(live) == stored[session]
                synthetic = sorted((m.position, m.tool_call_id) for m in loaded.messages if m.synthetic)
                assert synthetic == repaired[session]
                for i, m in enumerate(loaded.messages):  # every result right after its assistant's block
                    if m.role == "tool":
                        owner = next(p for p in reversed(loaded.messages[:i]) if p.role != "tool")
                        assert m.tool_call_id in {t.id for t in owner.tool_calls}, f"{session}: result misplaced"
                opened = [t.id for m in loaded.messages for t in m.tool_calls if not t.pending]
                answered = [m.tool_call_id for m in loaded.messages if m.role == "tool"]
                assert sorted(opened) == sorted(answered), f"{session}: a call without exactly one result"
                waiting = sorted(t.id for m in loaded.messages for t in m.tool_calls if t.pending)
                assert sorted((f.tool_call_id, f.run_id, f.owner_pid) for f in loaded.in_flight) == [
                    (w, "", 0) for w in waiting
                ], f"{session}: pending calls not all in flight, unowned"
                # The approvals come: each pending call takes its real result, after every kill.
                for call_id in waiting:
                    c.append(session, Message.tool(call_id, f"approved {call_id}"))
                pending_checked += len(waiting)
                answered_now = c.load(session)
                assert answered_now.repairs == [] and answered_now.in_flight == []
        assert daemon.terminate() == 0
    finally:
        for proc in writers:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        daemon.stop()
        for fh in errs:
            fh.close()
    acked, unacked = check(store, acks)
    repairs = check_tool_results(store)
    usage_checked = check_usage(store, acks, exact=True)
    assert repairs > 0, "no interrupted call was repaired: the repair-under-crash part did not run"
    assert pending_checked > 0, "no pending call was stored: the pending-under-crash part did not run"
    assert store.integrity_problems() == []
    record(
        "crash",
        crashes_survived=survived,
        killed_during_startup=killed_in_startup,
        killed_during_shutdown=killed_in_shutdown,
        repairs_checked=repairs,
        pending_calls_unrepaired=pending_checked,
        usage_records_checked=usage_checked,
        acked_checked=acked,
        acked_checked_while_down=checked_while_down,
        replayed_after_restart=acks.replayed,
        committed_unacked_seen_while_down=unacked_while_down,
        unacked_found_at_end=unacked,
        lost=0,
        duplicated=0,
        partial=0,
    )


class _OnlyEvents:
    """Storage that holds these events and nothing else (all the checker reads)."""

    def __init__(self, events: list[inspect.StoredEvent]) -> None:
        self._events = events

    def events(self, session_id: str | None = None) -> list[inspect.StoredEvent]:
        return [e for e in self._events if session_id in (None, e.session_id)]


def test_checker_detects_loss_duplication_and_partial_appends(tmp_path: Path) -> None:
    """The checker above must be able to fail: feed it stored events with each kind of damage."""

    def make(rows: list[tuple[str, int, str]], item: bytes | None = None) -> Any:
        events = []
        for i, (s, p, c) in enumerate(rows):
            if c == "w0-1/1":  # a kind-1 assistant: its item and client id
                want = item_fields("w0-1")
                payload = {"content": c, "client_id": want["client_id"]}
                events.append(
                    inspect.StoredEvent(i + 1, s, p, "assistant_message", payload, want["format"], item or want["item"])
                )
            else:
                events.append(inspect.StoredEvent(i + 1, s, p, "user_message", {"content": c}))
        return _OnlyEvents(events)

    ack = {"rid": "w0-1", "session": "a", "first": 1, "last": 2, "texts": ["w0-1/0", "w0-1/1"], "replayed": False}
    acks = Acks(by_rid={"w0-1": ack})
    assert check(make([("a", 1, "w0-1/0"), ("a", 2, "w0-1/1")]), acks) == (1, 0)
    with pytest.raises(AssertionError, match="lost or moved"):
        check(make([("a", 1, "w0-1/0")]), acks)
    with pytest.raises(AssertionError, match="more than once"):
        check(make([("a", 1, "w0-1/0"), ("a", 2, "w0-1/1"), ("a", 3, "w0-1/1")]), acks)
    with pytest.raises(AssertionError, match="partial"):
        check(make([("a", 1, "w0-1/0"), ("a", 2, "w0-1/1"), ("a", 3, "w0-2/0")]), acks)
    with pytest.raises(AssertionError, match="not stored whole"):
        check(make([("a", 1, "w0-1/0"), ("a", 2, "w0-1/1")], item=b"cut"), acks)
    call = {"id": "p", "name": "bash", "arguments": "{}", "pending": True}
    waiting = [inspect.StoredEvent(1, "a", 1, "assistant_message", {"role": "assistant", "tool_calls": [call]})]
    assert check_tool_results(_OnlyEvents(waiting)) == 0
    repaired = inspect.StoredEvent(2, "a", 2, "repair", {"role": "tool", "tool_call_id": "p"})
    with pytest.raises(AssertionError, match="pending calls were repaired"):
        check_tool_results(_OnlyEvents([*waiting, repaired]))


def test_concurrent_retries_of_one_request_id_write_once(workspace: Path) -> None:
    """Eight connections send the same request at the same moment (a retry storm): one write, seven replays;
    the same id with other content at the same moment: one write, the others REQUEST_ID_REUSED."""
    d = DaemonProcess(workspace).start()
    rounds, senders = scale(10, 40), 8
    clients = [d.client(retry_window_s=5) for _ in range(senders)]
    try:
        for r in range(rounds):
            results: list[object] = [None] * senders
            barrier = threading.Barrier(senders)

            def send(
                i: int, same_content: bool, r: int = r, results: list[object] = results, barrier: Any = barrier
            ) -> None:
                text = f"storm {r}" if same_content else f"storm {r} variant {i}"
                barrier.wait(10)
                try:
                    results[i] = clients[i].append("storm", Message.user(text), request_id=f"storm-{r}")
                except InvalidRequestError as exc:
                    results[i] = exc

            same = r % 2 == 0
            threads = [threading.Thread(target=send, args=(i, same)) for i in range(senders)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            written = [x for x in results if getattr(x, "replayed", None) is False]
            assert len(written) == 1, f"round {r}: {len(written)} writes for one request id"
            if same:
                assert all(getattr(x, "replayed", None) is not None for x in results), results
                assert {(x.first_position, x.last_position) for x in results} == {  # type: ignore[attr-defined]
                    (written[0].first_position, written[0].last_position)  # type: ignore[attr-defined]
                }
            else:
                refused = [x for x in results if isinstance(x, InvalidRequestError)]
                assert all(x.reason == "REQUEST_ID_REUSED" for x in refused)
                assert len(refused) + len(written) + sum(getattr(x, "replayed", False) is True for x in results) == 8
        loaded = clients[0].load("storm")
        assert len(loaded.messages) == rounds, [m.content for m in loaded.messages]
    finally:
        for c in clients:
            c.close()
        assert d.terminate() == 0
    record("crash", concurrent_retry_rounds=rounds, duplicated=0)


def test_graceful_restarts_under_load_are_invisible_to_clients(workspace: Path) -> None:
    """SIGTERM + restart while clients append: every call ends acknowledged (the client retries what the
    stopping daemon refused or cancelled), nothing is stored twice."""
    # Each restart waits until every writer appends to the new daemon, so every SIGTERM finds all four
    # writers in flight (refused, drained or cancelled, then retried across the restart): 5 restarts cover
    # those moments as 10 did.
    restarts, threads_n = scale(3, 5), 4
    daemon = DaemonProcess(workspace).start()
    stop = threading.Event()
    acked: list[tuple[str, int, int, str]] = []
    failures: list[str] = []

    def write(w: int) -> None:
        with daemon.client(retry_window_s=30) as c:
            n = 0
            while not stop.is_set():
                text = f"g{w}-{n}"
                try:
                    r = c.append(f"graceful-{w}", Message.user(text), request_id=text)
                except Exception as exc:  # any error reaching the caller is the bug
                    failures.append(f"{text}: {exc!r}")
                    return
                acked.append((f"graceful-{w}", r.first_position, r.last_position, text))
                written[w] += 1
                n += 1

    def under_load() -> None:
        """Wait until every writer has had three appends acknowledged since now (an event, not a clock):
        the SIGTERM that follows finds every writer appending to this daemon."""
        mark = list(written)
        wait_for(
            lambda: bool(failures) or all(now > then + 2 for now, then in zip(written, mark, strict=True)),
            60,
            "every writer to append to the daemon",
        )

    written = [0] * threads_n  # acknowledged appends per writer
    threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(threads_n)]
    try:
        for t in threads:
            t.start()
        for _ in range(restarts):
            under_load()
            assert daemon.terminate() == 0
            daemon = DaemonProcess(workspace).start()
        under_load()
        stop.set()
        for t in threads:
            t.join(60)
    finally:
        stop.set()
        daemon.stop()
    assert not failures, f"calls failed across graceful restarts: {failures[:5]}"
    stored = stored_messages(inspect.stored(workspace))
    for session, first, last, text in acked:
        assert first == last and (first, text) in stored[session], f"{text} lost"
    contents = [c for rows in stored.values() for _, c in rows]
    assert len(contents) == len(set(contents)) == len(acked), "lost or duplicated across graceful restarts"
    record("crash", graceful_restarts=restarts, graceful_acked_checked=len(acked), lost=0, duplicated=0)
