"""Opening the PostgreSQL backend: settings, the connection checks at start, and per-session lanes.

At start one connection checks the server (``fsync`` on, not a standby) and
migrates the schema (``schema.migrate``); then a pool is opened whose
connections set ``search_path``, ``synchronous_commit = on`` and
``lock_timeout``. A failure names the host, port, database and user
(:func:`describe_target`), never the password.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Final

import asyncpg

from ...config import ConfigError, parse_database_url, redact_url
from ...errors import Reason, StorageUnavailableError
from . import schema
from .errors import map_pg_errors

__all__ = [
    "PostgresSettings",
    "connect",
    "describe_target",
    "failure_reason",
    "follower_connections",
    "server_settings_of",
]

#: Connections of one daemon's pool (writes and reads share it).
_POOL_MAX: Final = 10
#: Share of the pool follower reads (Watch and WatchAll batches) may hold at once: after a commit hundreds of
#: streams can be due, and a request must find a connection without queueing behind their reads.
_FOLLOWER_SHARE: Final = 4
#: How long a connection attempt at open may take.
_CONNECT_TIMEOUT_S: Final = 10.0


@dataclasses.dataclass(frozen=True, slots=True)
class PostgresSettings:
    """Settings of the PostgreSQL backend."""

    lock_timeout_ms: int = 10_000
    """How long a statement waits for a row lock (``lock_timeout``) before the write fails as unavailable."""
    pool_max: int = _POOL_MAX
    """Most connections this daemon's pool opens (plus one ownership and one LISTEN connection)."""
    lease_s: float = 10.0
    """This daemon's lease (``--lease-s``): another daemon treats its runs as ended when it has not renewed
    the lease for this long on the database's clock (``runs.py``)."""


def follower_connections(pool_max: int) -> int:
    """Connections of a pool of ``pool_max`` that follower reads may hold at once: at least one, and fewer than
    the pool whenever it has two or more (the daemon's pool has :data:`_POOL_MAX`)."""
    return max(1, min(pool_max - 1, pool_max // _FOLLOWER_SHARE))


def describe_target(dsn: str) -> str:
    """``host:port/database as user`` of a URL, for start-up errors (never the password)."""
    try:
        parsed = parse_database_url(dsn)
    except ConfigError:
        return redact_url(dsn)
    return f"{parsed.target} as {parsed.user or '(default)'}"


def server_settings_of(settings: PostgresSettings) -> dict[str, str]:
    """The session settings of every connection this daemon opens."""
    return {
        "search_path": schema.SCHEMA,
        "synchronous_commit": "on",
        "lock_timeout": str(settings.lock_timeout_ms),
        # With the pid, as the feed and lease connections: an operator (and a test) can tell one daemon's
        # server sessions from another's in pg_stat_activity.
        "application_name": f"claw-sessiond {os.getpid()}",
    }


async def connect(dsn: str, settings: PostgresSettings) -> tuple[Any, list[str]]:
    """Check the server, migrate, and open the pool; returns the pool and the migrations applied.

    Raises:
        StorageUnavailableError: unreachable, login refused, read-only standby, or fsync off.
        CorruptDatabaseError: the schema is not ours or newer than this code.
    """
    target = describe_target(dsn)
    server_settings = server_settings_of(settings)
    try:
        conn = await asyncpg.connect(dsn, timeout=_CONNECT_TIMEOUT_S, server_settings=server_settings)
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError) as exc:
        raise StorageUnavailableError(
            f"PostgreSQL {target}: cannot connect: {failure_reason(exc)}", reason=Reason.STORAGE_UNAVAILABLE
        ) from None
    try:
        async with map_pg_errors(target):
            if await conn.fetchval("SHOW fsync") != "on":
                raise StorageUnavailableError(
                    f"PostgreSQL {target}: fsync is off, so no write would be durable; refusing to start",
                    reason=Reason.STORAGE_UNAVAILABLE,
                )
            if await conn.fetchval("SELECT pg_is_in_recovery()"):
                raise StorageUnavailableError(
                    f"PostgreSQL {target}: the server is a read-only standby; connect to the primary",
                    reason=Reason.STORAGE_UNAVAILABLE,
                )
            applied = await schema.migrate(conn)
    finally:
        await conn.close()
    async with map_pg_errors(target):
        pool = await asyncpg.create_pool(
            dsn,
            min_size=1,
            max_size=settings.pool_max,
            timeout=_CONNECT_TIMEOUT_S,
            server_settings=server_settings,
        )
    return pool, applied


def failure_reason(exc: BaseException) -> str:
    """Why a connection failed, in words that never hold the password."""
    if isinstance(exc, asyncpg.InvalidPasswordError):
        return "password authentication failed (the password is not shown)"
    if isinstance(exc, TimeoutError):
        return f"no answer within {_CONNECT_TIMEOUT_S:g}s"
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    if isinstance(exc, asyncpg.PostgresError):
        return f"{type(exc).__name__} (SQLSTATE {getattr(exc, 'sqlstate', '')}): {getattr(exc, 'message', '')}"
    return type(exc).__name__
