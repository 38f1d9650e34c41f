"""The workspace's own record of its store: ``.claw/config.toml``, read by every entry point, and the one
rule that decides which store a command uses.

The file names the backend (``database``: a ``postgresql://`` URL, or ``sqlite:`` for the SQLite file)
and where the password is found, never the password itself: ``password_file`` (a file holding only the
password) or ``password_env`` (the name of an environment variable); without either, libpq's own
``PGPASSFILE`` / ``~/.pgpass`` apply. It is written by ``claw-sessiond init`` and by ``serve`` the first
time a workspace is served with a ``postgresql://`` URL (``--database``, ``--database-file``,
``CLAW_DATABASE_URL``, the systemd credential), once the store has opened: mode 0600, through a
temporary file renamed over it, never through a link. It is read (at most :data:`MAX_CONFIG_BYTES`) by
``serve`` with or without flags (so a client's auto-start serves the recorded store), the offline views,
``doctor`` and ``backup``.

:func:`resolve_backend` is the rule: a URL given explicitly that names another store than the one
recorded is refused, naming both, unless switching is asked for; PostgreSQL (recorded or given) beside a
``sessions.db`` is refused too, switching or not, naming both stores: the workspace would then have two
(a later ``serve`` without the URL, or a client's auto-start, would serve the file). ``copy`` moves the
data and the file is moved away by hand; nothing switches silently and nothing here moves a file. A
workspace without ``config.toml`` is what it always was: the SQLite file.

This module never opens a store and never reads ``os.environ`` (the caller passes the environment).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from claw_sessiond_client.paths import claw_dir

from .claw_dir import check_secret_file, secret_file_problem
from .config import ConfigError, DatabaseUrl, parse_database_url

__all__ = [
    "CONFIG_NAME",
    "MAX_CONFIG_BYTES",
    "Backend",
    "WorkspaceConfig",
    "explicit_database",
    "password_of",
    "read_workspace_config",
    "resolve_backend",
    "write_workspace_config",
]

CONFIG_NAME: Final = "config.toml"
#: Largest ``.claw/config.toml`` read (a few lines in practice); a larger one is refused.
MAX_CONFIG_BYTES: Final = 64 * 1024
#: Largest password file read.
_MAX_PASSWORD_BYTES: Final = 4096
_KEYS: Final = ("database", "password_file", "password_env")
_NO_PASSWORD_HERE: Final = (
    "a password is never stored in .claw/config.toml: put it in a file named by --password-file, in "
    "PGPASSFILE (~/.pgpass), or in an environment variable named by --password-env"
)


@dataclass(frozen=True, slots=True)
class WorkspaceConfig:
    """The content of ``.claw/config.toml``."""

    database: str = ""
    """``postgresql://`` URL without password, ``sqlite:``, or "" (none recorded)."""
    password_file: str = ""
    """A file holding the database password (only it), or ""."""
    password_env: str = ""
    """The name of an environment variable holding the database password, or ""."""
    other: Mapping[str, object] = field(default_factory=dict)
    """Keys this version does not know, kept as they are when the file is rewritten."""

    def render(self) -> str:
        """The TOML text of this configuration.

        Raises:
            ConfigError: the URL holds a password, or a kept key is not a plain value.
        """
        if parse_database_url(self.database).has_password:
            raise ConfigError("database", _NO_PASSWORD_HERE, "(a URL with a password)")
        lines = ["# claw-sessiond: where this workspace's sessions are stored (docs/postgres.md).\n"]
        for key in _KEYS:
            value = getattr(self, key)
            if value:
                lines.append(f"{key} = {json.dumps(value)}\n")  # a JSON string is a TOML basic string
        for key, value in self.other.items():
            if not isinstance(value, str | int | float | bool) or not key.replace("_", "").isalnum():
                raise ConfigError("config.toml", "cannot keep this key when rewriting the file", key)
            lines.append(f"{key} = {json.dumps(value)}\n")
        return "".join(lines)


@dataclass(frozen=True, slots=True)
class Backend:
    """The store a command uses, and where that was decided."""

    url: str = field(repr=False)
    """The URL to open ("" or ``sqlite:``: the SQLite file), with the password if the record names one."""
    database: DatabaseUrl
    """The parsed URL (its ``described``/``target`` are safe to print)."""
    source: str
    """Where it came from: ``--database``, ``CLAW_DATABASE_URL``, ``.claw/config.toml``, ``default``..."""
    record: WorkspaceConfig | None = None
    """What to write to ``.claw/config.toml`` once the store has opened (first use, or a switch); else None."""


def _config_path(workspace: Path) -> Path:
    return claw_dir(workspace) / CONFIG_NAME


