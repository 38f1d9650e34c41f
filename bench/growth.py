"""How cost grows with size: Load, ListSessions, search, Watch fan-out and start-up (``bench/run --growth``).

Each measure runs at a small and at large sizes in the same sitting and every
row prints its ratio against the smallest size, with the target for that
kind of growth:

* Load of a session of 10 / 1,000 / 10,000 / 100,000 messages (1 KB each,
  written through the daemon in Appends of 1,000): the ratio is of **time per
  content byte**; linear in bytes means it does not grow (<= 1.0x against 10
  messages, and <= 1.2x from 10,000 to 100,000 where fixed costs are gone).
* ListSessions (first page of 100) and search (a word in 10 messages; a word
  in every session) at 1,000 and 100,000 sessions: logarithmic or better, so
  the time ratio is at most log(large) / log(small) (1.67x for 100x more).
* 1 / 100 / 1,000 Watch streams on one session while it takes a steady
  stream of Appends: daemon CPU per appended event (the fan-out cost, until
  every watcher has it) may grow no more than linearly in watchers; the
  Append p99 and the time until the last watcher has the last event are
  reported beside it.
* Start-up (spawn to health SERVING) on a database of 500 MiB against an
  empty workspace, with the bare ``PRAGMA quick_check`` of the same file (the
  daemon runs it before it opens the file for writing) as the baseline.

The session databases are written offline (``bench/growth_db.py``): 100,000
sessions through 100,000 RPCs would take longer than everything else.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import growth_db
from bench.procs import ROOT, BenchError, Daemon, cpu_s, stop
from bench.stats import median, percentile, ratio
from bench.worker import content

WATCHERS_PER_PROCESS = 500
#: The Watch daemon's fan-out budget, lifted so that delivery is bound by CPU (what is measured), not by
#: the default 500 messages a second (with it, the last of W watchers gets E events about W * E / 500 s
#: after they commit, by design: docs/security.md).
WATCH_SENDS_PER_S = 1_000_000


@dataclass(frozen=True)
class GrowthSize:
    """How big the growth section runs."""

    load_messages: tuple[int, ...]
    load_rounds: int
    sessions: tuple[int, ...]
    list_rounds: int
    watchers: tuple[int, ...]
    watch_events: int
    watch_rate_per_s: float
    startup_mib: int
    starts: int
    payload_bytes: int = 1024


FULL = GrowthSize((10, 1_000, 10_000, 100_000), 5, (1_000, 100_000), 30, (1, 100, 1_000), 100, 25.0, 500, 3)
TINY = GrowthSize((10, 100, 1_000), 2, (100, 2_000), 3, (1, 10, 50), 20, 50.0, 16, 1)


def _log(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def _ms(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000.0


# ---------------------------------------------------------------- Load


def bench_load(gs: GrowthSize, ws: Path) -> dict[str, Any]:
    """Load p50 at each session length (sizes interleaved round by round)."""
    from claw_sessiond_client import Message, SessionClient

    daemon = Daemon(ws)
    out: dict[str, Any] = {}
    try:
        with SessionClient(address=daemon.address, autostart=False, timeout_s=300) as client:
            for n in gs.load_messages:
                for start in range(0, n, 1000):
                    batch = [Message.user(content(97, i, gs.payload_bytes)) for i in range(start, min(n, start + 1000))]
                    client.append(f"load-{n}", batch)
                got = len(client.load(f"load-{n}", workdir="/").messages)  # also the warm-up
                if got != n:
                    raise BenchError(f"Load returned {got} messages, expected {n}")
            samples: dict[int, list[float]] = {n: [] for n in gs.load_messages}
            cpu: dict[int, list[float]] = {n: [] for n in gs.load_messages}
            for _ in range(gs.load_rounds):
                for n in gs.load_messages:
                    cpu0 = cpu_s(daemon.pid)
                    samples[n].append(_ms(lambda n=n: client.load(f"load-{n}", workdir="/")))
                    cpu[n].append((cpu_s(daemon.pid) - cpu0) * 1000.0)
    finally:
        daemon.close()
    for n, v in samples.items():
        p50 = median(v)
        out[str(n)] = {"p50_ms": p50, "bytes": n * gs.payload_bytes, "samples": len(v), "daemon_cpu_ms": median(cpu[n])}
        _log(f"growth load {n:>7,}: p50 {p50:.1f} ms ({n * gs.payload_bytes / 2**20 / (p50 / 1000):.1f} MiB/s)")
    return out


# ---------------------------------------------------------------- start-up


def _quick_check_ms(db: Path) -> float:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return _ms(lambda: conn.execute("PRAGMA quick_check").fetchall())
    finally:
        conn.close()


def bench_startup(gs: GrowthSize, root: Path) -> dict[str, Any]:
    """Spawn to SERVING: empty workspaces, then one whose database holds ``startup_mib`` (written offline)."""
    fresh = []
    for i in range(gs.starts):
        (root / f"growth-fresh-{i}").mkdir()
        d = Daemon(root / f"growth-fresh-{i}")
        fresh.append(d.ready_s * 1000)
        d.close()
    ws = root / "growth-startup"
    db = ws / ".claw" / "sessions.db"
    started = time.monotonic()
    target = gs.startup_mib * 2**20
    hit = growth_db.cached_workspace(
        ws, f"startup-{gs.startup_mib}MiB", lambda path: growth_db.fill_to_bytes(path, target, gs.payload_bytes)
    )
    how = "copied from the cache" if hit else "written"
    _log(f"growth startup: {db.stat().st_size / 2**20:.0f} MiB database {how} in {time.monotonic() - started:.0f} s")
    filled = []
    checks = []
    for _ in range(gs.starts):
        checks.append(_quick_check_ms(db))
        d = Daemon(ws)
        filled.append(d.ready_s * 1000)
        d.close()
    out = {
        "fresh_ms": median(fresh),
        "filled_ms": median(filled),
        "quick_check_ms": median(checks),
        "db_mib": db.stat().st_size / 2**20,
        "samples": {"fresh": fresh, "filled": filled, "quick_check": checks},
    }
    _log(
        f"growth startup: empty {out['fresh_ms']:.0f} ms, {out['db_mib']:.0f} MiB {out['filled_ms']:.0f} ms, "
        f"bare quick_check {out['quick_check_ms']:.0f} ms"
    )
    return out


# ---------------------------------------------------------------- listing and search


def bench_listing(gs: GrowthSize, root: Path) -> dict[str, Any]:
    """ListSessions' first page and two searches, at each number of sessions (daemons side by side)."""
    from claw_sessiond_client import SessionClient
    from claw_sessiond_client.errors import InvalidRequestError

    daemons: dict[int, Daemon] = {}
    clients: dict[int, Any] = {}
    try:
        for n in gs.sessions:
            ws = root / f"growth-sessions-{n}"
            started = time.monotonic()
            hit = growth_db.cached_workspace(ws, f"sessions-{n}", functools.partial(growth_db.write_sessions, n=n))
            how = "copied from the cache" if hit else "written"
            _log(f"growth listing: {n:,} sessions {how} in {time.monotonic() - started:.1f} s")
            daemons[n] = Daemon(ws)
            clients[n] = SessionClient(address=daemons[n].address, autostart=False, timeout_s=60)
            page = clients[n].list_sessions_page(limit=100)
            hits = clients[n].search(growth_db.NEEDLE, limit=50).hits
            if page.total != n or len(hits) != min(n, growth_db.NEEDLE_HITS):
                raise BenchError(f"{n} sessions written, daemon lists {page.total} and finds {len(hits)} needles")
            clients[n].load(page.sessions[0].id, workdir="/")
        ops: dict[str, Callable[[Any], object]] = {
            "list": lambda c: c.list_sessions_page(limit=100),
            "search_rare": lambda c: c.search(growth_db.NEEDLE, limit=10),
            "search_common": lambda c: c.search(growth_db.COMMON, limit=10),
        }
        samples: dict[str, dict[int, list[float]]] = {k: {n: [] for n in gs.sessions} for k in ops}
        stopped: dict[str, dict[int, int]] = {k: dict.fromkeys(gs.sessions, 0) for k in ops}
        for _ in range(gs.list_rounds):
            for name, op in ops.items():
                for n in gs.sessions:
                    started = time.perf_counter()
                    try:
                        op(clients[n])
                    except InvalidRequestError:  # the daemon stops a search after SEARCH_TIMEOUT_S: counted
                        stopped[name][n] += 1
                    samples[name][n].append((time.perf_counter() - started) * 1000.0)
    finally:
        for c in clients.values():
            c.close()
        for d in daemons.values():
            d.close()
    out = {
        name: {
            str(n): {"p50_ms": median(v), "p99_ms": percentile(v, 99), "samples": len(v), "stopped": stopped[name][n]}
            for n, v in d.items()
        }
        for name, d in samples.items()
    }
    for name, figures in out.items():
        _log(f"growth {name}: " + ", ".join(f"{int(n):,} sessions {v['p50_ms']:.2f} ms" for n, v in figures.items()))
    return out


