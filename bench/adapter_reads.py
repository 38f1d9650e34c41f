"""The OpenAI Agents SDK adapter against SQLiteSession, and the floor any reader in another process has.

``python -m bench.adapter_reads [--tiny] [--json PATH]`` starts a daemon in a throwaway workspace
and measures in one run, serially, on sessions of N Responses message items (200-byte texts;
N = 1,000 and 10,000; ``--tiny``: 100 and 1,000), after :data:`WARM_UP` calls of each, in
:data:`ROUNDS` rounds (41; ``--tiny``: 5) that call each reader once, back to back, in an order
turned round every round, with a full garbage collection before each call (not timed):

* ``get_items()`` of the whole history: ``ClawSession`` against ``SQLiteSession`` on a file in
  the same folder (WAL, the SDK's defaults);
* **the floor**: the very bytes of the daemon's reply to the adapter's Load (``items_format``: the
  stored items alone) for that history, captured once and then streamed by a bare ``grpc.aio``
  server in another process over a Unix socket (no storage, no daemon logic: the reply costs
  nothing to make), parsed by the client into ``LoadResponse`` and each item decoded as the
  adapter decodes it (``_openai_items.items_from_bytes``), as any reader in another process must.
  A reader that lives in a second process cannot do less, so a target below this floor is not
  reachable by a daemon;
* **the unary floor** (only where the reply is one chunk, as at 1,000 items): the same bytes as one
  message of a unary call (gRPC sends the message and the status in one batch, and the client
  reads them in one): what a unary-shaped reply would save. A unary call of the streamed ``Load``
  itself is no way there: given a reply of two chunks it waits for its deadline (measured);
* ``add_items`` of one item, ``get_items(limit=10)`` and ``pop_item`` (at both sizes: flat in N; each
  round's pop takes one item off each side, as its add puts one on);
* **a turn**: ``add_items`` of :data:`TURN_ITEMS` items (a user message, a tool call and its
  output), then ``get_items()`` of the whole history, as the SDK's Runner does each turn: a reader
  that only remembered an unchanged history would gain nothing here (the history grows by
  :data:`TURN_ITEMS` items a round on both sides).

Each row gives the wall p50, the client's CPU p50 per call and the daemon's (its process's CPU clock,
every thread: ``bench.procs.cpu_s``), and ours / SQLiteSession as the **median of the rounds'
ratios** (each round's two calls ran back to back, so a burst of load on a shared machine weighs on
both sides of one ratio; a 1.5x line is judged on it), their quartiles, and the ratio of the p50s.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.procs import Daemon, cpu_s

__all__ = ["main", "measure"]

#: The sessions' sizes and the rounds each measure takes (full, tiny).
SIZES = {False: (1_000, 10_000), True: (100, 1_000)}
ROUNDS = {False: 41, True: 5}
#: Calls of each reader before the rounds that count (the connection, the caches, the allocator warmed).
WARM_UP = 3
FORMAT = "openai.responses"
#: Items a turn appends before it reads the whole history (the rows' "a turn").
TURN_ITEMS = 3
METHOD = "/bench.Reply/Stream"
UNARY = "/bench.Reply/Unary"


def _item(seq: int) -> dict[str, Any]:
    from bench.items import item_of

    return item_of(seq, 200)


# ---------------------------------------------------------------- the floor's server (another process)


async def _serve(socket_path: str, chunks_file: str) -> None:
    """Stream the captured reply chunks (length-prefixed in ``chunks_file``) to every caller."""
    import grpc

    data, chunks, at = Path(chunks_file).read_bytes(), [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        chunks.append(data[at + 4 : at + 4 + size])
        at += 4 + size

    async def stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    async def unary(request: bytes, context: Any) -> bytes:
        return b"".join(chunks)  # asked for only when the reply is one chunk

    server = grpc.aio.server()
    handlers = {
        "Stream": grpc.unary_stream_rpc_method_handler(stream),
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Reply", handlers),))
    if server.add_insecure_port(f"unix:{socket_path}") == 0:
        raise SystemExit(f"adapter_reads: cannot bind {socket_path}")
    await server.start()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(None)


# ---------------------------------------------------------------- the measures


async def _timed_rounds(
    fns: dict[str, Callable[[], Awaitable[Any]]], rounds: int, daemon_pid: int | None = None
) -> dict[str, dict[str, Any]]:
    """Each function once per round after :data:`WARM_UP` calls, the order turned round every round (no reader
    always goes first) and a full garbage collection before each call (not timed); per function its wall p50, its
    client CPU p50 and, with ``daemon_pid``, the daemon's CPU p50 per call (ms), and its wall time of every round
    (``walls``: for ratios of the same round)."""
    for _ in range(WARM_UP):
        for fn in fns.values():
            await fn()
    walls: dict[str, list[float]] = {k: [] for k in fns}
    cpus: dict[str, list[float]] = {k: [] for k in fns}
    daemon: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for at in range(rounds):
        for name in names if at % 2 == 0 else names[::-1]:
            gc.collect()  # the last call's garbage is not this one's (10,000 dicts: a pause of tens of ms)
            d0 = cpu_s(daemon_pid) if daemon_pid else 0.0
            c0, t0 = time.process_time(), time.perf_counter()
            await fns[name]()
            walls[name].append((time.perf_counter() - t0) * 1000)
            cpus[name].append((time.process_time() - c0) * 1000)
            daemon[name].append(((cpu_s(daemon_pid) if daemon_pid else 0.0) - d0) * 1000)
    return {
        k: {
            "wall_p50_ms": statistics.median(walls[k]),
            "client_cpu_ms": statistics.median(cpus[k]),
            "daemon_cpu_ms": statistics.median(daemon[k]),
            "walls": walls[k],
        }
        for k in fns
    }


def _row(n: int, what: str, ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """One row: ``ours`` against ``theirs``, the ratio as the median of the rounds' ratios (each round ran both
    back to back, so a burst of load on the shared machine weighs on both sides of one ratio) and of the p50s."""
    per_round = [a / b for a, b in zip(ours.pop("walls"), theirs["walls"], strict=True)]
    return {
        "n": n,
        "what": what,
        "ours": ours,
        "sqlite_session": {k: v for k, v in theirs.items() if k != "walls"},
        "ratio_wall": statistics.median(per_round),
        "ratio_p50": ours["wall_p50_ms"] / theirs["wall_p50_ms"],
        "ratio_rounds_q1_q3": [round(q, 3) for q in statistics.quantiles(per_round, n=4)[::2]],
    }


async def measure(root: Path, sizes: tuple[int, ...], rounds: int, daemon_pid: int) -> list[dict[str, Any]]:
    os.chdir(root)  # the adapter's daemon: this workspace's (main starts it)
    rows: list[dict[str, Any]] = []
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for n in sizes:
            rows += await _one_size(root, n, rounds, procs, daemon_pid)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
            p.wait(30)
    return rows


async def _one_size(
    root: Path, n: int, rounds: int, procs: list[subprocess.Popen[bytes]], daemon_pid: int
) -> list[dict[str, Any]]:
    import grpc
    from agents.memory import SQLiteSession

    from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
    from claw_sessiond_client.contrib._openai_items import items_from_bytes
    from claw_sessiond_client.contrib.openai_agents import ClawSession

    items = [_item(i) for i in range(n)]
    ours = ClawSession(f"bench-{n}")
    for at in range(0, n, 1_000):
        await ours.add_items(items[at : at + 1_000])
    theirs = SQLiteSession(f"bench-{n}", str(root / "sdk.db"))
    await theirs.add_items(items)
    # The floor: the daemon's own reply bytes for this history, served for free by another process.
    request = pb.LoadRequest(session_id=ours.store_id, no_repair=True, items_format=FORMAT)
    chunks = [c.SerializeToString() async for c in ours._client_here()._stub.Load(request)]
    chunks_file = root / f"reply-{n}.bin"
    chunks_file.write_bytes(b"".join(len(c).to_bytes(4, "big") + c for c in chunks))
    sock = root / f"floor-{n}.sock"
    cmd = [sys.executable, "-m", "bench.adapter_reads", "--serve", str(sock), str(chunks_file)]
    procs.append(subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1]))
    for _ in range(300):  # the server's socket, at most 15 s
        if sock.exists():
            break
        await asyncio.sleep(0.05)
    channel = grpc.aio.insecure_channel(f"unix:{sock}")
    read = channel.unary_stream(METHOD, response_deserializer=pb.LoadResponse.FromString)

    async def floor() -> list[Any]:
        found: list[bytes] = []
        async for chunk in read(b""):
            found.extend(chunk.items)
        return items_from_bytes(found)

    one = channel.unary_unary(UNARY, response_deserializer=pb.LoadResponse.FromString)

    async def floor_unary() -> list[Any]:
        return items_from_bytes((await one(b"")).items)

    readers = {"claw": ours.get_items, "sqlite": theirs.get_items, "floor": floor}
    if len(chunks) == 1:  # a unary reply is one message
        readers["floor unary"] = floor_unary
    got = await floor()
    assert got == items == await ours.get_items() == await theirs.get_items(), "the readers disagree"
    assert len(chunks) > 1 or await floor_unary() == items, "the unary floor disagrees"
    whole = await _timed_rounds(readers, rounds, daemon_pid)
    seq = iter(range(10**7, 10**8))
    small = await _timed_rounds(
        {
            "claw limit=10": lambda: ours.get_items(10),
            "sqlite limit=10": lambda: theirs.get_items(10),
            "claw add one": lambda: ours.add_items([_item(next(seq))]),
            "sqlite add one": lambda: theirs.add_items([_item(next(seq))]),
            "claw pop": ours.pop_item,
            "sqlite pop": theirs.pop_item,
        },
        rounds,
        daemon_pid,
    )

    def turn(session: Any) -> Callable[[], Awaitable[Any]]:
        async def one() -> Any:
            await session.add_items([_item(next(seq)) for _ in range(TURN_ITEMS)])
            return await session.get_items()

        return one

    turns = await _timed_rounds({"claw turn": turn(ours), "sqlite turn": turn(theirs)}, rounds, daemon_pid)
    # the same count on both sides (the adds of one item gave each side its own items)
    assert len(await ours.get_items()) == len(await theirs.get_items()), "the turns left different histories"
    await channel.close()
    return [
        _row(n, what, a, b)
        for what, a, b in (
            ("get_items() whole", whole["claw"], whole["sqlite"]),
            ("floor: the reply's bytes, parsed and decoded", whole["floor"], whole["sqlite"]),
            *(
                [("floor, unary: the same bytes as one message", whole["floor unary"], whole["sqlite"])]
                if "floor unary" in whole
                else []
            ),
            ("get_items(limit=10)", small["claw limit=10"], small["sqlite limit=10"]),
            ("add_items of one item", small["claw add one"], small["sqlite add one"]),
            ("pop_item", small["claw pop"], small["sqlite pop"]),
            (f"a turn: add_items of {TURN_ITEMS}, then get_items()", turns["claw turn"], turns["sqlite turn"]),
        )
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.adapter_reads", description=__doc__.split("\n")[0])
    parser.add_argument("--tiny", action="store_true", help="small sizes and 5 rounds: a check that it runs")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument("--serve", nargs=2, metavar=("SOCKET", "CHUNKS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(_serve(*args.serve))
        return 0
    json_path = Path(args.json).resolve() if args.json else None  # the run changes directory (``measure``)
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    with tempfile.TemporaryDirectory(prefix="claw-bench-adapter-") as tmp:
        daemon = Daemon(Path(tmp))
        try:
            rows = asyncio.run(measure(Path(tmp), SIZES[args.tiny], ROUNDS[args.tiny], daemon.pid))
        finally:
            daemon.close()
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}")
    print(
        f"{'N':>6}  {'measure':46}  {'ours p50':>9}  {'client':>7}  {'daemon':>7}  {'SQLiteSession':>13}  {'CPU':>7}  "
        f"{'ratio':>6}  {'q1-q3':>11}  {'of p50s':>7}"
    )
    for r in rows:
        o, s = r["ours"], r["sqlite_session"]
        q1, q3 = r["ratio_rounds_q1_q3"]
        print(
            f"{r['n']:>6}  {r['what']:46}  {o['wall_p50_ms']:7.2f}ms  {o['client_cpu_ms']:5.2f}ms  "
            f"{o['daemon_cpu_ms']:5.2f}ms  {s['wall_p50_ms']:11.2f}ms  {s['client_cpu_ms']:5.2f}ms  "
            f"{r['ratio_wall']:5.2f}x  {q1:4.2f}-{q3:4.2f}x  {r['ratio_p50']:6.2f}x"
        )
    if json_path is not None:
        json_path.write_text(json.dumps({"load_before": load_before, "load_after": load_after, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
