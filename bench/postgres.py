"""The PostgreSQL backend side by side with SQLite, in one run (issue 17, deliverable 6).

``bench/run --backend postgres [--tiny]`` starts a throwaway PostgreSQL server from the distribution's
package (``tests/helpers/postgres.py``: ``fsync=on``, ``synchronous_commit=on``, Unix socket) and
measures three set-ups, interleaved round by round so that the machine's noise falls on all alike:

* ``sqlite``: one daemon on the workspace's SQLite file (the baseline);
* ``pg x1``: one daemon on a PostgreSQL database;
* ``pg x2``: two daemons (two workspaces) on one PostgreSQL database, the client processes split
  between them.

For each: AppendStream and Append throughput and p99 with N processes x M in flight on one shared
session (N x M) and with one in flight (N x 1); AppendStream with one session per process; Load of
a large session (written through the first daemon, loaded through the last); Watch latency from an
Append on the first daemon to its arrival on a Watch on the last daemon (across daemons for
``pg x2``). Ratios are against ``sqlite`` measured in the same run. The target (issue 17): ``pg x1``
AppendStream N x M >= 0.5x ``sqlite``.

Two floors of the server itself, measured in each round right after the daemons (:func:`_floor`):
a bare asyncpg loop, one connection, one 1 KiB ``INSERT`` per autocommit transaction with the
same durability (``commit floor``: the serial COMMIT rate, what one session's writes would make
if each paid its own COMMIT), and the same ``INSERT`` inside one open transaction (``statement
floor``: round trips a second, one statement each, no COMMIT).

``--only stream,floor`` (comma-separated keys of :data:`_KEYS`) runs a part, for a shorter run.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.procs import ROOT, BenchError, Daemon, cpu_s, run_workers
from bench.stats import median, percentile, ratio

RESULTS = ROOT / "bench" / "results"


@dataclass(frozen=True)
class PgSize:
    """How big each measure runs."""

    processes: int
    inflight: int
    duration_s: float
    repeats: int
    load_messages: int
    load_rounds: int
    watch_appends: int
    payload_bytes: int = 1024
    warmup: int = 5


FULL = PgSize(8, 16, 6.0, 3, 10_000, 5, 200)
TINY = PgSize(2, 4, 0.5, 1, 300, 2, 20, warmup=2)


def _log(text: str) -> None:
    print(f"[bench-pg {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def _phase(kind: str, sockets: list[Path], sessions: list[str], size: PgSize, inflight: int) -> dict[str, Any]:
    """N worker processes (spread over ``sockets``, session ``sessions[i % len]``) for one window."""
    specs = [
        {
            "kind": kind,
            "target": str(sockets[i % len(sockets)]),
            "session_id": sessions[i % len(sessions)],
            "index": i,
            "inflight": inflight,
            "duration_s": size.duration_s,
            "payload_bytes": size.payload_bytes,
            "warmup": size.warmup,
        }
        for i in range(size.processes)
    ]
    results = run_workers(specs, size.duration_s)
    latencies = [x for r in results for x in r["latencies_ms"]]
    total = sum(r["count"] for r in results)
    return {
        "ops_per_s": total / size.duration_s,
        "p99_ms": percentile(latencies, 99),
        "errors": sum(r["errors"] for r in results),
        "error_samples": [s for r in results for s in r["error_samples"]][:2],
    }


def _cpu_s(daemons: list[Daemon]) -> float:
    """The daemons' CPU seconds so far (user + system)."""
    return sum(cpu_s(d.pid) for d in daemons)


def _per_op_us(cpu_s: float, phase: dict[str, Any], size: PgSize) -> float:
    """Daemon CPU per operation of a window (its warm-up's calls are counted in the CPU too: an upper bound)."""
    ops = phase["ops_per_s"] * size.duration_s
    return cpu_s / ops * 1e6 if ops else math.nan


