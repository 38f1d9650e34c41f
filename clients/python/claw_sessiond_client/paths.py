"""Where a workspace's daemon lives and listens: the rules shared by daemon and clients.

**Workspace.** A folder given explicitly (``--workspace``,
``$CLAW_SESSIOND_WORKSPACE``) is used as is. Otherwise :func:`find_workspace`
looks upward from the starting folder, as git does, for the nearest folder
holding a ``.claw``; without one, the starting folder is the workspace. The
nearest ``.claw`` must be the caller's own (root's: owned by root), or the
search ends in :class:`~claw_sessiond_client.errors.UntrustedPeerError`:
whoever owns it runs the daemon the caller would talk to.

**Socket.** ``<workspace>/.claw/sessiond.sock``. A Unix socket path is limited
to 108 bytes (``sun_path``, NUL included), so a deep workspace uses a short
path ``<base>/<hash>.sock`` instead, ``<hash>`` derived from the workspace's
absolute path, with ``<base>`` the first of these that fits in 107 bytes:

1. ``$XDG_RUNTIME_DIR/claw-sessiond`` when ``XDG_RUNTIME_DIR`` is set;
2. ``/run/user/<uid>/claw-sessiond`` when ``/run/user/<uid>`` is a folder owned by ``<uid>``;
3. ``<home>/.claw-sessiond`` (home from the password database) when it is a folder owned by ``<uid>``;
4. ``/tmp/claw-sessiond-<uid>``: predictable, so another user can create it
   first; daemon and clients then refuse it (:func:`folder_problem`).

Nobody but ``<uid>`` (and root) can create a folder in 1 to 3. The
workspace's path is taken with symlinks resolved, so every spelling of it
gives the same socket path. Clients read where a running daemon listens from
``.claw/endpoint.json`` first (:mod:`claw_sessiond_client.endpoint`); this rule
is the fallback, and where a daemon started for the workspace will listen.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import stat
from collections.abc import Collection
from pathlib import Path
from typing import Final

from .errors import UntrustedPeerError

__all__ = [
    "CLAW_DIR",
    "MAX_UNIX_PATH_BYTES",
    "WORKSPACE_ENV",
    "claw_dir",
    "default_socket_path",
    "find_workspace",
    "folder_problem",
    "socket_path_for",
    "user_label",
    "workspace_owner",
]

CLAW_DIR = ".claw"
#: Names the workspace when no path is given (the CLI's ``--workspace`` reads it too); used as is.
WORKSPACE_ENV: Final = "CLAW_SESSIOND_WORKSPACE"
SOCKET_NAME = "sessiond.sock"
#: sun_path is 108 bytes including the terminating NUL.
MAX_UNIX_PATH_BYTES = 107


def claw_dir(workspace: str | os.PathLike[str]) -> Path:
    """The workspace's ``.claw`` folder (absolute)."""
    return Path(os.path.abspath(workspace)) / CLAW_DIR