# ---------------------------------------------------------------- Watch fan-out


def _start_watchers(address: str, sid: str, count: int, after: int, until: int, timeout_s: float) -> list[Any]:
    procs = []
    left = count
    while left > 0:
        k = min(WATCHERS_PER_PROCESS, left)
        spec = {
            "address": address,
            "session_id": sid,
            "streams": k,
            "after": after,
            "until": until,
            "timeout_s": timeout_s,
        }
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "bench.watchers", json.dumps(spec)],
                stdout=subprocess.PIPE,
                cwd=str(ROOT),
                text=True,
            )
        )
        left -= k
    for p in procs:
        assert p.stdout is not None
        line = p.stdout.readline()
        if line.strip() != "ready":
            raise BenchError(f"watcher process said {line[:200]!r}")
    return procs


def bench_watch(gs: GrowthSize, root: Path) -> dict[str, Any]:
    """Paced Appends on one session while 1 / 100 / 1,000 Watch streams follow it."""
    from claw_sessiond_client import Message, SessionClient

    ws = root / "growth-watch"
    ws.mkdir()
    daemon = Daemon(ws, "--watch-sends-per-s", str(WATCH_SENDS_PER_S))
    out: dict[str, Any] = {}
    sid = "busy"
    procs: list[Any] = []
    try:
        with SessionClient(address=daemon.address, autostart=False, timeout_s=60) as client:
            position = client.append(
                sid, [Message.user(content(96, i, gs.payload_bytes)) for i in range(10)]
            ).last_position
            for i in range(20):  # warm-up: the first Appends after start-up are slower
                position = client.append(sid, Message.user(content(94, i, gs.payload_bytes))).last_position
            for w in gs.watchers:
                until = position + gs.watch_events
                budget = 120.0 + w / 10
                procs = _start_watchers(daemon.address, sid, w, position, until, budget)
                deadline = time.monotonic() + 60
                while client.stats()["active_watchers"] < w:
                    if time.monotonic() > deadline:
                        raise BenchError(f"only {client.stats()['active_watchers']} of {w} watchers open after 60 s")
                    time.sleep(0.05)
                lat = []
                cpu0 = cpu_s(daemon.pid)
                began = time.perf_counter()
                for i in range(gs.watch_events):
                    due = began + i / gs.watch_rate_per_s
                    time.sleep(max(0.0, due - time.perf_counter()))
                    body = content(95, w * 10_000 + i, gs.payload_bytes)
                    lat.append(_ms(lambda body=body: client.append(sid, Message.user(body))))
                last_ack = time.time()
                results: list[dict[str, Any]] = []
                for p in procs:
                    assert p.stdout is not None
                    line = p.stdout.readline()  # the process ends itself within its budget
                    p.wait(30)
                    results.append(
                        json.loads(line)
                        if line
                        else {"received": 0, "finished": 0, "last_at": 0, "errors": 1, "error_samples": ["no output"]}
                    )
                cpu = cpu_s(daemon.pid) - cpu0
                position = until
                finished = sum(r["finished"] for r in results)
                errors = sum(r["errors"] for r in results)
                if finished != w or errors:
                    samples = [s for r in results for s in r["error_samples"]]
                    raise BenchError(f"{finished} of {w} watchers got every event; errors {errors}: {samples}")
                row = {
                    "watchers": w,
                    "events": gs.watch_events,
                    "deliveries": sum(r["received"] for r in results),
                    "daemon_cpu_us_per_event": cpu / gs.watch_events * 1e6,
                    "append_p50_ms": median(lat),
                    "append_p99_ms": percentile(lat, 99),
                    "drain_s": max(0.0, max(r["last_at"] for r in results) - last_ack),
                }
                out[str(w)] = row
                _log(
                    f"growth watch {w:>5,}: daemon CPU {row['daemon_cpu_us_per_event']:,.0f} us/event, Append p99 "
                    f"{row['append_p99_ms']:.2f} ms, last watcher {row['drain_s']:.2f} s after the last Append"
                )
    finally:
        for p in procs:
            stop(p, 5)
        daemon.close()
    return out