def _load(daemons: list[Daemon], size: PgSize, sid: str) -> float:
    """Write ``load_messages`` through the first daemon, Load them through the last: p50 ms."""
    from claw_sessiond_client import Message, SessionClient

    body = "x" * size.payload_bytes
    with SessionClient(address=daemons[0].address, autostart=False, timeout_s=120) as c:
        for start in range(0, size.load_messages, 100):
            n = min(100, size.load_messages - start)
            c.append(sid, [Message.user(f"{start + k} {body}") for k in range(n)], workdir="/")
    times = []
    with SessionClient(address=daemons[-1].address, autostart=False, timeout_s=120) as c:
        got = c.load(sid, workdir="/")
        if len(got.messages) != size.load_messages:
            raise BenchError(f"Load returned {len(got.messages)} messages, expected {size.load_messages}")
        for _ in range(size.load_rounds):
            began = time.perf_counter()
            c.load(sid, workdir="/")
            times.append((time.perf_counter() - began) * 1000)
    return median(times)


def _watch(daemons: list[Daemon], size: PgSize, sid: str) -> dict[str, Any]:
    """Append one message at a time on the first daemon; when does a Watch on the last daemon see it?"""
    from claw_sessiond_client import Message, SessionClient

    sent: dict[int, float] = {}
    seen: dict[int, float] = {}
    with SessionClient(address=daemons[0].address, autostart=False, timeout_s=30) as writer:
        writer.append(sid, Message.user("start"), workdir="/")
        watcher = SessionClient(address=daemons[-1].address, autostart=False, timeout_s=None)

        def follow() -> None:
            try:
                for event in watcher.watch(sid, after_position=1):
                    if event.message is not None:
                        seen.setdefault(event.position, time.perf_counter())
                    if len(seen) >= size.watch_appends:
                        return
            except Exception:  # closed at the end: the figures say what arrived
                return

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        time.sleep(0.5)  # the Watch is open
        for _ in range(size.watch_appends):
            began = time.perf_counter()
            result = writer.append(sid, Message.user("w"), workdir="/")
            sent[result.last_position] = began
            time.sleep(0.01)
        deadline = time.monotonic() + 3
        while len(seen) < len(sent) and time.monotonic() < deadline:
            time.sleep(0.02)
        watcher.close()
        thread.join(5)
    lat = [(seen[p] - t) * 1000 for p, t in sent.items() if p in seen]
    return {
        "p50_ms": median(lat) if lat else math.nan,
        "p99_ms": percentile(lat, 99) if lat else math.nan,
        "missed": len(sent) - len(lat),
    }


def _setups(root: Path, server: Any) -> dict[str, list[Daemon]]:
    def ws(name: str) -> Path:
        path = root / name
        path.mkdir()
        return path

    one = server.create_database("bench_one")
    two = server.create_database("bench_two")
    return {
        "sqlite": [Daemon(ws("sqlite"))],
        "pg x1": [Daemon(ws("pg1"), "--database", one)],
        "pg x2": [Daemon(ws("pg2a"), "--database", two), Daemon(ws("pg2b"), "--database", two)],
    }


_MEASURES = (
    ("stream NxM", "ours_stream", "shared", True),
    ("append NxM", "ours", "shared", True),
    ("append Nx1", "ours", "shared", False),
    ("stream NxM, session per process", "ours_stream", "own", True),
)
#: ``--only`` keys: the measures above, then the floors, Load and Watch.
_KEYS = {
    "stream NxM": "stream",
    "append NxM": "append",
    "append Nx1": "append1",
    "stream NxM, session per process": "own",
    "floor": "floor",
    "load": "load",
    "watch": "watch",
}


