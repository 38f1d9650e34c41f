"""Interference: does one heavy request stall everyone else?

``bench/run --interference`` (``--tiny`` for CI) measures the p99 latency of
ordinary requests -- a 1 KB Append and a Load of a 20-message session, sent
one after the other by one client -- first on a quiet daemon, then while
each of these runs in another process:

* ``list_scans``: abandoned ListSessions scans (a filter that matches
  nothing over many sessions, 20 ms deadline, 8 at a time, again and again);
* ``export``: Export of a large session, read as fast as it comes, in a loop;
* ``watchers``: many Watch streams following the session the probe appends to;
* ``repair``: Load of a session with the largest number of interrupted tool
  calls an append can set up (the daemon's default ``--max-open-tool-calls``,
  10,000; the issue's 200k can no longer be stored). The window opens when
  the background process, started and connected, sends that Load, and lasts
  until it has read the whole reply (plus a little).
* ``metrics_scraper``: another user's scrape loop on ``--metrics``
  (:data:`SCRAPERS` connections, each GET /metrics again as soon as the last
  reply is read). The load average is recorded before and after.

It prints each p99 and its ratio to the quiet p99 (target: at most 3x) and
writes ``bench/results/interference-<mode>.json``. Absolute times on a
shared machine are noise; the ratios, measured in one sitting, much less.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import grpc

from bench.procs import ROOT, Daemon, stop
from bench.stats import median, percentile, ratio
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc

__all__ = ["FULL", "TINY", "Scale", "background", "fill", "listed_session", "main", "measure", "probe"]

RESULTS = ROOT / "bench" / "results"
TARGET_RATIO = 3.0
PROBE_APPEND = "probe-append"
PROBE_LOAD = "probe-load"
SCENARIOS = ("list_scans", "export", "watchers", "repair", "metrics_scraper")
#: ``--max-watchers-per-peer`` of the daemons this measures: the watchers scenario's streams come from one
#: process (one peer), and it measures the cost of many streams, not the share that would refuse them.
WATCHERS_PER_PEER = 4096
#: Scrape loops in the ``metrics_scraper`` scenario (one connection each, one request per connection).
SCRAPERS = 8


@dataclass(frozen=True)
class Scale:
    """How big each heavy request is."""

    sessions: int  # stored sessions the ListSessions scans walk
    export_events: int  # 1 KB events in the exported session
    watchers: int
    repair_calls: int  # interrupted tool calls repaired by one Load
    window_s: float  # probe window per scenario
    scans_in_flight: int = 8


#: The daemon's default ``--max-open-tool-calls`` (``claw_sessiond.config``): the largest
#: repair an append can set up. A literal, so that the bench also drives older daemons.
MAX_OPEN_CALLS = 1_000
TINY = Scale(sessions=3_000, export_events=6_000, watchers=200, repair_calls=MAX_OPEN_CALLS, window_s=0.75)
FULL = Scale(sessions=100_000, export_events=40_000, watchers=2_000, repair_calls=MAX_OPEN_CALLS, window_s=6.0)


def _log(text: str) -> None:
    print(f"[interference {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def _channel(address: str) -> grpc.Channel:
    return grpc.insecure_channel(
        address,
        options=[("grpc.use_local_subchannel_pool", 1), ("grpc.max_receive_message_length", 256 * 1024 * 1024)],
    )


def _append_stream(stub: Any, requests: Iterator[pb.AppendRequest], batch: int = 200) -> int:
    def batches() -> Iterator[pb.AppendStreamRequest]:
        chunk: list[pb.AppendRequest] = []
        for r in requests:
            chunk.append(r)
            if len(chunk) == batch:
                yield pb.AppendStreamRequest(appends=chunk)
                chunk = []
        if chunk:
            yield pb.AppendStreamRequest(appends=chunk)

    done = 0
    for reply in stub.AppendStream(batches(), timeout=600):
        for r in reply.replies:
            if r.HasField("error"):
                raise RuntimeError(f"prefill append failed: {r.error.message}")
            done += 1
    return done


def listed_session(i: int) -> str:
    """The id of the ``i``-th session the ``list_scans`` scenario's scans walk."""
    return f"s-{i:07d}"


