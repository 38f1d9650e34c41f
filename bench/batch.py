"""``bench/run --batch``: one unary Append of 1,000 messages, on SQLite and on PostgreSQL.

What a framework's bulk write costs (the OpenAI Agents SDK's ``add_items`` of a long history,
LangChain's ``add_messages``, an import through Append): one ``Append`` RPC carrying 1,000
entries, sent by the sync client with ``stream_appends=False``, each into a new session. Two
kinds of entry: ``user`` (``Message.user`` of ``--payload`` bytes of text) and ``items`` (the same
text as Responses message items through the OpenAI adapter's ``entries_for_items``, stored
verbatim with their format). Measured per Append: the daemon's CPU (user + system of every
thread, from the process's CPU clock, ``bench.procs.cpu_s``: nanoseconds, so a single Append is resolved) and
the wall time seen by the client. Medians of ``rounds`` Appends; every daemon takes its turn in
each round, so the machine's load falls on all alike. CPU is the figure to compare on a shared
machine: wall time grows with the load average, CPU barely does.

``--against <checkout>`` adds the daemon of another checkout (a folder holding its ``daemon/``
and ``clients/python/``, run from that source with this environment's interpreter), on SQLite
and, if that checkout has the backend, on the same PostgreSQL server: the before/after of a
change in one sitting, with the ratio of ours against it in the table.

A throwaway PostgreSQL server is started from the distribution's package
(``tests/helpers/postgres.py``); without one, the PostgreSQL rows are skipped and say so.
"""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from bench import results
from bench.procs import ROOT, BenchError, Daemon, cpu_s
from bench.stats import median, ratio

__all__ = ["KINDS", "batch_entries", "run"]

#: Appends per daemon and kind (each of 1,000 entries), payload bytes per entry.
FULL = {"rounds": 12, "entries": 1000, "payload": 100}
TINY = {"rounds": 2, "entries": 1000, "payload": 100}
KINDS = ("user", "items")