def _floor(url: str, size: PgSize) -> dict[str, float]:
    """The server's own rates on one asyncpg connection: autocommitted INSERTs, and INSERTs in one transaction."""
    import asyncio

    import asyncpg

    async def measure() -> dict[str, float]:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("CREATE TABLE IF NOT EXISTS floor (id bigserial PRIMARY KEY, body text NOT NULL)")
            await conn.execute("SET synchronous_commit = on")
            body = "x" * size.payload_bytes
            out: dict[str, float] = {}
            for name, in_tx in (("commit", False), ("statement", True)):
                count, began = 0, time.perf_counter()
                tx = conn.transaction()
                if in_tx:
                    await tx.start()
                while time.perf_counter() - began < size.duration_s:
                    await conn.execute("INSERT INTO floor (body) VALUES ($1)", body)
                    count += 1
                if in_tx:
                    await tx.commit()
                out[name] = count / (time.perf_counter() - began)
            return out
        finally:
            await conn.close()

    return asyncio.run(measure())


def run(tiny: bool, only: str = "") -> int:
    """Measure, print the table, write ``bench/results/postgres-<mode>-<time>.json`` (``only``: keys of _KEYS)."""
    import tempfile

    from tests.helpers.postgres import require_server, throwaway_postgres

    size = TINY if tiny else FULL
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    keys = set(only.split(",")) if only else set(_KEYS.values())
    if keys - set(_KEYS.values()):
        raise BenchError(f"--only: unknown {sorted(keys - set(_KEYS.values()))}; known: {sorted(_KEYS.values())}")
    mode = ("tiny" if tiny else "full") + ("-" + "-".join(sorted(keys)) if only else "")
    res: dict[str, Any] = {"mode": mode, "started_utc": stamp, "size": asdict(size), "only": sorted(keys)}
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="claw-bench-pg-"))
    with throwaway_postgres(require_server()) as server:
        res["server"] = (
            server.psql("SHOW server_version") + ", synchronous_commit=" + server.psql("SHOW synchronous_commit")
        )
        setups = _setups(root, server)
        floor_url = server.create_database("bench_floor")
        try:
            figures: dict[str, dict[str, list[dict[str, Any]]]] = {s: {m[0]: [] for m in _MEASURES} for s in setups}
            floors: list[dict[str, float]] = []
            for r in range(size.repeats):
                for name, kind, sessions, concurrent in _MEASURES:
                    if _KEYS[name] not in keys:
                        continue
                    for setup, daemons in setups.items():
                        sockets = [d.socket for d in daemons]
                        sids = (
                            [f"{kind}-{r}"]
                            if sessions == "shared"
                            else [f"{kind}-{r}-p{i}" for i in range(size.processes)]
                        )
                        cpu = _cpu_s(daemons)
                        phase = _phase(kind, sockets, sids, size, size.inflight if concurrent else 1)
                        phase["cpu_us_per_op"] = _per_op_us(_cpu_s(daemons) - cpu, phase, size)
                        figures[setup][name].append(phase)
                        _log(
                            f"{setup:6s} {name}: {phase['ops_per_s']:,.0f}/s p99 {phase['p99_ms']:.1f} ms "
                            f"daemon CPU {phase['cpu_us_per_op']:.0f} us/op errors {phase['errors']}"
                        )
                if "floor" in keys:
                    floors.append(_floor(floor_url, size))
                    _log(f"floor: {floors[-1]['commit']:,.0f} commits/s, {floors[-1]['statement']:,.0f} statements/s")
            for setup, daemons in setups.items():
                if not keys & {"load", "watch"}:
                    break
                if "load" in keys:
                    figures[setup]["load"] = [{"p50_ms": _load(daemons, size, "load")}]
                    _log(f"{setup:6s} load p50 {figures[setup]['load'][0]['p50_ms']:.1f} ms")
                if "watch" in keys:
                    figures[setup]["watch"] = [_watch(daemons, size, "watch")]
                    _log(f"{setup:6s} watch {figures[setup]['watch'][0]}")
        finally:
            for daemons in setups.values():
                for d in daemons:
                    d.close()
    res["figures"] = figures
    res["floors"] = floors
    res["rows"] = _rows(figures, floors, size, keys)
    res["elapsed_s"] = time.monotonic() - started
    _print(res["rows"], res, tiny)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"postgres-{res['mode']}-{stamp}.json"
    path.write_text(json.dumps(res, indent=2, default=str) + "\n")
    print(f"results: {path}; {res['elapsed_s']:.0f} s")
    return 0


