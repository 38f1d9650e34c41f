"""Daemon figures: Prometheus text on an optional loopback ``/metrics``, and the same numbers for GetStats.

One :class:`Metrics` per daemon. It listens to the service (``rpc_observers``:
method, code, seconds) and to the writer (``commit_observers``: batch size,
seconds, ok), which calls from its own thread, and keeps the counts GetStats
reports. Only a daemon that serves ``/metrics`` (``--metrics``) builds the
Prometheus side (:mod:`claw_sessiond.exposition`: its own ``CollectorRegistry``,
histograms, the text): prometheus-client and the HTTP modules it imports are
about a tenth of a daemon's start, so the others never import them. Database
figures (sessions, events, file sizes) are read through the store at scrape time.

The HTTP endpoint is a few lines of asyncio on the daemon's loop: no thread,
no framework, closed with the daemon. It answers ``GET /metrics`` only. Every
local user can reach it, so it is bounded: at most :data:`MAX_CONNECTIONS`
connections at once (more are reset as soon as they are accepted), one
deadline of :data:`REQUEST_DEADLINE_S` for the whole request head (a client
trickling a header line every few seconds is cut off), heads of at most
:data:`MAX_HEADER_BYTES`, and the database figures cached for
:data:`FIGURES_TTL_S` so a scrape costs no table scan. The text itself is
rendered at most once per :data:`RENDER_TTL_S` and shared by every scrape
meanwhile, and replies leave at most :data:`MAX_SCRAPES_PER_S` a second
(over all connections: every local peer is 127.0.0.1, so a per-peer share
would tell no one apart); a scrape loop then costs the daemon's loop a
bounded share, however fast it asks. A hostile local user
can still keep the slots busy, which makes scrapes fail or wait: the daemon's RPCs
and storage are not affected. This module must never import grpc nor speak SQL.

Names (all prefixed ``claw_sessiond_``): ``requests_total{method,code}``,
``request_duration_seconds{method}``, ``commit_batch_size``,
``commit_duration_seconds{outcome}``, ``appends_total``,
``messages_written_total``, ``repairs_total``, ``write_failures_total``,
``commits_total``, ``sessions_deleted_total``,
``retention_sessions_deleted_total``, ``sessions``, ``events``,
``database_bytes``, ``wal_bytes``, ``schema_version``, ``active_watchers``,
``active_runs``, ``uptime_seconds``, ``erasure_pending_sessions``,
``request_records``, ``request_records_pruned_total``, ``metrics_renders_total``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from .config import parse_host_port
from .limits import Throttle
from .storage import Storage, StorageFigures, pending_erasures

if TYPE_CHECKING:
    from .exposition import Exposition

__all__ = [
    "BACKLOG",
    "FIGURES_TTL_S",
    "MAX_CONNECTIONS",
    "MAX_HEADER_BYTES",
    "MAX_SCRAPES_PER_S",
    "RENDER_TTL_S",
    "REQUEST_DEADLINE_S",
    "Metrics",
    "figure_fields",
    "hold",
    "listen",
]

_log = logging.getLogger("claw_sessiond.metrics")
#: Most /metrics connections served at once; more are closed (reset) as soon as they are accepted.
MAX_CONNECTIONS: Final = 16
#: Listen backlog, which is also how many connections asyncio accepts in one go before any is served
#: (or reset): so at most MAX_CONNECTIONS + BACKLOG descriptors go to /metrics at any moment.
BACKLOG: Final = 32
#: The whole request head (request line and headers) must arrive within this many seconds; sending
#: the response gets as long again.
REQUEST_DEADLINE_S: Final = 5.0
#: Largest request head in bytes (request line plus headers).
MAX_HEADER_BYTES: Final = 8192
#: Database figures (sessions, events, file sizes, schema version) are re-read at most this often.
FIGURES_TTL_S: Final = 5.0
#: The exposition text is rendered at most this often; scrapes meanwhile get the same bytes.
RENDER_TTL_S: Final = 1.0
#: Most /metrics replies per second, over all connections; a scrape beyond it waits its turn (at most
#: MAX_CONNECTIONS / MAX_SCRAPES_PER_S seconds, well inside REQUEST_DEADLINE_S).
MAX_SCRAPES_PER_S: Final = 50
#: The storage's figures as gauges (and GetStats fields): (name, ``StorageFigures`` field), in the order shown.
#: The names are those of the first, SQLite-only version: the database file and its WAL.
_FIGURE_NAMES: Final = (
    ("sessions", "sessions"),
    ("events", "events"),
    ("database_bytes", "stored_bytes"),
    ("wal_bytes", "log_bytes"),
    ("schema_version", "schema_version"),
    ("request_records", "request_records"),
)


def figure_fields(figures: StorageFigures) -> dict[str, int]:
    """The storage's figures under the names ``/metrics`` and GetStats report them."""
    return {name: int(getattr(figures, field)) for name, field in _FIGURE_NAMES}


