"""``backup FILE`` and ``restore FILE``: a verified copy of the whole store, and putting one back.

``backup`` asks the running daemon for a copy (the Backup RPC: SQLite's
online backup API, one snapshot, writes go on meanwhile). With no daemon it
takes the daemon's lock (``.claw/sessiond.lock``) itself, so no daemon can
start meanwhile, and copies from a read-only connection. Either way the copy
goes into a private temporary file beside FILE, is verified read-only
(``integrity_check``, ``application_id``, schema version, and the session and
event counts against the figures given when it was made), fsynced, and only
then renamed to FILE. An existing FILE is replaced only with ``--force``.

``restore`` needs the daemon stopped: it takes the lock, or refuses; like
``serve`` it first checks ``.claw/`` (:mod:`claw_sessiond.claw_dir`: owner,
mode, no links, no database file of another user) and refuses with
``serve``'s message, writing nothing. It
copies FILE into a private temporary file in ``.claw/``, verifies that copy
exactly as ``backup`` does (a corrupt or foreign file is refused and nothing
changes), refuses to replace a store that holds sessions (or that cannot be
read) unless ``--force``, keeps the previous database with its ``-wal`` and
``-shm`` as ``.claw/sessions.db.before-restore-<time>`` (renamed together,
database first, so its committed WAL data stays with it; nothing is deleted
or checkpointed), then renames the verified copy into place and fsyncs the
folder.

Both work on the SQLite file under ``.claw/`` only: with a PostgreSQL database
configured for the workspace (``CLAW_DATABASE_URL``, ``database`` in
``.claw/config.toml``) they refuse (exit 1, nothing written) and name
``pg_dump``; the daemon's Backup RPC is refused there too.

Exit codes: 0 ok, 1 failure (refused, verification failed, daemon running
for restore), 2 usage error. ``--json`` prints one document with ``"format": 1``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import stat
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from claw_sessiond_client import SessiondError
from claw_sessiond_client.errors import DaemonUnavailableError
from claw_sessiond_client.paths import claw_dir

from ..errors import CorruptDatabaseError
from ..errors import SessiondError as DomainError
from .connect import open_client, socket_path
from .failure import EXIT_OK, report_error
from .offline import configured_database
from .options import Command, set_epilog
from .output import counted, print_json
from .termsafe import visible

if TYPE_CHECKING:
    from ..storage import CopyFigures

# The storage code is imported by the functions that use it (a command imports this module for its options).

__all__ = ["BACKUP", "RESTORE", "backup", "restore"]

_EXIT_CODES: Final = "Exit codes: 0 ok, 1 failure (refused, verification failed, daemon state), 2 usage error."
#: Most attempts at a free name for the kept database (``-1`` … ``-99`` after the time).
_MAX_KEEP_NAMES: Final = 100


class _Refused(Exception):
    """The command stops; the message says why (exit 1). Nothing was changed unless the message says so."""


def _fail(args: argparse.Namespace, message: str) -> int:
    """Exit 1 with the message on stderr (and, with --json, the JSON error document on stdout)."""
    return report_error(args, message)


def _add_common(parser: argparse.ArgumentParser, about: str) -> None:
    set_epilog(parser, about, _EXIT_CODES)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_copy(path: Path) -> None:
    """Remove a temporary copy and the side files a read of it may have created."""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


@contextlib.contextmanager
def _workspace_lock(folder: Path, why: str, *, create: bool) -> Iterator[None]:
    """Hold the daemon's lock after serve's checks of ``folder``: no daemon runs, and none can start, inside the
    block (``create``: make ``.claw/`` if missing, as serve does)."""
    from ..claw_dir import claim_workspace
    from ..errors import LockHeldError, StartupError

    try:
        fd = claim_workspace(folder, create=create)
    except LockHeldError as exc:
        raise _Refused(f"{exc}; {why}") from exc
    except StartupError as exc:
        raise _Refused(f"{exc}; nothing was changed") from exc
    try:
        yield
    finally:
        os.close(fd)


def _verify(path: Path, expected: CopyFigures | None) -> CopyFigures:
    """check_copy, and the counts against what was reported when the copy was made."""
    from ..storage import check_copy

    try:
        got = check_copy(path)
    except CorruptDatabaseError as exc:
        raise _Refused(f"verification failed: {exc.message}") from exc
    if expected is not None and (got.sessions, got.events) != (expected.sessions, expected.events):
        raise _Refused(
            f"verification failed: {path} holds {counted(got.sessions, 'session')} and {counted(got.events, 'event')}, "
            f"but the copy was reported with {counted(expected.sessions, 'session')} and "
            f"{counted(expected.events, 'event')}"
        )
    return got


def _report(args: argparse.Namespace, verb: str, file: Path, figures: CopyFigures, extra: dict[str, Any]) -> None:
    if args.json:
        doc = {
            "command": verb,
            "file": str(file),
            "sessions": figures.sessions,
            "events": figures.events,
            "bytes": figures.bytes,
            "schema_version": figures.schema_version,
            "verified": True,
            **extra,
        }
        print_json(doc)
        return
    print(
        visible(
            f"{verb} {file}: {counted(figures.sessions, 'session')}, {counted(figures.events, 'event')}, "
            f"{counted(figures.bytes, 'byte')}, verified"
        )
    )


# ---------------------------------------------------------------- backup


def _add_backup(parser: argparse.ArgumentParser) -> None:
    from ..storage import BACKUP_CHUNK_BYTES

    parser.add_argument("file", metavar="FILE", help="where to write the copy (mode 0600)")
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists")
    _add_common(
        parser,
        "With a daemon running, it makes the copy (SQLite's online backup API: one consistent snapshot while it "
        f"goes on serving) and streams it in pieces of at most {BACKUP_CHUNK_BYTES // (1024 * 1024)} MiB. With no "
        "daemon, backup takes the workspace lock and copies from a read-only connection. The copy is verified "
        "(integrity_check, application_id, schema version, session and event counts) before it is renamed to FILE.",
    )


def _from_daemon(args: argparse.Namespace, tmp: Path) -> CopyFigures:
    """Raises DaemonUnavailableError if no daemon answers (nothing was written then)."""
    from ..storage import CopyFigures

    with open_client(args.workspace, socket_path(args), timeout_s=None) as client:
        fd = os.open(tmp, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "wb") as fh:
            got = client.backup(fh)
            fh.flush()
            os.fsync(fh.fileno())
    return CopyFigures(got.sessions, got.events, got.bytes, got.schema_version)


def _offline_copy(workspace: Path, tmp: Path) -> CopyFigures:
    from ..storage import check_database_file, copy_database

    folder = claw_dir(workspace)
    db = folder / "sessions.db"
    if not folder.is_dir() or not db.exists() or db.stat().st_size == 0:
        raise _Refused(f"no daemon runs for {workspace} and {db} does not exist: nothing to back up")
    os.umask(0o077)  # a read-only connection may create -shm beside the database
    with _workspace_lock(folder, "it does not answer (starting or stopping?): try again in a moment", create=False):
        print(visible(f"claw-sessiond: no daemon running; copying {db} under the workspace lock"), file=sys.stderr)
        try:
            check_database_file(db)
            return copy_database(db, tmp, locked=True)
        except DomainError as exc:
            raise _Refused(f"{exc.message} (nothing was written)") from exc


def _on_postgres(args: argparse.Namespace, verb: str) -> str:
    """Why ``verb`` refuses this workspace ("" when its store is the SQLite file): a PostgreSQL database is
    configured for it (or the configuration is broken), so the SQLite file under ``.claw/`` is not its store."""
    from ..storage import redacted_url

    url, problem = configured_database(Path(os.path.abspath(args.workspace)))
    if problem:
        return f"{verb}: {problem}; nothing was written"
    if not url:
        return ""
    how = "pg_dump (or the server's own backups)" if verb == "backup" else "pg_restore or psql from a pg_dump"
    return (
        f"{verb}: the store of {args.workspace} is the PostgreSQL database {redacted_url(url)} (CLAW_DATABASE_URL or "
        f"database in .claw/config.toml), and {verb} handles only the SQLite file under .claw/; use {how} "
        "for that database, or 'claw-sessiond copy' to move sessions between backends; nothing was written"
    )


def backup(args: argparse.Namespace) -> int:
    """Write a verified copy of the whole store to FILE."""
    from ..storage import create_private_file

    if refused := _on_postgres(args, "backup"):
        return _fail(args, refused)
    target = Path(os.path.abspath(args.file))
    if target.is_dir():
        return _fail(args, f"{target} is a folder; give a file name")
    if (target.exists() or target.is_symlink()) and not args.force:
        return _fail(args, f"{target} exists; add --force to replace it")
    if not target.parent.is_dir():
        return _fail(args, f"{target.parent} does not exist")
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        create_private_file(tmp)
    except OSError as exc:
        return _fail(args, f"{tmp}: cannot create: {exc.strerror}")
    source = "daemon"
    try:
        try:
            expected = _from_daemon(args, tmp)
        except DaemonUnavailableError:
            source = "offline"
            os.truncate(tmp, 0)  # a daemon that died mid-stream may have sent part of a copy
            expected = _offline_copy(Path(os.path.abspath(args.workspace)), tmp)
        figures = _verify(tmp, expected)
        os.replace(tmp, target)
        _fsync_folder(target.parent)
    except (_Refused, SessiondError) as exc:
        _unlink_copy(tmp)
        return _fail(
            args, f"backup {target}: {exc}; " + (f"{target} unchanged" if target.exists() else "nothing was written")
        )
    except OSError as exc:
        _unlink_copy(tmp)
        return _fail(args, f"backup {target}: {exc.filename or tmp}: {exc.strerror}")
    except BaseException:
        _unlink_copy(tmp)
        raise
    _report(args, "backup", target, figures, {"source": source})
    return EXIT_OK


# ---------------------------------------------------------------- restore


def _add_restore(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a backup made by 'claw-sessiond backup'")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a store that holds sessions (it is kept as .claw/sessions.db.before-restore-<time>)",
    )
    _add_common(
        parser,
        "The daemon must be stopped (claw-sessiond stop): restore takes the workspace lock, or refuses. FILE is "
        "copied into .claw/ and verified as backup verifies; a corrupt or foreign file changes nothing. A "
        "store that holds sessions is replaced only with --force, and the previous database (with its -wal and "
        "-shm) is kept as .claw/sessions.db.before-restore-<time>, never deleted.",
    )


def _copy_in(source: Path, tmp: Path) -> None:
    """Copy FILE's bytes into the private ``tmp`` (bounded pieces), fsynced."""
    from ..storage import BACKUP_CHUNK_BYTES

    with open(source, "rb") as src:
        fd = os.open(tmp, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "wb") as dst:
            while chunk := src.read(BACKUP_CHUNK_BYTES):
                dst.write(chunk)
            dst.flush()
            os.fsync(dst.fileno())