def _med(phases: list[dict[str, Any]], key: str) -> float:
    values = [p[key] for p in phases if not math.isnan(p[key])]
    return median(values) if values else math.nan


def _rows(
    figures: dict[str, Any], floors: list[dict[str, float]], size: PgSize, keys: set[str]
) -> list[dict[str, Any]]:
    n, m = size.processes, size.inflight
    rows = []
    base = figures["sqlite"]
    for name, _kind, _sessions, _concurrent in _MEASURES:
        if _KEYS[name] not in keys:
            continue
        label = name.replace("NxM", f"{n}x{m}").replace("Nx1", f"{n}x1")
        for setup in ("sqlite", "pg x1", "pg x2"):
            ops, p99 = _med(figures[setup][name], "ops_per_s"), _med(figures[setup][name], "p99_ms")
            cpu = _med(figures[setup][name], "cpu_us_per_op")
            r = ratio(ops, _med(base[name], "ops_per_s"))
            target = setup == "pg x1" and name == "stream NxM"
            rows.append(
                {
                    "measure": label,
                    "setup": setup,
                    "value": f"{ops:,.0f}/s, p99 {p99:.1f} ms, daemon CPU {cpu:,.0f} us/op",
                    "vs_sqlite": r,
                    "target": ">= 0.5x" if target else "",
                    "met": (r >= 0.5) if target else None,
                }
            )
    stream = _med(base["stream NxM"], "ops_per_s") if "stream" in keys else math.nan
    floor_rows = (("commit", "commit floor: INSERT per COMMIT"), ("statement", "statement floor: INSERTs in 1 tx"))
    for key, label in floor_rows:
        if floors:
            rate = median([f[key] for f in floors])
            rows.append(
                {
                    "measure": label,
                    "setup": "bare pg",
                    "value": f"{rate:,.0f}/s",
                    "vs_sqlite": ratio(rate, stream),
                    "target": "(vs sqlite stream)",
                    "met": None,
                }
            )
    for setup in ("sqlite", "pg x1", "pg x2"):
        if "load" not in keys:
            break
        load = _med(figures[setup]["load"], "p50_ms")
        rows.append(
            {
                "measure": f"Load {size.load_messages:,} messages p50",
                "setup": setup,
                "value": f"{load:,.1f} ms",
                "vs_sqlite": ratio(load, _med(base["load"], "p50_ms")),
                "target": "(time ratio)",
                "met": None,
            }
        )
    for setup in ("sqlite", "pg x1", "pg x2"):
        if "watch" not in keys:
            break
        w = figures[setup]["watch"][0]
        where = "across daemons" if setup == "pg x2" else "same daemon"
        rows.append(
            {
                "measure": f"Watch latency ({where})",
                "setup": setup,
                "value": f"p50 {w['p50_ms']:.1f} ms, p99 {w['p99_ms']:.1f} ms, missed {w['missed']}",
                "vs_sqlite": ratio(w["p99_ms"], base["watch"][0]["p99_ms"]),
                "target": "p99 <= 50 ms" if setup == "pg x2" else "",
                "met": (w["p99_ms"] <= 50 and w["missed"] == 0) if setup == "pg x2" else None,
            }
        )
    return rows


def _print(rows: list[dict[str, Any]], res: dict[str, Any], tiny: bool) -> None:
    print(f"\nPostgreSQL {res['server']} vs SQLite, one run ({res['mode']}; ratios against sqlite in this run)")
    print(f"{'measure':42s} {'setup':7s} {'value':34s} {'vs sqlite':>9s}  target")
    for row in rows:
        met = "" if row["met"] is None or tiny else ("  MET" if row["met"] else "  MISSED")
        r = row["vs_sqlite"]
        shown = "n/a" if isinstance(r, float) and math.isnan(r) else f"{r:.2f}x"
        print(f"{row['measure']:42s} {row['setup']:7s} {row['value']:34s} {shown:>9s}  {row['target']}{met}")
