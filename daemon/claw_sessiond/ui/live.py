"""A session's live view: the daemon's Watch relayed to the browser as Server-Sent Events.

``GET /api/sessions/<id>/live?after=<position>`` answers ``text/event-stream``: ``event: entry`` (one
entry, the shape of the session page's entries), ``event: edit`` and ``event: clear`` as the daemon's Watch
sends them, ``event: run`` when the calls in flight (and the runs that own them) change, and ``event: ping``
every :data:`PING_S` seconds. Bounds: at most :data:`MAX_STREAMS` live streams at once (another is
refused with 503), and each holds at most :data:`QUEUE` events between the Watch and the browser (when
the browser reads slower, the Watch waits: the daemon's own flow control holds the rest, and the daemon
ends a Watch that lags too far, which ends the stream with ``event: end``). A stream ends when the
browser goes (the server cancels the request when the connection closes) or the viewer stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Final

from aiohttp import web

from claw_sessiond_client import LoadResult, SessiondError

from . import params
from .api import SOURCE
from .params import json_route
from .shapes import event_json, in_flight_json
from .source import OfflineUnavailableError, Source

__all__ = ["MAX_STREAMS", "PING_S", "QUEUE", "RUN_POLL_S", "routes", "setup"]

#: Live streams open at once, at most.
MAX_STREAMS: Final = 16
#: Events queued per stream, at most.
QUEUE: Final = 64
#: Seconds between pings.
PING_S: Final = 15.0
#: Seconds between looks at the calls in flight (a look-only Load of the last entry).
RUN_POLL_S: Final = 2.0

_OPEN: Final[web.AppKey[set[asyncio.Task[Any]]]] = web.AppKey("live_streams")

routes = web.RouteTableDef()


def _frame(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


async def _relay(source: Source, session_id: str, after: int, queue: asyncio.Queue[bytes]) -> None:
    """Put the Watch's events on ``queue`` (waiting while it is full); an error ends with ``event: end``."""
    try:
        async with contextlib.aclosing(source.watch(session_id, after)) as events:
            async for event in events:
                await queue.put(_frame(*event_json(event)))
    except (SessiondError, OfflineUnavailableError) as exc:
        await queue.put(_frame("end", {"error": " ".join(str(exc).split())}))
    else:
        await queue.put(_frame("end", {}))


async def _runs(source: Source, session_id: str, queue: asyncio.Queue[bytes], first: LoadResult) -> None:
    """Put ``event: run`` on ``queue`` at once (from ``first``, the route's own check) and then each time the
    calls in flight (and their owners) change."""
    last = in_flight_json(first)
    await queue.put(_frame("run", {"in_flight": last}))
    while True:
        await asyncio.sleep(RUN_POLL_S)
        with contextlib.suppress(SessiondError):
            now = in_flight_json(await source.load(session_id, last=1))
            if now != last:
                await queue.put(_frame("run", {"in_flight": now}))
                last = now


@routes.get("/api/sessions/{session_id}/live")
@json_route
async def live(request: web.Request) -> web.StreamResponse:
    source = request.app[SOURCE]
    after = params.integer(request, "after", 0, 0, 2**62)
    assert after is not None
    if source.offline:
        raise OfflineUnavailableError("live updates need the daemon: start it (claw-sessiond serve)")
    streams = request.app[_OPEN]
    if len(streams) >= MAX_STREAMS:
        return params.error(503, f"at most {MAX_STREAMS} live views at once: close one")
    session_id = request.match_info["session_id"]
    checked = params.stored(await source.load(session_id, last=1))  # an invalid id (400) or unknown one (404) first
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"})
    queue: asyncio.Queue[bytes] = asyncio.Queue(QUEUE)
    tasks = [
        asyncio.ensure_future(_relay(source, session_id, after, queue)),
        asyncio.ensure_future(_runs(source, session_id, queue, checked)),
    ]
    me = asyncio.current_task()
    assert me is not None
    streams.add(me)
    try:
        await response.prepare(request)
        while True:
            try:
                frame = await asyncio.wait_for(queue.get(), PING_S)
            except TimeoutError:
                frame = _frame("ping", {})
            await response.write(frame)
            if frame.startswith(b"event: end\n"):
                break
    except ConnectionError:
        pass  # the browser went (its request is cancelled at once, as a rule: this is the write racing that)
    finally:
        streams.discard(me)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return response


async def _close_streams(app: web.Application) -> None:
    streams = app[_OPEN]
    for task in list(streams):
        task.cancel()


def setup(app: web.Application) -> None:
    """Give ``app`` the set of its open live streams (for the bound), ended when the viewer stops."""
    app[_OPEN] = set()
    app.on_shutdown.append(_close_streams)
