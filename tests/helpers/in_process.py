"""What the property tests' two sides share: a request as the daemon's service would hand it to storage, a
Load's history as its reply carries it, and a refusal as a client is told it.

The property models (tests/helpers/*_model.py) run each sequence on a ``Storage`` in-process and through a
real daemon; for the in-process side to see exactly what the daemon's storage sees, a drawn wire message goes
through the daemon's own ``message_from_pb``, and a stored message comes back through its ``message_pb``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc

from claw_sessiond.errors import SessiondError
from claw_sessiond.model import LoadResult, Message
from claw_sessiond.rpc import convert
from claw_sessiond.rpc.edge import status_for
from claw_sessiond.storage import Storage
from claw_sessiond_client import _status as B
from tests.storage._support import history

__all__ = ["from_wire", "refusal", "rpc_error", "wire_history"]


def from_wire(messages: Iterable[Any]) -> list[Message]:
    """Wire messages (the client's generated ``Message``) as the daemon's service reads them."""
    return [convert.message_from_pb(m) for m in messages]


async def wire_history(storage: Storage, loaded: LoadResult) -> list[Any]:
    """A Load's whole visible history, each message as the Load reply carries it."""
    return [convert.message_pb(m) for m in await history(storage, loaded)]


def refusal(exc: SessiondError) -> tuple[str, tuple[str, str]]:
    """A domain error as a client is told it: ("err", (its status code by the daemon's table, its reason))."""
    return ("err", (status_for(exc).name, exc.reason.name))


def rpc_error(exc: grpc.RpcError) -> tuple[str, str]:
    """A daemon's refusal as received: (status code name, reason)."""
    info = B._error_info(exc.trailing_metadata())  # type: ignore[attr-defined]
    return exc.code().name, info.reason if info else ""  # type: ignore[attr-defined]