def _keep_aside(db: Path) -> Path | None:
    """Rename the database, then its -wal and -shm, to a free ``sessions.db.before-restore-<time>`` name."""
    side = [Path(f"{db}{s}") for s in ("", "-wal", "-shm")]
    if not any(p.exists() for p in side):
        return None
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    for n in range(_MAX_KEEP_NAMES):
        kept = db.parent / f"{db.name}.before-restore-{stamp}{f'-{n}' if n else ''}"
        if not any(Path(f"{kept}{s}").exists() for s in ("", "-wal", "-shm")):
            break
    else:
        raise _Refused(f"no free name for keeping {db} (before-restore-{stamp}-*); move old copies away")
    # Database first: a crash after it leaves a -wal without its database, which the daemon refuses to
    # start with; the other order could leave the database without its committed WAL data.
    for suffix, path in zip(("", "-wal", "-shm"), side, strict=True):
        if path.exists():
            os.rename(path, f"{kept}{suffix}")
            os.chmod(f"{kept}{suffix}", stat.S_IRUSR | stat.S_IWUSR)
    return kept


def restore(args: argparse.Namespace) -> int:
    """Replace the workspace's store with a verified backup (daemon stopped)."""
    from ..storage import create_private_file, stored_sessions

    if refused := _on_postgres(args, "restore"):
        return _fail(args, refused)
    source = Path(os.path.abspath(args.file))
    if not source.is_file():
        return _fail(args, f"{source} is not a file")
    workspace = Path(os.path.abspath(args.workspace))
    folder = claw_dir(workspace)
    os.umask(0o077)
    db = folder / "sessions.db"
    try:
        with _workspace_lock(folder, f"stop it first: claw-sessiond stop --workspace {workspace}", create=True):
            tmp = folder / f".restore-{uuid.uuid4().hex[:12]}.tmp"
            create_private_file(tmp)
            try:
                _copy_in(source, tmp)
                try:
                    figures = _verify(tmp, None)
                except _Refused as exc:
                    raise _Refused(f"{source} is not a usable backup: {exc}; nothing was changed") from exc
                for side in (Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):  # created empty by a read of a WAL copy
                    with contextlib.suppress(FileNotFoundError):
                        side.unlink()
                stored = stored_sessions(db)
                if stored != 0 and not args.force:
                    what = f"holds {counted(stored, 'session')}" if stored is not None else "cannot be read"
                    raise _Refused(
                        f"{db} {what}; add --force to replace it (it is kept as "
                        f"{db.name}.before-restore-<time>); nothing was changed"
                    )
                kept = _keep_aside(db)
                os.replace(tmp, db)
                _fsync_folder(folder)
            except BaseException:
                _unlink_copy(tmp)
                raise
    except _Refused as exc:
        return _fail(args, f"restore {source}: {exc}")
    except OSError as exc:
        return _fail(args, f"restore {source}: {exc.filename or ''}: {exc.strerror}")
    if not args.json and kept is not None:
        print(visible(f"previous database kept as {kept}"))
    _report(args, "restore", source, figures, {"installed": str(db), "kept": str(kept) if kept else None})
    return EXIT_OK


BACKUP: Final = Command(
    "backup",
    "write a verified copy of the whole store to FILE (daemon running or not)",
    _add_backup,
    backup,
)

RESTORE: Final = Command(
    "restore",
    "replace the store with a verified backup FILE (daemon stopped; the old database is kept)",
    _add_restore,
    restore,
)
