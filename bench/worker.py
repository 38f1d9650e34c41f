"""One load-generating client process (started by ``bench.main``; not run by hand).

Protocol on stdin/stdout, so that every worker starts measuring at the same
moment: the worker connects, warms up, prints ``ready``; reads one line with
the wall-clock start time; keeps ``inflight`` operations going until
``start + duration_s``; prints one JSON line with its figures. Only
operations that complete inside the window count for throughput and latency;
every acknowledged operation (warm-up included) is reported, so the caller
can count lost and duplicated writes afterwards.

Usage: ``python -m bench.worker '<json spec>'`` with keys ``kind`` (echo;
ours: unary Append; ours_append: the default ``append()``; ours_stream; ours_sync and
ours_sync_unary: the sync ``SessionClient.append()``, default and unary, one at a time; sqlite),
``target`` (socket path or database file), ``session_id``, ``index``, ``inflight``,
``duration_s``, ``payload_bytes``, ``warmup``.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

Op = Callable[[int], Awaitable[None]]


def content(index: int, seq: int, size: int) -> str:
    """A message body of ``size`` bytes that names its writer and sequence number."""
    tag = f"w{index}-{seq} "
    return tag + "x" * max(0, size - len(tag))


def tag_of(text: str) -> str:
    """The ``w<index>-<seq>`` tag at the start of a body written by :func:`content`."""
    return text.split(" ", 1)[0]


async def _make_op(spec: dict[str, Any]) -> tuple[Op, Callable[[], Awaitable[None]]]:
    kind = spec["kind"]
    index = int(spec["index"])
    size = int(spec["payload_bytes"])
    if kind == "echo":
        import grpc

        from bench.echo_server import METHOD

        channel = grpc.aio.insecure_channel(f"unix:{spec['target']}")
        echo = channel.unary_unary(METHOD)
        payload = b"x" * size

        async def op_echo(seq: int) -> None:
            await echo(payload, timeout=30)

        return op_echo, lambda: channel.close(None)
    if kind == "echo_stream":
        import grpc

        from bench.echo_server import STREAM_METHOD

        channel = grpc.aio.insecure_channel(f"unix:{spec['target']}")
        stream = channel.stream_stream(STREAM_METHOD)()
        payload = b"x" * size
        waiting: collections.deque[asyncio.Future[bytes]] = collections.deque()
        lock = asyncio.Lock()

        async def read_replies() -> None:
            async for reply in stream:
                waiting.popleft().set_result(reply)

        reader = asyncio.ensure_future(read_replies())

        async def op_echo_stream(seq: int) -> None:
            fut: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
            async with lock:  # one write at a time, replies in write order
                waiting.append(fut)
                await stream.write(payload)
            await fut

        async def close_stream() -> None:
            await stream.done_writing()
            await reader
            await channel.close(None)

        return op_echo_stream, close_stream
    if kind in ("ours", "ours_append"):
        from claw_sessiond_client import AsyncSessionClient, Message

        # "ours": one unary Append call each; "ours_append": the client's default append() (one long-lived stream).
        client = AsyncSessionClient(
            address=f"unix:{spec['target']}", autostart=False, stream_appends=kind == "ours_append"
        )
        sid = spec["session_id"]

        async def op_ours(seq: int) -> None:
            await client.append(sid, Message.user(content(index, seq, size)))

        return op_ours, client.close
    if kind in ("ours_sync", "ours_sync_unary"):
        from claw_sessiond_client import Message, SessionClient

        sync_client = SessionClient(
            address=f"unix:{spec['target']}", autostart=False, stream_appends=kind == "ours_sync"
        )
        sync_sid = spec["session_id"]

        async def op_sync(seq: int) -> None:  # blocks the loop: for one lane only
            sync_client.append(sync_sid, Message.user(content(index, seq, size)))

        async def close_sync() -> None:
            sync_client.close()

        return op_sync, close_sync
    if kind == "ours_stream":
        from claw_sessiond_client import AsyncSessionClient, Message

        stream_client = AsyncSessionClient(address=f"unix:{spec['target']}", autostart=False)
        pipe = stream_client.append_stream()
        stream_sid = spec["session_id"]

        async def op_ours_stream(seq: int) -> None:
            await pipe.append(stream_sid, Message.user(content(index, seq, size)))

        async def close_pipe() -> None:
            await pipe.aclose()
            await stream_client.close()

        return op_ours_stream, close_pipe
    if kind == "sqlite":
        from agents import SQLiteSession

        session = SQLiteSession(spec["session_id"], spec["target"])

        async def op_sqlite(seq: int) -> None:
            await session.add_items([{"role": "user", "content": content(index, seq, size)}])

        async def close() -> None:
            session.close()

        return op_sqlite, close
    raise SystemExit(f"worker: unknown kind {kind!r}")


async def _run(spec: dict[str, Any]) -> dict[str, Any]:
    op, close = await _make_op(spec)
    acked: list[int] = []
    errors: list[str] = []
    seq = 0
    for _ in range(int(spec["warmup"])):
        seq -= 1
        await op(seq)
        acked.append(seq)
    print("ready", flush=True)
    start_wall = float(sys.stdin.readline())
    await asyncio.sleep(max(0.0, start_wall - time.time()))
    start = time.perf_counter()
    end = start + float(spec["duration_s"])
    latencies: list[float] = []
    counter = iter(range(1, 10**9))

    async def lane() -> None:
        while True:
            now = time.perf_counter()
            if now >= end:
                return
            n = next(counter)
            try:
                await op(n)
            except Exception as exc:  # counted and reported; a benchmark must not stop on one failure
                errors.append(f"{type(exc).__name__}: {exc}"[:200])
                continue
            done = time.perf_counter()
            acked.append(n)
            if done <= end:
                latencies.append((done - now) * 1000.0)

    cpu0 = time.process_time()
    await asyncio.gather(*(lane() for _ in range(int(spec["inflight"]))))
    cpu_s = time.process_time() - cpu0
    await close()
    return {
        "pid": os.getpid(),
        "index": spec["index"],
        "count": len(latencies),
        "cpu_s": cpu_s,
        "latencies_ms": [round(x, 4) for x in latencies],
        "acked": acked,
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:3],
    }


def main() -> None:
    """Run the spec given as the first argument."""
    spec = json.loads(sys.argv[1])
    result = asyncio.run(_run(spec))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
