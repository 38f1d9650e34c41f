"""The gRPC ceiling: a bare grpc.aio unary echo server on a Unix socket.

No protobuf, no validation, no storage: the handler returns the request bytes.
Same transport and payload as the daemon's Append, so ``ours / echo`` is the
share of the gRPC-Python ceiling that the daemon reaches.

With ``--commit DB`` each unary call first makes one durable SQLite commit
(one 1 KB row inserted in its own transaction, WAL, ``synchronous=FULL``, on
the loop thread, the table of ``bench/floor.py``): "echo + one durable
commit", the least any durable unary Append can cost in latency and server CPU.

Run: ``python -m bench.echo_server --socket PATH [--commit DB]``; stops on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from bench.floor import open_floor_db

#: Full method name the clients call (unary).
METHOD = "/bench.Echo/Echo"
#: Bidirectional stream: every message is echoed back, in order.
STREAM_METHOD = "/bench.Echo/EchoStream"


async def _echo(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
    return request


async def _echo_stream(requests: Any, context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
    async for request in requests:
        yield request


def _committing(conn: sqlite3.Connection) -> Callable[[bytes, Any], Awaitable[bytes]]:
    positions = itertools.count()

    async def echo_commit(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO events(session_id, position, payload) VALUES ('echo', ?, ?)",
            (next(positions), request.decode("latin-1")),
        )
        conn.execute("COMMIT")
        return request

    return echo_commit


def _handler(conn: sqlite3.Connection | None = None) -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(
        "bench.Echo",
        {
            "Echo": grpc.unary_unary_rpc_method_handler(_echo if conn is None else _committing(conn)),
            "EchoStream": grpc.stream_stream_rpc_method_handler(_echo_stream),
        },
    )


async def serve(socket_path: str, commit_db: str = "") -> None:
    """Serve until SIGTERM/SIGINT (with ``commit_db``: one durable commit per unary call)."""
    conn = open_floor_db(commit_db) if commit_db else None
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((_handler(conn),))
    if server.add_insecure_port(f"unix:{socket_path}") == 0:
        raise SystemExit(f"echo_server: cannot bind {socket_path}")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(1)
    if conn is not None:
        conn.close()


def main() -> None:
    """Parse ``--socket`` and serve."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--commit", default="", help="SQLite file: one durable commit per unary call")
    args = parser.parse_args()
    asyncio.run(serve(args.socket, args.commit))


if __name__ == "__main__":
    main()
