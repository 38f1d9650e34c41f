"""Opening the PostgreSQL backend: settings, the connection checks at start, and per-session lanes.

At start two connections check the server (``fsync`` on, not a standby, the
settings in force, a server session per connection: ``pooling.py``) and one
migrates the schema (``schema.migrate``); then a pool is opened whose
connections set ``search_path``, ``synchronous_commit = on`` and the
time bounds of ``timeouts.py`` (idle-in-transaction, statement and lock
timeouts, TCP keepalives), with SET after connecting, again after each use
(:func:`open_connection`, :func:`open_pool`). A failure names the host(s),
port, database and user (:func:`describe_target`), never the password; a TLS
failure says what failed (:func:`failure_reason`).
"""

from __future__ import annotations

import dataclasses
import os
import ssl
from typing import Any, Final

import asyncpg

from ...config import (
    DEFAULT_PG_CONNECT_TIMEOUT_S,
    DEFAULT_PG_LOCK_TIMEOUT_MS,
    DEFAULT_PG_POOL_MAX,
    DEFAULT_PG_POOL_MIN,
    DEFAULT_PG_STATEMENT_TIMEOUT_MS,
    ConfigError,
    parse_database_url,
    redact_url,
)
from ...errors import StorageUnavailableError
from . import schema
from .errors import map_pg_errors
from .pooling import STARTUP_SETTINGS, check_session_pooling, check_settings, set_statements
from .timeouts import session_timeouts

__all__ = [
    "PostgresSettings",
    "connect",
    "describe_target",
    "failure_reason",
    "follower_connections",
    "migrate_only",
    "open_connection",
    "server_settings_of",
]

#: Share of the pool follower reads (Watch and WatchAll batches) may hold at once: after a commit hundreds of
#: streams can be due, and a request must find a connection without queueing behind their reads.
_FOLLOWER_SHARE: Final = 4


@dataclasses.dataclass(frozen=True, slots=True)
class PostgresSettings:
    """Settings of the PostgreSQL backend."""

    lock_timeout_ms: int = DEFAULT_PG_LOCK_TIMEOUT_MS
    """How long a statement waits for a row lock (``lock_timeout``) before the write fails as unavailable."""
    pool_max: int = DEFAULT_PG_POOL_MAX
    """Most connections this daemon's pool opens (plus one ownership and one LISTEN connection)."""
    pool_min: int = DEFAULT_PG_POOL_MIN
    """Connections the pool keeps open."""
    statement_timeout_ms: int = DEFAULT_PG_STATEMENT_TIMEOUT_MS
    """``statement_timeout`` of every connection (0: not set, the server's or role's value applies)."""
    connect_timeout_s: float = DEFAULT_PG_CONNECT_TIMEOUT_S
    """How long opening one connection may take."""
    lease_s: float = 10.0
    """This daemon's lease (``--lease-s``): another daemon treats its runs as ended when it has not renewed
    the lease for this long on the database's clock (``runs.py``)."""


def follower_connections(pool_max: int) -> int:
    """Connections of a pool of ``pool_max`` that follower reads may hold at once: at least one, and fewer than
    the pool whenever it has two or more (the daemon's pool has ``DEFAULT_PG_POOL_MAX`` unless configured)."""
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
        **session_timeouts(
            settings.lease_s,
            statement_timeout_ms=settings.statement_timeout_ms,
            lock_timeout_ms=settings.lock_timeout_ms,
        ),
        # With the pid, as the feed and lease connections: an operator (and a test) can tell one daemon's
        # server sessions from another's in pg_stat_activity.
        "application_name": f"claw-sessiond {os.getpid()}",
    }


def _startup(server_settings: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in server_settings.items() if name in STARTUP_SETTINGS}


async def open_connection(dsn: str, server_settings: dict[str, str], timeout_s: float) -> Any:
    """One connection with ``server_settings`` in force: ``application_name`` in the start-up packet (PgBouncer
    passes it on), every other setting SET once connected (PgBouncer refuses or drops those at start-up).

    Raises:
        As ``asyncpg.connect`` (OSError, TimeoutError, asyncpg errors).
    """
    conn = await asyncpg.connect(dsn, timeout=timeout_s, server_settings=_startup(server_settings))
    try:
        statements = set_statements(server_settings)
        if statements:
            await conn.execute(statements)
    except BaseException:
        conn.terminate()
        raise
    return conn


