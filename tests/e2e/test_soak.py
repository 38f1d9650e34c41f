"""Soak: a bounded run at steady load, Loads and Watches mixed in (default ~8 s; CLAW_FULL=1 ~40 s).

Writers append at a steady pace (sessions rotate, so the data grows but no
single session does), a reader Loads recent sessions, and watchers follow
sessions that are being written and must see every acknowledged position
exactly once, in order. Promises checked:

* no errors anywhere (every call succeeds, every watcher is complete);
* the daemon's RSS after warm-up does not grow by more than
  :data:`RSS_GROWTH_BOUND_MIB` (a leak of a few KiB per request would exceed
  it within the run; the SQLite page caches and grpc buffers are filled
  during warm-up);
* p99 latency of Append and Load is printed (and bounded loosely, to catch hangs).

The length is a choice, not a claim: in 40 s at the pace of a CI run (about 370 Appends a second on 2 cores,
some 13,000 after warm-up; half that under a neighbour's load) a leak of 2 to 4 KiB per Append passes the RSS
bound, and the watchers' once-in-order check holds at any length. How fast the daemon is, and its tail
latency over a long run, are the benchmark's to judge (``bench/run``), on an idle machine.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import psutil
import pytest

from claw_sessiond_client import Message, ToolCall
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.daemon import DaemonProcess
from tests.helpers.figures import record
from tests.helpers.tiers import scale

#: Allowed RSS growth of the daemon between the end of warm-up and the end of the run.
RSS_GROWTH_BOUND_MIB = 24
#: A call slower than this is a hang, not load.
P99_BOUND_S = 2.0
WRITERS = 3
WATCHERS = 2


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _watch_works(address: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        call = stub.Watch(pb.WatchRequest(session_id="soak-probe"), timeout=1)
        try:
            for _ in call:
                break
        except grpc.RpcError as exc:
            return exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED  # open and idle: it works
        return True


@pytest.mark.slow
def test_steady_load_with_loads_and_watches(workspace: Path) -> None:
    duration = float(scale(8, 40))
    warmup = min(5.0, duration / 3)
    d = DaemonProcess(workspace).start()
    assert d.proc is not None
    proc = psutil.Process(d.proc.pid)
    stop = threading.Event()
    errors: list[str] = []
    append_s: list[float] = []
    load_s: list[float] = []
    acked_last: dict[str, int] = {}
    lock = threading.Lock()
    watching = _watch_works(d.address)
    watched = [f"soak-watched-{w}" for w in range(WATCHERS)] if watching else []

    def guarded(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except Exception as exc:  # any error fails the soak
                errors.append(f"{fn.__name__}: {exc!r}")
                stop.set()

        return run

    def writer(w: int) -> Callable[[], None]:
        def write() -> None:
            with d.client(retry_window_s=0) as c:
                n = 0
                while not stop.is_set():
                    sid = watched[w % len(watched)] if watched and n % 4 == 0 else f"soak-{w}-{n // 100}"
                    if n % 5 == 0:
                        call = ToolCall(f"call-{w}-{n}", "bash", '{"cmd": "true"}')
                        batch = [Message.user(f"{w}/{n}"), Message.assistant("", [call]), Message.tool(call.id, "ok")]
                    else:
                        batch = [Message.user(f"{w}/{n} " + "x" * (n % 7) * 100)]
                    started = time.perf_counter()
                    r = c.append(sid, batch, request_id=f"soak-{w}-{n}")
                    elapsed = time.perf_counter() - started
                    with lock:
                        append_s.append(elapsed)
                        acked_last[sid] = max(acked_last.get(sid, 0), r.last_position)
                    if n % 10 == 0:
                        c.record_usage(sid, input_tokens=3, output_tokens=1, request_id=f"soak-u-{w}-{n}")
                    n += 1
                    time.sleep(0.004)

        write.__name__ = f"writer{w}"
        return write

    def loader() -> None:
        with d.client(retry_window_s=0) as c:
            n = 0
            while not stop.is_set():
                # Sessions of bounded size only (writers rotate every 100 appends; the watched ones grow
                # all run long, so Loading them would make RSS follow their size, not a leak).
                sid = f"soak-{n % WRITERS}-{n // 30}"
                started = time.perf_counter()
                loaded = c.load(sid, workdir="/tmp")
                with lock:
                    load_s.append(time.perf_counter() - started)
                if loaded.repairs:
                    raise AssertionError(f"{sid}: Load repaired {loaded.repairs} (every call had its result)")
                n += 1
                time.sleep(0.02)

    seen: dict[str, list[int]] = {sid: [] for sid in watched}
    calls: list[grpc.Future] = []
    channels: list[grpc.Channel] = []

    def watcher(sid: str) -> Callable[[], None]:
        def follow() -> None:
            channel = grpc.insecure_channel(d.address)
            channels.append(channel)
            call = pb_grpc.SessionServiceStub(channel).Watch(pb.WatchRequest(session_id=sid))
            calls.append(call)
            try:
                for reply in call:
                    seen[sid].append(reply.position)
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.CANCELLED:
                    raise

        follow.__name__ = f"watcher[{sid}]"
        return follow

    threads = [threading.Thread(target=guarded(watcher(s)), daemon=True) for s in watched]
    threads += [threading.Thread(target=guarded(writer(w)), daemon=True) for w in range(WRITERS)]
    threads.append(threading.Thread(target=guarded(loader), daemon=True))
    rss: list[tuple[float, int]] = []
    started = time.monotonic()
    try:
        for t in threads:
            t.start()
        while time.monotonic() - started < duration and not stop.is_set():
            rss.append((time.monotonic() - started, proc.memory_info().rss))
            time.sleep(0.25)
        stop.set()
        for t in threads[len(watched) :]:
            t.join(30)
        # Watchers must catch up with everything acknowledged, then stop.
        end = time.monotonic() + 15
        while time.monotonic() < end and any((seen[s][-1] if seen[s] else 0) < acked_last.get(s, 0) for s in watched):
            time.sleep(0.05)
        for call in calls:
            call.cancel()
        for t in threads[: len(watched)]:
            t.join(10)
        rss.append((time.monotonic() - started, proc.memory_info().rss))
        with d.client() as c:
            stats = c.stats()
        assert d.terminate() == 0
    finally:
        stop.set()
        for call in calls:
            call.cancel()
        for channel in channels:
            channel.close()
        d.stop()

    assert not errors, f"errors during the soak: {errors[:5]}"
    for sid in watched:
        assert seen[sid] == list(range(1, acked_last.get(sid, 0) + 1)), (
            f"{sid}: watcher saw {len(seen[sid])} events, gaps or duplicates (last acked {acked_last.get(sid)})"
        )
    after_warmup = [r for t, r in rss if t >= warmup]
    base = statistics.median(after_warmup[: max(1, len(after_warmup) // 5)])
    peak = max(after_warmup)
    growth_mib = (peak - base) / 2**20
    p99_append, p99_load = _pct(append_s, 0.99), _pct(load_s, 0.99)
    print(
        f"soak: {duration:.0f}s appends={len(append_s)} loads={len(load_s)} watchers={len(watched)} "
        f"append p50={_pct(append_s, 0.5) * 1000:.1f}ms p99={p99_append * 1000:.1f}ms "
        f"load p99={p99_load * 1000:.1f}ms rss base={base / 2**20:.1f}MiB peak={peak / 2**20:.1f}MiB"
    )
    assert len(append_s) > duration * 10, f"the load was not steady: only {len(append_s)} appends"
    assert stats["write_failures"] == 0
    assert growth_mib <= RSS_GROWTH_BOUND_MIB, f"daemon RSS grew {growth_mib:.1f} MiB after warm-up"
    assert p99_append < P99_BOUND_S and p99_load < P99_BOUND_S, (p99_append, p99_load)
    record(
        "soak",
        seconds=duration,
        appends=len(append_s),
        loads=len(load_s),
        watched_events=sum(len(v) for v in seen.values()),
        errors=len(errors),
        append_p99_ms=round(p99_append * 1000, 1),
        load_p99_ms=round(p99_load * 1000, 1),
        rss_growth_mib=round(growth_mib, 1),
        rss_bound=RSS_GROWTH_BOUND_MIB,
    )
