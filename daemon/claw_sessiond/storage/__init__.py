"""Storage: the interface the rest of the daemon uses (``store.py``, ``base.py``) and its backends.

The daemon opens its storage with :func:`open_storage` and speaks to it only
through :class:`~claw_sessiond.storage.store.Storage`. The offline tools (the
CLI with no daemon running, under the workspace lock) use the rest:
:func:`open_read_only` for inspection, :func:`check_storage` for ``doctor``,
and the copy functions for ``backup`` and ``restore``. No module outside this
package imports a database driver. Each backend is imported when it is first used:
a daemon on PostgreSQL never imports the SQLite one (``sqlite/``, aiosqlite), nor
a SQLite daemon the PostgreSQL one; the SQLite helpers this package names
(:data:`_SQLITE_NAMES`) are looked up in ``sqlite/`` at first access.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from claw_sessiond_client.install import install_hint

from ..config import Config, redact_url
from ..errors import StorageUnavailableError
from .base import (
    BACKUP_CHUNK_BYTES,
    BackingUp,
    Checkpointing,
    CopyFigures,
    Run,
    RunEnd,
    SharedRuns,
    StorageCheck,
    StorageFigures,
    SweepTurns,
    pending_erasures,
    run_host,
)
from .runs import RunRegistry
from .store import Storage

if TYPE_CHECKING:
    from .postgres.connect import PostgresSettings
    from .postgres.store import PostgresStorage
    from .sqlite.backup import check_copy, copy_database, create_private_file
    from .sqlite.checks import stored_sessions
    from .sqlite.files import check_database_file
    from .sqlite.store import SQLiteSettings

__all__ = [
    "BACKUP_CHUNK_BYTES",
    "BackingUp",
    "Checkpointing",
    "CopyFigures",
    "Run",
    "RunEnd",
    "RunRegistry",
    "SharedRuns",
    "Storage",
    "StorageFigures",
    "SweepTurns",
    "check_copy",
    "check_database_file",
    "check_storage",
    "check_url",
    "copy_database",
    "create_private_file",
    "migrate_database",
    "open_file",
    "open_read_only",
    "open_storage",
    "open_url",
    "pending_erasures",
    "postgres_settings",
    "redacted_url",
    "run_host",
    "settings_of",
    "stored_sessions",
]

#: The SQLite backend's helpers named here (for ``backup``, ``restore`` and ``doctor``), by module of ``sqlite/``.
_SQLITE_NAMES: Final = {
    "check_copy": "backup",
    "copy_database": "backup",
    "create_private_file": "backup",
    "stored_sessions": "checks",
    "check_database_file": "files",
}


def __getattr__(name: str) -> Any:
    """The names of :data:`_SQLITE_NAMES`, imported from the SQLite backend at first access."""
    module = _SQLITE_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.sqlite.{module}"), name)
    globals()[name] = value
    return value


def settings_of(cfg: Config) -> SQLiteSettings:
    from .sqlite.store import SQLiteSettings

    """The backend settings the daemon's configuration hands over."""
    return SQLiteSettings(busy_timeout_ms=cfg.busy_timeout_ms, max_group_commit=cfg.max_group_commit)


def postgres_settings(cfg: Config) -> PostgresSettings:
    """The PostgreSQL settings the daemon's configuration hands over (pool, timeouts, lease)."""
    from .postgres.connect import PostgresSettings

    return PostgresSettings(
        lock_timeout_ms=cfg.pg_lock_timeout_ms,
        pool_max=cfg.pg_pool_max,
        pool_min=cfg.pg_pool_min,
        statement_timeout_ms=cfg.pg_statement_timeout_ms,
        connect_timeout_s=cfg.pg_connect_timeout_s,
        lease_s=cfg.lease_s,
    )


def no_driver(exc: ImportError) -> StorageUnavailableError:
    """The error of a PostgreSQL store opened without its driver (``exc``: the failed import)."""
    return StorageUnavailableError(
        f"a PostgreSQL database needs the asyncpg driver ({exc.name} is missing): "
        f"{install_hint(daemon_extra='postgres')}"
    )


