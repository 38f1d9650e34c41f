"""``bench/run --calls``: the fixed cost of one Append call, against its floors, in one run.

Issue 15's per-call targets, each beside the physical floor that bounds it on
this machine, all measured in the same run and alternated round by round:

* the bare durable commit (``bench/floor.py``: one ``sqlite3`` insert and
  COMMIT, WAL, ``synchronous=FULL``, its wall time and its CPU);
* "echo + one durable commit": the echo server making that commit on its loop
  before each reply (``bench/echo_server.py --commit``), the least a durable
  unary Append can cost in server CPU and in serial latency;
* server and client CPU per call at N x M in flight: echo, echo + commit, the
  unary Append, the asyncio client's default ``append()`` and AppendStream;
* serial p50 with one sync client (in this process, blocks of calls
  interleaved): echo, echo + commit, ``SessionClient.append()`` unary and default;
* N processes x 1 append in flight against ``SQLiteSession``, with the echo
  server's N x 1 rate as the transport's own ceiling for a unary call.

A target that the floor alone misses is reported as unreachable on this
machine (the "floor" column says by how much).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import grpc
import psutil

from bench import floor, results
from bench.echo_server import METHOD
from bench.procs import Daemon, EchoServer, cpu_s, run_workers
from bench.stats import median, percentile, ratio
from bench.worker import content

__all__ = ["run"]

#: Rounds of every phase (medians are judged), seconds per phase, serial calls per kind.
FULL = {"processes": 8, "inflight": 16, "duration_s": 6.0, "rounds": 3, "serial": 600, "warmup": 10, "payload": 1024}
TINY = {"processes": 2, "inflight": 4, "duration_s": 1.0, "rounds": 1, "serial": 40, "warmup": 2, "payload": 1024}


def _log(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", flush=True)


def _phase(kind: str, target: Path, sid: str, size: dict[str, Any], inflight: int, server_pid: int) -> dict[str, Any]:
    specs = [
        {
            "kind": kind,
            "target": str(target),
            "session_id": sid,
            "index": i,
            "inflight": inflight,
            "duration_s": size["duration_s"],
            "payload_bytes": size["payload"],
            "warmup": size["warmup"],
        }
        for i in range(size["processes"])
    ]
    cpu0 = cpu_s(server_pid)
    res = run_workers(specs, size["duration_s"], start_timeout_s=600)  # 8 imports of openai-agents on a busy machine
    server_s = cpu_s(server_pid) - cpu0
    lat = [x for r in res for x in r["latencies_ms"]]
    counts = [r["count"] for r in res]
    ran = sum(len(r["acked"]) - size["warmup"] for r in res)  # every op of the window, late ones too
    out = {
        "kind": kind,
        "inflight": inflight,
        "ops_per_s": sum(counts) / size["duration_s"],
        "p50_ms": percentile(lat, 50),
        "p99_ms": percentile(lat, 99),
        "fairness": ratio(max(counts), min(counts)) if min(counts) > 0 else math.inf,
        "server_cpu_us_per_op": server_s / max(1, ran) * 1e6,
        "client_cpu_us_per_op": sum(r["cpu_s"] for r in res) / max(1, ran) * 1e6,
        "errors": sum(r["errors"] for r in res),
        "error_samples": [s for r in res for s in r["error_samples"]][:3],
    }
    _log(
        f"{kind:16s} {size['processes']}x{inflight}: {out['ops_per_s']:,.0f}/s p50 {out['p50_ms']:.2f} "
        f"p99 {out['p99_ms']:.2f} ms, CPU/op server {out['server_cpu_us_per_op']:.0f} "
        f"client {out['client_cpu_us_per_op']:.0f} us, fairness {out['fairness']:.2f}, errors {out['errors']}"
    )
    return out


def _serial(size: dict[str, Any], daemon: Daemon, echo: EchoServer, echo_commit: EchoServer) -> dict[str, Any]:
    """One sync client, one call at a time, kinds interleaved in blocks of 20: p50 and CPU per call."""
    from claw_sessiond_client import Message, SessionClient

    unary = SessionClient(address=daemon.address, autostart=False, timeout_s=30, stream_appends=False)
    default = SessionClient(address=daemon.address, autostart=False, timeout_s=30)
    channels = [grpc.insecure_channel(echo.address), grpc.insecure_channel(echo_commit.address)]
    payload = b"x" * size["payload"]
    echo_call, echo_commit_call = (ch.unary_unary(METHOD) for ch in channels)
    calls: dict[str, tuple[Any, int]] = {
        "echo": (lambda _i: echo_call(payload, timeout=30), echo.pid),
        "echo_commit": (lambda _i: echo_commit_call(payload, timeout=30), echo_commit.pid),
        "append_unary": (
            lambda i: unary.append("serial-unary", Message.user(content(0, i, size["payload"]))),
            daemon.pid,
        ),
        "append_default": (
            lambda i: default.append("serial-default", Message.user(content(0, i, size["payload"]))),
            daemon.pid,
        ),
    }
    lat: dict[str, list[float]] = {k: [] for k in calls}
    cpu: dict[str, list[float]] = {k: [0.0, 0.0] for k in calls}  # client s, server s
    try:
        for fn, _pid in calls.values():  # warm-up
            for i in range(20):
                fn(-i - 1)
        block = 20
        for b in range(size["serial"] // block):
            for kind, (fn, pid) in calls.items():
                c0, s0 = time.process_time(), cpu_s(pid)
                for i in range(block):
                    t0 = time.perf_counter()
                    fn(b * block + i)
                    lat[kind].append((time.perf_counter() - t0) * 1000.0)
                cpu[kind][0] += time.process_time() - c0
                cpu[kind][1] += cpu_s(pid) - s0
    finally:
        for ch in channels:
            ch.close()
        unary.close()
        default.close()
    out: dict[str, Any] = {}
    for kind, xs in lat.items():
        out[kind] = {
            "p50_ms": median(xs),
            "p99_ms": percentile(xs, 99),
            "client_cpu_us": cpu[kind][0] / len(xs) * 1e6,
            "server_cpu_us": cpu[kind][1] / len(xs) * 1e6,
            "samples": len(xs),
        }
        _log(
            f"serial sync {kind:15s} p50 {out[kind]['p50_ms']:.3f} ms, CPU/call client "
            f"{out[kind]['client_cpu_us']:.0f} server {out[kind]['server_cpu_us']:.0f} us"
        )
    return out


def _med(phases: list[dict[str, Any]], key: str) -> float:
    return median([p[key] for p in phases])


def _row(measure: str, ours: str, baseline: str, r: float, target: str = "", met: bool | None = None) -> dict[str, Any]:
    return {"section": "calls", "measure": measure, "ours": ours, "baseline": baseline, "ratio": r, "target": target}


def rows(res: dict[str, Any]) -> list[dict[str, Any]]:
    """The table: each target with its floor's ratio beside it (``met`` judged only where a target is)."""
    out: list[dict[str, Any]] = []

    def add(measure: str, ours: str, baseline: str, r: float, target: str = "", met: bool | None = None) -> None:
        row = _row(measure, ours, baseline, r, target)
        row["met"] = met
        out.append(row)

    fl = res["floor"]
    add("bare sqlite3 insert+commit (WAL, FULL)", f"p50 {fl['p50_ms']:.3f} ms", f"CPU {fl['cpu_us']:.0f} us", math.nan)
    tp = res["concurrent"]
    echo_cpu = _med(tp["echo"], "server_cpu_us_per_op")
    floor_cpu = _med(tp["echo_commit"], "server_cpu_us_per_op")
    add(
        "floor: server CPU per call, echo + one durable commit",
        f"{floor_cpu:.0f} us",
        f"{echo_cpu:.0f} us echo",
        ratio(floor_cpu, echo_cpu),
        "(the least a durable unary call costs)",
    )
    kinds = (("ours", "unary Append"), ("ours_append", "append() default, asyncio"), ("ours_stream", "AppendStream"))
    for kind, name in kinds:
        v = _med(tp[kind], "server_cpu_us_per_op")
        r = ratio(v, echo_cpu)
        target = kind == "ours"
        add(
            f"server CPU per call, {name}",
            f"{v:.0f} us",
            f"{echo_cpu:.0f} us echo",
            r,
            "<= 1.2x" if target else "",
            r <= 1.2 if target else None,
        )
    for kind in ("echo", "echo_commit", "ours", "ours_append", "ours_stream"):
        add(
            f"client CPU per call, {kind} (asyncio)",
            f"{_med(tp[kind], 'client_cpu_us_per_op'):.0f} us",
            "",
            math.nan,
        )
    se = res["serial"]
    e = se["echo"]["p50_ms"]
    add(
        "floor: serial p50, echo + one durable commit (sync)",
        f"{se['echo_commit']['p50_ms']:.3f} ms",
        f"{e:.3f} ms echo",
        ratio(se["echo_commit"]["p50_ms"], e),
        "(the least a durable unary call waits)",
    )
    for kind, name in (("append_unary", "unary"), ("append_default", "default")):
        r = ratio(se[kind]["p50_ms"], e)
        v = f"{se[kind]['p50_ms']:.3f} ms"
        add(f"serial Append p50, sync client, {name}", v, f"{e:.3f} ms echo", r, "<= 2x", r <= 2)
    for kind in se:
        add(
            f"serial CPU per call client / server, {kind} (sync)",
            f"{se[kind]['client_cpu_us']:.0f} / {se[kind]['server_cpu_us']:.0f} us",
            "",
            math.nan,
        )
    w = res["writers"]
    sq = w["sqlite"]
    sq_rate = _med(sq, "ops_per_s")
    sq_p99 = _med(sq, "p99_ms")
    n = res["size"]["processes"]
    add(
        f"ceiling: echo, {n} procs x 1, vs SQLiteSession",
        f"{_med(w['echo'], 'ops_per_s'):,.0f}/s",
        f"{sq_rate:,.0f}/s",
        ratio(_med(w["echo"], "ops_per_s"), sq_rate),
        "(a unary call's own ceiling)",
    )
    for kind, name in (
        ("ours", "unary Append, asyncio"),
        ("ours_append", "append() default, asyncio"),
        ("ours_sync", "append() default, sync"),
        ("ours_stream", "AppendStream"),
    ):
        rate, p99, fair = _med(w[kind], "ops_per_s"), _med(w[kind], "p99_ms"), _med(w[kind], "fairness")
        r = ratio(rate, sq_rate)
        add(f"{n} procs x 1, {name}: appends/s", f"{rate:,.0f}/s", f"{sq_rate:,.0f}/s", r, ">= 1x", r >= 1)
        r = ratio(p99, sq_p99)
        add(f"{n} procs x 1, {name}: p99", f"{p99:.2f} ms", f"{sq_p99:.2f} ms", r, "<= 0.33x", r <= 1 / 3)
        add(
            f"{n} procs x 1, {name}: fairness",
            f"{fair:.2f}x",
            f"{_med(sq, 'fairness'):.2f}x",
            math.nan,
            "<= 1.5x",
            fair <= 1.5,
        )
    errors = sum(p["errors"] for k in ("ours", "ours_append", "ours_sync", "ours_stream") for p in w[k])
    errors += sum(p["errors"] for k in ("ours", "ours_append", "ours_stream") for p in tp[k])
    add("errors in our phases", str(errors), "", math.nan, "0", errors == 0)
    return out


