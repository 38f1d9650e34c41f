"""What the daemon checks through its own connections at start, for a pooler (PgBouncer) between it and the server.

Session settings are not sent in the start-up packet (PgBouncer refuses any
parameter it does not track, ``unsupported startup parameter``, or drops the
ones named in ``ignore_startup_parameters``) but SET on each connection
(:func:`set_statements`); :func:`check_settings` then reads them back from
``pg_settings`` and refuses to start when one is not the daemon's, naming it.

The daemon needs a server session of its own per connection: its lease is a
session-level advisory lock, Watch across daemons uses LISTEN, and its
connections keep their settings and prepared statements. A pooler in
transaction or statement mode hands a connection's next transaction to
whichever server session is free. :func:`check_session_pooling` asks two
connections, each twice, for their server session (``pg_backend_pid()``):
directly or through session pooling each keeps its own, so a session shared
by both or changing under one means transaction (or statement) pooling, and
the daemon refuses to start, saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import asyncpg

from ...errors import StorageUnavailableError

__all__ = ["STARTUP_SETTINGS", "check_session_pooling", "check_settings", "set_statements"]

#: Settings sent in the start-up packet: PgBouncer passes these on in its default configuration.
STARTUP_SETTINGS: Final = frozenset({"application_name"})
#: Prepared statements lost between transactions: what transaction pooling does to asyncpg's.
_LOST_STATEMENT_STATES: Final = frozenset({"26000", "42P05"})


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def set_statements(server_settings: Mapping[str, str]) -> str:
    """One simple-query string that SETs every setting not sent at start-up ("" when there is none)."""
    return "".join(
        f"SET {name} = {_literal(value)};" for name, value in server_settings.items() if name not in STARTUP_SETTINGS
    )


def _transaction_pooling(target: str, why: str) -> StorageUnavailableError:
    return StorageUnavailableError(
        f"PostgreSQL {target}: {why}: a connection pooler in transaction or statement mode (PgBouncer pool_mode "
        "= transaction or statement) stands between the daemon and the server. The daemon needs a server session "
        "per connection (its lease is a session advisory lock, Watch across daemons uses LISTEN, its connections "
        "keep session settings and prepared statements): use pool_mode = session for this database, or connect "
        "to PostgreSQL directly; refusing to start"
    )


async def check_session_pooling(first: Any, second: Any, target: str) -> None:
    """Refuse transaction or statement pooling: ``first`` and ``second`` (both open) must each keep one server
    session of their own.

    Raises:
        StorageUnavailableError: they share a server session, or one's changed.
    """
    try:
        seen = [await conn.fetchval("SELECT pg_backend_pid()") for conn in (first, second, first, second)]
    except asyncpg.PostgresError as exc:
        if getattr(exc, "sqlstate", "") in _LOST_STATEMENT_STATES:
            raise _transaction_pooling(target, "a prepared statement vanished between two transactions") from None
        if "pool mode" in str(exc):  # PgBouncer's own refusal (no SQLSTATE of the server)
            raise _transaction_pooling(target, f"the pooler said: {exc}") from None
        raise
    if seen[0] == seen[1] or seen[1] == seen[2]:
        raise _transaction_pooling(target, f"two open connections were served by one server session (pid {seen[1]})")
    if seen[0] != seen[2] or seen[1] != seen[3]:
        raise _transaction_pooling(target, "a connection's server session changed between two transactions")


async def check_settings(conn: Any, server_settings: Mapping[str, str], target: str) -> None:
    """Refuse to start when a setting the daemon SET on ``conn`` is not in force on its server session.

    A setting is in force when ``pg_settings.source`` is ``session`` (a SET in this session: the value is
    then the daemon's, though the server may show it in its own unit and form: ``2500ms`` reads ``2500``, a
    TCP keepalive over a Unix socket ``0``), or when the value shown is the daemon's as written.

    Raises:
        StorageUnavailableError: naming the first setting whose value is not the daemon's.
    """
    wanted = [name for name in server_settings if name not in STARTUP_SETTINGS]
    rows = await conn.fetch("SELECT name, setting, source FROM pg_settings WHERE name = ANY($1::text[])", wanted)
    found = {row["name"]: (row["setting"], row["source"]) for row in rows}
    for name in wanted:
        setting, source = found.get(name, (None, "absent"))
        if source != "session" and setting != server_settings[name]:
            raise StorageUnavailableError(
                f"PostgreSQL {target}: the setting {name} is {setting!r} (from {source}) on the server session, not "
                f"{server_settings[name]!r} as the daemon set it; refusing to start (does something between the "
                "daemon and the server reset session settings?)"
            )
