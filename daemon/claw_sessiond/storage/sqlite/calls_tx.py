"""A SQLite session's tool policy, in the writer's transaction.

An append's tool results and calls are admitted and indexed by ``storage/writes.py`` over the port;
a Load's open calls and the calls it drops are ``storage/loading.py``'s (``read_port.py`` holds their SQL).
"""

from __future__ import annotations

import sqlite3

from ...policy import ToolPolicy
from .port import SQLitePort

__all__ = ["session_policy_in_tx"]


def session_policy_in_tx(conn: sqlite3.Connection, session_id: str) -> ToolPolicy:
    """The session's stored tool policy (empty for an unknown session) (caller's transaction)."""
    return SQLitePort(conn).session_policy(session_id)