class Metrics:
    """The figures of one daemon.

    Args:
        store: read for database figures and its counters.
        active_runs: how many Attach runs are open.
        active_watchers: how many Watch streams are open.
        store_info: (backend, database) for the ``store_info`` gauge; ("", ""): none.
        exposed: build the Prometheus side (:attr:`exposition`) for ``/metrics``; without it only
            the counts GetStats reports are kept (the daemon without ``--metrics``).
    """

    def __init__(
        self,
        store: Storage,
        *,
        active_runs: Callable[[], int] = lambda: 0,
        active_watchers: Callable[[], int] = lambda: 0,
        store_info: tuple[str, str] = ("", ""),
        exposed: bool = True,
    ) -> None:
        self.store = store
        self.active_runs = active_runs
        self.active_watchers = active_watchers
        self.started = time.monotonic()
        self.figures: dict[str, int] = {}
        self._figures_at: float | None = None
        self._refresh_lock = asyncio.Lock()
        self._rendered: tuple[float, bytes] | None = None
        self._render_lock = asyncio.Lock()
        self.renders = 0
        self.request_counts: dict[tuple[str, str], int] = {}
        self.commit_batch_requests = 0
        self.commit_seconds_total = 0.0
        self.exposition: Exposition | None = None
        if exposed:
            from .exposition import Exposition

            self.exposition = Exposition(self, store_info)

    def observe_rpc(self, method: str, code: str, seconds: float) -> None:
        """``SessionService.rpc_observers`` hook (on the loop)."""
        key = (method, code)
        self.request_counts[key] = self.request_counts.get(key, 0) + 1
        if self.exposition is not None:
            self.exposition.observe_rpc(key, seconds)

    def observe_commit(self, batch_size: int, seconds: float, ok: bool) -> None:
        """``StorageCounters.commit_observers`` hook (on the writer thread)."""
        if self.exposition is not None:
            self.exposition.observe_commit(batch_size, seconds, ok)
        self.commit_batch_requests += batch_size
        self.commit_seconds_total += seconds

    async def refresh(self) -> None:
        """Re-read the database figures (sessions, events, sizes, schema version) if older than FIGURES_TTL_S.

        Counting the tables is a scan; scrapes that come in together, or faster
        than the TTL, share one read, so however often anyone scrapes, the
        database is counted at most once per ``FIGURES_TTL_S``.
        """
        async with self._refresh_lock:
            if self._figures_at is not None and time.monotonic() - self._figures_at < FIGURES_TTL_S:
                return
            self.figures = figure_fields(await self.store.figures())
            self._figures_at = time.monotonic()

    async def render(self) -> bytes:
        """The Prometheus text exposition, at most RENDER_TTL_S old (database figures at most FIGURES_TTL_S).

        Rendering walks every histogram on the daemon's loop; scrapes that come
        together or faster than the TTL share one text.
        """
        async with self._render_lock:
            if self._rendered is not None and time.monotonic() - self._rendered[0] < RENDER_TTL_S:
                return self._rendered[1]
            if self.exposition is None:
                raise ValueError("metrics built without the Prometheus side (exposed=False)")
            await self.refresh()
            self.renders += 1
            body = self.exposition.text()
            self._rendered = (time.monotonic(), body)
            return body

    def stats(self) -> dict[str, Any]:
        """The extra GetStats fields (the figures /metrics has and GetStats did not)."""
        c = self.store.counters
        return {
            "requests": [
                {"method": method, "code": code, "count": count}
                for (method, code), count in sorted(self.request_counts.items())
            ],
            "sessions_deleted": c.sessions_deleted,
            "retention_sessions_deleted": getattr(c, "retention_deleted", 0),
            "erasure_pending_sessions": pending_erasures(self.store),
            "request_records_pruned": c.requests_pruned,
            "commit_batch_requests": self.commit_batch_requests,
            "commit_seconds": self.commit_seconds_total,
        }