# ---------------------------------------------------------------- rows


def _row(measure: str, ours: str, baseline: str, r: float, target: str, met: bool | None) -> dict[str, Any]:
    return {
        "section": "growth",
        "measure": measure,
        "ours": ours,
        "baseline": baseline,
        "ratio": r,
        "target": target,
        "met": met,
    }


def growth_rows(res: dict[str, Any]) -> list[dict[str, Any]]:
    """The growth section's rows (``Row`` fields) from its results."""
    rows = []
    ld = res["load"]
    sizes = sorted(int(n) for n in ld)
    small = ld[str(sizes[0])]
    per_byte_small = small["p50_ms"] / small["bytes"]
    for n in sizes:
        v = ld[str(n)]
        r = (v["p50_ms"] / v["bytes"]) / per_byte_small
        rate = v["bytes"] / 2**20 / (v["p50_ms"] / 1000)
        rows.append(
            _row(
                f"Load {n:,} messages p50 (time per byte vs {sizes[0]:,})",
                f"{v['p50_ms']:,.1f} ms",
                f"{rate:,.1f} MiB/s",
                r,
                "<= 1.0x" if n != sizes[0] else "",
                r <= 1.0 if n != sizes[0] else None,
            )
        )
    if len(sizes) >= 2:
        a, b = ld[str(sizes[-2])], ld[str(sizes[-1])]
        r = (b["p50_ms"] / b["bytes"]) / (a["p50_ms"] / a["bytes"])
        rows.append(_row(f"Load per byte, {sizes[-1]:,} vs {sizes[-2]:,} messages", "", "", r, "<= 1.2x", r <= 1.2))
        if "daemon_cpu_ms" in a and a["daemon_cpu_ms"] > 0:  # CPU: what the machine's load does not stretch
            r = (b["daemon_cpu_ms"] / b["bytes"]) / (a["daemon_cpu_ms"] / a["bytes"])
            rows.append(
                _row(
                    f"  daemon CPU per byte, {sizes[-1]:,} vs {sizes[-2]:,} messages",
                    f"{b['daemon_cpu_ms']:,.0f} ms",
                    f"{a['daemon_cpu_ms']:,.0f} ms",
                    r,
                    "<= 1.2x",
                    r <= 1.2,
                )
            )
    names = {
        "list": "ListSessions first page (100)",
        "search_rare": f"search, word in {growth_db.NEEDLE_HITS} messages",
        "search_common": "search, word in every session",
    }
    for key, label in names.items():
        d = res["listing"][key]
        ns = sorted(int(n) for n in d)
        base = d[str(ns[0])]["p50_ms"]
        for n in ns[1:]:
            bound = math.log(n) / math.log(ns[0])
            r = ratio(d[str(n)]["p50_ms"], base)
            v = d[str(n)]
            note = f" ({v['stopped']} of {v['samples']} stopped at 2 s)" if v["stopped"] else ""
            rows.append(
                _row(
                    f"{label} at {n:,} sessions",
                    f"{v['p50_ms']:,.2f} ms{note}",
                    f"{base:,.2f} ms at {ns[0]:,}",
                    r,
                    f"<= {bound:.2f}x (log)",
                    r <= bound,
                )
            )
    wt = res["watch"]
    ws = sorted(int(w) for w in wt)
    first = wt[str(ws[0])]
    for w in ws:
        v = wt[str(w)]
        r = ratio(v["daemon_cpu_us_per_event"], first["daemon_cpu_us_per_event"])
        bound = w / ws[0]
        rows.append(
            _row(
                f"Watch fan-out, daemon CPU per event, {w:,} watcher{'s' if w > 1 else ''}",
                f"{v['daemon_cpu_us_per_event']:,.0f} us ({v['daemon_cpu_us_per_event'] / w:,.0f} us/watcher)",
                f"{first['daemon_cpu_us_per_event']:,.0f} us at {ws[0]:,}",
                r,
                f"<= {bound:,.0f}x (linear)" if w != ws[0] else "",
                r <= bound if w != ws[0] else None,
            )
        )
        r = ratio(v["append_p99_ms"], first["append_p99_ms"])
        rows.append(
            _row(
                f"Append p99 beside {w:,} watcher{'s' if w > 1 else ''}; last watcher done after",
                f"{v['append_p99_ms']:.2f} ms; {v['drain_s']:.2f} s",
                f"{first['append_p99_ms']:.2f} ms at {ws[0]:,}",
                r,
                "",
                None,
            )
        )
    st = res["startup"]
    r = ratio(st["filled_ms"], st["fresh_ms"])
    rows.append(_row("spawn to SERVING, empty workspace", f"{st['fresh_ms']:,.0f} ms", "", math.nan, "", None))
    rows.append(
        _row(
            f"spawn to SERVING, {st['db_mib']:,.0f} MiB database (vs empty)",
            f"{st['filled_ms']:,.0f} ms",
            f"{st['fresh_ms']:,.0f} ms empty",
            r,
            "",
            None,
        )
    )
    extra = st["filled_ms"] - st["fresh_ms"]
    r = ratio(extra, st["quick_check_ms"])
    rows.append(
        _row(
            "  its extra time vs bare PRAGMA quick_check of the file",
            f"{extra:,.0f} ms",
            f"{st['quick_check_ms']:,.0f} ms",
            r,
            "<= 1.5x",
            r <= 1.5,
        )
    )
    return rows


