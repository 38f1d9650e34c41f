"""The viewer's HTTP server: the app (its routes, the guard, the static pages) and :func:`serve`.

aiohttp on the caller's asyncio loop: one socket bound to 127.0.0.1 (never another address), the guard
(:mod:`.auth`) in front of every route, no access log (the first request's address carries the secret).
Bounds: a request body of at most :data:`MAX_BODY` bytes (every route is a GET), a request line and each
header of at most :data:`MAX_LINE` bytes; the JSON routes' own bounds are in :mod:`.params`, the live
streams' in :mod:`.live`. A request whose browser goes is cancelled at once (a live stream ends then).
:func:`serve` prints the one line with the URL (on stdout, the only place the secret is written), opens
the browser when asked, and serves until SIGINT or SIGTERM, then ends the live streams, closes the
listener and the source.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import socket
import sys
import webbrowser
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Final

from aiohttp import web

from . import api, export_html, live
from .auth import Guard, new_secret
from .source import Source

__all__ = ["MAX_BODY", "MAX_LINE", "STATIC", "make_app", "serve"]

#: Request bodies, at most (every route is a GET).
MAX_BODY: Final = 1024
#: A request line (the URL with its query) and each header, at most.
MAX_LINE: Final = 8190
#: The front end's files (index.html, app.js, app.css, ...).
STATIC: Final = Path(str(resources.files(__package__) / "static"))
_TYPES: Final = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".txt": "text/plain",
}
_SEGMENT: Final = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$")

_static = web.RouteTableDef()


def _static_file(relative: str) -> web.StreamResponse:
    """A file of the front end: plain names only (no dot files, no ``..``), regular files, no links."""
    parts = relative.split("/")
    if len(parts) > 3 or not all(_SEGMENT.match(p) for p in parts):
        raise web.HTTPNotFound()
    path = STATIC.joinpath(*parts)
    kind = _TYPES.get(path.suffix)
    if kind is None or path.is_symlink() or not path.is_file():
        raise web.HTTPNotFound()
    return web.Response(body=path.read_bytes(), content_type=kind, charset="utf-8" if kind.startswith("text") else None)


@_static.get("/")
async def index(request: web.Request) -> web.StreamResponse:
    if not (STATIC / "index.html").is_file():
        return web.Response(text="claw-sessiond ui: the pages are not installed; the API is under /api/\n")
    return _static_file("index.html")


@_static.get("/static/{path:.+}")
async def static(request: web.Request) -> web.StreamResponse:
    return _static_file(request.match_info["path"])


def make_app(source: Source, workspace: str, guard: Guard) -> web.Application:
    """The viewer's app, reading through ``source``."""
    app = web.Application(middlewares=[guard.middleware], client_max_size=MAX_BODY)
    app.on_response_prepare.append(guard.on_prepare)
    app[api.SOURCE] = source
    app[api.WORKSPACE] = workspace
    live.setup(app)
    app.add_routes(_static)
    for table in (api.routes, live.routes, export_html.routes):
        app.add_routes(table)
    return app


def listen(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1:``port`` (0: any free port), listening."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    return sock


async def serve(
    source: Source,
    workspace: str,
    sock: socket.socket,
    *,
    announce: Callable[[str], None],
    open_browser: bool = False,
) -> None:
    """Serve the viewer on ``sock`` until SIGINT or SIGTERM; ``announce`` its URL first (the CLI prints it)."""
    guard = Guard(new_secret())
    port = sock.getsockname()[1]
    guard.listening_on(port)
    app = make_app(source, workspace, guard)
    runner = web.AppRunner(
        app,
        access_log=None,
        handle_signals=False,
        max_line_size=MAX_LINE,
        max_field_size=MAX_LINE,
        handler_cancellation=True,  # a browser that goes ends its request (a live stream at once)
    )
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        site = web.SockSite(runner, sock, shutdown_timeout=5.0)
        await site.start()
        url = f"http://127.0.0.1:{port}/?token={guard.secret}"
        announce(url)
        print("claw-sessiond ui: Ctrl-C stops it", file=sys.stderr, flush=True)
        if open_browser:
            await asyncio.to_thread(webbrowser.open, url)
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await runner.cleanup()
        with contextlib.suppress(Exception):
            await source.close()
