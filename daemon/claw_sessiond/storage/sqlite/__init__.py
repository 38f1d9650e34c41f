"""The SQLite backend: one WAL database file under ``.claw/``, one writer thread, read-only readers."""

from .store import SQLiteStorage

__all__ = ["SQLiteStorage"]
