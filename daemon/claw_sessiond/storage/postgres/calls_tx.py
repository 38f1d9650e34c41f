"""A PostgreSQL session's tool policy, in the caller's transaction.

An append's tool results and calls are admitted and indexed by ``storage/writes.py`` over the port;
the calls a Load drops are decided by ``storage/loading.py``.
"""

from __future__ import annotations

import logging
from typing import Any

from ...policy import ToolPolicy
from .port import PostgresPort

__all__ = ["session_policy_in_tx"]

_log = logging.getLogger("claw_sessiond.store")


async def session_policy_in_tx(conn: Any, session_id: str) -> ToolPolicy:
    """The session's stored tool policy (empty for an unknown session)."""
    return await PostgresPort(conn).session_policy(session_id)
