"""``migrate-db``: apply a PostgreSQL database's schema migrations, then exit (no daemon is started).

The database is found as ``serve`` finds it (``--database``,
``--database-file``, ``CLAW_DATABASE_URL``, the systemd credential, then
``.claw/config.toml``), the server checked as ``serve`` checks it, and the
pending migrations applied, each in one transaction under the migration
lock, so it is safe beside running daemons and other ``migrate-db`` runs
(docs/postgres.md, "Upgrading"). Named ``migrate-db`` because
``migrate-legacy`` imports legacy session files: a bare ``migrate`` would read
as either. A SQLite store needs no such step: ``serve`` migrates the file
under the workspace lock when it opens it. Exit codes: 0 up to date
(migrated or already), 1 the server is unreachable or unfit or the schema is
not ours or newer, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Final

from ..config import Config, ConfigError, environ
from ..errors import StorageError
from .failure import EXIT_OK, EXIT_USAGE, report_error
from .options import Command, env_option, set_epilog
from .output import print_json, say
from .serve import add_postgres_options, backend_fields, postgres_fields

__all__ = ["MIGRATE_DB"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    env = environ()
    env_option(
        parser,
        "--database",
        env,
        default=None,
        metavar="URL",
        help="the postgresql:// URL (as serve: else --database-file, CLAW_DATABASE_URL, the credential "
        "'database', then 'database' in .claw/config.toml); put no password here: use PGPASSFILE",
    )
    env_option(
        parser, "--database-file", env, default=None, metavar="FILE", help="read the postgresql:// URL from this file"
    )
    add_postgres_options(parser, env)
    set_epilog(
        parser,
        "Each pending migration runs in one transaction under the migration lock: safe beside running daemons "
        "and other migrate-db runs. A SQLite store needs no such step (serve migrates its file).",
        "Exit codes: 0 up to date (migrated or already), 1 the server is unreachable or unfit or the schema is not "
        "ours or newer, 2 usage or configuration error (no PostgreSQL database configured).",
    )


def _config(args: argparse.Namespace) -> Config:
    workspace = Path(os.path.abspath(args.workspace))
    url = backend_fields(args, environ())["database_url"]
    return Config(workspace=workspace, database_url=url, **postgres_fields(args)).validate()


def _migrate_db(args: argparse.Namespace) -> int:
    import asyncio

    from ..storage import migrate_database, redacted_url  # here, not for every command's --help

    try:
        cfg = _config(args)
        shown = redacted_url(cfg.database_url)
    except (ConfigError, ValueError) as exc:  # ValueError: a URL urllib cannot split (as serve)
        return report_error(args, f"configuration error: {exc}", reason="USAGE", code=EXIT_USAGE)
    if not cfg.uses_postgres:
        return report_error(
            args,
            "no PostgreSQL database is configured (--database, CLAW_DATABASE_URL or .claw/config.toml); a SQLite "
            "store is migrated by 'claw-sessiond serve' when it opens it",
            reason="USAGE",
            code=EXIT_USAGE,
        )
    try:
        before, after, applied = asyncio.run(migrate_database(cfg))
    except StorageError as exc:
        return report_error(args, f"{shown}: {exc}", reason=str(exc.reason))
    if args.json:
        print_json({"database": shown, "version_before": before, "version": after, "applied": applied})
    elif applied:
        say(f"{shown}: schema version {before} -> {after}: applied {', '.join(applied)}")
    else:
        say(f"{shown}: schema version {after}: up to date, nothing applied")
    return EXIT_OK


MIGRATE_DB: Final = Command(
    "migrate-db",
    "apply a PostgreSQL database's schema migrations and exit (safe beside running daemons; docs/postgres.md)",
    _arguments,
    _migrate_db,
)
