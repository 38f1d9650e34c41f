"""Single requests do not stall everyone: ordinary Appends and Loads stay fast beside heavy ones.

Each test measures, in the same test and on the same daemon, the latency of
serial ordinary requests (a 1 KB Append, a Load of a 20-message session)
quietly, then while one heavy request runs in another process
(``bench/interference.py`` drives both), then quietly again, and bounds the
p99 of each kind by a generous absolute sanity bound: a stall (before the fix,
0.5 to 8 s) fails it, noise of a shared machine does not. The ratio to the
quiet p99 (target: at most 3x) is judged by ``bench/run --interference``, in
one sitting on an idle machine, not here: a ratio fails under a neighbour's
load. A short quiet window before the heavy one is printed beside it (context for a failure: nothing
is asserted on it, so it is 1 s, not a full window). The four heavy requests of the issue:

* abandoned ListSessions scans and a large Export in a loop (sustained);
* many Watch streams following the session the probe appends to (the
  fan-out budget spreads their sends, see ``watch.py``);
* a Load that repairs the largest number of interrupted calls an append
  can set up (``--max-open-tool-calls``, 1,000), written in chunks.

``CLAW_FULL=1`` uses the issue's sizes where they are allowed (100k
sessions, 40k export events, 2,000 watchers). Both tiers probe for 3 s beside the heavy request
(hundreds of serial requests, enough for a p99 against a sanity bound; the
benchmark's windows are longer, for the ratio it judges).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from bench.interference import WATCHERS_PER_PEER, Scale, fill, listed_session, measure
from claw_sessiond.config import DEFAULT_MAX_OPEN_TOOL_CALLS
from tests.helpers.backend import on_postgres
from tests.helpers.daemon import DaemonProcess
from tests.helpers.inspect import grow_while_stopped
from tests.helpers.tiers import scale

SIZE = Scale(
    sessions=scale(20_000, 100_000),
    export_events=scale(30_000, 40_000),
    watchers=scale(300, 2_000),
    repair_calls=DEFAULT_MAX_OPEN_TOOL_CALLS,  # the largest repair the limit lets an append set up
    window_s=3.0,
)
#: On PostgreSQL the fill of one session per append commits once per session (group commit there groups a
#: session's requests, SQLite's any requests), so 100,000 sessions took over 600 s in a loaded run: the
#: list_scans scenario there scans 20,000 sessions, still pages of scans that must not stall others.
POSTGRES_SESSIONS = 20_000


def _size() -> Scale:
    """The scale of this test's backend."""
    return dataclasses.replace(SIZE, sessions=min(SIZE.sessions, POSTGRES_SESSIONS)) if on_postgres() else SIZE


#: p99 under a heavy request: a sanity bound, not the target (``bench/run --interference`` reports the ratio
#: to the quiet p99, target 3x). Loaded CI runs saw up to 524 ms (watchers, beside a quiet 29 ms).
P99_SANITY_S = 2.0
#: Worst single request beside the repair: no request waits for the whole repair (written in chunks).
WORST_SANITY_S = 5.0
#: The quiet window printed beside the heavy one: context for the reader, never asserted on.
QUIET_WINDOW_S = 1.0


def _quiet(daemon: DaemonProcess, workspace: Path) -> dict[str, Any]:
    return measure(daemon.address, str(workspace), dataclasses.replace(_size(), window_s=QUIET_WINDOW_S), "quiet")


def _report(quiet: dict[str, Any], row: dict[str, Any]) -> str:
    return (
        f"quiet: append p99 {quiet['append_p99_ms']:.1f} ms, load p99 {quiet['load_p99_ms']:.1f} ms, "
        f"worst {max(quiet['append_max_ms'], quiet['load_max_ms']):.0f} ms; "
        f"{row['scenario']}: append p99 {row['append_p99_ms']:.1f} ms, load p99 {row['load_p99_ms']:.1f} ms, "
        f"worst {max(row['append_max_ms'], row['load_max_ms']):.0f} ms ({row['appends']} requests)"
    )


@pytest.mark.parametrize("scenario", ["list_scans", "export", "watchers", "repair"])
def test_heavy_requests_keep_p99_near_quiet(spawn_daemon: Any, workspace: Path, scenario: str) -> None:
    daemon: DaemonProcess = spawn_daemon("--max-watchers-per-peer", str(WATCHERS_PER_PEER))
    _store(daemon, scenario)
    # A window that misses its bound is measured once more: on a shared 2-core machine another process
    # can take the cores for a whole window; a daemon that really lets heavy requests stall others misses twice.
    for _attempt in range(2):
        quiet = _quiet(daemon, workspace)
        row = measure(daemon.address, str(workspace), _size(), scenario)
        print("\n" + _report(quiet, row))
        if not (problems := _over_bounds(row, scenario)):
            break
    assert problems == [], "; ".join(problems) + ": " + _report(quiet, row)


def _store(daemon: DaemonProcess, scenario: str) -> None:
    """Store what the scenario reads. On SQLite the list_scans sessions (one message each) are copies of the
    first, written with the daemon stopped: the same rows as 100,000 appends, in seconds instead of half a
    minute of the daemon's writer, whose cost is not what this test is about."""
    if scenario != "list_scans" or on_postgres():
        fill(daemon.address, _size(), parts=(scenario,))
        return
    fill(daemon.address, dataclasses.replace(_size(), sessions=1), parts=(scenario,))  # the first, the probe's
    assert daemon.terminate() == 0
    ids = (listed_session(i) for i in range(1, _size().sessions))
    grow_while_stopped(daemon, listed_session(0), ids, events_each=1)
    daemon.start()


def _over_bounds(row: dict[str, Any], scenario: str) -> list[str]:
    """What in a window's figures is over the sanity bounds."""
    problems = [
        f"{k} p99 over {P99_SANITY_S} s" for k in ("append", "load") if row[f"{k}_p99_ms"] >= P99_SANITY_S * 1000
    ]
    worst_ms = max(row["append_max_ms"], row["load_max_ms"])
    if scenario == "repair" and worst_ms >= WORST_SANITY_S * 1000:
        problems.append(f"a request waited {worst_ms:.0f} ms beside the repair")
    return problems
