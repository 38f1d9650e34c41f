"""The viewer's query parameters and error answers: every bound of a request, and the one error shape.

A parameter out of range or malformed is a 400 whose JSON body is ``{"error": "<one line>"}`` naming it;
an unknown session a 404; the daemon (or the offline view) failing a 502. :func:`json_route` turns the
errors of a route into those answers, so no request ends in aiohttp's 500.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import web

from claw_sessiond_client import LoadResult, SessiondError
from claw_sessiond_client.errors import InvalidRequestError, SessionNotFoundError

from .source import OfflineUnavailableError, ViewRefusedError

__all__ = [
    "DEFAULT_ENTRIES",
    "DEFAULT_SESSIONS",
    "MAX_ENTRIES",
    "MAX_SESSIONS",
    "BadParam",
    "NotStored",
    "error",
    "flag",
    "integer",
    "json_route",
    "labels",
    "stored",
    "time",
]

#: Entries of one session's page: by default, and at most (``limit``).
DEFAULT_ENTRIES: Final = 200
MAX_ENTRIES: Final = 1000
#: Sessions of one list page: by default, and at most (``limit``).
DEFAULT_SESSIONS: Final = 50
MAX_SESSIONS: Final = 500
#: At most this many ``label=k=v`` filters.
MAX_LABELS: Final = 16


class BadParam(Exception):
    """A query parameter the viewer refuses (400); the message names it."""


class NotStored(Exception):
    """The session asked for is not stored (404)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} is not stored")


def stored(result: LoadResult) -> LoadResult:
    """``result`` (a look-only Load's) if its session is stored.

    Raises:
        NotStored: it is not.
    """
    if not result.session.stored:
        raise NotStored(result.session.id)
    return result


def error(status: int, message: str) -> web.Response:
    """The one error answer: ``{"error": message}`` (one line)."""
    return web.json_response({"error": " ".join(message.split())}, status=status)


def integer(request: web.Request, name: str, default: int | None, low: int, high: int) -> int | None:
    """The integer parameter ``name`` from ``low`` to ``high`` (``default`` when absent or empty)."""
    text = request.query.get(name, "")
    if not text:
        return default
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        raise BadParam(f"{name} must be a whole number from {low} to {high}")
    value = int(text)
    if not low <= value <= high:
        raise BadParam(f"{name} must be a whole number from {low} to {high} (got {value})")
    return value


def flag(request: web.Request, name: str) -> bool:
    """A yes/no parameter: ``1``/``true``/``yes`` (empty or absent: no)."""
    text = request.query.get(name, "").lower()
    if text in ("", "0", "false", "no"):
        return False
    if text in ("1", "true", "yes"):
        return True
    raise BadParam(f"{name} must be 1 or 0")


def time(request: web.Request, name: str) -> dt.datetime | None:
    """An RFC 3339 / ISO 8601 time parameter (UTC when no offset is given); None when absent."""
    text = request.query.get(name, "")
    if not text:
        return None
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadParam(f"{name} must be a time like 2026-01-31T12:00:00Z") from None
    return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when


def labels(request: web.Request) -> dict[str, str]:
    """The ``label=k=v`` filters (repeatable)."""
    given = request.query.getall("label", [])
    if len(given) > MAX_LABELS:
        raise BadParam(f"at most {MAX_LABELS} label filters")
    out = {}
    for item in given:
        key, eq, value = item.partition("=")
        if not key or not eq:
            raise BadParam("label must be key=value")
        out[key] = value
    return out


Route = Callable[[web.Request], Awaitable[web.StreamResponse]]


def json_route(route: Route) -> Route:
    """``route`` with its errors as the viewer's error answers (400, 404, 502)."""

    @functools.wraps(route)
    async def answer(request: web.Request) -> web.StreamResponse:
        try:
            return await route(request)
        except BadParam as exc:
            return error(400, str(exc))
        except (InvalidRequestError, ViewRefusedError) as exc:
            return error(400, str(exc))
        except (SessionNotFoundError, NotStored) as exc:
            return error(404, str(exc))
        except (SessiondError, OfflineUnavailableError) as exc:
            return error(502, str(exc))

    return answer
