"""The benchmark: claw-sessiond against the gRPC ceiling and against what users would pick instead.

Every figure that matters is a ratio against a baseline measured in the same
run, on the same machine, interleaved with ours where it can be: absolute
times on a shared machine are noise, ratios much less so.

Sections (``bench/run`` prints one table and writes ``bench/results/``):

* throughput: durable Append, N client processes x M in flight (asyncio
  client), 1 KB messages, versus a bare grpc.aio echo server (same payload,
  same transport: a Unix socket); daemon peak RSS during the run;
* versus the OpenAI Agents SDK ``SQLiteSession`` with N processes on one
  session in one file (1 and M appends in flight per process): throughput,
  p99, fairness, lost and duplicated writes counted afterwards;
* append latency against history length for ours, ``SQLiteSession`` and the
  seed's JSON-file-per-session store (``bench/json_store.py``), and a plot;
* serial single-client Append versus serial echo; Load of a large session
  versus ``SQLiteSession.get_items``; time from process start to SERVING;
* the SDK-session operations (``bench/items.py``): adding one item,
  ``get_items(limit=10)`` at 10 and 10,000 items, a full read, each versus
  ``SQLiteSession``.
* ``pop_item`` (EditTail) versus a serial Append and ``SQLiteSession.pop_item``
  (``bench/edits.py``).

``--tiny`` runs everything at a size that takes seconds (CI) and checks
nothing about speed; the default is the full size (a few minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import datetime as dt
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import grpc

from bench import floor, growth, items, results
from bench.echo_server import METHOD
from bench.json_store import JsonSessionStore
from bench.procs import ROOT, BenchError, Daemon, EchoServer, RssSampler, cpu_s, run_workers
from bench.stats import median, percentile, ratio
from bench.worker import content, tag_of

RESULTS = ROOT / "bench" / "results"
DOCS_PLOT = ROOT / "docs" / "bench-latency.png"

try:  # optional: the bench extra (pip install -e '.[bench]')
    from agents import SQLiteSession
except ImportError:  # CI installs only the test extra; the comparisons are skipped
    SQLiteSession = None


@dataclass(frozen=True)
class Size:
    """How big each section runs."""

    processes: int
    inflight: int
    duration_s: float
    repeats: int
    history: tuple[int, ...]
    rounds: int
    json_rounds_large: int
    serial: int
    load_messages: int
    load_rounds: int
    starts: int
    payload_bytes: int = 1024
    warmup: int = 5
    items_large: int = 10_000
    """The SDK-session section (``bench/items.py``): the larger session's items."""
    items_rounds: int = 30
    load_large: int = 100_000
    """Load's second size (its cost against the first's: linear in bytes)."""


FULL = Size(8, 16, 8.0, 3, (10, 1_000, 10_000, 100_000), 30, 3, 600, 10_000, 15, 3, warmup=10)
TINY = Size(
    2, 4, 0.3, 1, (10, 100, 1_000), 5, 2, 40, 500, 3, 1, warmup=2, items_large=300, items_rounds=5, load_large=2_000
)


@dataclass
class Row:
    """One line of the results table."""

    section: str
    measure: str
    ours: str
    baseline: str
    ratio: float
    target: str
    met: bool | None


# ---------------------------------------------------------------- helpers


