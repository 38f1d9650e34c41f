"""Crash during a stream of EditTails: SIGKILL the daemon at random moments while writers edit.

Each writer (``tests/helpers/edit_writer.py``) edits a session of its own: it removes a few
entries, appends a few in their place, on condition of the last position, and retries every edit
with the same request id until it is acknowledged, across kills and restarts. After every kill
(daemon down, storage read directly through ``tests.helpers.inspect``) and at the end:

* every acknowledged edit is in the log exactly once, at the positions it was acknowledged with,
  removing what its reply named; an edit that was never acknowledged is there whole or not at all;
* nothing is half-applied: every edit event is followed by all of its replacements, every entry it
  names is hidden by it and nothing else is, and it removed exactly the last entries the writer
  asked for (replaying the log from the start gives the writer's own view);
* the session's visible count is the replayed history's, and after the restarts the daemon's own
  Load returns the replayed history;
* the storage's own integrity check finds nothing wrong at the end.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import inspect
from tests.helpers.daemon import DaemonProcess
from tests.helpers.edit_writer import plan
from tests.helpers.figures import record
from tests.helpers.tiers import FULL, scale

SESSIONS = ("edit-crash-0", "edit-crash-1", "edit-crash-2")
WRITER = (sys.executable, "-m", "tests.helpers.edit_writer")


def read_acks(logs: dict[str, Path]) -> dict[str, list[dict[str, object]]]:
    """Each session's acknowledged edits, in order (a line cut by a kill of the writer is not one)."""
    out: dict[str, list[dict[str, object]]] = {}
    for session, path in logs.items():
        acks: list[dict[str, object]] = []
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                acks.append(entry)
        out[session] = acks
    return out


def _index(rid: str) -> int:
    return int(rid.rsplit("-", 1)[1])


def check(store: inspect.Stored, session: str, acks: list[dict[str, object]]) -> tuple[int, int]:
    """Check one session's log against its writer's acknowledgements; returns (acknowledged, unacknowledged)."""
    assert not [a for a in acks if a.get("gave_up")], f"{session}: edits never acknowledged: {acks[-1]}"
    events = [e for e in store.events(session) if e.position is not None]
    positions = [e.position for e in events]
    assert positions == sorted(set(positions)), f"{session}: positions repeat or go back"
    by_position = {e.position: e for e in events}
    visible: list[int] = []  # the writer's view, replayed from the log
    stored_edits: list[tuple[int, int, list[int]]] = []  # (index of the edit, its position, removed)
    i = 0
    for e in events:
        if e.type == "edit":
            # The edit of request i: it removes the last entries the writer asked for, and is followed
            # by all its replacements.
            remove, add = plan(i, len(visible))
            removed = list(e.payload["removed"])
            assert removed == visible[len(visible) - remove :], f"{session}: edit {i} removed {removed}"
            hidden_by_it = sorted(x.position for x in events if x.hidden_by == e.position)  # type: ignore[misc]
            assert hidden_by_it == removed, f"{session}: edit {i} hides {hidden_by_it}, names {removed}"
            followers = [by_position.get(e.position + k + 1) for k in range(add)]  # type: ignore[operator]
            texts = [f"{session}-{i}/{k}" for k in range(add)]
            got = [f.payload.get("content") if f is not None and f.type == "user_message" else None for f in followers]
            assert got == texts, f"{session}: edit {i} at {e.position} is followed by {got}, not {texts}"
            visible = visible[: len(visible) - remove] + [e.position + k + 1 for k in range(add)]  # type: ignore[operator]
            stored_edits.append((i, e.position, removed))  # type: ignore[arg-type]
            i += 1
        else:
            assert e.type == "user_message", f"{session}: unexpected {e.type} at {e.position}"
            assert _index(str(e.payload["content"]).split("/")[0]) == i - 1, f"{session}: {e.position} outside an edit"
    shown = sorted(e.position for e in events if e.type == "user_message" and e.hidden_by is None)
    assert shown == sorted(visible), f"{session}: visible in storage {shown}, replayed {visible}"
    [row] = [s for s in store.sessions() if s.session_id == session] or [None]
    if row is not None:
        assert row.message_count == len(visible), f"{session}: message_count {row.message_count} != {len(visible)}"
    # Every acknowledged edit is there, once, as acknowledged; at most one more committed unacknowledged.
    assert len(stored_edits) in (len(acks), len(acks) + 1), f"{session}: {len(stored_edits)} edits, {len(acks)} acks"
    for ack, (index, position, removed) in zip(acks, stored_edits, strict=False):
        assert _index(str(ack["rid"])) == index
        assert ack["edit"] == position, f"{session}: {ack['rid']} acknowledged at {ack['edit']}, stored at {position}"
        assert (ack["first"], ack["last"]) == (position + 1, position + len(ack["texts"]))  # type: ignore[arg-type]
        if not ack["replayed"]:
            assert ack["removed"] == removed, f"{session}: {ack['rid']} replied {ack['removed']}, stored {removed}"
    return len(acks), len(stored_edits) - len(acks)


