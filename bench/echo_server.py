"""The gRPC ceiling: a bare grpc.aio unary echo server on a Unix socket.

No protobuf, no validation, no storage: the handler returns the request bytes.
Same transport and payload as the daemon's Append, so ``ours / echo`` is the
share of the gRPC-Python ceiling that the daemon reaches.

Run: ``python -m bench.echo_server --socket PATH``; stops on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import AsyncIterator
from typing import Any

import grpc

#: Full method name the clients call (unary).
METHOD = "/bench.Echo/Echo"
#: Bidirectional stream: every message is echoed back, in order.
STREAM_METHOD = "/bench.Echo/EchoStream"


async def _echo(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
    return request


async def _echo_stream(requests: Any, context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
    async for request in requests:
        yield request


def _handler() -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(
        "bench.Echo",
        {
            "Echo": grpc.unary_unary_rpc_method_handler(_echo),
            "EchoStream": grpc.stream_stream_rpc_method_handler(_echo_stream),
        },
    )


async def serve(socket_path: str) -> None:
    """Serve until SIGTERM/SIGINT."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((_handler(),))
    if server.add_insecure_port(f"unix:{socket_path}") == 0:
        raise SystemExit(f"echo_server: cannot bind {socket_path}")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(1)


def main() -> None:
    """Parse ``--socket`` and serve."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--socket", required=True)
    args = parser.parse_args()
    asyncio.run(serve(args.socket))


if __name__ == "__main__":
    main()