def user_label(uid: int) -> str:
    """``uid 1000 (alice)``, or ``uid 1000`` when the uid has no name."""
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _owned_dir(path: Path, uid: int) -> bool:
    """``path`` is a real folder (not a link) owned by ``uid``."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == uid


def _fallback_bases(runtime_dir: str | None, uid: int) -> list[Path]:
    bases = []
    if runtime_dir:
        bases.append(Path(runtime_dir) / "claw-sessiond")
    run_user = Path(f"/run/user/{uid}")
    if _owned_dir(run_user, uid):
        bases.append(run_user / "claw-sessiond")
    try:
        home = Path(pwd.getpwuid(uid).pw_dir)
    except KeyError:
        home = None
    if home is not None and home.is_absolute() and _owned_dir(home, uid):
        bases.append(home / ".claw-sessiond")
    bases.append(Path(f"/tmp/claw-sessiond-{uid}"))
    return bases


def default_socket_path(
    workspace: str | os.PathLike[str], runtime_dir: str | None = None, uid: int | None = None
) -> Path:
    """The socket path of ``workspace``'s daemon (see the module docstring).

    Args:
        workspace: the workspace folder.
        runtime_dir: ``$XDG_RUNTIME_DIR`` (pass ``os.environ.get("XDG_RUNTIME_DIR")``).
        uid: the uid the daemon runs as (default: this process's).
    """
    real = os.path.realpath(workspace)  # every spelling of the workspace (symlinks) gives one path
    primary = claw_dir(real) / SOCKET_NAME
    if len(os.fsencode(primary)) <= MAX_UNIX_PATH_BYTES:
        return primary
    digest = hashlib.sha256(os.fsencode(claw_dir(real))).hexdigest()[:24]
    bases = _fallback_bases(runtime_dir, os.getuid() if uid is None else uid)
    for base in bases:
        short = base / f"{digest}.sock"
        if len(os.fsencode(short)) <= MAX_UNIX_PATH_BYTES:
            return short
    return bases[-1] / f"{digest}.sock"


def workspace_owner(workspace: str | os.PathLike[str]) -> int:
    """The uid that owns ``workspace``'s state: the owner of ``.claw`` (or of the folder without one)."""
    for path in (claw_dir(workspace), Path(os.path.abspath(workspace))):
        try:
            return path.lstat().st_uid
        except OSError:
            continue
    return os.geteuid()


def socket_path_for(workspace: str | os.PathLike[str], runtime_dir: str | None) -> Path:
    """Where a client finds ``workspace``'s daemon: :func:`default_socket_path` as that daemon computes it.

    Root reaching another user's workspace looks where that user's daemon
    listens (that user's uid, and not root's ``$XDG_RUNTIME_DIR``).
    """
    uid = os.geteuid()
    owner = workspace_owner(workspace) if uid == 0 else uid
    return default_socket_path(workspace, runtime_dir if owner == uid else None, owner)


def folder_problem(path: Path, uids: Collection[int]) -> str | None:
    """Why ``path`` cannot hold the daemon's socket or state, or None if it can.

    The folder must be owned by one of ``uids`` and writable by nobody else
    (no group or other write bit). A symbolic link is followed only if the
    link itself is owned by one of ``uids``. Whoever can write in the folder
    can replace the socket (and so read what clients send) or plant links
    where the daemon opens its files. A missing folder is no problem.
    """
    want = " or ".join(user_label(u) for u in sorted(set(uids)))
    try:
        link = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: cannot inspect: {exc.strerror}"
    if link.st_uid not in uids:
        kind = "symbolic link" if stat.S_ISLNK(link.st_mode) else "folder"
        return (
            f"{path}: the {kind} is owned by {user_label(link.st_uid)}, not by {want}; another user could "
            "replace the daemon's socket or files there. Remove it, or run as its owner"
        )
    try:
        info = path.stat()
    except OSError as exc:
        return f"{path}: cannot inspect: {exc.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path}: exists and is not a folder"
    if info.st_uid not in uids:
        return (
            f"{path}: the folder it links to is owned by {user_label(info.st_uid)}, not by {want}; another user "
            "could replace the daemon's socket or files there. Remove the link, or run as its owner"
        )
    if stat.S_IMODE(info.st_mode) & 0o022:
        return (
            f"{path}: the folder (owner {user_label(info.st_uid)}) is writable by group or others "
            f"(mode {stat.S_IMODE(info.st_mode):04o}); anyone who can write there could replace the daemon's "
            f"socket or plant links. Run: chmod 700 {path}"
        )
    return None


def _claw_owners(claw: Path) -> tuple[list[int], bool] | None:
    """Who owns ``claw`` (the entry itself, and for a link also what it points to), and is it a folder?

    None when there is no such entry, or it cannot be looked at (a folder the
    caller cannot search holds nothing the caller could use).
    """
    try:
        entry = claw.lstat()
    except OSError:
        return None
    if not stat.S_ISLNK(entry.st_mode):
        return [entry.st_uid], stat.S_ISDIR(entry.st_mode)
    try:
        target = claw.stat()
    except OSError:
        return [entry.st_uid], False  # a dangling link
    return [entry.st_uid, target.st_uid], stat.S_ISDIR(target.st_mode)


def find_workspace(start: str | os.PathLike[str], *, named: bool = False) -> Path:
    """The workspace for ``start``: the nearest of it and its ancestors holding ``.claw``.

    Like git looking for ``.git``, with one rule more: the nearest ``.claw``
    found must be the caller's (owned by the effective uid, root's by root;
    for a symbolic link, the link and the folder it points to). Another
    user's ``.claw`` (planted in a shared folder such as ``/tmp``, above the
    folder the caller works in) ends the search in
    :class:`~claw_sessiond_client.errors.UntrustedPeerError` naming it and its
    owner, before anything is sent; it is never skipped in favour of one
    further up. A ``.claw`` of the caller's that is not a folder is passed
    over. Without one, ``start`` itself (absolute) is the workspace.

    Args:
        start: the folder to start from.
        named: ``start`` was named by the caller (a client's workspace
            argument): a ``.claw`` in ``start`` itself is then accepted from
            any owner when the caller is root (root may use the daemon of a
            workspace it names; the peer checks still apply). The folders
            above it are searched by the rule above all the same.
    """
    first = Path(os.path.abspath(start))
    uid = os.geteuid()
    for folder in (first, *first.parents):
        claw = folder / CLAW_DIR
        found = _claw_owners(claw)
        if found is None:
            continue
        owners, is_folder = found
        trusted = named and uid == 0 and folder == first
        foreign = next((owner for owner in owners if owner != uid), None)
        if foreign is not None and not trusted:
            raise UntrustedPeerError(_foreign_claw(claw, foreign, first))
        if is_folder:
            return folder
    return first


def _foreign_claw(claw: Path, owner: int, start: Path) -> str:
    """Why the ``.claw`` found above ``start`` is refused (another user's), and what to do instead."""
    return (
        f"{claw} is owned by {user_label(owner)}, not by you ({user_label(os.geteuid())}): refusing the workspace "
        f"found from {start}, whose daemon that user controls; nothing was sent. Name the workspace to use "
        f"(--workspace, {WORKSPACE_ENV} or the client's workspace argument), or remove {claw}"
    )