def read_workspace_config(workspace: Path) -> WorkspaceConfig | None:
    """``<workspace>/.claw/config.toml``, or None if there is none.

    Raises:
        ConfigError: it is a link or not a regular file, larger than :data:`MAX_CONFIG_BYTES`, not TOML, or
            a known key is not a string.
    """
    path = _config_path(workspace)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        problem = "is a symbolic link (refused)" if os.path.islink(path) else f"cannot be read ({exc.strerror})"
        raise ConfigError("config.toml", f"{path} {problem}", str(path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError("config.toml", f"{path} is not a regular file", str(path))
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError("config.toml", f"{path} is larger than {MAX_CONFIG_BYTES} bytes", str(path))
    import tomllib  # here: most workspaces have no config.toml, and their daemons need no TOML parser

    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError("database", f"cannot read {path}: {exc}", str(path)) from None
    for key in _KEYS:
        if not isinstance(doc.get(key, ""), str):
            raise ConfigError("database", f"{key!r} in {path} must be a string", type(doc[key]).__name__)
    check_secret_file(path, doc.get("database", ""), "database")  # a hand-written URL with its password
    return WorkspaceConfig(
        database=doc.get("database", ""),
        password_file=doc.get("password_file", ""),
        password_env=doc.get("password_env", ""),
        other={k: v for k, v in doc.items() if k not in _KEYS},
    )


def write_workspace_config(folder: Path, config: WorkspaceConfig) -> Path:
    """Write ``folder/config.toml`` (``folder`` is a checked ``.claw/``): a 0600 temporary file, synced, then
    renamed over the old one (a link there is replaced, never followed); returns its path.

    Raises:
        ConfigError: the URL holds a password.
        OSError: it cannot be written.
    """
    text = config.render().encode()
    path = folder / CONFIG_NAME
    tmp = folder / f".{CONFIG_NAME}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, text)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    return path


def explicit_database(flag: str | None, file: str | None, env: Mapping[str, str]) -> tuple[str, str]:
    """The URL named outside the workspace and where: ``--database`` (or ``CLAW_SESSIOND_DATABASE``), else the
    content of ``--database-file``, else ``CLAW_DATABASE_URL``, else the systemd credential ``database``
    (``$CREDENTIALS_DIRECTORY/database``); ("", "") if none.

    Raises:
        ConfigError: both --database and --database-file, a file that cannot be read, or one holding a
            password that others may read (:func:`claw_sessiond.claw_dir.check_secret_file`).
    """
    if flag and file:
        raise ConfigError("database", "give --database or --database-file, not both", "(both)")
    source = "--database-file"
    credential = Path(env["CREDENTIALS_DIRECTORY"]) / "database" if env.get("CREDENTIALS_DIRECTORY") else None
    if not flag and not file and not env.get("CLAW_DATABASE_URL") and credential and credential.is_file():
        file, source = str(credential), "the credential 'database'"
    if file:
        try:
            text = Path(file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError("database-file", f"cannot read {file}: {type(exc).__name__}", file) from None
        check_secret_file(Path(file), text, "database-file")
        return text, source
    if flag:
        return flag, "--database"
    if env.get("CLAW_DATABASE_URL"):
        return env["CLAW_DATABASE_URL"], "CLAW_DATABASE_URL"
    return "", ""


def password_of(config: WorkspaceConfig, env: Mapping[str, str]) -> str | None:
    """The password the record says where to find, or None (libpq's PGPASSFILE / ~/.pgpass then apply).

    Raises:
        ConfigError: the file cannot be read, others may read it, or the variable is not set.
    """
    if config.password_file:
        problem = secret_file_problem(Path(config.password_file))
        if problem is not None:
            raise ConfigError("password_file", problem, config.password_file)
        try:
            with open(config.password_file, "rb") as f:
                data = f.read(_MAX_PASSWORD_BYTES + 1)
        except OSError as exc:
            raise ConfigError("password_file", f"cannot read it: {exc.strerror}", config.password_file) from None
        if len(data) > _MAX_PASSWORD_BYTES:
            raise ConfigError("password_file", f"larger than {_MAX_PASSWORD_BYTES} bytes", config.password_file)
        return data.decode("utf-8", "replace").rstrip("\r\n")
    if config.password_env:
        if config.password_env not in env:
            raise ConfigError("password_env", "names an environment variable that is not set", config.password_env)
        return env[config.password_env]
    return None


def _mismatch(source: str, given: DatabaseUrl, recorded: str, workspace: Path) -> ConfigError:
    return ConfigError(
        "database",
        f"{source} names {given.described} but the workspace {workspace} uses {recorded}; move the data "
        "with 'claw-sessiond copy', then pass --switch-backend to serve this store from now on",
        source,
    )


def resolve_backend(
    workspace: Path,
    env: Mapping[str, str],
    explicit: tuple[str, str] = ("", ""),
    *,
    switch: bool = False,
) -> Backend:
    """The store of ``workspace``: the explicit URL (``explicit`` = (url, where it came from)) if it agrees
    with the workspace's record, else the record, else the SQLite file.

    Raises:
        ConfigError: a malformed URL or config.toml; an explicit store other than the recorded one without
            ``switch``; PostgreSQL (given or recorded, with ``switch`` or not) beside a ``.claw/sessions.db``
            (a link or any other file there included), naming both; a password the record points to that
            cannot be read.
    """
    url, source = explicit
    config = read_workspace_config(workspace)
    recorded = parse_database_url(config.database) if config is not None and config.database else None
    sqlite_file = claw_dir(workspace) / "sessions.db"
    has_sqlite = os.path.lexists(sqlite_file)
    if url:
        given = parse_database_url(url)
        if recorded is not None and not recorded.same_store(given) and not switch:
            raise _mismatch(source, given, f"{recorded.described} (.claw/config.toml)", workspace)
        record = None
        if recorded is None or not recorded.same_store(given):
            if given.backend == "postgresql" or recorded is not None:
                record = WorkspaceConfig(given.without_password(), other=config.other if config is not None else {})
        elif config is not None and not given.has_password:
            password = password_of(config, env)
            if password is not None:
                url = given.with_password(password)
        chosen = given
    elif recorded is not None:
        assert config is not None
        chosen, source, record = recorded, ".claw/config.toml", None
        password = password_of(config, env) if recorded.backend == "postgresql" else None
        url = config.database if password is None else recorded.with_password(password)
    else:
        return Backend("", parse_database_url(""), "default")
    if chosen.backend == "postgresql" and has_sqlite:
        raise ConfigError(
            "database",
            f"{source} names {chosen.described} for the workspace {workspace}, but it also holds the SQLite file "
            f"{sqlite_file}; copy its sessions with 'claw-sessiond copy' and move the file away, so that one "
            "store is the workspace's",
            str(sqlite_file),
        )
    return Backend(url, chosen, source, record)
