"""The PostgreSQL backend (``--database postgresql://…``): several daemons share one database (docs/postgres.md).

Imported only when the daemon's database URL is a PostgreSQL one, so a
SQLite-only install does not need asyncpg (the ``postgres`` extra).
"""
