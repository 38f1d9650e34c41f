"""sqlite3 errors → domain storage errors, translated once, here (keyed on the error name, never on text).

Every SQLite call of the backend runs inside :func:`map_sqlite_errors`:
``SQLITE_FULL`` → :class:`~claw_sessiond.errors.StorageFullError`,
``SQLITE_CORRUPT*``/``SQLITE_NOTADB`` → ``CorruptDatabaseError``, anything
else (busy, I/O, read-only) → ``StorageUnavailableError``; always chained
with ``from exc``.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from ...errors import CorruptDatabaseError, StorageFullError, StorageUnavailableError

__all__ = ["map_sqlite_errors"]


@contextlib.contextmanager
def map_sqlite_errors(path: Path | None = None) -> Iterator[None]:
    """Translate sqlite3 errors into domain storage errors (keyed on the error name, never text)."""
    try:
        yield
    except sqlite3.Error as exc:
        name = getattr(exc, "sqlite_errorname", "") or ""
        where = f" ({path})" if path else ""
        if name == "SQLITE_FULL":
            raise StorageFullError(f"storage is full{where}: {exc}") from exc
        if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or name.startswith("SQLITE_CORRUPT"):
            raise CorruptDatabaseError(f"database is corrupt{where}: {exc}") from exc
        raise StorageUnavailableError(f"storage failed{where}: {name or type(exc).__name__}: {exc}") from exc
