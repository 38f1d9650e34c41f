"""The physical floor on this machine: SQLite's own durable insert rate, measured in the same run.

One ``sqlite3`` connection (the C library the daemon uses, called from Python),
WAL, ``synchronous=FULL``, a table shaped like the daemon's event log (an
autoincrement key, a unique (session, position) index, a 1 KB text payload),
one row per transaction (``BEGIN IMMEDIATE``, ``INSERT``, ``COMMIT``), one at
a time, in the benchmark's temporary folder (the same file system as the
daemon's workspace). No daemon can acknowledge a durable write faster than
this commit plus its own round trip (the echo ceiling); with many writers in
flight it can beat the commit rate only by putting several requests in one
commit (group commit).
"""

from __future__ import annotations

import math
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from bench.stats import median, percentile, ratio

__all__ = ["bench_floor", "floor_rows", "open_floor_db"]


def open_floor_db(db: Path | str) -> sqlite3.Connection:
    """A connection to a new floor table: WAL, ``synchronous=FULL``, autocommit (explicit BEGIN/COMMIT)."""
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if mode != "wal":
        raise RuntimeError(f"floor: journal_mode is {mode}, not wal")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS events(event_id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
        "position INTEGER, payload TEXT NOT NULL)"
    )
    conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS events_position ON events(session_id, position)")
    return conn


def bench_floor(root: Path, inserts: int, payload: int, warmup: int = 20) -> dict[str, Any]:
    """Serial one-row transactions at ``synchronous=FULL``: p50 / p99 commit time, the rate, CPU per commit."""
    conn = open_floor_db(root / "floor.db")
    try:
        body = "x" * payload
        lat: list[float] = []
        cpu0 = 0.0
        for i in range(warmup + inserts):
            if i == warmup:
                cpu0 = time.process_time()
            started = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO events(session_id, position, payload) VALUES ('floor', ?, ?)", (i, body))
            conn.execute("COMMIT")
            if i >= warmup:
                lat.append((time.perf_counter() - started) * 1000.0)
        cpu_s = time.process_time() - cpu0
    finally:
        conn.close()
    out = {
        "journal_mode": "wal",
        "synchronous": "FULL",
        "inserts": len(lat),
        "p50_ms": median(lat),
        "p99_ms": percentile(lat, 99),
        "per_s": len(lat) / (sum(lat) / 1000.0),
        "cpu_us": cpu_s / max(1, len(lat)) * 1e6,
    }
    print(
        f"[bench {time.strftime('%H:%M:%S')}] floor: bare sqlite3 insert+commit p50 {out['p50_ms']:.3f} ms, "
        f"{out['per_s']:,.0f}/s, CPU {out['cpu_us']:.0f} us each",
        file=sys.stderr,
        flush=True,
    )
    return out


def _row(measure: str, ours: str, baseline: str, r: float, target: str = "", met: bool | None = None) -> dict[str, Any]:
    return {
        "section": "floor",
        "measure": measure,
        "ours": ours,
        "baseline": baseline,
        "ratio": r,
        "target": target,
        "met": met,
    }


def floor_rows(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows that set the run's Appends against the floor (``res`` is the whole run's results)."""
    fl = res["floor"]
    se = res["serial"]
    rows = [
        _row(
            "bare sqlite3 insert, one transaction each (WAL, synchronous=FULL)",
            f"{fl['per_s']:,.0f}/s",
            f"p50 {fl['p50_ms']:.3f} / p99 {fl['p99_ms']:.3f} ms"
            + (f", CPU {fl['cpu_us']:.0f} us" if "cpu_us" in fl else ""),  # results before 2026-12-04 lack it
            math.nan,
        )
    ]
    floor_ms = se["echo_p50_ms"] + fl["p50_ms"]
    rows.append(
        _row(
            "serial Append p50 vs echo p50 + bare commit p50",
            f"{se['ours_p50_ms']:.3f} ms",
            f"{se['echo_p50_ms']:.3f} + {fl['p50_ms']:.3f} = {floor_ms:.3f} ms",
            ratio(se["ours_p50_ms"], floor_ms),
            "(>= 1x: what is left is the daemon's work)",
        )
    )
    tp = res["throughput"]
    best = max(median([p["ops_per_s"] for p in tp[k]]) for k in ("ours", "ours_stream"))
    pm = f"{res['size']['processes']}x{res['size']['inflight']}"
    rows.append(
        _row(
            f"best {pm} appends/s vs bare serial commits/s",
            f"{best:,.0f}/s",
            f"{fl['per_s']:,.0f}/s",
            ratio(best, fl["per_s"]),
            "(> 1x only through group commit)",
        )
    )
    return rows
