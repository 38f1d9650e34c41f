"""A PostgreSQL session's tool policy and the calls a Load drops, in the caller's transaction.

An append's tool results and calls are admitted and indexed by ``storage/writes.py`` over the port.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ... import repair as repairing
from ...history import OpenCall
from ...policy import ToolPolicy
from .port import PostgresPort

__all__ = ["drops_in_tx", "session_policy_in_tx"]

_log = logging.getLogger("claw_sessiond.store")


async def session_policy_in_tx(conn: Any, session_id: str) -> ToolPolicy:
    """The session's stored tool policy (empty for an unknown session)."""
    return await PostgresPort(conn).session_policy(session_id)


async def drops_in_tx(conn: Any, session_id: str, dropped: Sequence[OpenCall]) -> tuple[tuple[str, ...], int]:
    """The ids of the calls a Load drops, and how many entries dropping them hides whole."""
    if not dropped:
        return (), 0
    ids = tuple(c.tool_call_id for c in dropped)
    entries = [
        (int(r[0]), str(r[1]), bool(r[2]))
        for r in await conn.fetch(
            "SELECT position, payload, item IS NOT NULL FROM events WHERE session_id = $1 "
            "AND position = ANY($2::bigint[])",
            session_id,
            repairing.drop_positions(dropped),
        )
    ]
    return ids, repairing.hidden_count(entries, set(ids))
