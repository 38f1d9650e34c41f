"""How a command reaches the workspace's daemon: the one client factory, and :func:`online` around a command.

Every client the CLI makes comes from :func:`open_client` (``ui``'s asyncio one from
:func:`open_async_client`), with the same two settings for every command:

- never ``autostart``: looking at a workspace (or failing to) must not start a
  daemon, nor create a ``.claw/``;
- no silent re-send (``retry_window_s=0``): an Import or Delete whose answer
  was lost may have committed, and a re-sent one would then be reported as
  refused ("already exists", "not stored"). The reports say what is known.

A command that writes (``import``, ``migrate-legacy``, ``delete``, ``clear``,
``repair``) first runs ``serve``'s checks of ``.claw/`` (``writes=True``:
:func:`check_workspace_for_writing`), so a folder others can write, links or
another user's database file there are refused with ``serve``'s message.

The one setting that differs is the deadline of each call (``timeout_s``):
:data:`LOOK_TIMEOUT_S` for the commands that look or change one thing
(``ls``, ``show``, ``stats``, ``repair``, ``clear``, ``doctor``, ``search``,
``follow``, ``usage``, ``completion``, ``ui``), the client's own default (``None``)
for those that move whole sessions or the whole store (``export``,
``import``, ``delete``, ``migrate-legacy``, ``backup``), and
:data:`STATUS_TIMEOUT_S` for each daemon ``status`` asks for its session count.
"""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from claw_sessiond_client import DaemonUnavailableError, Reason, SessiondError, UntrustedPeerError
from claw_sessiond_client import InvalidRequestError as ClientInvalidRequestError
from claw_sessiond_client.endpoint import discover_socket
from claw_sessiond_client.paths import claw_dir

from ..config import environ
from ..errors import InvalidRequestError
from ..ids import check_session_id
from .failure import EXIT_FAILURE, EXIT_USAGE, UsageError, fail_client, report_error
from .offline import run_offline

if TYPE_CHECKING:
    from claw_sessiond_client import AsyncSessionClient, SessionClient, SessionSummary

__all__ = [
    "LOOK_TIMEOUT_S",
    "MAX_PAGE",
    "STATUS_TIMEOUT_S",
    "check_session_arg",
    "check_workspace_for_writing",
    "online",
    "open_async_client",
    "open_client",
    "socket_path",
    "stored_summary",
]

#: Deadline of each call of the commands that look at (or change) one thing.
LOOK_TIMEOUT_S: Final = 10.0
#: Deadline of the GetStats that ``status`` sends each daemon it lists.
STATUS_TIMEOUT_S: Final = 2.0
#: ListSessions' largest page.
MAX_PAGE: Final = 10000

Body = Callable[[argparse.Namespace, "SessionClient"], int]


def socket_path(args: argparse.Namespace) -> Path:
    """The socket of the workspace's daemon: ``--socket``, else the workspace's (already resolved by ``main``)."""
    if args.socket:
        return Path(os.path.abspath(args.socket))
    return discover_socket(os.path.abspath(args.workspace), environ().get("XDG_RUNTIME_DIR"))


def check_workspace_for_writing(workspace: str) -> None:
    """Before a command writes through the daemon: ``serve``'s checks of the workspace's ``.claw/``.

    The daemon ran them at its start; a folder opened up since (or one with no daemon) is refused with
    ``serve``'s message before anything is sent. The checks are the caller's, as if it ran ``serve``
    there, with one exception that follows the discovery rule (docs/PROTOCOL.md, "Looking upward"): a
    workspace reaches this point only if it is the caller's own or was named explicitly (discovery refuses
    another user's ``.claw``), and root may use the daemon of a workspace it names, so for root the
    folder's owner stands in for root in the owner checks. Its mode, links and database files are
    checked all the same.

    Raises:
        claw_sessiond_client.UntrustedPeerError: with serve's message.
    """
    from ..claw_dir import check_workspace
    from ..errors import StartupError

    claw = claw_dir(workspace)
    uid = None
    if os.geteuid() == 0:
        try:
            info = claw.lstat()
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):  # a link is judged as the caller's (and refused)
            uid = info.st_uid
    try:
        check_workspace(claw, uid)
    except StartupError as exc:
        raise UntrustedPeerError(f"{exc}; nothing was sent", reason=Reason.UNTRUSTED_PEER) from None


