"""Watch keeps up: one busy session followed live, and a long history caught up (``bench/run --watch``).

On a daemon with its default flags (the fan-out budget at 500 messages a
second), so what is measured is what a user gets:

* **follow at full rate**: 8 writer processes append to one session as fast
  as they can (4 messages an Append) while 1, then 100 watchers follow it;
  the row gives the writers' rate, each watcher's rate (its events over the
  time from the first Append to its last delivery) and how long after the
  last Append's reply the last watcher had the last event. With the
  client's watch (events in batches), and for comparison one watcher that
  takes one event per message (clients from before batches), in the same
  sitting (100 such watchers would take 100 x events / 500 s: the budget).
* **catch-up**: a Watch from position 0 of a 10,000-entry session until it
  has the last entry, against a Load of the same session (median of 3 each),
  and once unbatched.

The machine's load average is recorded before and after: the figures mean
little on a busy machine (docs/benchmarks.md says how they were taken).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

import grpc

from bench import results
from bench.procs import BenchError, Daemon, stop

__all__ = ["run"]

WRITER = r"""
import sys, time
from claw_sessiond_client import Message, SessionClient
address, session, name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
body = "x" * 120
with SessionClient(address=address, autostart=False, timeout_s=60) as client:
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(n):
        client.append(session, [Message.user(f"{name}:{i}:{k} {body}") for k in range(4)])
    print(time.time(), flush=True)
