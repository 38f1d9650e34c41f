"""``claw-sessiond ui``: the local web viewer (:mod:`claw_sessiond.ui`), started from the CLI.

It asks the workspace's daemon when one answers (never starting one), else, or with ``--offline``,
reads the stopped store through the read-only view (:class:`~claw_sessiond.cli.offline.OfflineClient`,
opened for each request, so a daemon may start meanwhile: the viewer then says to restart it). Exit
codes: 0 stopped by SIGINT/SIGTERM, 1 no store to show or the port is taken, 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

from claw_sessiond_client import DaemonUnavailableError, SessiondError

from .connect import open_async_client, socket_path
from .failure import EXIT_OK, EXIT_USAGE, UsageError, fail_client, report_error
from .offline import OfflineClient, OfflineError, configured_database
from .options import Command, set_epilog
from .output import print_json_line
from .termsafe import visible

if TYPE_CHECKING:
    import socket

    from claw_sessiond_client import SessionClient


__all__ = ["UI"]

_ABOUT: Final = (
    "Prints one line, 'claw-sessiond ui: http://127.0.0.1:PORT/?token=SECRET': open it in a browser (or use "
    "--open). It listens on 127.0.0.1 only; the secret is new at each start and every request needs it. "
    "Read-only: it never writes to the store. See docs/ui.md."
)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=int, default=0, metavar="N", help="the port on 127.0.0.1 (default 0: any free port)"
    )
    parser.add_argument("--open", action="store_true", help="open the viewer in the default browser")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="read the store read-only without asking a daemon (by default only when no daemon answers)",
    )
    set_epilog(parser, _ABOUT, "Exit codes: 0 stopped (Ctrl-C), 1 failure (no store, port taken), 2 usage error.")


def ui(args: argparse.Namespace) -> int:
    """Run the viewer until SIGINT or SIGTERM."""
    import asyncio

    from ..ui.server import listen

    if not 0 <= args.port <= 65535:
        return report_error(args, f"--port must be from 0 to 65535 (got {args.port})", reason="USAGE", code=EXIT_USAGE)
    try:
        sock = listen(args.port)
    except OSError as exc:
        return report_error(args, f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}")
    try:
        return asyncio.run(_run(args, sock))
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        sock.close()


def _check_view(workspace: str) -> str:
    """Open the read-only view once (its errors are the command's), and say what it reads."""
    with OfflineClient(workspace) as view:
        return view.source


async def _run(args: argparse.Namespace, sock: socket.socket) -> int:
    import asyncio

    from ..ui.server import serve
    from ..ui.source import DaemonSource, OfflineSource, Source

    workspace = os.path.abspath(args.workspace)
    database_url, problem = configured_database(Path(workspace))
    if problem:
        return report_error(args, problem, code=EXIT_USAGE)
    backend = "postgresql" if database_url else "sqlite"
    source: Source | None = None
    if not args.offline:
        client = open_async_client(workspace, socket_path(args))
        try:
            await client.stats()
            source = DaemonSource(client, backend)
        except DaemonUnavailableError:
            await client.close()
        except SessiondError as exc:
            await client.close()
            return fail_client(args, exc)
    if source is None:
        try:
            shown = await asyncio.to_thread(_check_view, workspace)
        except OfflineError as exc:
            return report_error(args, str(exc), reason="DAEMON_UNAVAILABLE")
        print(visible(f"claw-sessiond ui: no daemon running; read-only view of {shown}"), file=sys.stderr)
        source = OfflineSource(
            lambda: cast("SessionClient", OfflineClient(workspace)),
            backend,
            refused=(UsageError,),
            failed=(OfflineError,),
        )
    await serve(source, workspace, sock, open_browser=args.open, announce=_url_json if args.json else _url_line)
    return EXIT_OK


def _url_line(url: str) -> None:
    """The viewer's URL for people: one line on stdout."""
    print(f"claw-sessiond ui: {url}", flush=True)


def _url_json(url: str) -> None:
    """The viewer's URL with ``--json``: one JSON line, like every --json document."""
    print_json_line({"url": url}, flush=True)


UI: Final = Command(
    "ui", "a local web viewer of the sessions: list, timeline, live runs, usage (read-only)", _add_arguments, ui
)
