"""``copy --from SOURCE --to TARGET``: move a whole store between SQLite and PostgreSQL.

SOURCE and TARGET are each a ``postgresql://`` URL, a workspace folder (its ``.claw/sessions.db``,
or the database its ``.claw/config.toml`` records) or a SQLite database file. The copy runs without
a daemon (:mod:`claw_sessiond.store_copy`): a SQLite side inside a workspace is held under the
workspace's lock (``.claw/sessiond.lock``), so its daemon must be stopped and none can start
meanwhile; the source is only read. Both sides first pass ``serve``'s checks of ``.claw/``
(:mod:`claw_sessiond.claw_dir`: owner, mode, no links, no database file of another user), refused
with its message before anything is written. Sessions are copied one by one through the export format, each
verified by comparing the target's export of it with the source's, and the session and event counts
are checked at the end; then the shared scope states, verbatim, verified by comparing rows and
counts. Progress goes to stderr; the result to stdout (``--json``: one document).

A target that holds sessions or scope states is refused unless ``--replace``. URLs are printed
with their password replaced by ``***``; give the password with ``PGPASSWORD``,
``PGPASSFILE`` or ``~/.pgpass`` rather than in the URL (visible in ``ps``).
Exit codes: 0 copied and verified, 1 failure, 2 usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from claw_sessiond_client.paths import claw_dir

from ..config import environ, parse_database_url
from ..errors import LockHeldError, SessiondError
from ..errors import StartupError as DomainStartupError
from ..workspace_config import resolve_backend
from .failure import EXIT_OK, EXIT_USAGE, report_error
from .options import Command
from .output import counted, print_json, say

if TYPE_CHECKING:
    from ..storage import Storage
    from ..store_copy import CopyFigures

# The storage code is imported by the functions that use it (a command imports this module for its options).

__all__ = ["COPY"]

_URL_SCHEMES: Final = ("postgresql://", "postgres://")
#: Seconds between two progress lines (and one after the last session).
_PROGRESS_EVERY_S: Final = 1.0


@dataclass(frozen=True, slots=True)
class _Place:
    """One side of the copy: a PostgreSQL URL or a SQLite file (with the workspace lock to hold)."""

    url: str = ""
    db: Path | None = None
    lock: Path | None = None

    @property
    def shown(self) -> str:
        from ..storage import redacted_url

        return redacted_url(self.url) if self.url else str(self.db)


def _place(value: str, *, source: bool) -> _Place:
    if value.startswith(_URL_SCHEMES):
        parse_database_url(value)  # a malformed URL is a usage error (ConfigError), one line
        return _Place(url=value)
    if "://" in value:
        raise ValueError(
            f"{value.split('://', 1)[0]}:// is not a store; give a postgresql:// URL, a workspace or a file"
        )
    path = Path(os.path.abspath(value))
    if path.is_dir():
        backend = resolve_backend(path, environ())
        if backend.database.backend == "postgresql":  # the workspace's store (.claw/config.toml)
            return _Place(url=backend.url, lock=claw_dir(path) / "sessiond.lock")
        path = claw_dir(path) / "sessions.db"
        if source and not path.exists():
            raise ValueError(f"{path} does not exist (no store in that workspace)")
    elif source and not path.exists():
        raise ValueError(f"{path} does not exist")
    elif not path.parent.is_dir():
        raise ValueError(f"{path.parent} does not exist")
    lock = path.parent / "sessiond.lock" if path.parent.name == ".claw" else None
    return _Place(db=path, lock=lock)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Copy every session of a store into another one, between SQLite and PostgreSQL either way. "
        "SOURCE and TARGET are each a postgresql:// URL, a workspace folder (its .claw/sessions.db, created "
        "for a target) or a SQLite database file. A SQLite side in a workspace is copied under the workspace "
        "lock: stop its daemon first. Stop the daemons on a PostgreSQL source too (a session written during "
        "the copy fails its verification). Each session is imported in one transaction and verified: the "
        "target's export of it must equal the source's byte for byte; the session and event counts are "
        "checked at the end. The states of shared scopes (app:..., user:...) are copied too, verbatim, and verified "
        "the same way. Not copied: idempotency records (a request whose reply was lost before the copy and that "
        "is retried against the target is applied again). Progress goes to stderr. "
        "Give a PostgreSQL password with PGPASSWORD, PGPASSFILE or "
        "~/.pgpass, not in the URL: every URL is printed with its password as ***."
    )
    parser.add_argument("--from", dest="source", required=True, metavar="SOURCE", help="the store to copy")
    parser.add_argument("--to", dest="target", required=True, metavar="TARGET", help="the store to copy into")
    parser.add_argument(
        "--replace",
        action="store_true",
        help="copy into a target that already holds sessions or scope states: a session or scope the source also "
        "has is replaced by the source's (a session's old events are removed), the target's others are kept "
        "(default: refuse a target that holds any session or scope state, writing nothing)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    parser.epilog = "Exit codes: 0 copied and verified, 1 failure (nothing more is written after it), 2 usage error."


@contextlib.contextmanager
def _locked(place: _Place, *, source: bool) -> Iterator[None]:
    """Hold a workspace side under serve's checks and the daemon's lock (no daemon runs on it meanwhile)."""
    if place.lock is None:
        yield
        return
    from ..claw_dir import claim_workspace
    from ..store_copy import CopyError

    try:
        fd = claim_workspace(place.lock.parent, create=not source)
    except LockHeldError as exc:
        raise CopyError(f"{exc}; stop the daemon of {place.lock.parent.parent} first") from exc
    except DomainStartupError as exc:
        raise CopyError(f"{exc}; nothing was written") from exc
    try:
        yield
    finally:
        os.close(fd)


@contextlib.asynccontextmanager
async def _opened(place: _Place, *, source: bool) -> AsyncIterator[Storage]:
    from ..storage import open_file, open_read_only, open_url

    if place.url:
        store = await open_url(place.url)
    elif source:
        assert place.db is not None
        store = await open_read_only(place.db)
    else:
        assert place.db is not None
        store = await open_file(place.db)
    try:
        yield store
    finally:
        await store.close()


class _Progress:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.last = time.monotonic()

    def __call__(self, figures: CopyFigures, session_id: str) -> None:
        now = time.monotonic()
        if self.quiet or (now - self.last < _PROGRESS_EVERY_S and figures.sessions != figures.sessions_total):
            return
        self.last = now
        say(
            f"copy: {figures.sessions}/{counted(figures.sessions_total, 'session')}, "
            f"{counted(figures.events, 'event')} (last: {session_id})",
            err=True,
            flush=True,
        )


async def _copy(src: _Place, dst: _Place, args: argparse.Namespace) -> CopyFigures:
    from ..store_copy import copy_store

    async with _opened(src, source=True) as source, _opened(dst, source=False) as target:
        return await copy_store(source, target, replace=args.replace, progress=_Progress(args.quiet))


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from ..store_copy import CopyError

    try:
        src = _place(args.source, source=True)
        dst = _place(args.target, source=False)
    except ValueError as exc:
        return report_error(args, f"copy: {exc}", reason="USAGE", code=EXIT_USAGE)
    if src == dst or (src.db is not None and dst.db is not None and src.db.resolve() == dst.db.resolve()):
        return report_error(args, "copy: the source and the target are the same store", reason="USAGE", code=EXIT_USAGE)
    started = time.monotonic()
    try:
        with _locked(src, source=True), _locked(dst, source=False):
            if not args.quiet:
                say(f"copy: from {src.shown} to {dst.shown}", err=True)
            figures = asyncio.run(_copy(src, dst, args))
    except (CopyError, SessiondError) as exc:
        return report_error(args, f"copy from {src.shown} to {dst.shown}: {_message(exc)}")
    except OSError as exc:
        return report_error(args, f"copy: {exc.filename or ''}: {exc.strerror}")
    elapsed = time.monotonic() - started
    if args.json:
        print_json(
            {
                "source": src.shown,
                "target": dst.shown,
                "sessions": figures.sessions,
                "events": figures.events,
                "replaced": figures.replaced,
                "target_sessions": figures.target_sessions,
                "scopes": figures.scopes,
                "replaced_scopes": figures.replaced_scopes,
                "target_scopes": figures.target_scopes,
                "verified": True,
                "seconds": round(elapsed, 3),
            }
        )
    else:
        replaced = f", {len(figures.replaced)} replaced" if figures.replaced else ""
        say(
            f"copied {counted(figures.sessions, 'session')} ({counted(figures.events, 'event')}{replaced}) and "
            f"{counted(figures.scopes, 'scope state')} from {src.shown} to {dst.shown} in {elapsed:.1f} s; "
            "verified: counts, exports and scope states match; the target holds "
            f"{counted(figures.target_sessions, 'session')} and {counted(figures.target_scopes, 'scope state')}"
        )
    sys.stdout.flush()
    return EXIT_OK


def _message(exc: Exception) -> str:
    return exc.message if isinstance(exc, SessiondError) else str(exc)


COPY: Final = Command(
    "copy",
    "copy a whole store between SQLite and PostgreSQL (--from, --to), verified by counts and exports",
    _add_arguments,
    _run,
)
