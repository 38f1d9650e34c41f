"""``claw-sessiond init``: record where a workspace's sessions are stored, in ``.claw/config.toml``.

``--database URL`` names a PostgreSQL database (default: the SQLite file under ``.claw/``);
``--password-file F`` or ``--password-env NAME`` say where its password is found, since the URL may
not hold one (nor may the file: :mod:`claw_sessiond.workspace_config`). The workspace's lock is held
while the file is written, so no daemon serves the workspace meanwhile. A workspace that already
records another store is refused (exit 2, naming both) unless ``--switch-backend``; one that holds a
SQLite file while ``--database`` names PostgreSQL is refused with or without it (the file must be copied
and moved away first); nothing is written then.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Final

from claw_sessiond_client.paths import claw_dir

from ..config import ConfigError, environ
from ..errors import LockHeldError, StartupError
from ..workspace_config import WorkspaceConfig, password_of, read_workspace_config, resolve_backend
from .failure import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, report_error
from .options import Command, set_epilog
from .output import print_json, say

__all__ = ["INIT"]


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database",
        default="sqlite:",
        metavar="URL",
        help="a postgresql:// URL without password (default: sqlite:, the SQLite file .claw/sessions.db)",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--password-file", metavar="FILE", help="a file holding the database password (only it)")
    group.add_argument("--password-env", metavar="NAME", help="an environment variable holding the database password")
    parser.add_argument(
        "--switch-backend",
        action="store_true",
        help="record this store although the workspace records another one (move the data with copy first)",
    )
    set_epilog(
        parser,
        "Writes .claw/config.toml (0600, atomically, never through a link), which every entry point reads: serve "
        "without flags, a client's auto-start, and the CLI with the daemon up or down. A URL holding a password "
        "is refused: the password stays in --password-file, --password-env, or PGPASSFILE (~/.pgpass).",
        "Exit codes: 0 recorded, 1 failure (a daemon runs, .claw/ unsafe), 2 usage or configuration error.",
    )


def _run(args: argparse.Namespace) -> int:
    from ..claw_dir import claim_workspace
    from ..workspace_config import write_workspace_config

    workspace = Path(os.path.abspath(args.workspace))
    env = environ()
    try:
        backend = resolve_backend(
            workspace, env, (args.database or "sqlite:", "--database"), switch=args.switch_backend
        )
        if backend.database.has_password:
            raise ConfigError(
                "database",
                "the URL holds a password, which is never stored in .claw/config.toml: give it with "
                "--password-file or --password-env, or in PGPASSFILE (~/.pgpass)",
                backend.database.target,
            )
        if backend.database.backend == "sqlite" and (args.password_file or args.password_env):
            raise ConfigError("password", "only a PostgreSQL database takes a password", "sqlite:")
        existing = read_workspace_config(workspace)
        config = WorkspaceConfig(
            backend.database.without_password(),
            password_file=os.path.abspath(args.password_file) if args.password_file else "",
            password_env=args.password_env or "",
            other=existing.other if existing is not None else {},
        )
        password_of(config, env)  # readable now, or a clear error before anything is written
    except ConfigError as exc:
        return report_error(args, f"init: {exc}", reason="USAGE", code=EXIT_USAGE)
    folder = claw_dir(workspace)
    try:
        fd = claim_workspace(folder, create=True)  # serve's checks of .claw/, then the workspace lock
    except LockHeldError as exc:
        return report_error(args, f"init: {exc}; stop the workspace's daemon first")
    except (StartupError, OSError) as exc:
        return report_error(args, f"init: {exc}" if isinstance(exc, StartupError) else f"init: {folder}: {exc}")
    try:
        path = write_workspace_config(folder, config)
    except OSError as exc:
        return report_error(args, f"init: {folder / 'config.toml'}: cannot write: {exc.strerror}", code=EXIT_FAILURE)
    finally:
        os.close(fd)
    if args.json:
        print_json({"workspace": str(workspace), "config": str(path), "database": backend.database.described})
    else:
        say(f"{workspace}: sessions are stored in {backend.database.described} (recorded in {path})")
    return EXIT_OK


INIT: Final = Command(
    "init",
    "record the workspace's store (SQLite file or a PostgreSQL database) in .claw/config.toml",
    _add_arguments,
    _run,
)
