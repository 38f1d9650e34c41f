"""The LangGraph checkpointer against LangGraph's own SqliteSaver: put, get_tuple, list.

``python -m bench.langgraph [--tiny] [--json PATH]`` starts a daemon in a throwaway workspace and
measures, in one run, serially, alternating the two savers round by round (medians of the
rounds), on threads of N checkpoints each (N = 100 and 1,000; ``--tiny``: 20 and 100):

* ``put``: one more checkpoint (a 1 KB channel value) on the thread's newest;
* ``get_tuple latest`` and ``get_tuple by id`` (the thread's oldest checkpoint);
* ``list limit=10`` (the newest ten) and ``list before limit=10`` (ten before the middle one).

``ClawCheckpointSaver`` talks to the daemon over its Unix socket, every put durable before the
reply; ``SqliteSaver`` opens a file in the same folder (WAL, LangGraph's defaults). The table's
last column is ours / SqliteSaver (lower is better). A point read's cost should not grow with N:
compare a row at the two sizes.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.procs import Daemon

__all__ = ["main", "measure"]

#: The sizes of the threads, and how many rounds each measure takes (full, tiny).
SIZES = {False: (100, 1_000), True: (20, 100)}
ROUNDS = {False: 30, True: 5}


def _checkpoint(seq: int) -> Any:
    from langgraph.checkpoint.base import empty_checkpoint

    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": f"m{seq:08d}" + "x" * 1015}
    cp["channel_versions"] = {"messages": seq + 1}
    return cp


def _config(thread: str, checkpoint_id: str | None = None) -> Any:
    configurable = {"thread_id": thread, "checkpoint_ns": ""}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def _fill(saver: Any, thread: str, n: int) -> list[str]:
    """A thread of ``n`` checkpoints, each the child of the one before; their ids, oldest first."""
    ids: list[str] = []
    for seq in range(n):
        cp = _checkpoint(seq)
        saver.put(_config(thread, ids[-1] if ids else None), cp, {"source": "loop", "step": seq}, {"messages": seq + 1})
        ids.append(cp["id"])
    return ids


def _ms(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000.0


def measure(savers: dict[str, Any], sizes: tuple[int, ...], rounds: int) -> dict[str, dict[str, dict[str, float]]]:
    """p50 (ms) of each operation, by size, by saver."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for n in sizes:
        threads = {name: f"bench-{n}-{name}" for name in savers}
        ids = {name: _fill(saver, threads[name], n) for name, saver in savers.items()}
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in savers}
        for r in range(rounds):
            for name, saver in savers.items():
                thread, chain = threads[name], ids[name]
                ops: dict[str, Callable[[], Any]] = {
                    "get_tuple latest": lambda s=saver, t=thread: s.get_tuple(_config(t)),
                    "get_tuple by id": lambda s=saver, t=thread, c=chain: s.get_tuple(_config(t, c[0])),
                    "list limit=10": lambda s=saver, t=thread: list(s.list(_config(t), limit=10)),
                    "list before limit=10": lambda s=saver, t=thread, c=chain: list(
                        s.list(_config(t), before=_config(t, c[len(c) // 2]), limit=10)
                    ),
                }
                for op, fn in ops.items():
                    samples[name].setdefault(op, []).append(_ms(fn))
                cp = _checkpoint(n + r)
                parent = chain[-1]
                samples[name].setdefault("put", []).append(
                    _ms(
                        lambda s=saver, t=thread, p=parent, c=cp, q=n + r: s.put(
                            _config(t, p), c, {"step": q}, {"messages": q + 1}
                        )
                    )
                )
                chain.append(cp["id"])
        out[str(n)] = {
            op: {name: statistics.median(samples[name][op]) for name in savers} for op in samples[next(iter(savers))]
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.langgraph", description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="small threads, few rounds (a check that it runs)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    from langgraph.checkpoint.sqlite import SqliteSaver

    from claw_sessiond_client.contrib.langgraph import ClawCheckpointSaver

    with tempfile.TemporaryDirectory(prefix="bench-langgraph-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        daemon = Daemon(ws)
        address = daemon.address
        conn = sqlite3.connect(Path(tmp) / "langgraph.db", check_same_thread=False)
        try:
            with ClawCheckpointSaver(address=address, autostart=False) as ours:
                theirs = SqliteSaver(conn)
                theirs.setup()
                figures = measure({"claw": ours, "sqlite": theirs}, SIZES[args.tiny], ROUNDS[args.tiny])
        finally:
            conn.close()
            daemon.close()
    print(f"{'operation':<22} {'checkpoints':>11} {'claw p50':>10} {'SqliteSaver':>12} {'ratio':>7}")
    for n, ops in figures.items():
        for op, by in ops.items():
            print(f"{op:<22} {n:>11} {by['claw']:>8.2f}ms {by['sqlite']:>10.2f}ms {by['claw'] / by['sqlite']:>6.1f}x")
    if args.json:
        args.json.write_text(json.dumps({"tiny": args.tiny, "p50_ms": figures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