"""
WRITERS = 8


def _log(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def _watchers(address: str, sid: str, count: int, after: int, until: int, batch: bool) -> subprocess.Popen[str]:
    spec = {
        "address": address,
        "session_id": sid,
        "streams": count,
        "after": after,
        "until": until,
        "timeout_s": 300,
        "batch": batch,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.watchers", json.dumps(spec)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        stop(proc, 5)
        raise BenchError("the watcher process did not start")
    return proc


def _follow(daemon: Daemon, sid: str, watchers: int, appends: int, batch: bool) -> dict[str, Any]:
    """8 writers at full speed on ``sid`` while ``watchers`` follow it from its current end."""
    from claw_sessiond_client import SessionClient

    with SessionClient(address=daemon.address, autostart=False, timeout_s=60) as client:
        rows = [s for s in client.list_sessions(sid) if s.id == sid]
        position = rows[0].last_position if rows else 0
        events = WRITERS * appends * 4
        procs: list[Any] = []
        watch = _watchers(daemon.address, sid, watchers, position, position + events, batch)
        try:
            deadline = time.monotonic() + 60
            while client.stats()["active_watchers"] < watchers:
                if time.monotonic() > deadline:
                    raise BenchError(f"only {client.stats()['active_watchers']} of {watchers} watchers open")
                time.sleep(0.05)
            for w in range(WRITERS):
                p = subprocess.Popen(
                    [sys.executable, "-c", WRITER, daemon.address, sid, f"w{w}", str(appends)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                procs.append(p)
                assert p.stdout is not None and p.stdout.readline().strip() == "ready"
            began = time.time()
            for p in procs:
                assert p.stdin is not None
                p.stdin.write("go\n")
                p.stdin.flush()
            ends = []
            for p in procs:
                assert p.stdout is not None
                ends.append(float(p.stdout.readline() or "nan"))
                if p.wait(300) != 0:
                    raise BenchError("a writer failed")
            written = max(ends)  # the last Append's reply
            assert watch.stdout is not None
            line = watch.stdout.readline()
            watch.wait(30)
            out = json.loads(line) if line else {"finished": 0, "errors": 1, "error_samples": ["no output"]}
        finally:
            for p in procs:
                stop(p, 5)
            stop(watch, 5)
    if out["finished"] != watchers or out["errors"]:
        raise BenchError(f"{out['finished']} of {watchers} watchers got every event: {out.get('error_samples')}")
    last = out["last_at"]
    row = {
        "watchers": watchers,
        "batch": batch,
        "events": events,
        "write_events_per_s": events / (written - began),
        "watch_events_per_s": events / (last - began),
        "drain_s": max(0.0, last - written),
    }
    _log(
        f"follow {watchers:>3} watcher(s), {'batched' if batch else 'one event a message'}: writers "
        f"{row['write_events_per_s']:,.0f} events/s, each watcher {row['watch_events_per_s']:,.0f} events/s, "
        f"last one {row['drain_s']:.2f} s after the last Append"
    )
    return row


def _catch_up(daemon: Daemon, sid: str, entries: int, rounds: int) -> dict[str, Any]:
    from claw_sessiond_client import Message, SessionClient
    from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
    from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc

    body = "y" * 120
    with SessionClient(address=daemon.address, autostart=False, timeout_s=60) as client:
        for i in range(0, entries, 1000):
            client.append(sid, [Message.user(f"{i + j} {body}") for j in range(min(1000, entries - i))])
        loads, watches = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            n = len(client.load(sid, "/tmp").messages)
            loads.append(time.perf_counter() - t0)
            if n != entries:
                raise BenchError(f"Load returned {n} of {entries}")
            t0 = time.perf_counter()
            stream = client.watch(sid)
            for event in stream:
                if event.position >= entries:
                    break
            stream.close()
            watches.append(time.perf_counter() - t0)
        channel = grpc.insecure_channel(daemon.address)
        t0 = time.perf_counter()
        call = pb_grpc.SessionServiceStub(channel).Watch(pb.WatchRequest(session_id=sid))
        for reply in call:
            if reply.position >= entries:
                break
        call.cancel()
        unbatched = time.perf_counter() - t0
        channel.close()
    row = {"entries": entries, "load_s": median(loads), "watch_s": median(watches), "unbatched_watch_s": unbatched}
    _log(
        f"catch-up of {entries:,} entries: Watch {row['watch_s']:.2f} s (one event a message: {unbatched:.2f} s), "
        f"Load {row['load_s']:.2f} s"
    )
    return row


def run(tiny: bool, label: str) -> int:
    """``bench/run --watch``: print the rows and save the JSON (``results-…-watch``)."""
    appends = 50 if tiny else 500
    entries = 1_000 if tiny else 10_000
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    res: dict[str, Any] = {
        "mode": "watch-tiny" if tiny else "watch",
        "started_utc": stamp,
        "machine": results.machine(),
        "loadavg_before": os.getloadavg(),
    }
    with tempfile.TemporaryDirectory(prefix="claw-bench-watch-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        daemon = Daemon(ws)
        try:
            runs = ((True, 1), (True, 100), (False, 1))
            res["follow"] = [_follow(daemon, f"busy-{w}-{batch}", w, appends, batch) for batch, w in runs]
            res["catch_up"] = _catch_up(daemon, "history", entries, 3)
        finally:
            daemon.close()
    res["loadavg_after"] = os.getloadavg()
    path = results.save(res, label)
    before = ", ".join(f"{x:.2f}" for x in res["loadavg_before"])
    after = ", ".join(f"{x:.2f}" for x in res["loadavg_after"])
    print(f"load average before {before}; after {after}")
    print("| Watch | events/s a watcher | writers' events/s | last watcher after the last Append |")
    print("|---|---|---|---|")
    for row in res["follow"]:
        how = "batched" if row["batch"] else "one event a message"
        print(
            f"| {row['watchers']} watcher(s), {how} | {row['watch_events_per_s']:,.0f} | "
            f"{row['write_events_per_s']:,.0f} | {row['drain_s']:.2f} s |"
        )
    c = res["catch_up"]
    print(
        f"| catch-up of {c['entries']:,} entries | Watch {c['watch_s']:.2f} s | Load {c['load_s']:.2f} s | "
        f"one event a message {c['unbatched_watch_s']:.2f} s |"
    )
    print(f"results: {path}")
    return 0