def _log(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def _fmt(x: float, unit: str = "", digits: int = 1) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "n/a"
    return f"{x:,.{digits}f}{unit}"


@contextmanager
def _tempdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="claw-bench-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class _Loop:
    """One event loop for SQLiteSession calls made from this (synchronous) process."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        self.loop.close()


def _phase(kind: str, target: str, session_id: str, size: Size, inflight: int) -> dict[str, Any]:
    specs = [
        {
            "kind": kind,
            "target": target,
            "session_id": session_id,
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
    counts = [r["count"] for r in results]
    total = sum(counts)
    summary = {
        "kind": kind,
        "processes": size.processes,
        "inflight": inflight,
        "duration_s": size.duration_s,
        "ops": total,
        "ops_per_s": total / size.duration_s,
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
        "fairness": ratio(max(counts), min(counts)) if min(counts) > 0 else math.inf,
        "per_process": counts,
        "errors": sum(r["errors"] for r in results),
        "error_samples": [s for r in results for s in r["error_samples"]][:3],
    }
    summary["_acked"] = {f"w{r['index']}-{seq}" for r in results for seq in r["acked"]}
    _log(
        f"{kind:6s} {size.processes}x{inflight}: {summary['ops_per_s']:,.0f}/s p50 {summary['p50_ms']:.2f} ms "
        f"p99 {summary['p99_ms']:.2f} ms fairness {summary['fairness']:.2f} errors {summary['errors']}"
    )
    return summary


def _integrity(acked: set[str], stored_tags: list[str]) -> dict[str, int]:
    """Lost = acknowledged but not stored; duplicated = stored more than once."""
    counts = collections.Counter(stored_tags)
    return {
        "acknowledged": len(acked),
        "stored": len(stored_tags),
        "lost": len(acked - set(counts)),
        "duplicated": sum(c - 1 for c in counts.values() if c > 1),
        "stored_unacknowledged": len(set(counts) - acked),
    }


def _ours_tags(address: str, session_id: str) -> list[str]:
    from claw_sessiond_client import SessionClient

    with SessionClient(address=address, autostart=False, timeout_s=120) as client:
        return [tag_of(m.content) for m in client.load(session_id, workdir="/").messages]


def _sqlite_tags(db_path: Path, session_id: str, loop: _Loop) -> list[str]:
    assert SQLiteSession is not None
    session = SQLiteSession(session_id, db_path)
    try:
        items = loop.run(session.get_items())
    finally:
        session.close()
    return [tag_of(str(item["content"])) for item in items]


# ---------------------------------------------------------------- sections


def bench_startup(size: Size, root: Path) -> dict[str, Any]:
    """Spawn-to-SERVING time on fresh workspaces."""
    samples = []
    for i in range(size.starts):
        ws = root / f"start-{i}"
        ws.mkdir()
        d = Daemon(ws)
        samples.append(d.ready_s)
        d.close()
    _log(f"startup (fresh workspace): {median(samples) * 1000:.0f} ms")
    return {"fresh_ready_ms": [s * 1000 for s in samples], "fresh_ready_ms_p50": median(samples) * 1000}


def bench_throughput(
    size: Size, daemon: Daemon, echo: EchoServer, root: Path, loop: _Loop, profile_dir: Path | None = None
) -> dict[str, Any]:
    """Echo, Append and AppendStream at N x M in flight (alternating), then SQLiteSession at N x 1 and N x M."""
    out: dict[str, Any] = {"echo": [], "ours": [], "ours_stream": [], "ours_integrity": []}
    peaks = []
    for r in range(size.repeats):
        cpu0 = cpu_s(echo.pid)
        echo_phase = _phase("echo", str(echo.socket), "", size, size.inflight)
        echo_phase["server_cpu_us_per_op"] = (cpu_s(echo.pid) - cpu0) / max(1, echo_phase["ops"]) * 1e6
        echo_phase.pop("_acked")
        out["echo"].append(echo_phase)
        for kind in ("ours", "ours_stream"):
            sid = f"throughput-{kind}-{r}"
            sampler = RssSampler(daemon.pid)
            prof_path = profile_dir / f"profile-{kind}.txt" if profile_dir is not None and r == 0 else None
            prof = _profile(daemon.pid, size.duration_s + 4, prof_path) if prof_path is not None else None
            cpu0 = cpu_s(daemon.pid)
            phase = _phase(kind, str(daemon.socket), sid, size, size.inflight)
            phase["daemon_cpu_us_per_op"] = (cpu_s(daemon.pid) - cpu0) / max(1, phase["ops"]) * 1e6
            peaks.append(sampler.close())
            if prof is not None and prof_path is not None:
                prof.wait(120)
                out[f"profile_{kind}"] = summarize_profile(prof_path) if prof_path.exists() else {}
            out["ours_integrity"].append(_integrity(phase.pop("_acked"), _ours_tags(daemon.address, sid)))
            out[kind].append(phase)
    out["daemon_peak_rss_bytes"] = max(peaks)
    if SQLiteSession is None:
        _log("SQLiteSession comparisons skipped: openai-agents is not installed (pip install -e '.[bench]')")
        return out
    for inflight, key in ((1, "serial_writers"), (size.inflight, "concurrent_writers")):
        db = root / f"agents-{key}.db"
        theirs = _phase("sqlite", str(db), "shared", size, inflight)
        section: dict[str, Any] = {
            "sqlite_integrity": _integrity(theirs.pop("_acked"), _sqlite_tags(db, "shared", loop))
        }
        section["sqlite"] = theirs
        for kind in ("ours", "ours_append", "ours_stream"):
            sid = f"writers-{key}-{kind}"
            ours = _phase(kind, str(daemon.socket), sid, size, inflight)
            section[f"{kind}_integrity"] = _integrity(ours.pop("_acked"), _ours_tags(daemon.address, sid))
            section[kind] = ours
        out[key] = section
    return out


def _prefill_ours(client: Any, session_id: str, n: int, payload: int) -> None:
    from claw_sessiond_client import Message

    done = 0
    while done < n:
        batch = min(1000, n - done)
        client.append(session_id, [Message.user(content(99, done + i, payload)) for i in range(batch)])
        done += batch


def _prefill_sqlite(session: Any, n: int, payload: int, loop: _Loop) -> None:
    done = 0
    while done < n:
        batch = min(1000, n - done)
        loop.run(session.add_items([{"role": "user", "content": content(99, done + i, payload)} for i in range(batch)]))
        done += batch


def _timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000.0


def bench_history(size: Size, daemon: Daemon, root: Path, loop: _Loop) -> dict[str, Any]:
    """Append latency (serial, one client) at each history length.

    Each store is measured on its own (sizes interleaved round by round), with
    the page cache flushed in between: a JSON rewrite of 100 MB leaves the disk
    busy writing back, which would otherwise land on the next store's fsync.
    """
    from claw_sessiond_client import Message, SessionClient

    client = SessionClient(address=daemon.address, autostart=False, timeout_s=120)
    json_store = JsonSessionStore(root / "json-sessions")
    agents_db = root / "agents-history.db"
    sessions: dict[int, Any] = {}
    largest = max(size.history)
    try:
        for n in size.history:
            _log(f"prefill {n:,} messages of history")
            _prefill_ours(client, f"hist-{n}", n, size.payload_bytes)
            json_store.save(
                f"hist-{n}", [{"role": "user", "content": content(99, i, size.payload_bytes)} for i in range(n)]
            )
            if SQLiteSession is not None:
                sessions[n] = SQLiteSession(f"hist-{n}", agents_db)
                _prefill_sqlite(sessions[n], n, size.payload_bytes, loop)

        def ours(n: int, body: str) -> None:
            client.append(f"hist-{n}", Message.user(body))

        def sqlite(n: int, body: str) -> None:
            loop.run(sessions[n].add_items([{"role": "user", "content": body}]))

        def json_file(n: int, body: str) -> None:
            json_store.append(f"hist-{n}", {"role": "user", "content": body})

        stores: dict[str, Callable[[int, str], None]] = {"ours": ours, "json": json_file}
        if sessions:
            stores["sqlite"] = sqlite
        samples: dict[str, dict[int, list[float]]] = {name: {n: [] for n in size.history} for name in stores}
        seq = 0
        for name, fn in stores.items():
            os.sync()
            # Warm-up rounds are dropped: right after a large prefill the daemon is still
            # checkpointing its WAL and the disk still writing back (measured: 1.5-2x slower).
            warmup = 1 if name == "json" else size.warmup
            for rnd in range(size.rounds + warmup):
                for n in size.history:
                    if name == "json" and n == largest and rnd >= size.json_rounds_large + warmup:
                        continue  # a 100 MB rewrite per sample: a few are enough
                    seq += 1
                    body = content(7, seq, size.payload_bytes)
                    t = _timed(lambda fn=fn, n=n, body=body: fn(n, body))
                    if rnd >= warmup:
                        samples[name][n].append(t)
        table = {
            store: {str(n): {"p50_ms": median(v), "p90_ms": percentile(v, 90), "samples": len(v)} for n, v in d.items()}
            for store, d in samples.items()
        }
        for store in ("ours", "sqlite", "json"):
            table.setdefault(
                store, {str(n): {"p50_ms": math.nan, "p90_ms": math.nan, "samples": 0} for n in size.history}
            )
        for n in size.history:
            _log(
                f"history {n:>7,}: ours {table['ours'][str(n)]['p50_ms']:.2f} ms, sqlite "
                f"{table['sqlite'][str(n)]['p50_ms']:.2f} ms, json {table['json'][str(n)]['p50_ms']:.2f} ms"
            )
        return table
    finally:
        for s in sessions.values():
            s.close()
        client.close()


def bench_serial(size: Size, daemon: Daemon, echo: EchoServer) -> dict[str, Any]:
    """One client, one call at a time: Append versus echo (sync clients, interleaved in blocks)."""
    from claw_sessiond_client import Message, SessionClient

    client = SessionClient(address=daemon.address, autostart=False, timeout_s=30)
    channel = grpc.insecure_channel(echo.address)
    call = channel.unary_unary(METHOD)
    payload = b"x" * size.payload_bytes
    ours: list[float] = []
    theirs: list[float] = []
    try:
        for i in range(20):  # warm-up
            client.append("serial", Message.user(content(0, -i - 1, size.payload_bytes)))
            call(payload, timeout=30)
        block = 20
        for b in range(size.serial // block):
            for i in range(block):
                body = content(0, b * block + i, size.payload_bytes)
                ours.append(_timed(lambda body=body: client.append("serial", Message.user(body))))
            for _ in range(block):
                theirs.append(_timed(lambda: call(payload, timeout=30)))
    finally:
        channel.close()
        client.close()
    out = {
        "ours_p50_ms": median(ours),
        "ours_p99_ms": percentile(ours, 99),
        "echo_p50_ms": median(theirs),
        "echo_p99_ms": percentile(theirs, 99),
        "samples": len(ours),
    }
    _log(f"serial (sync client): ours p50 {out['ours_p50_ms']:.3f} ms, echo p50 {out['echo_p50_ms']:.3f} ms")
    one = replace(size, processes=1, duration_s=max(1.0, size.duration_s / 2))
    for _ in range(size.repeats):
        for kind in ("echo", "ours", "ours_append", "ours_stream"):
            target = echo.socket if kind == "echo" else daemon.socket
            phase = _phase(kind, str(target), "serial-aio", one, 1)
            phase.pop("_acked")
            out.setdefault(f"aio_{kind}", []).append(phase)
    return out


def bench_load(size: Size, daemon: Daemon, root: Path, loop: _Loop) -> dict[str, Any]:
    """Load of an N-message session versus SQLiteSession.get_items on the same messages.

    At ``size.load_messages`` (the top-level figures) and at ``size.load_large`` (under ``"large"``).
    """
    out = _load_at(size.load_messages, size.load_rounds, size, daemon, root, loop)
    out["large"] = _load_at(size.load_large, max(3, size.load_rounds // 5), size, daemon, root, loop)
    return out


def _load_at(n: int, rounds: int, size: Size, daemon: Daemon, root: Path, loop: _Loop) -> dict[str, Any]:
    from claw_sessiond_client import SessionClient

    client = SessionClient(address=daemon.address, autostart=False, timeout_s=600)
    sid = f"load-{n}"
    session = None
    ours: list[float] = []
    theirs: list[float] = []
    content_bytes = n * size.payload_bytes
    try:
        _prefill_ours(client, sid, n, size.payload_bytes)
        if SQLiteSession is not None:
            session = SQLiteSession(sid, root / "agents-load.db")
            _prefill_sqlite(session, n, size.payload_bytes, loop)
        got = client.load(sid, workdir="/")
        if len(got.messages) != n:
            raise BenchError(f"Load returned {len(got.messages)} messages, expected {n}")
        del got
        for _ in range(rounds):
            ours.append(_timed(lambda: client.load(sid, workdir="/")))
            if session is not None:
                s = session
                theirs.append(_timed(lambda s=s: loop.run(s.get_items())))
    finally:
        if session is not None:
            session.close()
        client.close()
    out = {
        "messages": n,
        "content_bytes": content_bytes,
        "ours_p50_ms": median(ours),
        "ours_bytes_per_s": content_bytes / (median(ours) / 1000.0),
        "sqlite_p50_ms": median(theirs) if theirs else math.nan,
        "sqlite_bytes_per_s": content_bytes / (median(theirs) / 1000.0) if theirs else math.nan,
        "ours_ms": ours,
        "sqlite_ms": theirs,
    }
    _log(f"load {n:,}: ours p50 {out['ours_p50_ms']:.1f} ms, sqlite get_items p50 {out['sqlite_p50_ms']:.1f} ms")
    return out


# ---------------------------------------------------------------- report


def _med(phases: list[dict[str, Any]], key: str) -> float:
    return median([p[key] for p in phases])


def _load_rows(ld: dict[str, Any]) -> list[Row]:
    """The Load section's rows (its own function: ``bench/run --load`` prints only these)."""
    rows: list[Row] = []
    r = ratio(ld["ours_p50_ms"], ld["sqlite_p50_ms"])
    rows.append(
        Row(
            "load",
            f"Load {ld['messages']:,} messages p50",
            _fmt(ld["ours_p50_ms"], " ms"),
            f"get_items {_fmt(ld['sqlite_p50_ms'], ' ms')}",
            r,
            "<= 1x",
            None if math.isnan(r) else r <= 1,
        )
    )
    big = ld.get("large")
    if big:
        r = ratio(big["ours_p50_ms"], big["sqlite_p50_ms"])
        rows.append(
            Row(
                "load",
                f"Load {big['messages']:,} messages p50",
                _fmt(big["ours_p50_ms"], " ms"),
                f"get_items {_fmt(big['sqlite_p50_ms'], ' ms')}",
                r,
                "(time ratio)",
                None,
            )
        )
        per_byte = ratio(big["ours_p50_ms"] / big["content_bytes"], ld["ours_p50_ms"] / ld["content_bytes"])
        rows.append(
            Row(
                "load",
                f"Load cost per byte, {big['messages']:,} / {ld['messages']:,} messages",
                "",
                "",
                per_byte,
                "<= 1.2x (linear)",
                None if math.isnan(per_byte) else per_byte <= 1.2,
            )
        )
    rows.append(
        Row(
            "load",
            "Load content bytes/s",
            _fmt(ld["ours_bytes_per_s"] / 2**20, " MiB/s"),
            _fmt(ld["sqlite_bytes_per_s"] / 2**20, " MiB/s"),
            ratio(ld["ours_bytes_per_s"], ld["sqlite_bytes_per_s"]),
            "",
            None,
        )
    )
    return rows


def _rows(res: dict[str, Any], size: Size) -> list[Row]:
    rows: list[Row] = []
    tp = res["throughput"]
    pm = f"{size.processes}x{size.inflight}"
    echo_tp = _med(tp["echo"], "ops_per_s")
    echo_lat = f"{_fmt(_med(tp['echo'], 'p50_ms'), '', 2)} / {_fmt(_med(tp['echo'], 'p99_ms'), ' ms', 2)}"
    for kind, label in (("ours", "Append (unary)"), ("ours_stream", "AppendStream")):
        ours_tp = _med(tp[kind], "ops_per_s")
        r = ratio(ours_tp, echo_tp)
        rows.append(
            Row(
                "ceiling",
                f"{label} appends/s, {pm}",
                _fmt(ours_tp, "/s", 0),
                _fmt(echo_tp, "/s unary echo", 0),
                r,
                ">= 0.9x",
                r >= 0.9,
            )
        )
        lat = f"{_fmt(_med(tp[kind], 'p50_ms'), '', 2)} / {_fmt(_med(tp[kind], 'p99_ms'), ' ms', 2)}"
        rows.append(
            Row(
                "ceiling",
                f"{label} p50 / p99, {pm}",
                lat,
                echo_lat,
                ratio(_med(tp[kind], "p99_ms"), _med(tp["echo"], "p99_ms")),
                "(p99 ratio)",
                None,
            )
        )
    echo_cpu = _med(tp["echo"], "server_cpu_us_per_op")
    for kind, label in (("ours", "Append (unary)"), ("ours_stream", "AppendStream")):
        v = _med(tp[kind], "daemon_cpu_us_per_op")
        rows.append(
            Row(
                "ceiling",
                f"server CPU per op, {label}",
                _fmt(v, " us", 0),
                _fmt(echo_cpu, " us echo server", 0),
                ratio(v, echo_cpu),
                "",
                None,
            )
        )
    lost = sum(i["lost"] for i in tp["ours_integrity"])
    dup = sum(i["duplicated"] for i in tp["ours_integrity"])
    rows.append(
        Row(
            "ceiling",
            "lost / duplicated (all runs above)",
            f"{lost} / {dup}",
            "",
            math.nan,
            "0 / 0",
            lost == 0 and dup == 0,
        )
    )
    rss = tp["daemon_peak_rss_bytes"] / 2**20
    rows.append(Row("ceiling", "daemon peak RSS (psutil)", _fmt(rss, " MiB"), "", math.nan, "", None))
    for key, label in (("serial_writers", f"{size.processes} procs x 1"), ("concurrent_writers", pm)):
        if key not in tp:
            rows.append(Row("SQLiteSession", label, "skipped", "openai-agents not installed", math.nan, "", None))
            continue
        sec = tp[key]
        t = sec["sqlite"]
        ti = sec["sqlite_integrity"]
        want = 1.0 if key == "serial_writers" else 1.5
        for kind, name in (("ours", "Append"), ("ours_append", "append() default"), ("ours_stream", "AppendStream")):
            if kind not in sec:  # results written before append() used a stream
                continue
            o, oi = sec[kind], sec[f"{kind}_integrity"]
            r = ratio(o["ops_per_s"], t["ops_per_s"])
            rows.append(
                Row(
                    "SQLiteSession",
                    f"{name} appends/s, {label}",
                    _fmt(o["ops_per_s"], "/s", 0),
                    _fmt(t["ops_per_s"], "/s", 0),
                    r,
                    f">= {want}x",
                    r >= want,
                )
            )
            r = ratio(o["p99_ms"], t["p99_ms"])
            serial = key == "serial_writers"
            rows.append(
                Row(
                    "SQLiteSession",
                    f"{name} p99, {label}",
                    _fmt(o["p99_ms"], " ms", 2),
                    _fmt(t["p99_ms"], " ms", 2),
                    r,
                    "<= 0.33x" if serial else "",
                    r <= 1 / 3 if serial else None,
                )
            )
            rows.append(
                Row(
                    "SQLiteSession",
                    f"{name} fairness max/min, {label}",
                    _fmt(o["fairness"], "x", 2),
                    _fmt(t["fairness"], "x", 2),
                    math.nan,
                    "ours <= 1.5x",
                    o["fairness"] <= 1.5,
                )
            )
            rows.append(
                Row(
                    "SQLiteSession",
                    f"{name} lost / dup, {label}",
                    f"{oi['lost']} / {oi['duplicated']}",
                    f"{ti['lost']} / {ti['duplicated']} (errors {t['errors']})",
                    math.nan,
                    "ours 0 / 0",
                    oi["lost"] == 0 and oi["duplicated"] == 0 and o["errors"] == 0,
                )
            )
    hist = res["history"]
    sizes = [str(n) for n in size.history]
    small, mid, large = sizes[0], sizes[-2], sizes[-1]
    for n in sizes:
        o, t, j = hist["ours"][n]["p50_ms"], hist["sqlite"][n]["p50_ms"], hist["json"][n]["p50_ms"]
        rows.append(
            Row(
                "history",
                f"append p50 at {int(n):,} messages",
                _fmt(o, " ms", 2),
                f"JSON {_fmt(j, ' ms', 2)}, SQLiteSession {_fmt(t, ' ms', 2)}",
                ratio(j, o),
                ">= 50x vs JSON" if n == mid else "(JSON / ours)",
                ratio(j, o) >= 50 if n == mid else None,
            )
        )
    r = ratio(hist["ours"][large]["p50_ms"], hist["ours"][small]["p50_ms"])
    rows.append(Row("history", f"ours at {int(large):,} / ours at {int(small):,}", "", "", r, "<= 1.2x", r <= 1.2))
    se = res["serial"]
    r = ratio(se["ours_p50_ms"], se["echo_p50_ms"])
    rows.append(
        Row(
            "serial",
            "Append p50, one sync client",
            _fmt(se["ours_p50_ms"], " ms", 3),
            _fmt(se["echo_p50_ms"], " ms echo", 3),
            r,
            "<= 2x",
            r <= 2,
        )
    )
    echo_aio = _med(se["aio_echo"], "p50_ms")
    for kind, name in (("ours", "Append"), ("ours_append", "append() default"), ("ours_stream", "AppendStream")):
        if f"aio_{kind}" not in se:
            continue
        v = _med(se[f"aio_{kind}"], "p50_ms")
        r = ratio(v, echo_aio)
        rows.append(
            Row(
                "serial",
                f"{name} p50, one asyncio client",
                _fmt(v, " ms", 3),
                _fmt(echo_aio, " ms echo", 3),
                r,
                "<= 2x",
                r <= 2,
            )
        )
    rows += _load_rows(res["load"])
    rows += [Row(**r) for r in items.item_rows(res["items"])]
    st = res["startup"]
    rows.append(
        Row(
            "startup",
            "spawn to SERVING, fresh workspace",
            _fmt(st["fresh_ready_ms_p50"], " ms", 0),
            "",
            math.nan,
            "",
            None,
        )
    )
    if "filled_ready_ms" in st:
        rows.append(
            Row(
                "startup",
                f"spawn to SERVING, {st['filled_db_mib']:.0f} MiB database",
                _fmt(st["filled_ready_ms"], " ms", 0),
                "",
                math.nan,
                "",
                None,
            )
        )
    return rows


def _print_table(rows: list[Row], tiny: bool) -> None:
    headers = ("section", "measure", "ours", "baseline", "ratio", "target", "met")
    cells = [
        (
            r.section,
            r.measure,
            r.ours,
            r.baseline,
            "" if math.isnan(r.ratio) else f"{r.ratio:.2f}x",
            r.target,
            "" if r.met is None or tiny else ("yes" if r.met else "NO"),
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    print(line)
    print("-+-".join("-" * w for w in widths))
    for c in cells:
        print(" | ".join(x.ljust(w) for x, w in zip(c, widths, strict=True)))
    if tiny:
        print("(--tiny: sizes too small to mean anything; targets are not judged)")


def _plot(res: dict[str, Any], path: Path, machine: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        _log("plot skipped: matplotlib is not installed (pip install -e '.[bench]')")
        return False
    hist = res["history"]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    labels = {
        "ours": "claw-sessiond Append (durable, gRPC)",
        "sqlite": "Agents SDK SQLiteSession.add_items",
        "json": "JSON file per session (rewrite + fsync)",
    }
    for store, label in labels.items():
        points = [(int(n), v["p50_ms"]) for n, v in hist[store].items() if v["samples"]]
        if points:
            xs, ys = zip(*sorted(points), strict=True)
            ax.plot(xs, ys, marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("messages already in the session (1 KB each)")
    ax.set_ylabel("append latency, p50 (ms)")
    ax.set_title("Append latency vs history length")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.text(0.99, 0.01, machine, ha="right", va="bottom", fontsize=7, alpha=0.7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def _profile(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes] | None:
    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(exe).exists():
        _log("profile skipped: py-spy is not installed")
        return None
    return subprocess.Popen(
        [
            exe,
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(int(seconds)),
            "--rate",
            "200",
            "--format",
            "raw",
            "--threads",
            "--gil",
            "--output",
            str(out),
            "--nonblocking",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def summarize_profile(path: Path, top: int = 12) -> dict[str, Any]:
    """Shares of GIL-holding samples in a py-spy ``raw`` (collapsed stacks) file.

    ``grpc_callbacks`` is the self time of asyncio ``Handle._run``: grpc-python's
    Cython/C-core work run as loop callbacks, which has no Python frames of its
    own. ``daemon_code`` is every sample with a frame in the daemon's request path.
    """
    self_counts: collections.Counter[str] = collections.Counter()
    ours = 0
    total = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        frames = stack.split(";")
        self_counts[frames[-1]] += int(n)
        total += int(n)
        if any(f"claw_sessiond/{m}.py" in f for f in frames for m in _REQUEST_PATH):
            ours += int(n)
    if not total:
        return {}
    grpc_share = sum(c for f, c in self_counts.items() if f.startswith("Handle._run ")) / total
    return {
        "samples": total,
        "grpc_callbacks": grpc_share,
        "daemon_code": ours / total,
        "self_top": [(frame, count / total) for frame, count in self_counts.most_common(top)],
    }


_REQUEST_PATH = ("service", "store", "validate", "ids", "model", "history", "metrics")


def _load_only(res: dict[str, Any], size: Size, loop: _Loop, started: float) -> int:
    """``bench/run --load``: the Load section alone, its rows and its JSON (``results-load-…``)."""
    with _tempdir() as root:
        ws = root / "ws"
        ws.mkdir()
        daemon = Daemon(ws)
        try:
            res["load"] = bench_load(size, daemon, root, loop)
        finally:
            daemon.close()
    loop.close()
    res["elapsed_s"] = time.monotonic() - started
    rows = _load_rows(res["load"])
    res["table"] = [asdict(r) for r in rows]
    _print_table(rows, res["mode"] == "tiny")
    path = results.save(res, "load")
    print(f"results: {path}; {res['elapsed_s']:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table; write ``bench/results/``."""
    parser = argparse.ArgumentParser(
        prog="bench/run", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--tiny", action="store_true", help="seconds-long run for CI; judges no target")
    parser.add_argument(
        "--update-docs", action="store_true", help=f"also write the plot to {DOCS_PLOT.relative_to(ROOT)}"
    )
    parser.add_argument("--profile", action="store_true", help="py-spy record the daemon during one throughput run")
    parser.add_argument(
        "--interference",
        action="store_true",
        help="only the interference section: Append/Load p99, quiet and under heavy requests (bench/interference.py)",
    )
    parser.add_argument(
        "--growth",
        action="store_true",
        help="only the growth section: cost against size (bench/growth.py; also part of the default run)",
    )
    parser.add_argument(
        "--load", action="store_true", help="only the Load section (10,000 and 100,000 messages vs get_items)"
    )
    parser.add_argument(
        "--calls",
        action="store_true",
        help="only the cost of one Append call against its floors (echo + one durable commit; bench/calls.py)",
    )
    parser.add_argument(
        "--batch",
        action="store_true",
        help="only one unary Append of 1,000 entries on SQLite and PostgreSQL: daemon CPU and wall (bench/batch.py)",
    )
    parser.add_argument(
        "--against",
        default="",
        metavar="CHECKOUT",
        help="with --batch: also run another checkout's daemon (its daemon/ and clients/python/), alternated",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="only Watch keeping up: 1 and 100 watchers of a session written at full rate, catch-up vs Load",
    )
    parser.add_argument("--label", default="", help="a name for this run, added to its results file's name")
    parser.add_argument(
        "--only",
        default="",
        help="with --interference: comma-separated scenarios to run; with --backend postgres: comma-separated "
        "parts (stream, append, append1, own, floor, load, watch)",
    )
    parser.add_argument(
        "--backend",
        choices=["sqlite", "postgres"],
        default="sqlite",
        help="postgres: the PostgreSQL backend beside SQLite in one run (bench/postgres.py; a throwaway server)",
    )
    args = parser.parse_args(argv)
    if args.backend == "postgres":
        from bench import postgres

        return postgres.run(args.tiny, args.only)
    if args.interference:
        from bench import interference

        only = ["--only", args.only] if args.only else []
        return interference.main([*(["--tiny"] if args.tiny else []), "--label", args.label, *only])
    if args.watch:
        from bench import watch_rate

        return watch_rate.run(args.tiny, args.label)
    if args.growth:
        return growth.main(args.tiny, args.label)
    if args.batch:
        from bench import batch

        return batch.run(args.tiny, args.label, args.against)
    if args.calls:
        from bench import calls

        return calls.run(args.tiny, args.label, args.profile)
    size = TINY if args.tiny else FULL
    started = time.monotonic()
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    machine = f"{os.cpu_count()} cores, shared; {stamp}"
    res: dict[str, Any] = {
        "mode": "tiny" if args.tiny else "full",
        "started_utc": stamp,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "grpcio": grpc.__version__},
        "size": asdict(size),
    }
    import sqlite3

    res["machine"]["sqlite"] = sqlite3.sqlite_version
    loop = _Loop()
    if args.load:
        return _load_only(res, size, loop, started)
    with _tempdir() as root:
        res["floor"] = floor.bench_floor(root, 50 if args.tiny else 500, size.payload_bytes)
        res["startup"] = bench_startup(size, root)
        ws = root / "ws"
        ws.mkdir()
        echo = EchoServer(root / "echo.sock")
        daemon = Daemon(ws)
        try:
            profile_dir = RESULTS if args.profile else None
            res["throughput"] = bench_throughput(size, daemon, echo, root, loop, profile_dir)
            for kind in ("ours", "ours_stream"):
                prof = res["throughput"].get(f"profile_{kind}")
                if prof:
                    _log(
                        f"profile {kind}: grpc callbacks {prof['grpc_callbacks'] * 100:.0f}% of GIL samples, "
                        f"daemon code {prof['daemon_code'] * 100:.0f}%"
                    )
            res["history"] = bench_history(size, daemon, root, loop)
            res["serial"] = bench_serial(size, daemon, echo)
            res["load"] = bench_load(size, daemon, root, loop)
            res["items"] = items.bench_items(
                daemon.address,
                SQLiteSession,
                root,
                loop.run,
                payload=size.payload_bytes,
                large=size.items_large,
                rounds=size.items_rounds,
                warmup=size.warmup,
            )
            from bench.edits import bench_pop  # imports this module: not at its top

            res["pop"] = bench_pop(size, daemon, root, loop)
        finally:
            daemon.close()
            echo.close()
        db = ws / ".claw" / "sessions.db"
        res["startup"]["filled_db_mib"] = db.stat().st_size / 2**20
        again = Daemon(ws)
        res["startup"]["filled_ready_ms"] = again.ready_s * 1000
        again.close()
        _log(f"startup with a {res['startup']['filled_db_mib']:.0f} MiB database: {again.ready_s * 1000:.0f} ms")
        res["growth"] = growth.run(args.tiny, root)
    loop.close()
    res["elapsed_s"] = time.monotonic() - started
    from bench.edits import pop_rows

    rows = _rows(res, size) + pop_rows(res)
    rows += [Row(**r) for r in floor.floor_rows(res) + growth.growth_rows(res["growth"])]
    res["table"] = [asdict(r) for r in rows]
    _print_table(rows, args.tiny)
    path = results.save(res, args.label)
    plot = RESULTS / f"bench-latency-{res['mode']}.png"
    if _plot(res, plot, machine) and args.update_docs:
        DOCS_PLOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(plot, DOCS_PLOT)
    print(f"results: {path}; plot: {plot if plot.exists() else 'skipped'}; {res['elapsed_s']:.0f} s")
    return 0


__all__ = ["main", "summarize_profile"]