class _Endpoint:
    """The ``/metrics`` HTTP handler with its limits (see the module docstring)."""

    def __init__(self, metrics: Metrics, content_type: str) -> None:
        self.metrics = metrics
        self.content_type = content_type
        self.active = 0
        self.throttle = Throttle()
        self._next_reply = 0.0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.active >= MAX_CONNECTIONS:
            writer.transport.abort()  # at once: no read, no response, no lingering close
            if (left_out := self.throttle.admit("refused")) is not None:
                _log.warning(
                    "event=metrics_connection_refused limit=%d suppressed_since_last=%d", MAX_CONNECTIONS, left_out
                )
            return
        self.active += 1
        answered = False
        try:
            answered = await self._serve(reader, writer)
        finally:
            self.active -= 1
            if answered:
                writer.close()  # the response is flushed (drained), so this frees the descriptor now
            else:
                writer.transport.abort()

    async def _pace(self) -> None:
        """Wait for this reply's turn: replies leave at most MAX_SCRAPES_PER_S a second."""
        now = time.monotonic()
        turn = max(now, self._next_reply)
        self._next_reply = turn + 1.0 / MAX_SCRAPES_PER_S
        if turn > now:
            await asyncio.sleep(turn - now)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request and answer it; True if the whole response was handed to the kernel."""
        try:
            async with asyncio.timeout(REQUEST_DEADLINE_S):  # the whole request, not each line
                request = await reader.readline()
                size = len(request)
                while size <= MAX_HEADER_BYTES:
                    line = await reader.readline()
                    size += len(line)
                    if line in (b"\r\n", b"\n", b""):
                        break
                else:
                    raise ValueError("request head too large")
            await self._pace()
            parts = request.decode("latin-1").split()
            path = parts[1].split("?", 1)[0] if len(parts) >= 2 else ""
            if len(parts) >= 2 and parts[0] in ("GET", "HEAD") and path == "/metrics":
                body = await self.metrics.render()
                status, ctype = "200 OK", self.content_type
            else:
                body, status, ctype = b"claw-sessiond: see /metrics\n", "404 Not Found", "text/plain; charset=utf-8"
            head = (
                f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n"
            )
            async with asyncio.timeout(REQUEST_DEADLINE_S):  # a reader that does not read is cut off too
                writer.write(head.encode("latin-1") + (b"" if parts[:1] == ["HEAD"] else body))
                await writer.drain()
            return True
        except (TimeoutError, ConnectionError, ValueError) as exc:  # ValueError: line over the limit
            _log.debug("event=metrics_request_failed error=%s", exc)
        except Exception as exc:
            if (left_out := self.throttle.admit(f"crashed|{type(exc).__name__}")) is not None:
                _log.exception("event=metrics_request_crashed suppressed_since_last=%d", left_out)
        return False


async def listen(metrics: Metrics, address: str) -> asyncio.Server:
    """Start answering ``GET /metrics`` on ``address`` (loopback ``host:port``); close the server to stop.

    Raises:
        OSError: the address cannot be bound.
        ValueError: ``metrics`` has no Prometheus side (built with ``exposed=False``).
    """
    if metrics.exposition is None:
        raise ValueError("metrics built without the Prometheus side (exposed=False)")
    host, port = parse_host_port("metrics", address)
    endpoint = _Endpoint(metrics, metrics.exposition.content_type)
    server = await asyncio.start_server(endpoint.handle, host, port, limit=MAX_HEADER_BYTES, backlog=BACKLOG)
    bound = ", ".join(f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in server.sockets)
    _log.info("event=metrics_listening address=%s max_connections=%d", bound, MAX_CONNECTIONS)
    return server


async def hold(server: asyncio.Server) -> None:
    """Keep ``server`` open until cancelled, then close it."""
    try:
        await asyncio.Event().wait()
    finally:
        server.close()
        await server.wait_closed()
