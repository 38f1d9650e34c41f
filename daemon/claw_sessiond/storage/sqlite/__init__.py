"""The SQLite backend: one WAL database file under ``.claw/``, one writer thread, read-only readers.

Modules: ``store.py`` (:class:`SQLiteStorage`: the shared ``storage/store.py`` facade with
SQLite's checkpoints and backups, and its opening), ``engine.py`` (the engine under it: writes,
Load, whole-store reads), ``reading.py`` (the read connections), ``writer.py`` (the writer
thread and group commit), ``tx.py`` (transaction code), ``port.py`` and ``reads.py``'s ``SQLiteReadPort``
(the ports the shared sequences of ``storage/`` run over, their verbs ``storage/sql/``'s), ``conns.py`` (its
dialect of that SQL and its connections in the verbs' shape), ``reads.py`` and
``queries.py`` (a Load's snapshot, paged and cross-session reads), ``files.py`` (file checks at
open), ``backup.py`` (copies), ``checks.py`` (``doctor``), ``schema.py``
(migrations), ``errors.py`` (sqlite3 errors → domain errors), ``runs.py``
(the in-memory run registry). Only this package imports sqlite3 and aiosqlite.
"""

from .store import SQLiteSettings, SQLiteStorage

__all__ = ["SQLiteSettings", "SQLiteStorage"]
