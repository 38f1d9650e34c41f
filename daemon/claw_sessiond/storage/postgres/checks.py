"""``doctor``'s checks of a PostgreSQL database: read-only, one connection, nothing migrated or written.

Each check is a :class:`~claw_sessiond.storage.base.StorageCheck` line:

- ``database``: the server answers (its version, ``host:port/database as user``; a failure names the
  same, never the password), and is a primary (a read-only standby: fail, the daemon refuses it);
- ``schema_version``: the schema's version against this build's (older: the daemon migrates it at its
  next start; none yet: it creates it; newer or not ours: fail, the daemon refuses it);
- ``durability``: ``fsync`` off is a fail (the daemon refuses to start); ``full_page_writes`` off, and a
  ``synchronous_commit`` default other than ``on`` for this role and database (the daemon sets it ``on``
  on its own connections, so its writes stay durable, but other clients of the database do not), warn;
- ``privileges``: what the daemon needs of this role: ``CREATE`` on the database while the schema does not
  exist (to create it), then ``USAGE`` and ``CREATE`` on the schema (migrations create tables in it) and
  read and write on its tables. The fix is named (``GRANT ...``).
"""

from __future__ import annotations

from typing import Any, Final

import asyncpg

from ...config import DEFAULT_PG_CONNECT_TIMEOUT_S
from ...errors import CorruptDatabaseError
from ..base import StorageCheck
from . import schema
from .connect import describe_target, failure_reason

__all__ = ["check_database"]

#: The table privileges the daemon uses.
_TABLE_PRIVILEGES: Final = ("SELECT", "INSERT", "UPDATE", "DELETE")


async def check_database(dsn: str, shown: str) -> list[StorageCheck]:
    """The checks of the database at ``dsn`` (``shown``: its URL as it may be printed, password redacted)."""
    target = describe_target(dsn)
    try:
        conn = await asyncpg.connect(dsn, timeout=DEFAULT_PG_CONNECT_TIMEOUT_S)  # as the daemon at start
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError) as exc:
        return [StorageCheck("database", "fail", f"PostgreSQL {target}: cannot connect: {failure_reason(exc)}")]
    try:
        return await _checks(conn, target, shown)
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        return [StorageCheck("database", "fail", f"PostgreSQL {target}: the connection failed: {failure_reason(exc)}")]
    finally:
        await conn.close(timeout=5)


async def _checks(conn: Any, target: str, shown: str) -> list[StorageCheck]:
    version = await conn.fetchval("SHOW server_version")
    if await conn.fetchval("SELECT pg_is_in_recovery()"):
        answers = StorageCheck(
            "database", "fail", f"PostgreSQL {version} at {target} is a read-only standby: connect to the primary"
        )
    else:
        answers = StorageCheck("database", "ok", f"{shown} answers: PostgreSQL {version} at {target}")
    exists = bool(await conn.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema.SCHEMA))
    return [answers, await _schema_version(conn), await _durability(conn), await _privileges(conn, exists)]


async def _schema_version(conn: Any) -> StorageCheck:
    try:
        found = await schema.schema_version(conn)
    except CorruptDatabaseError as exc:
        return StorageCheck("schema_version", "fail", f"{exc.message}; the daemon refuses this database")
    except asyncpg.InsufficientPrivilegeError:
        return StorageCheck("schema_version", "fail", f"this role may not read schema {schema.SCHEMA} (see privileges)")
    this = schema.SCHEMA_VERSION
    if found == this:
        return StorageCheck("schema_version", "ok", f"{found} (this build's)")
    if found == 0:
        return StorageCheck(
            "schema_version", "warn", f"no schema {schema.SCHEMA} yet: the daemon creates it (version {this}) at start"
        )
    return StorageCheck(
        "schema_version", "warn", f"{found}, older than this build's {this}: the daemon migrates it at its next start"
    )


async def _durability(conn: Any) -> StorageCheck:
    weak = []
    fsync_off = await conn.fetchval("SHOW fsync") != "on"
    if fsync_off:
        weak.append(
            "fsync is off on the server: no commit survives a crash of the machine, and the daemon refuses to "
            "start (set fsync = on in postgresql.conf or with ALTER SYSTEM, then reload)"
        )
    if await conn.fetchval("SHOW full_page_writes") != "on":
        weak.append("full_page_writes is off (a crash may leave torn pages: set it on)")
    sync = await conn.fetchval("SHOW synchronous_commit")
    if sync != "on":
        weak.append(
            f"synchronous_commit is {sync} by default for this role and database (the daemon sets it on for its "
            "own connections, so its writes stay durable; other clients' commits may be lost in a crash)"
        )
    if weak:
        return StorageCheck("durability", "fail" if fsync_off else "warn", "; ".join(weak))
    return StorageCheck("durability", "ok", "fsync, full_page_writes and synchronous_commit are on")


async def _privileges(conn: Any, exists: bool) -> StorageCheck:
    role = await conn.fetchval("SELECT current_user")
    if not exists:
        if await conn.fetchval("SELECT has_database_privilege(current_database(), 'CREATE')"):
            return StorageCheck("privileges", "ok", f"role {role} may create schema {schema.SCHEMA} in this database")
        database = await conn.fetchval("SELECT current_database()")
        return StorageCheck(
            "privileges",
            "fail",
            f"role {role} may not create schema {schema.SCHEMA} in database {database} (the daemon creates it at "
            f"its first start): GRANT CREATE ON DATABASE {database} TO {role}, or create the schema for it",
        )
    lacking = []
    for privilege in ("USAGE", "CREATE"):
        if not await conn.fetchval("SELECT has_schema_privilege($1, $2)", schema.SCHEMA, privilege):
            lacking.append(privilege)
    if lacking:
        return StorageCheck(
            "privileges",
            "fail",
            f"role {role} lacks {' and '.join(lacking)} on schema {schema.SCHEMA}: as its owner, "
            f"GRANT {', '.join(lacking)} ON SCHEMA {schema.SCHEMA} TO {role}",
        )
    held = " AND ".join(f"has_table_privilege(t.oid, '{p}')" for p in _TABLE_PRIVILEGES)
    tables = await conn.fetch(
        f"SELECT t.relname FROM pg_class AS t JOIN pg_namespace AS n ON n.oid = t.relnamespace "
        f"WHERE n.nspname = $1 AND t.relkind IN ('r', 'p') AND NOT ({held}) ORDER BY t.relname",
        schema.SCHEMA,
    )
    if tables:
        names = ", ".join(str(t[0]) for t in tables)
        return StorageCheck(
            "privileges",
            "fail",
            f"role {role} may not read and write table(s) {names} of schema {schema.SCHEMA}: as their owner, "
            f"GRANT {', '.join(_TABLE_PRIVILEGES)} ON ALL TABLES IN SCHEMA {schema.SCHEMA} TO {role}",
        )
    return StorageCheck(
        "privileges",
        "ok",
        f"role {role} has USAGE and CREATE on schema {schema.SCHEMA} and reads and writes its tables",
    )
