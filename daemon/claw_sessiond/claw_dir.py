"""The checks of a workspace's ``.claw/`` that every writer runs, the workspace lock, and secret files.

Whoever can write in ``.claw/`` can replace the daemon's socket (and read what
clients send) or plant links where a writer opens its lock, database and log.
So ``serve`` and every command that writes a workspace (``copy``,
``restore``, ``import``, ``migrate-legacy``, ``delete``, ``clear``,
``repair``, and the read-only views that take the lock) apply the same
checks, with the same messages:

- the folder (:func:`claw_sessiond_client.paths.folder_problem`): owned by the
  caller, writable by nobody else (no group or other write bit), a link only
  if the caller owns the link and what it points to;
- the database files ``sessions.db``, ``-wal``, ``-shm`` (:func:`check_state_files`):
  absent, or regular files owned by the caller, never links (SQLite would
  follow one).

:func:`claim_workspace` runs them and takes the workspace lock
(``.claw/sessiond.lock``, opened without following links): it is the only
way a process takes that lock, so no writer can skip them. Commands that
write through the running daemon call :func:`check_workspace` (the same
checks, nothing created or locked) before they send anything.

**Secret files.** A file holding a database password (``.claw/config.toml``
whose ``database`` URL has a password, the ``--database-file``, the systemd
credential) must be private, as ssh requires of a private key:
:func:`check_secret_file` refuses one that group or others may read or
write, or that another user owns, naming the file, its mode and
``chmod 600`` (a configuration error, exit 2); ``doctor`` reports the same.
A file without a password may be readable. The libpq password file a URL
without a password reads (``passfile=``, ``$PGPASSFILE``, ``~/.pgpass``) is
held to the same rule (:func:`check_password_file`).

This module never opens the database and never signals a process.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

from claw_sessiond_client.paths import folder_problem, user_label

from .config import ConfigError, parse_database_url
from .errors import LockHeldError, StartupError

__all__ = [
    "LOCK_NAME",
    "STATE_FILES",
    "acquire_lock",
    "check_password_file",
    "check_secret_file",
    "check_state_files",
    "check_workspace",
    "claim_workspace",
    "claimed_workspace",
    "password_file",
    "prepare_claw_dir",
    "secret_file_problem",
    "url_has_password",
]

#: The workspace lock's file name in ``.claw/``.
LOCK_NAME: Final = "sessiond.lock"
#: The database files a writer opens in ``.claw/`` (SQLite opens them itself, following links).
STATE_FILES: Final = ("sessions.db", "sessions.db-wal", "sessions.db-shm")


def prepare_claw_dir(path: Path) -> None:
    """Create ``.claw/`` with mode 0700, or check an existing one and tighten its read bits.

    Such a ``.claw/`` as the module docstring describes is refused (also as
    root), as ssh refuses a key others can read: the message names the folder
    and its owner.

    Raises:
        StartupError: not a folder, owned by another user, or writable by others.
    """
    uid = os.getuid()
    problem = folder_problem(path, {uid})
    if problem is not None:
        raise StartupError(problem)
    path.mkdir(mode=0o700, parents=False, exist_ok=True)
    problem = folder_problem(path, {uid})  # created just now by someone else?
    if problem is not None:
        raise StartupError(problem)
    os.chmod(path, 0o700)


def check_state_files(folder: Path, names: tuple[str, ...] = STATE_FILES, *, uid: int | None = None) -> None:
    """Each of ``names`` in ``folder`` is absent or a regular file owned by ``uid`` (default: this process's).

    sqlite3 opens the database and its ``-wal``/``-shm`` itself, following
    links; checking them here is enough because the folder is ours and
    nobody else can write in it (:func:`prepare_claw_dir`), so nothing can be
    swapped in between this check and SQLite's open.

    Raises:
        StartupError: a file is a link, not a regular file, or owned by another user.
    """
    uid = os.getuid() if uid is None else uid
    for name in names:
        path = folder / name
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            raise StartupError(f"{_link_text(path)}; refusing to follow it")
        if not stat.S_ISREG(info.st_mode):
            raise StartupError(f"{path}: exists and is not a regular file")
        if info.st_uid != uid:
            raise StartupError(
                f"{path}: owned by {user_label(info.st_uid)}, not by this daemon's {user_label(uid)}; "
                "refusing to open it"
            )


def _link_text(path: Path) -> str:
    """``<path>: is a symbolic link (owner uid N (name), to <target>)``, as far as it can be read."""
    try:
        return f"{path}: is a symbolic link (owner {user_label(path.lstat().st_uid)}, to {os.readlink(path)})"
    except OSError:
        return f"{path}: is a symbolic link"


def acquire_lock(path: Path) -> int:
    """Take the exclusive workspace lock; return its fd (kept open for the holder's life).

    The kernel drops an flock when its holder dies, so a crashed daemon leaves
    nothing to clean up. The pid is written into the file for the refusal message.
    The file is opened with ``O_NOFOLLOW``: a link planted there must not make
    the daemon truncate another file. Call :func:`claim_workspace`, which
    checks the folder first; this is its last step.

    Raises:
        LockHeldError: another live process holds it.
        StartupError: the lock file is a link or cannot be opened.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StartupError(f"{_link_text(path)}; refusing to follow it") from exc
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StartupError(f"{path}: exists and is not a regular file")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            os.close(fd)
            raise StartupError(f"{path}: cannot lock: {exc}") from exc
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise LockHeldError(
            f"another claw-sessiond (pid {holder}) is running for this workspace: it holds the lock {path}"
        ) from exc
    os.fchmod(fd, 0o600)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def check_workspace(claw: Path, uid: int | None = None) -> None:
    """serve's checks of ``claw`` (the folder, then the database files), changing nothing; a missing folder passes.

    For a command that writes through the running daemon; ``uid`` is the
    one the workspace must belong to (default: this process's).

    Raises:
        StartupError: with serve's message.
    """
    uid = os.getuid() if uid is None else uid
    problem = folder_problem(claw, {uid})
    if problem is not None:
        raise StartupError(problem)
    if claw.is_dir():
        check_state_files(claw, uid=uid)


def claim_workspace(claw: Path, *, create: bool) -> int:
    """serve's checks of ``claw``, then the workspace lock: return the lock's fd (close it to release).

    With ``create`` (serve and the commands that write the store: ``copy``'s
    target, ``restore``) a missing ``.claw/`` is created 0700 and an
    existing one's read bits are tightened; without it (commands that only
    read under the lock) the folder is checked and left as it is. The
    database files are checked before the lock file is created (a refusal
    creates nothing) and again once the lock is held.

    Raises:
        LockHeldError: a daemon (or another command) holds the lock.
        StartupError: the folder or a database file fails a check (serve's message), or cannot be
            created or opened.
    """
    try:
        if create:
            prepare_claw_dir(claw)
        check_workspace(claw)  # refused before the lock file is created; checked again under the lock
    except OSError as exc:
        raise StartupError(f"{claw}: cannot create: {exc.strerror}") from exc
    lock = claw / LOCK_NAME
    try:
        fd = acquire_lock(lock)
    except OSError as exc:
        raise StartupError(f"{lock}: cannot open: {exc.strerror}") from exc
    try:
        check_state_files(claw)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def claimed_workspace(claw: Path, *, create: bool) -> Iterator[None]:
    """:func:`claim_workspace` for the block; the lock is released at its end.

    Raises:
        LockHeldError, StartupError: as :func:`claim_workspace`.
    """
    fd = claim_workspace(claw, create=create)
    try:
        yield
    finally:
        os.close(fd)


# ---------------------------------------------------------------- secret files


def url_has_password(url: str) -> bool:
    """True if a database URL carries a password (``user:secret@host``, or ``?password=`` as libpq allows)."""
    try:
        return parse_database_url(url.strip()).has_password
    except ConfigError:
        return ":" in url.split("@", 1)[0].split("://", 1)[-1] and "@" in url  # unparsable: judge by its shape


def secret_file_problem(path: Path, what: str = "a database password") -> str | None:
    """Why ``path``, which holds ``what``, is not private enough, or None if it is.

    Private: owned by this uid, with no group or other permission bits (a
    link is judged by what it points to). The text names the owner and mode
    and says ``chmod 600 <path>``; the caller names the file.
    """
    try:
        info = path.stat()
    except OSError as exc:
        return f"cannot inspect: {exc.strerror}"
    mode = stat.S_IMODE(info.st_mode)
    uid = os.getuid()
    if info.st_uid != uid:
        return (
            f"holds {what} but is owned by {user_label(info.st_uid)}, not by {user_label(uid)} (mode {mode:04o}), "
            f"who can read and change it; give it to {user_label(uid)} and chmod 600 {path}"
        )
    if mode & 0o077:
        return f"holds {what} but other users may read it (mode {mode:04o}); run: chmod 600 {path}"
    return None


def check_secret_file(path: Path, url: str, field: str) -> None:
    """Refuse ``path`` if the database ``url`` read from it holds a password and the file is not private.

    Raises:
        ConfigError: ``<field>: holds a database password but other users may read it (mode 0644);
            run: chmod 600 <path> (got '<path>')``.
    """
    if not url_has_password(url):
        return
    problem = secret_file_problem(path)
    if problem is not None:
        raise ConfigError(field, problem, str(path))


def password_file(url: str, env: Mapping[str, str]) -> Path | None:
    """The libpq password file a PostgreSQL ``url`` without a password reads, if it exists: the URL's
    ``passfile=``, else ``$PGPASSFILE``, else ``$HOME/.pgpass``; None otherwise."""
    try:
        parsed = parse_database_url(url)
    except ConfigError:
        return None
    if parsed.backend != "postgresql" or parsed.has_password:
        return None
    home = env.get("HOME", "")
    path = parsed.passfile or env.get("PGPASSFILE", "") or (os.path.join(home, ".pgpass") if home else "")
    return Path(path) if path and os.path.isfile(path) else None


def check_password_file(url: str, env: Mapping[str, str]) -> None:
    """Refuse the password file of :func:`password_file` if it is not private (the client library
    would skip it with a warning, and the connection then fail for want of a password).

    Raises:
        ConfigError: ``PGPASSFILE: holds database passwords but other users may read it (mode 0644);
            run: chmod 600 <path> (got '<path>')``.
    """
    path = password_file(url, env)
    problem = secret_file_problem(path, "database passwords") if path is not None else None
    if path is not None and problem is not None:
        raise ConfigError("PGPASSFILE", problem, str(path))