def check_all(store: inspect.Stored, logs: dict[str, Path]) -> tuple[int, int]:
    acked = unacked = 0
    for session, acks in read_acks(logs).items():
        a, u = check(store, session, acks)
        acked, unacked = acked + a, unacked + u
    return acked, unacked


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


@pytest.mark.both_backends("kill -9: a COMMIT sent before the kill lands after it on PostgreSQL")
@pytest.mark.slow
def test_sigkill_during_edits_loses_duplicates_and_half_applies_nothing(workspace: Path, tmp_path: Path) -> None:
    # Two rounds of k % 3: two kills in the middle of a graceful stop, four plain. Each waits for a fresh
    # acknowledgement, so it lands with the three writers editing, and each run draws a new seed (ten kills
    # repeated the same moments more often).
    kills = scale(5, 6)
    seed = int(os.environ.get("CLAW_CRASH_SEED", str(time.time_ns() % 1_000_000)))
    rng = random.Random(seed)
    print(f"edit crash test seed={seed} kills={kills} (CLAW_CRASH_SEED={seed} repeats it)")
    store = inspect.stored(workspace)
    stop_file = tmp_path / "stop"
    logs = {s: tmp_path / f"{s}.log" for s in SESSIONS}
    deadline = time.time() + (240 if FULL else 100)
    daemon = DaemonProcess(workspace).start()
    errs = {s: open(tmp_path / f"{s}.err", "wb") for s in SESSIONS}  # noqa: SIM115 - closed below
    writers: list[subprocess.Popen[bytes]] = []
    unacked_seen = survived = 0
    try:
        for s in SESSIONS:
            args = [daemon.address, s, str(logs[s]), str(stop_file), str(deadline)]
            writers.append(subprocess.Popen([*WRITER, *args], env=_env(), stdout=subprocess.DEVNULL, stderr=errs[s]))
        before = 0
        for k in range(kills):
            end = time.monotonic() + 20
            time.sleep(rng.uniform(0.15, 0.8))
            while sum(len(a) for a in read_acks(logs).values()) <= before and time.monotonic() < end:
                time.sleep(0.05)
            if k % 3 == 1:  # in the middle of a graceful stop
                daemon.proc.send_signal(signal.SIGTERM)  # type: ignore[union-attr]
                time.sleep(rng.uniform(0.0, 0.2))
            daemon.kill()
            acked, unacked = check_all(store, logs)  # daemon down: what is on disk is all there is
            assert acked > before, f"kill {k}: no edit acknowledged since the last kill"
            before = acked
            unacked_seen += unacked
            daemon = DaemonProcess(workspace).start()
            survived += 1
        time.sleep(0.3)
        stop_file.touch()
        for s, proc in zip(SESSIONS, writers, strict=True):
            code = proc.wait(max(5.0, deadline - time.time()))
            assert code == 0, f"writer {s} exited {code}:\n{(tmp_path / f'{s}.err').read_text(errors='replace')}"
        acked, unacked = check_all(store, logs)
        assert unacked == 0, "every edit was retried until acknowledged, so none is left unacknowledged"
        with daemon.client() as c:  # the daemon's own view agrees with the log
            for session in SESSIONS:
                loaded = c.load(session, "/tmp")
                hidden = {e.position for e in store.events(session) if e.hidden_by is not None}
                texts = [e.payload["content"] for e in store.events(session) if e.type == "user_message"]
                assert len(loaded.messages) == loaded.session.message_count
                assert all(m.position not in hidden for m in loaded.messages)
                assert len(texts) == len(set(texts)), f"{session}: a replacement is stored twice"
        assert daemon.terminate() == 0
    finally:
        for proc in writers:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        daemon.stop()
        for fh in errs.values():
            fh.close()
    assert store.integrity_problems() == []
    record("edit_crash", crashes_survived=survived, edits_acked=acked, committed_unacked_seen=unacked_seen, lost=0)


