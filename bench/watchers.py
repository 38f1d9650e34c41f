"""A benchmark process that holds many Watch streams on one session: ``python -m bench.watchers SPEC``.

SPEC is JSON: ``address``, ``session_id``, ``streams``, ``after`` (the position
each stream starts after), ``until`` (the position whose delivery ends a
stream), ``timeout_s``, and optionally ``batch`` (default true: the client's
watch, which asks for batches; false: a raw Watch that takes one event per
message, as clients before batches did). Streams are spread over channels of at most
``PER_CHANNEL`` streams each. The process prints ``ready`` once every stream's
call is started (the caller then waits until the daemon counts them in
``active_watchers``), and when every stream has delivered ``until`` (or the
timeout passed) one JSON line: events received, streams that finished, the
wall time (``time.time()``) of the last delivery, errors.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc

from claw_sessiond_client import AsyncSessionClient
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc

PER_CHANNEL = 100


async def _run(spec: dict[str, Any]) -> dict[str, Any]:
    streams = int(spec["streams"])
    clients = [
        AsyncSessionClient(address=spec["address"], autostart=False, timeout_s=60)
        for _ in range((streams + PER_CHANNEL - 1) // PER_CHANNEL)
    ]
    received = 0
    last_at = 0.0
    errors: list[str] = []

    channels = [grpc.aio.insecure_channel(spec["address"]) for _ in clients]

    async def unbatched(i: int) -> AsyncIterator[Any]:
        stub = pb_grpc.SessionServiceStub(channels[i // PER_CHANNEL])
        request = pb.WatchRequest(session_id=spec["session_id"], after_position=int(spec["after"]))
        async for reply in stub.Watch(request):
            yield reply

    def events(i: int) -> AsyncIterator[Any]:
        if spec.get("batch", True):
            return clients[i // PER_CHANNEL].watch(spec["session_id"], after_position=int(spec["after"]))
        return unbatched(i)

    async def follow(i: int) -> bool:
        nonlocal received, last_at
        try:
            async for event in events(i):
                received += 1
                last_at = time.time()
                if event.position >= int(spec["until"]):
                    return True
        except Exception as exc:  # reported to the caller, which fails the run
            errors.append(repr(exc)[:200])
        return False

    tasks = [asyncio.create_task(follow(i)) for i in range(streams)]
    await asyncio.sleep(0)
    print("ready", flush=True)
    done, pending = await asyncio.wait(tasks, timeout=float(spec["timeout_s"]))
    for t in pending:
        t.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for c in clients:
        await c.close()
    for ch in channels:
        await ch.close()
    return {
        "received": received,
        "finished": sum(1 for t in done if t.result()),
        "last_at": last_at,
        "errors": len(errors),
        "error_samples": errors[:3],
    }


def main() -> None:
    """Run one watcher process (see the module docstring)."""
    spec = json.loads(sys.argv[1])
    print(json.dumps(asyncio.run(_run(spec))), flush=True)


if __name__ == "__main__":
    main()
