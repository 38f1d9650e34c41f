"""A listener that takes a daemon's TCP port while the daemon is down, and records what clients send it.

Run as a script (as another user, through ``setpriv``): ``python impostor.py KIND PORT OUT``.
``raw``: a plain TCP listener that reads whatever each connection sends and keeps the connection open.
``grpc``: a plaintext gRPC server that accepts every method and answers each with an empty message.
Every byte received (``raw``), or each call's method, metadata and request (``grpc``), is appended to
``OUT``; "listening" is printed once the port is bound. It runs until killed (by its pid).
"""

from __future__ import annotations

import socket
import sys
import threading
import time

MAX_BYTES = 1 << 20  # per connection: bounded


def _record(out: str, data: bytes) -> None:
    with open(out, "ab") as f:
        f.write(data)


def raw(port: int, out: str) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    print("listening", flush=True)

    def serve(conn: socket.socket) -> None:
        got = 0
        with conn:
            while got < MAX_BYTES:
                data = conn.recv(65536)
                if not data:
                    return
                got += len(data)
                _record(out, b"<conn>" + data + b"</conn>\n")

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def plaintext_grpc(port: int, out: str) -> None:
    from concurrent import futures

    import grpc

    class AcceptAll(grpc.GenericRpcHandler):
        def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:  # type: ignore[type-arg]
            method = str(details.method)
            metadata = repr(tuple(details.invocation_metadata or ()))

            def unary(request: bytes, _context: object) -> bytes:
                _record(out, f"{method} {metadata} ".encode() + request + b"\n")
                return b""

            def stream(requests: object, _context: object) -> object:
                for request in requests:  # type: ignore[attr-defined]
                    _record(out, f"{method} {metadata} ".encode() + request + b"\n")
                    yield b""

            if method.endswith(("/AppendStream", "/Watch", "/Load", "/Attach", "/WatchAll", "/Export", "/Backup")):
                return grpc.stream_stream_rpc_method_handler(stream)
            return grpc.unary_unary_rpc_method_handler(unary)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((AcceptAll(),))
    if server.add_insecure_port(f"127.0.0.1:{port}") == 0:
        raise SystemExit(f"cannot bind 127.0.0.1:{port}")
    server.start()
    print("listening", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    kind, port_text, out_path = sys.argv[1:4]
    (raw if kind == "raw" else plaintext_grpc)(int(port_text), out_path)