class _Stored:
    """Storage that holds these events and no session row (all the checker reads)."""

    def __init__(self, events: list[inspect.StoredEvent]) -> None:
        self._events = events

    def events(self, session_id: str | None = None) -> list[inspect.StoredEvent]:
        return [e for e in self._events if session_id in (None, e.session_id)]

    def sessions(self) -> list[inspect.StoredSession]:
        return []


@pytest.mark.smoke
def test_the_checker_detects_lost_duplicated_and_half_applied_edits() -> None:
    """The checker above must be able to fail: feed it logs with each kind of damage."""
    s = "x"

    def log(*rows: tuple[int, str, object, int | None]) -> _Stored:
        events = []
        for n, (position, kind, payload, hidden_by) in enumerate(rows, 1):
            body = {"removed": payload} if kind == "edit" else {"role": "user", "content": payload}
            events.append(inspect.StoredEvent(n, s, position, kind, body, hidden_by=hidden_by))
        return _Stored(events)

    # Edit 0 removes nothing and adds x-0/0; edit 1 removes 1 entry and adds two (plan(1, 1) == (1, 2)).
    good = [
        (1, "edit", [], None),
        (2, "user_message", "x-0/0", 3),
        (3, "edit", [2], None),
        (4, "user_message", "x-1/0", None),
        (5, "user_message", "x-1/1", None),
    ]
    acks: list[dict[str, object]] = [
        {"rid": "x-0", "edit": 1, "first": 2, "last": 2, "removed": [], "texts": ["x-0/0"], "replayed": False},
        {"rid": "x-1", "edit": 3, "first": 4, "last": 5, "removed": [2], "texts": ["x-1/0", "x-1/1"]},
    ]
    acks[1]["replayed"] = False
    assert check(log(*good), "x", acks) == (2, 0)
    with pytest.raises(AssertionError, match="edits, 2 acks"):  # an acknowledged edit lost
        check(log(good[0], (2, "user_message", "x-0/0", None)), "x", acks)
    with pytest.raises(AssertionError, match="followed by"):  # half applied: a replacement missing
        check(log(*good[:4]), "x", acks)
    with pytest.raises(AssertionError, match="hides"):  # the removed entry not hidden
        check(log(good[0], (2, "user_message", "x-0/0", None), *good[2:]), "x", acks)
    with pytest.raises(AssertionError, match="removed"):  # removed something else than the last entry
        check(log(good[0], good[1], (3, "edit", [], None), *good[3:]), "x", acks)
    with pytest.raises(AssertionError, match="outside an edit"):  # a replacement stored twice
        check(log(*good, (6, "user_message", "x-0/0", None)), "x", acks)
    with pytest.raises(AssertionError, match="acknowledged at"):
        check(log(*good), "x", [acks[0], {**acks[1], "edit": 4}])