def run(tiny: bool, label: str, profile: bool) -> int:
    """Run the section; print the table; write ``bench/results/<time>-calls[-label].json``."""
    from bench.main import Row, _print_table, _profile, _tempdir, summarize_profile

    size = TINY if tiny else FULL
    started = time.monotonic()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    res: dict[str, Any] = {
        "mode": "calls-tiny" if tiny else "calls",
        "started_utc": stamp,
        "machine": results.machine(),
        "size": size,
        "load_average_start": psutil.getloadavg(),
    }
    try:
        from agents import SQLiteSession  # noqa: F401
    except ImportError:
        _log("bench/run --calls needs the bench extra (openai-agents): pip install -e '.[bench]'")
        return 2
    with _tempdir() as root:
        res["floor"] = floor.bench_floor(root, 50 if tiny else 500, size["payload"])
        ws = root / "ws"
        ws.mkdir()
        echo = EchoServer(root / "echo.sock")
        echo_commit = EchoServer(root / "echo-commit.sock", commit_db=root / "echo-commit.db")
        daemon = Daemon(ws)
        servers = {"echo": echo, "echo_commit": echo_commit}
        try:
            conc: dict[str, list[dict[str, Any]]] = {}
            for r in range(size["rounds"]):
                for kind in ("echo", "echo_commit", "ours", "ours_append", "ours_stream"):
                    srv = servers.get(kind)
                    prof = None
                    if profile and r == 0 and kind == "ours":
                        prof_path = results.RESULTS / "profile-calls-unary.txt"
                        prof = _profile(daemon.pid, size["duration_s"] + 4, prof_path)
                    phase = _phase(
                        "echo" if srv else kind,
                        srv.socket if srv else daemon.socket,
                        f"conc-{kind}-{r}",
                        size,
                        size["inflight"],
                        srv.pid if srv else daemon.pid,
                    )
                    conc.setdefault(kind, []).append(phase)
                    if prof is not None:
                        prof.wait(120)
                        if prof_path.exists():
                            res["profile_unary"] = summarize_profile(prof_path, top=25)
            res["concurrent"] = conc
            res["serial"] = _serial(size, daemon, echo, echo_commit)
            writers: dict[str, list[dict[str, Any]]] = {}
            for r in range(size["rounds"]):
                for kind in ("sqlite", "echo", "ours", "ours_append", "ours_sync", "ours_stream"):
                    if kind == "sqlite":
                        db = root / f"agents-{r}.db"
                        phase = _phase("sqlite", db, "shared", size, 1, psutil.Process().pid)
                    elif kind == "echo":
                        phase = _phase("echo", echo.socket, "", size, 1, echo.pid)
                    else:
                        phase = _phase(kind, daemon.socket, f"writers-{kind}-{r}", size, 1, daemon.pid)
                    writers.setdefault(kind, []).append(phase)
            res["writers"] = writers
        finally:
            daemon.close()
            echo.close()
            echo_commit.close()
    res["load_average_end"] = psutil.getloadavg()
    res["elapsed_s"] = time.monotonic() - started
    table = rows(res)
    res["table"] = table
    _print_table([Row(**t) for t in table], tiny)
    path = results.save(res, label)
    loads = f"{res['load_average_start'][0]:.1f} -> {res['load_average_end'][0]:.1f}"
    print(f"results: {path}; {res['elapsed_s']:.0f} s; load average {loads}")
    return 0