def run(tiny: bool, root: Path) -> dict[str, Any]:
    """Every growth measure at the tiny or full size, under ``root``; returns the results."""
    gs = TINY if tiny else FULL
    res: dict[str, Any] = {"size": asdict(gs)}
    load_ws = root / "growth-load"
    load_ws.mkdir()
    phases: tuple[tuple[str, Callable[[], dict[str, Any]]], ...] = (
        ("load", lambda: bench_load(gs, load_ws)),
        ("listing", lambda: bench_listing(gs, root)),
        ("watch", lambda: bench_watch(gs, root)),
        ("startup", lambda: bench_startup(gs, root)),
    )
    for name, fn in phases:
        started = time.monotonic()
        res[name] = fn()
        res.setdefault("elapsed_s", {})[name] = time.monotonic() - started
        _log(f"growth {name}: {res['elapsed_s'][name]:.1f} s")
    return res


def main(tiny: bool, label: str) -> int:
    """``bench/run --growth``: only this section; print its table and write its results file."""
    from bench import results
    from bench.main import Row, _print_table, _tempdir

    started = time.monotonic()
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    res: dict[str, Any] = {
        "mode": "growth-tiny" if tiny else "growth",
        "started_utc": stamp,
        "machine": results.machine(),
    }
    with _tempdir() as root:
        res["growth"] = run(tiny, root)
    rows = [Row(**r) for r in growth_rows(res["growth"])]
    res["table"] = [asdict(r) for r in rows]
    res["elapsed_s"] = time.monotonic() - started
    _print_table(rows, tiny)
    path = results.save(res, label)
    print(f"results: {path}; {res['elapsed_s']:.0f} s")
    return 0


__all__ = ["FULL", "TINY", "GrowthSize", "growth_rows", "main", "run"]
