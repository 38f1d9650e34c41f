"""Crash with state deltas: SIGKILL the daemon while writers append with state deltas.

Four writer threads append to one session, each append carrying a delta of the session's own
state (``{"w<N>": i}``) and, every third append, one of a shared scope. Each append is retried
with the same request id until it is acknowledged, across kills and restarts. After every kill
(daemon down, the log read through ``tests.helpers.inspect``) and after every restart (writers
held back meanwhile), and at the end:

* every append is whole: a stored message has exactly its state events, and a state event
  exists only with its message (no delta without its append, no append without its delta);
* the session's state and the scope's state equal the fold of the state events in log order;
* no acknowledged delta is lost: each writer's key holds at least its last acknowledged value,
  and at the end exactly it (every append was acknowledged before the writers stopped).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond_client import (
    DaemonUnavailableError,
    DeadlineError,
    Message,
    SessionClient,
    ShuttingDownError,
    StateDelta,
    StorageUnavailableError,
)
from tests.helpers import inspect
from tests.helpers.daemon import DaemonProcess
from tests.helpers.figures import record
from tests.helpers.tiers import scale

SESSION = "crash-state"
SCOPE = "app:crash-state"
WRITERS = 4
_RETRY = (DaemonUnavailableError, DeadlineError, ShuttingDownError, StorageUnavailableError)


class Writers:
    """Writer threads that can be held back (parked) between attempts."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.acked: dict[int, int] = {}  # writer -> last acknowledged i
        self.errors: list[BaseException] = []
        self._cond = threading.Condition()
        self._held = False
        self._parked = 0
        self._stop = False
        self._threads = [threading.Thread(target=self._run, args=(w,), daemon=True) for w in range(WRITERS)]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def _gate(self) -> None:
        with self._cond:
            while self._held:
                self._parked += 1
                self._cond.notify_all()
                self._cond.wait()
                self._parked -= 1

    def hold(self, timeout_s: float = 30) -> None:
        """Hold every writer back between two attempts (an attempt under way ends first)."""
        with self._cond:
            self._held = True
            parked = self._cond.wait_for(lambda: self._parked >= sum(t.is_alive() for t in self._threads), timeout_s)
            assert parked, "writers did not come to a stop"

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def stop(self) -> None:
        self._stop = True
        self.release()
        for t in self._threads:
            t.join(timeout=60)
            assert not t.is_alive(), "a writer did not stop"

    def _run(self, w: int) -> None:
        client = SessionClient(address=self.address, autostart=False, timeout_s=5, retry_window_s=0.2)
        try:
            i = 0
            while not self._stop:
                i += 1
                deltas = [StateDelta({f"w{w}": i})]
                if i % 3 == 0:
                    deltas.append(StateDelta({f"w{w}": i}, SCOPE))
                while True:
                    self._gate()
                    try:
                        client.append(SESSION, Message.user(f"w{w}-{i}"), request_id=f"w{w}-{i}", state_deltas=deltas)
                        break
                    except _RETRY:
                        time.sleep(0.05)
                self.acked[w] = i
        except BaseException as exc:  # reported by the test
            self.errors.append(exc)
        finally:
            client.close()
            with self._cond:
                self._cond.notify_all()


def fold(events: list[inspect.StoredEvent], scope: str) -> dict[str, Any]:
    """The state the log's state events of ``scope`` make, in log order."""
    state: dict[str, Any] = {}
    for e in events:
        if e.type == "state" and e.payload["scope"] == scope:
            for key, value in e.payload["delta"].items():
                if value is None:
                    state.pop(key, None)
                else:
                    state[key] = value
    return state


def check_log(store: inspect.Stored, acked: dict[int, int]) -> dict[str, Any]:
    """Each stored append is whole (its message and its deltas), acknowledged ones are there; the log's fold."""
    events = store.events(SESSION)
    messages = Counter(e.payload["content"] for e in events if e.type == "user_message")

    def applied(scope: str) -> Counter[str]:
        return Counter(
            f"{key}-{value}"
            for e in events
            if e.type == "state" and e.payload["scope"] == scope
            for key, value in e.payload["delta"].items()
            if key.startswith("w")
        )

    deltas, scoped = applied(""), applied(SCOPE)
    assert set(messages.values()) <= {1} and set(deltas.values()) <= {1}, "an append stored twice"
    assert set(messages) == set(deltas), f"an append without its delta, or a delta alone: {set(messages) ^ set(deltas)}"
    assert set(scoped) == {m for m in messages if int(m.split("-")[1]) % 3 == 0}, "a scope delta without its append"
    for w, i in acked.items():
        assert all(f"w{w}-{j}" in messages for j in range(1, i + 1)), f"writer {w}: an acknowledged append is lost"
    state = fold(events, "")
    for w, i in acked.items():
        assert state.get(f"w{w}", 0) >= i, f"writer {w}: state {state.get(f'w{w}')} behind acknowledged {i}"
    return state


@pytest.mark.slow
def test_sigkill_during_appends_with_state_deltas_keeps_state_equal_to_the_log(workspace: Path) -> None:
    # Each kill waits for a fresh acknowledgement, so it lands with the four writers appending; each run
    # draws a new seed (eight kills repeated the same moments more often).
    kills = scale(4, 6)
    seed = int(os.environ.get("CLAW_CRASH_SEED", str(time.time_ns() % 1_000_000)))
    rng = random.Random(seed)
    print(f"state crash test seed={seed} kills={kills}")
    store = inspect.stored(workspace)
    daemon = DaemonProcess(workspace).start()
    writers = Writers(daemon.address)
    checks = 0
    acked: dict[int, int] = {}
    try:
        with daemon.client() as c:
            c.create_session(SESSION, state={"created": True})
        writers.start()
        for _ in range(kills):
            progress = sum(writers.acked.values())
            time.sleep(rng.uniform(0.2, 0.8))
            end = time.monotonic() + 20
            while sum(writers.acked.values()) <= progress and time.monotonic() < end:
                time.sleep(0.05)
            daemon.kill()  # SIGKILL, appends in flight
            check_log(store, dict(writers.acked))  # daemon down: what is on disk is all there is
            writers.hold()
            daemon = DaemonProcess(workspace).start()
            with daemon.client() as c:  # writers held: the daemon's state is the log's fold
                loaded = c.load(SESSION, "/w", repair=False, scopes=[SCOPE])
                events = store.events(SESSION)
                assert loaded.session.state == check_log(store, dict(writers.acked))
                assert loaded.scope_states[SCOPE] == fold(events, SCOPE)
            checks += 1
            writers.release()
        time.sleep(0.3)
        writers.stop()
        assert not writers.errors, writers.errors
        acked = dict(writers.acked)
        with daemon.client() as c:
            loaded = c.load(SESSION, "/w", repair=False, scopes=[SCOPE])
        state = check_log(store, acked)
        assert loaded.session.state == state == {"created": True, **{f"w{w}": i for w, i in acked.items()}}
        assert loaded.scope_states[SCOPE] == fold(store.events(SESSION), SCOPE)
        assert loaded.scope_states[SCOPE] == {f"w{w}": i - i % 3 for w, i in acked.items() if i >= 3}
        assert daemon.terminate() == 0
    finally:
        writers.release()
        daemon.stop()
    assert store.integrity_problems() == []
    record("crash_state", kills=float(kills), restarts_checked=float(checks), appends=float(sum(acked.values())))
