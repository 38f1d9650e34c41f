"""The raw bytes of a daemon's Load replies, as the upgrade fixtures record them (for tests/storage/sqlite/).

A Load reply is compared byte for byte with what an earlier version sent for the same request
(tests/storage/sqlite/fixtures/make_fixtures.py): each chunk serialized again by protobuf, as hex.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import grpc

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc

__all__ = ["TRACE", "raw_loads"]

#: The trace id of every recorded Load (a reply carries it).
TRACE: Final = "0af7651916cd43dd8448eb211c80319c"


def raw_loads(address: str, requests: Mapping[str, tuple[str, Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Name -> the chunks (hex) of the Load of ``(session id, extra LoadRequest fields)``, without repair."""
    out: dict[str, list[str]] = {}
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        for name, (sid, extra) in requests.items():
            request = pb.LoadRequest(session_id=sid, workdir="/w", no_repair=True, trace_id=TRACE, **extra)
            out[name] = [r.SerializeToString().hex() for r in stub.Load(request)]
    return out