async def open_pool(dsn: str, settings: PostgresSettings) -> Any:
    """The daemon's pool; each connection SETs the settings when opened and again after each use (asyncpg's reset
    on release runs ``RESET ALL``, which would take SET values back to the server's defaults)."""
    server_settings = server_settings_of(settings)
    statements = set_statements(server_settings)

    async def init(conn: Any) -> None:
        await conn.execute(statements)

    async def reset(conn: Any) -> None:
        await conn.execute(conn.get_reset_query() + "\n" + statements)

    return await asyncpg.create_pool(
        dsn,
        min_size=settings.pool_min,
        max_size=settings.pool_max,
        timeout=settings.connect_timeout_s,
        server_settings=_startup(server_settings),
        init=init,
        reset=reset,
    )


async def _checked(dsn: str, settings: PostgresSettings, target: str) -> Any:
    """A connection to a server fit for the daemon (see the module docstring); the caller closes it.

    Raises:
        StorageUnavailableError: unreachable, login refused, standby, fsync off, a setting not in force, or a
            pooler in transaction mode.
    """
    server_settings = server_settings_of(settings)
    conns: list[Any] = []
    try:
        for _ in range(2):
            conns.append(await open_connection(dsn, server_settings, settings.connect_timeout_s))
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError) as exc:
        for conn in conns:
            conn.terminate()
        raise StorageUnavailableError(
            f"PostgreSQL {target}: cannot connect: {failure_reason(exc, settings.connect_timeout_s)}"
        ) from None
    conn, probe = conns
    try:
        async with map_pg_errors(target):
            await check_session_pooling(conn, probe, target)
            await check_settings(conn, server_settings, target)
            if await conn.fetchval("SHOW fsync") != "on":
                raise StorageUnavailableError(
                    f"PostgreSQL {target}: fsync is off, so no write would be durable; refusing to start"
                )
            if await conn.fetchval("SELECT pg_is_in_recovery()"):
                raise StorageUnavailableError(
                    f"PostgreSQL {target}: the server is a read-only standby; connect to the primary "
                    "(with several hosts: add target_session_attrs=read-write to the URL)"
                )
    except BaseException:
        conn.terminate()
        raise
    finally:
        probe.terminate()
    return conn


async def migrate_only(dsn: str, settings: PostgresSettings) -> tuple[int, int, list[str]]:
    """Check the server and apply pending migrations, then close: the schema version before and after and the
    migrations applied (``claw-sessiond migrate-db``).

    Raises:
        StorageUnavailableError: as :func:`connect`.
        CorruptDatabaseError: the schema is not ours or newer than this code.
    """
    target = describe_target(dsn)
    conn = await _checked(dsn, settings, target)
    try:
        async with map_pg_errors(target):
            before = await schema.schema_version(conn)
            applied = await schema.migrate(conn)
            return before, await schema.schema_version(conn), applied
    finally:
        await conn.close()


async def connect(dsn: str, settings: PostgresSettings) -> tuple[Any, list[str]]:
    """Check the server, migrate, and open the pool; returns the pool and the migrations applied.

    Raises:
        StorageUnavailableError: unreachable, login refused, read-only standby, fsync off, a setting not in
            force, or a pooler in transaction mode.
        CorruptDatabaseError: the schema is not ours or newer than this code.
    """
    _before, _after, applied = await migrate_only(dsn, settings)
    async with map_pg_errors(describe_target(dsn)):
        pool = await open_pool(dsn, settings)
    return pool, applied


def failure_reason(exc: BaseException, timeout_s: float = DEFAULT_PG_CONNECT_TIMEOUT_S) -> str:
    """Why a connection failed, in words that never hold the password."""
    if isinstance(exc, asyncpg.InvalidPasswordError):
        return "password authentication failed (the password is not shown)"
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout_s:g}s"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS: the server's certificate was not accepted: {exc.verify_message or exc.reason}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS: the handshake failed: {exc.reason or exc.strerror or type(exc).__name__}"
    if isinstance(exc, ConnectionError) and "rejected SSL upgrade" in str(exc):
        return (
            "TLS: the server does not support TLS, and the URL requires it (sslmode=require or stricter); "
            "enable ssl on the server or change sslmode"
        )
    if isinstance(exc, OSError):
        return exc.strerror or str(exc) or type(exc).__name__
    if isinstance(exc, asyncpg.PostgresError):
        return f"{type(exc).__name__} (SQLSTATE {getattr(exc, 'sqlstate', '')}): {getattr(exc, 'message', '')}"
    if isinstance(exc, ValueError):
        return "the URL is not usable: " + " ".join(str(exc).split())
    return type(exc).__name__