def open_client(
    workspace: str | None, socket: Path, *, timeout_s: float | None = LOOK_TIMEOUT_S, writes: bool = False
) -> SessionClient:
    """A client of the daemon on ``socket`` (never auto-started, nothing re-sent).

    Args:
        workspace: whose daemon to expect there (the client checks the peer); None when only the socket is known.
        timeout_s: the deadline of each call; None for the client's default.
        writes: the command writes (import, delete, ...): :func:`check_workspace_for_writing` first.

    Raises:
        claw_sessiond_client.UntrustedPeerError: ``writes`` and the workspace fails serve's checks.
    """
    from claw_sessiond_client import SessionClient  # here: grpc loads only for a command that talks to a daemon

    if writes and workspace is not None:
        check_workspace_for_writing(workspace)
    address = f"unix:{socket}"
    if timeout_s is None:
        return SessionClient(workspace, address=address, autostart=False, retry_window_s=0.0)
    return SessionClient(workspace, address=address, autostart=False, retry_window_s=0.0, timeout_s=timeout_s)


def open_async_client(workspace: str, socket: Path) -> AsyncSessionClient:
    """:func:`open_client`'s asyncio twin, for ``ui`` (a server on an event loop): the same settings
    (never auto-started, nothing re-sent, :data:`LOOK_TIMEOUT_S` per call); it only reads."""
    from claw_sessiond_client import AsyncSessionClient

    return AsyncSessionClient(
        workspace, address=f"unix:{socket}", autostart=False, retry_window_s=0.0, timeout_s=LOOK_TIMEOUT_S
    )


def _no_answer_on_socket(args: argparse.Namespace) -> str:
    return f"no claw-sessiond answers on {socket_path(args)}"


def online(
    body: Body,
    *,
    unavailable: Callable[[argparse.Namespace], str] = _no_answer_on_socket,
    invalid_code: int = EXIT_FAILURE,
    writes: bool = False,
) -> Callable[[argparse.Namespace], int]:
    """A command handler that runs ``body`` with a client, and turns its errors into the one failure report.

    A command with ``--offline``/``--no-offline`` (:func:`claw_sessiond.cli.offline.add_offline_options`)
    runs ``body`` on the read-only view when asked to, or when no daemon answers and ``--no-offline`` was
    not given. ``unavailable`` says that no daemon answers; ``invalid_code`` is the exit code of a request
    the daemon refuses as invalid (see :func:`claw_sessiond.cli.failure.fail_client`); ``writes``: as
    :func:`open_client`'s. A
    :class:`~claw_sessiond.cli.failure.UsageError` from ``body`` exits 2.
    """

    def handler(args: argparse.Namespace) -> int:
        if getattr(args, "offline", None) is True:
            return run_offline(args, body)
        try:
            with open_client(args.workspace, socket_path(args), writes=writes) as client:
                return body(args, client)
        except UsageError as exc:
            return report_error(args, str(exc), reason="USAGE", code=EXIT_USAGE)
        except DaemonUnavailableError as exc:
            if getattr(args, "offline", False) is None:  # no daemon: the read-only view (--no-offline: the error)
                return run_offline(args, body)
            return fail_client(args, exc, unavailable=unavailable(args))
        except SessiondError as exc:
            return fail_client(args, exc, invalid_code=invalid_code)

    handler.__doc__ = body.__doc__
    return handler


def check_session_arg(session_id: str) -> None:
    """Refuse an invalid session id before it is sent anywhere (as the daemon would, with its message).

    Commands that look a session up by listing (``show``, ``delete``, ``clear``, ...) would otherwise
    pass the id as a ListSessions filter, whose refusal names the field, not the id.

    Raises:
        claw_sessiond_client.InvalidRequestError: reason INVALID_SESSION_ID.
    """
    try:
        check_session_id(session_id)
    except InvalidRequestError as exc:
        raise ClientInvalidRequestError(exc.message, reason=Reason.INVALID_SESSION_ID) from None


def stored_summary(client: SessionClient, session_id: str) -> SessionSummary | None:
    """The stored session's summary (from ListSessions), or None if it is not stored; the id is checked first."""
    check_session_arg(session_id)
    return next((s for s in client.list_sessions(session_id, MAX_PAGE) if s.id == session_id), None)