def _postgres() -> type[PostgresStorage]:
    """The PostgreSQL store's class, imported only now (asyncpg: the optional "postgres" extra).

    Raises:
        StorageUnavailableError: the driver is missing (:func:`no_driver`).
    """
    try:
        from .postgres.store import PostgresStorage
    except ImportError as exc:
        raise no_driver(exc) from exc
    return PostgresStorage


async def migrate_database(cfg: Config) -> tuple[int, int, list[str]]:
    """Apply the pending migrations of ``cfg.database_url`` (PostgreSQL) and close: the schema version before and
    after, and the migrations applied.

    Raises:
        StorageUnavailableError: no driver, the server cannot be reached or is unfit (as :func:`open_storage`).
        CorruptDatabaseError: the schema is not ours or newer than this code.
    """
    try:
        from .postgres.connect import migrate_only
    except ImportError as exc:
        raise no_driver(exc) from exc
    return await migrate_only(cfg.database_url, postgres_settings(cfg))


async def open_storage(cfg: Config) -> Storage:
    """Check, open and migrate the workspace's storage (``cfg.db_path``), ready for the daemon.

    With a ``postgresql://`` database URL (``cfg.database_url``) the sessions live in that database
    instead (``postgres/``, imported only then).

    Raises:
        CorruptDatabaseError: the file (or schema) is damaged or not ours (its bytes are not touched).
        StorageError: it cannot be opened for writing (read-only file system, full disk, unreachable
            server, refused login, ...).
    """
    limit = cfg.max_open_tool_calls
    if cfg.uses_postgres:
        return await _postgres().open(cfg.database_url, postgres_settings(cfg), max_open_tool_calls=limit)
    from .sqlite.store import SQLiteStorage

    return await SQLiteStorage.open(cfg.db_path, settings_of(cfg), max_open_tool_calls=limit)


async def open_read_only(path: Path) -> Storage:
    """A storage that only reads the database at ``path``; every write is refused.

    For inspection with the daemon down: the caller holds the workspace lock.
    Nothing is migrated, repaired or checkpointed.

    Raises:
        CorruptDatabaseError: the file is damaged or not ours.
        StorageError: it cannot be opened.
    """
    from .sqlite.store import SQLiteStorage

    return await SQLiteStorage.open_read_only(path)


def check_storage(path: Path) -> list[StorageCheck]:
    """``doctor``'s checks of the database at ``path``, read-only (safe beside a live daemon).

    Returns the checks in order: ``database`` (missing: warn; not a database
    or unreadable: fail) alone, or ``quick_check`` then ``schema_version``.
    """
    from .sqlite.checks import check_database

    return check_database(path)


async def check_url(url: str) -> list[StorageCheck]:
    """``doctor``'s checks of the PostgreSQL database at ``url``, read-only (nothing migrated or written):
    ``database``, ``schema_version``, ``durability`` and ``privileges`` (``postgres/checks.py``), or
    ``database`` alone when the server cannot be reached; no message holds the password."""
    try:
        from .postgres.checks import check_database as check_postgres
    except ImportError as exc:
        return [StorageCheck("database", "fail", no_driver(exc).message)]
    return await check_postgres(url, redacted_url(url))


def redacted_url(url: str) -> str:
    """A ``postgresql://`` URL as it may be printed: any password replaced by ``***``."""
    return redact_url(url)


async def open_url(url: str, *, max_open_tool_calls: int = 0) -> Storage:
    """Open (and migrate) the PostgreSQL database at ``url`` outside a daemon (``copy``).

    Raises:
        StorageUnavailableError: the driver is missing, or the server cannot be reached or refuses the
            login (the message names the server, never the password).
        CorruptDatabaseError: the schema is not ours or newer than this code.
    """
    return await _postgres().open(url, max_open_tool_calls=max_open_tool_calls)


async def open_file(path: Path) -> Storage:
    """Open (create and migrate if new) the SQLite database at ``path`` for writing, outside a daemon."""
    from .sqlite.store import SQLiteSettings, SQLiteStorage

    return await SQLiteStorage.open(path, SQLiteSettings(), max_open_tool_calls=0)