def fill(address: str, scale: Scale, repair_sessions: int = 1, parts: tuple[str, ...] = SCENARIOS) -> None:
    """Store the sessions the scenarios in ``parts`` need (through the daemon, with AppendStream)."""
    body = "x" * 1000
    with _channel(address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        user = pb.ROLE_USER
        if "list_scans" in parts:
            _append_stream(
                stub,
                (
                    pb.AppendRequest(session_id=listed_session(i), messages=[pb.Message(role=user, content="hello")])
                    for i in range(scale.sessions)
                ),
                batch=500,
            )
        if "export" in parts:
            # 100 messages an append: the same events as one each (the Export reads events, not appends), a
            # third of the daemon's CPU and wall to store them.
            _append_stream(
                stub,
                (
                    pb.AppendRequest(
                        session_id="big-export",
                        messages=[
                            pb.Message(role=user, content=f"{i}{body}")
                            for i in range(start, min(start + 100, scale.export_events))
                        ],
                    )
                    for start in range(0, scale.export_events, 100)
                ),
                batch=10,
            )
        _append_stream(
            stub,
            (
                pb.AppendRequest(session_id=PROBE_LOAD, messages=[pb.Message(role=user, content=f"{i}{body}")])
                for i in range(20)
            ),
        )
        per_message = 500
        for k in range(repair_sessions if "repair" in parts else 0):
            requests = []
            for m in range(max(1, scale.repair_calls // per_message)):
                calls = [
                    pb.ToolCall(id=f"r{k}-{m}-{j}", name="bash", arguments='{"cmd":"true"}') for j in range(per_message)
                ]
                requests.append(
                    pb.AppendRequest(
                        session_id=f"repair-{k}",
                        messages=[pb.Message(role=pb.ROLE_ASSISTANT, content="calls", tool_calls=calls)],
                    )
                )
            _append_stream(stub, iter(requests), batch=10)


def probe(address: str, workdir: str, until: threading.Event, max_s: float) -> tuple[list[float], list[float]]:
    """Serial Append, Load, Append, ... until ``until`` is set (or ``max_s``); their latencies in seconds."""
    appends: list[float] = []
    loads: list[float] = []
    body = "p" * 1000
    end = time.monotonic() + max_s
    with _channel(address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        while not until.is_set() and time.monotonic() < end:
            t0 = time.perf_counter()
            stub.Append(
                pb.AppendRequest(session_id=PROBE_APPEND, messages=[pb.Message(role=pb.ROLE_USER, content=body)]),
                timeout=120,
            )
            t1 = time.perf_counter()
            chunks = list(stub.Load(pb.LoadRequest(session_id=PROBE_LOAD, workdir=workdir), timeout=120))
            t2 = time.perf_counter()
            if not chunks or not chunks[-1].done:
                raise RuntimeError("probe Load did not finish")
            appends.append(t1 - t0)
            loads.append(t2 - t1)
    return appends, loads


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _timer(event: threading.Event, seconds: float) -> None:
    threading.Timer(seconds, event.set).start()


def _spawn_background(kind: str, address: str, scale: Scale, arg: str = "") -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.interference",
            "--background",
            kind,
            "--address",
            address,
            "--arg",
            arg,
            "--watchers",
            str(scale.watchers),
            "--scans",
            str(scale.scans_in_flight),
        ],
        cwd=str(ROOT),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_ready(proc: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    """Wait until a background process says ``ready`` (its start-up is not part of the window)."""
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        readable, _, _ = select.select([proc.stderr], [], [], 0.2)
        if readable:
            line = proc.stderr.readline()
            if line.strip() == b"ready":
                return
            if not line and proc.poll() is not None:
                break
    raise RuntimeError(f"background process not ready within {timeout_s:g} s (exit code {proc.poll()})")


def _active_watchers(address: str) -> int:
    """The daemon's count of open Watch streams; 0 when a poll fails on a starved machine.

    While hundreds of watchers connect on two busy cores, one poll can end
    CANCELLED or UNAVAILABLE (a connection closed under it); the caller polls
    again until its deadline instead of failing the whole measurement.
    """
    with _channel(address) as channel:
        try:
            reply = pb_grpc.SessionServiceStub(channel).GetStats(pb.GetStatsRequest(), timeout=30)
        except grpc.RpcError as exc:
            if exc.code() in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE):
                return 0
            raise
        return int(reply.active_watchers)


def measure(
    address: str, workdir: str, scale: Scale, scenario: str, repair_index: int = 0, metrics: str = ""
) -> dict[str, Any]:
    """Run one scenario (or ``quiet``) and the probe beside it; p99s in milliseconds.

    ``metrics`` is the daemon's ``--metrics`` address (the ``metrics_scraper`` scenario).
    """
    until = threading.Event()
    load_before = os.getloadavg()[0]
    proc: subprocess.Popen[bytes] | None = None
    try:
        if scenario == "watchers":
            proc = _spawn_background("watchers", address, scale)
            deadline = time.monotonic() + 60
            while _active_watchers(address) < scale.watchers and time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise RuntimeError(f"watchers exited: {proc.stderr.read().decode() if proc.stderr else ''}")
                time.sleep(0.2)
        elif scenario in ("list_scans", "export"):
            proc = _spawn_background(scenario, address, scale)
            time.sleep(0.5)  # let it get going
        elif scenario == "metrics_scraper":
            proc = _spawn_background(scenario, address, scale, metrics)
            time.sleep(0.5)
        elif scenario == "repair":
            proc = _spawn_background("repair", address, scale, f"repair-{repair_index}")
            # Python's start-up (importing grpc) is not the heavy request: the window
            # opens when the process, connected and ready, is told to send its Load.
            _wait_ready(proc)
            assert proc.stdin is not None
            proc.stdin.write(b"go\n")
            proc.stdin.flush()

            def watch_exit() -> None:
                assert proc is not None
                try:
                    proc.wait(600)
                finally:
                    time.sleep(0.3)
                    until.set()

            threading.Thread(target=watch_exit, daemon=True).start()
        if scenario != "repair":
            _timer(until, scale.window_s)
        started = time.monotonic()
        appends, loads = probe(address, workdir, until, max_s=600)
        window = time.monotonic() - started
    finally:
        if proc is not None:
            stop(proc)
            if scenario == "repair" and proc.returncode not in (0, None):
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"repair Load failed ({proc.returncode}): {err[-2000:]}")
            for pipe in (proc.stdin, proc.stderr):
                if pipe:
                    pipe.close()
    return {
        "scenario": scenario,
        "window_s": window,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg()[0],
        "appends": len(appends),
        "loads": len(loads),
        "append_p50_ms": median(appends) * 1000,
        "append_p99_ms": percentile(appends, 99) * 1000,
        "append_max_ms": max(appends, default=float("nan")) * 1000,
        "load_p50_ms": median(loads) * 1000,
        "load_p99_ms": percentile(loads, 99) * 1000,
        "load_max_ms": max(loads, default=float("nan")) * 1000,
    }


# ---------------------------------------------------------------- the background processes


def background(kind: str, address: str, arg: str, watchers: int, scans: int) -> int:
    """Run one heavy load until SIGTERM (``repair``: one Load, then exit)."""
    if kind == "repair":
        with _channel(address) as channel:
            stub = pb_grpc.SessionServiceStub(channel)
            grpc.channel_ready_future(channel).result(timeout=30)
            print("ready", file=sys.stderr, flush=True)
            sys.stdin.readline()
            chunks = list(stub.Load(pb.LoadRequest(session_id=arg, workdir="/bench"), timeout=600))
            repaired = len(chunks[0].repairs) if chunks else 0
            print(f"repaired {repaired}", file=sys.stderr)
        return 0
    if kind == "export":
        with _channel(address) as channel:
            stub = pb_grpc.SessionServiceStub(channel)
            while True:
                for _line in stub.Export(pb.ExportRequest(session_id="big-export"), timeout=600):
                    pass
    if kind == "list_scans":
        with _channel(address) as channel:
            stub = pb_grpc.SessionServiceStub(channel)
            while True:
                futures = [
                    stub.ListSessions.future(
                        pb.ListSessionsRequest(id_contains="zz-no-match", limit=10000), timeout=0.02
                    )
                    for _ in range(scans)
                ]
                for f in futures:
                    with contextlib.suppress(grpc.RpcError):
                        f.result()
    if kind == "watchers":
        return asyncio.run(_watchers(address, watchers))
    if kind == "metrics_scraper":
        threads = [threading.Thread(target=_scrape_loop, args=(arg,), daemon=True) for _ in range(SCRAPERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return 0
    raise SystemExit(f"unknown background {kind}")


def _scrape_loop(address: str) -> None:
    """GET /metrics again and again on fresh connections, until the process is stopped."""
    host, _, port = address.rpartition(":")
    request = f"GET /metrics HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=30) as conn:
                conn.sendall(request)
                while conn.recv(1 << 16):
                    pass
        except OSError:
            time.sleep(0.01)  # a refused or reset connection (the daemon's connection cap): try again


async def _watchers(address: str, n: int) -> int:
    # Spread over several connections; a watch the daemon ends (keepalive on a
    # starved machine) is opened again after the last position it received.
    channels = [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(8)]
    try:
        stub = pb_grpc.SessionServiceStub(channels[0])
        start = 0
        async for chunk in stub.Load(pb.LoadRequest(session_id=PROBE_APPEND, workdir="/bench"), timeout=30):
            if chunk.HasField("session"):
                start = chunk.session.last_position

        async def follow(channel: grpc.aio.Channel) -> None:
            after = start
            for _attempt in range(1000):
                try:
                    watch = pb_grpc.SessionServiceStub(channel).Watch(
                        pb.WatchRequest(session_id=PROBE_APPEND, after_position=after)
                    )
                    async for event in watch:
                        after = event.position
                except grpc.RpcError:
                    await asyncio.sleep(0.1)

        await asyncio.gather(*(follow(channels[i % len(channels)]) for i in range(n)))
    finally:
        for channel in channels:
            await channel.close()
    return 0


# ---------------------------------------------------------------- the section


def run(tiny: bool, only: tuple[str, ...] = SCENARIOS, window_s: float = 0.0) -> dict[str, Any]:
    """Start a daemon, fill it, measure quiet and each scenario; return the figures."""
    scale = TINY if tiny else FULL
    if window_s:
        scale = replace(scale, window_s=window_s)
    res: dict[str, Any] = {"mode": "tiny" if tiny else "full", "scale": asdict(scale), "rows": []}
    with tempfile.TemporaryDirectory(prefix="claw-interference-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        metrics = f"127.0.0.1:{_free_port()}"
        # The watchers scenario opens its streams from one process: beyond --max-watchers-per-peer's default.
        daemon = Daemon(ws, "--metrics", metrics, "--max-watchers-per-peer", str(WATCHERS_PER_PEER))
        try:
            _log(f"filling: {scale.sessions} sessions, {scale.export_events} export events, {scale.repair_calls} calls")
            started = time.monotonic()
            fill(daemon.address, scale, parts=only)
            _log(f"filled in {time.monotonic() - started:.1f} s")
            quiet = measure(daemon.address, str(ws), scale, "quiet")
            res["rows"].append(quiet)
            for scenario in only:
                row = measure(daemon.address, str(ws), scale, scenario, metrics=metrics)
                row["append_ratio"] = ratio(row["append_p99_ms"], quiet["append_p99_ms"])
                row["load_ratio"] = ratio(row["load_p99_ms"], quiet["load_p99_ms"])
                res["rows"].append(row)
                _log(
                    f"{scenario}: append p99 {row['append_p99_ms']:.1f} ms ({row['append_ratio']:.1f}x), "
                    f"load p99 {row['load_p99_ms']:.1f} ms ({row['load_ratio']:.1f}x)"
                )
        finally:
            daemon.close()
    return res


def print_table(res: dict[str, Any]) -> None:
    """The figures as a table (ratios against the quiet p99; target at most 3x)."""
    print(f"\ninterference ({res['mode']}): p99 of ordinary requests, quiet and under one heavy request")
    print(f"{'scenario':<15} {'n':>6} {'append p99':>11} {'ratio':>6} {'load p99':>10} {'ratio':>6} {'max':>9}")
    for row in res["rows"]:
        ar = row.get("append_ratio")
        lr = row.get("load_ratio")
        print(
            f"{row['scenario']:<15} {row['appends']:>6} {row['append_p99_ms']:>9.1f}ms "
            f"{'' if ar is None else f'{ar:.1f}x':>6} {row['load_p99_ms']:>8.1f}ms "
            f"{'' if lr is None else f'{lr:.1f}x':>6} {max(row['append_max_ms'], row['load_max_ms']):>7.0f}ms "
            f"load avg {row['loadavg_before']:.2f} -> {row['loadavg_after']:.2f}"
        )
    worst = max((max(r["append_ratio"], r["load_ratio"]) for r in res["rows"][1:]), default=float("nan"))
    if res["mode"] == "tiny":  # windows of seconds on a shared machine: the figures show the bench runs, not its ratios
        print(f"worst ratio {worst:.1f}x (--tiny: sizes too small to mean anything; the target is not judged)")
    else:
        verdict = "met" if worst <= TARGET_RATIO else "NOT met"
        print(f"worst ratio {worst:.1f}x (target <= {TARGET_RATIO:g}x: {verdict})")


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.interference`` (also ``bench/run --interference``)."""
    parser = argparse.ArgumentParser(prog="bench/run --interference", description=__doc__)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--interference", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--background", default="", help=argparse.SUPPRESS)
    parser.add_argument("--address", default="", help=argparse.SUPPRESS)
    parser.add_argument("--arg", default="", help=argparse.SUPPRESS)
    parser.add_argument("--watchers", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--scans", type=int, default=8, help=argparse.SUPPRESS)
    parser.add_argument("--label", default="", help="a name for this run in the results file (e.g. 'before')")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios to run")
    parser.add_argument("--window-s", type=float, default=0.0, help="probe window per scenario (default by size)")
    args = parser.parse_args(argv)
    if args.background:
        return background(args.background, args.address, args.arg, args.watchers, args.scans)
    res = run(args.tiny, tuple(x for x in args.only.split(",") if x), args.window_s)
    res["label"] = args.label
    res["daemon_source"] = str(Path(__import__("claw_sessiond").__file__).parent)
    print_table(res)
    RESULTS.mkdir(parents=True, exist_ok=True)
    suffix = f"-{args.label}" if args.label else ""
    out = RESULTS / f"interference-{res['mode']}{suffix}.json"
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
