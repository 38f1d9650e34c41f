"""Who may use the viewer: the per-start secret, the cookie, the Host check and the headers of every answer.

The server listens on 127.0.0.1 only, but any local user (and any web page the user visits, through
the browser) can reach a loopback port, so every request must carry the secret drawn at this start
(:func:`new_secret`: 32 random bytes, url-safe): the printed URL's ``?token=`` once (``/`` answers it
with the cookie and a redirect that drops the token from the address bar), then the ``claw_ui`` cookie
(HttpOnly, SameSite=Strict) or ``Authorization: Bearer``. Secrets are compared in constant time. The
Host header must name this server (127.0.0.1:PORT or localhost:PORT): a page on another name that
resolves to 127.0.0.1 (DNS rebinding) is refused. Refusals are 403 with one plain-text line, the only
answer given without the secret.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import web

__all__ = ["COOKIE", "CSP", "Guard", "new_secret"]

#: The cookie that carries the secret after the first visit.
COOKIE: Final = "claw_ui"
#: The pages' Content-Security-Policy: our own scripts and styles only, no inline code, no other origin.
CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
#: Headers on every answer, refusals included.
_HEADERS: Final = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

#: Where the middleware notes when a request came in (for ``Server-Timing``).
_STARTED: Final = "claw_ui_started"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def new_secret() -> str:
    """A fresh secret for one start of the viewer (32 random bytes, url-safe base64)."""
    return secrets.token_urlsafe(32)


def _same(given: str, secret: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), secret.encode())


class Guard:
    """The viewer's one door (an aiohttp middleware): Host check, then the secret, then the headers."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        #: The Host values accepted, set once the port is known (:meth:`listening_on`).
        self.hosts: frozenset[str] = frozenset()

    def listening_on(self, port: int) -> None:
        self.hosts = frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})

    def _authorised(self, request: web.Request) -> bool:
        cookie = request.cookies.get(COOKIE, "")
        if cookie and _same(cookie, self.secret):
            return True
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        return scheme.lower() == "bearer" and bool(token) and _same(token.strip(), self.secret)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        request[_STARTED] = time.perf_counter()
        return await self._answer(request, handler)

    @staticmethod
    async def on_prepare(request: web.Request, response: web.StreamResponse) -> None:
        """Just before any answer's headers go out (streamed ones too): the headers, and the server's time."""
        for name, value in _HEADERS.items():  # the HTML export sets its own (stricter) policy
            response.headers.setdefault(name, value)
        if request.path.startswith("/api/"):
            response.headers["Cache-Control"] = "no-store"
        started = request.get(_STARTED)
        if started is not None:
            response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"

    async def _answer(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.headers.get("Host", "") not in self.hosts:
            return _refuse("this viewer answers only to 127.0.0.1 or localhost with its own port")
        token = request.query.get("token")
        if token is not None and request.path == "/":
            if not _same(token, self.secret):
                return _refuse("wrong token: use the URL claw-sessiond ui printed")
            answer = web.Response(status=303, headers={"Location": "/"})
            answer.set_cookie(COOKIE, self.secret, httponly=True, samesite="Strict", path="/")
            return answer
        if not self._authorised(request):
            return _refuse("no valid secret: open the URL claw-sessiond ui printed (it carries ?token=)")
        try:
            return await handler(request)
        except web.HTTPException as exc:  # aiohttp's own answers (404, 405, 413): the API's in its error shape
            if request.path.startswith("/api/"):
                return web.json_response({"error": exc.reason}, status=exc.status)
            return web.Response(status=exc.status, text=exc.text, content_type="text/plain")


def _refuse(why: str) -> web.Response:
    return web.Response(status=403, text=f"403 forbidden: {why}\n", content_type="text/plain")
