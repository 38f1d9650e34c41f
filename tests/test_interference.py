"""Single requests do not stall everyone: ordinary Appends and Loads stay fast beside heavy ones.

Each test measures, in the same test and on the same daemon, the latency of
serial ordinary requests (a 1 KB Append, a Load of a 20-message session)
first quietly, then while one heavy request runs in another process
(``bench/interference.py`` drives both). The machine is shared, so the
bounds are wide: a generous factor over the quiet figure, with a floor.

* sustained load (abandoned ListSessions scans, a large Export in a loop):
  p99 of Appends and Loads against a multiple of the quiet p99;
* one long piece of work (a repair of many interrupted calls): the worst
  single request, since a busy writer delays exactly the requests that
  arrive while it works.

Not covered here: 2,000 watchers still slow Loads down (each commit costs
one gRPC write per watcher on the event loop; see the bench), and a repair
of 200k calls still holds the writer for seconds (one transaction).

``CLAW_FULL=1`` scans 100k sessions (the size of the issue) and watches
twice as long; the export and repair sizes stay as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.interference import Scale, fill, measure
from tests.conftest import FULL, DaemonProcess, scale

SIZE = Scale(
    sessions=scale(20_000, 100_000),
    export_events=30_000,
    watchers=0,
    # 200k calls still hold the writer for seconds (one transaction): measured by the bench, not bounded here.
    repair_calls=20_000,
    window_s=3.0 if not FULL else 6.0,
)
#: p99 under sustained load: at most this many times the quiet p99 (or the floor).
P99_FACTOR = 6.0
P99_FLOOR_S = 0.1
#: Worst single request beside a repair: this many times the quiet p99, or the floor plus
#: the repair's own write time (one transaction; about 11 µs a call measured here).
WORST_FACTOR = 10.0
WORST_FLOOR_S = 0.75
REPAIR_S_PER_CALL = 15e-6


def _quiet(daemon: DaemonProcess, workspace: Path) -> dict[str, Any]:
    return measure(daemon.address, str(workspace), SIZE, "quiet")


def _report(quiet: dict[str, Any], row: dict[str, Any]) -> str:
    return (
        f"quiet: append p99 {quiet['append_p99_ms']:.1f} ms, load p99 {quiet['load_p99_ms']:.1f} ms, "
        f"worst {max(quiet['append_max_ms'], quiet['load_max_ms']):.0f} ms; "
        f"{row['scenario']}: append p99 {row['append_p99_ms']:.1f} ms, load p99 {row['load_p99_ms']:.1f} ms, "
        f"worst {max(row['append_max_ms'], row['load_max_ms']):.0f} ms ({row['appends']} requests)"
    )


@pytest.mark.parametrize("scenario", ["list_scans", "export"])
def test_sustained_heavy_requests_keep_p99_near_quiet(spawn_daemon: Any, workspace: Path, scenario: str) -> None:
    daemon: DaemonProcess = spawn_daemon()
    fill(daemon.address, SIZE, parts=(scenario,))
    quiet = _quiet(daemon, workspace)
    row = measure(daemon.address, str(workspace), SIZE, scenario)
    print("\n" + _report(quiet, row))
    for kind in ("append", "load"):
        bound_ms = max(P99_FACTOR * quiet[f"{kind}_p99_ms"], P99_FLOOR_S * 1000)
        assert row[f"{kind}_p99_ms"] < bound_ms, f"{kind} p99 over {bound_ms:.0f} ms: " + _report(quiet, row)


def test_a_huge_repair_blocks_nobody_for_long(spawn_daemon: Any, workspace: Path) -> None:
    daemon: DaemonProcess = spawn_daemon()
    fill(daemon.address, SIZE, parts=("repair",))
    quiet = _quiet(daemon, workspace)
    row = measure(daemon.address, str(workspace), SIZE, "repair")
    print("\n" + _report(quiet, row))
    worst_ms = max(row["append_max_ms"], row["load_max_ms"])
    floor_s = WORST_FLOOR_S + REPAIR_S_PER_CALL * SIZE.repair_calls
    bound_ms = max(WORST_FACTOR * max(quiet["append_p99_ms"], quiet["load_p99_ms"]), floor_s * 1000)
    assert worst_ms < bound_ms, f"a request waited {worst_ms:.0f} ms (bound {bound_ms:.0f}): " + _report(quiet, row)