def _log(text: str) -> None:
    print(f"[bench-batch {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def batch_entries(kind: str, tag: str, size: dict[str, int]) -> list[Any]:
    """``size["entries"]`` entries of ``kind`` (``user`` or ``items``), texts of ``size["payload"]`` bytes."""
    from claw_sessiond_client import Message

    texts = [f"{tag}-{i} ".ljust(size["payload"], "x") for i in range(size["entries"])]
    if kind == "user":
        return [Message.user(t) for t in texts]
    from claw_sessiond_client.contrib._openai_items import entries_for_items

    return entries_for_items([{"role": "user", "content": t} for t in texts])


@contextmanager
def _postgres() -> Iterator[Any]:
    """A throwaway server, or None when this machine has none (the PostgreSQL rows are then skipped)."""
    sys.path.insert(0, str(ROOT))
    from tests.helpers.postgres import find_bin_dir, throwaway_postgres

    bin_dir = find_bin_dir()
    if bin_dir is None:
        _log("no PostgreSQL server binaries: the PostgreSQL rows are skipped")
        yield None
        return
    with throwaway_postgres(bin_dir) as server:
        yield server


def _daemons(stack: ExitStack, root: Path, server: Any, against: Path | None) -> dict[str, Any]:
    """``"<backend> ours"`` and ``"<backend> against"`` -> daemon, on SQLite and on PostgreSQL (own databases)."""
    setups: list[tuple[str, list[str], list[str]]] = [("sqlite", [], [])]
    if server is not None:
        ours = ["--database", server.create_database("bench_batch")]
        theirs = ["--database", server.create_database("bench_batch_against")] if against else []
        setups.append(("postgres", ours, theirs))
    out: dict[str, Any] = {}
    for backend, ours_extra, their_extra in setups:
        ws = root / f"ours-{backend}"
        ws.mkdir()
        daemon = Daemon(ws, *ours_extra)
        stack.callback(daemon.close)
        out[f"{backend} ours"] = daemon
        if against is None:
            continue
        ws = root / f"against-{backend}"
        ws.mkdir()
        try:
            other = Daemon(ws, *their_extra, checkout=against)
        except BenchError as exc:  # an older checkout without this backend
            _log(f"--against on {backend}: {exc}; skipped")
            continue
        stack.callback(other.close)
        out[f"{backend} against"] = other
    return out


def run(tiny: bool, label: str = "", against: str = "") -> int:
    """Measure, print the rows, write ``bench/results/<time>-batch-<mode>[-<label>].json``."""
    from claw_sessiond_client import SessionClient

    size = TINY if tiny else FULL
    other = Path(against).resolve() if against else None
    if other is not None and not (other / "daemon" / "claw_sessiond").is_dir():
        raise BenchError(f"--against {against}: no daemon/claw_sessiond in that folder")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    res: dict[str, Any] = {
        "mode": f"batch-{'tiny' if tiny else 'full'}",
        "started_utc": stamp,
        "machine": results.machine(),
        "size": size,
        "against": str(other or ""),
        "loadavg_before": Path("/proc/loadavg").read_text().split()[:3],
    }
    started = time.monotonic()
    samples: dict[str, dict[str, dict[str, list[float]]]] = {}
    with tempfile.TemporaryDirectory(prefix="claw-bench-batch-") as tmp, _postgres() as server, ExitStack() as stack:
        daemons = _daemons(stack, Path(tmp), server, other)
        clients = {}
        for name, d in daemons.items():
            clients[name] = SessionClient(address=d.address, autostart=False, timeout_s=300, stream_appends=False)
            stack.callback(clients[name].close)
            samples[name] = {k: {"cpu_ms": [], "wall_ms": []} for k in KINDS}
        for client in clients.values():  # warm-up: imports, statement caches, the first session row
            for kind in KINDS:
                client.append(f"warm-{kind}", batch_entries(kind, "warm", size))
        for r in range(size["rounds"]):
            for kind in KINDS:
                for name, client in clients.items():
                    entries = batch_entries(kind, f"r{r}", size)
                    pid = daemons[name].pid
                    c0, w0 = cpu_s(pid), time.perf_counter()
                    client.append(f"{kind}-{r}", entries)
                    wall, used = time.perf_counter() - w0, cpu_s(pid) - c0
                    samples[name][kind]["cpu_ms"].append(used * 1000)
                    samples[name][kind]["wall_ms"].append(wall * 1000)
            _log(f"round {r + 1}/{size['rounds']} done")
    res["samples"] = samples
    res["loadavg_after"] = Path("/proc/loadavg").read_text().split()[:3]
    res["rows"] = _rows(samples)
    res["elapsed_s"] = time.monotonic() - started
    _print(res, tiny)
    path = results.save(res, label)
    print(f"results: {path}; {res['elapsed_s']:.0f} s")
    return 0


def _rows(samples: dict[str, dict[str, dict[str, list[float]]]]) -> list[dict[str, Any]]:
    rows = []
    for name, kinds in samples.items():
        backend, who = name.split(" ")
        for kind, xs in kinds.items():
            row: dict[str, Any] = {
                "backend": backend,
                "daemon": who,
                "kind": kind,
                "cpu_ms_p50": median(xs["cpu_ms"]),
                "wall_ms_p50": median(xs["wall_ms"]),
            }
            base = samples.get(f"{backend} against", {}).get(kind)
            if who == "ours" and base:
                row["cpu_vs_against"] = ratio(row["cpu_ms_p50"], median(base["cpu_ms"]))
                row["wall_vs_against"] = ratio(row["wall_ms_p50"], median(base["wall_ms"]))
            rows.append(row)
    return rows


def _print(res: dict[str, Any], tiny: bool) -> None:
    entries = res["size"]["entries"]
    print(f"\nOne unary Append of {entries:,} entries (medians of {res['size']['rounds']}; judges nothing)")
    if tiny:
        print("  (tiny run: too few rounds to judge)")
    print(f"  load average before {' '.join(res['loadavg_before'])}, after {' '.join(res['loadavg_after'])}")
    print(f"  {'backend':9s} {'daemon':8s} {'kind':6s} {'CPU ms':>8s} {'wall ms':>8s} {'CPU vs against':>15s}")
    for row in res["rows"]:
        vs = f"{row['cpu_vs_against']:.2f}x" if "cpu_vs_against" in row else ""
        print(
            f"  {row['backend']:9s} {row['daemon']:8s} {row['kind']:6s} {row['cpu_ms_p50']:8.1f} "
            f"{row['wall_ms_p50']:8.1f} {vs:>15s}"
        )
