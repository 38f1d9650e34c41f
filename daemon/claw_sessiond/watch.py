"""Watch: following a session's history events as they commit (no gRPC here).

Design: *wake, then pull*. The store calls :meth:`WatchHub.notify` on the
loop with the session ids each commit changed. The hub only sets the wake
flag of the watchers of those sessions; it never copies events. Each watcher
then reads what it has not sent yet straight from the database
(``Storage.watch_batch``: the session's incarnation and at most
:data:`WATCH_BATCH` events — :data:`WATCH_BATCH_EVENTS` for a client that
accepts batches — and about 1 MiB of payload at a time, in one snapshot;
watchers of one session at one position share that read and its encoding)
and sends it. So:

- order and completeness come from the database: one writer assigns a
  session's positions in commit order, and a read sees whole commits only,
  so "position > last sent" has no gaps and no duplicates;
- a slow watcher cannot slow a writer down (a commit only sets flags) and
  cannot make the daemon buffer without bound: what the daemon holds for a
  watcher is one batch plus whatever gRPC has not yet handed to the socket,
  and gRPC's HTTP/2 flow control stops accepting messages once the client's
  window is full (measured: sends block after about 4 MiB unread);
- a watcher whose send stays blocked for longer than the stall limit
  (``--watch-stall-s``: the client stopped reading) is *lagged*:
  ``rpc/service_watch.py`` ends its stream with ABORTED / ``WATCH_LAGGED`` carrying the
  last position sent, and its slot (of ``--max-watchers`` and of its peer's share) is
  free at once, even while the client keeps the connection and the status waits
  behind the unread events. HTTP/2 sends that status behind the events already in
  the client's window, so the client first reads those, then the error, and
  resumes with a new Watch after the last position it received. Nothing is
  lost: the events are in the database. (Measured with grpcio 1.85: the
  status does not overtake the window, and cancelling the handler task
  instead leaves the client hanging, so this is the only clean way to end a
  blocked stream. The memory bound above does not depend on it.)

A stream follows **one incarnation** of a session. Each session row carries
an incarnation id, fixed when the row is created; a session deleted (or
replaced by an import) and created again under the same id is a new
incarnation, whose positions restart at 1. Every pull reads the stored
incarnation in the same snapshot as the events, and the watcher remembers
the first one it sees (or the one the client asked for, when it resumes
with ``WatchRequest.incarnation``). When the stored session is absent or
another incarnation, the stream ends with ``SessionNotFoundError``
(NOT_FOUND), exactly as when the delete is seen directly: it never sends an
event of the new incarnation. A Watch of a session that is not stored yet
(and names no incarnation) waits for it and then follows the incarnation
that is created.

**Fan-out under a budget.** A commit does not wake its watchers directly:
it marks them *due*, and one dispatcher task wakes due watchers in FIFO
order from a token bucket of ``--watch-sends-per-s`` messages per second
(burst :data:`WAKE_BURST`), at most :data:`WAKE_SLICE` at a time, yielding
to the loop between slices. A woken watcher sends what it has not sent
(at most one pull) and pays for each message one token plus one per
:data:`TOKEN_BYTES` of its encoded size; if more is waiting it queues itself
again at the back. A client that accepts batches gets a pull's events in
messages of up to :data:`WATCH_BATCH_EVENTS` events and about
:data:`WATCH_MESSAGE_BYTES` (``rpc/watch_wire.py``), so the budget bounds
messages and bytes, not events: one watcher follows a session at the
daemon's full append rate and catches up at about Load's speed. A watcher
marked due while it is already queued or sending is not queued twice
(*coalescing*: its next turn carries every event committed meanwhile). A new
stream's first pull waits for its turn as well, so a backlog is paid for. So
the loop spends at most about ``sends_per_s`` watch messages' worth of time
per second on fan-out however many watchers and commits there are, and
when ``N`` watchers are due at once the last one is woken about
``N / sends_per_s`` seconds after the commit (the watch-latency bound: 4 s
for 2,000 watchers at the default 500/s, about 8 s at the default cap of
4,096 streams; measured here, one watch message costs the loop and the
machine about 0.5 ms all told, so 500/s keeps an ordinary Load's p99
within 3x of a quiet daemon's). With few watchers the bucket is full and a commit wakes
them at once. Order and completeness are unchanged: a turn reads from the
database after the last position sent.

The number of open streams is capped (``--max-watchers``): one more Watch
is refused with RESOURCE_EXHAUSTED / ``TOO_MANY_STREAMS``. Each peer holds
at most ``--max-watchers-per-peer`` of them; one more from it is refused the
same way, with metadata ``scope=peer``. A peer is a TCP connection (grpc
names it by address and port) or, on the Unix socket, where grpc names every
caller ``"unix:"``, a client process: the pid the request declares, confirmed
by the kernel; streams without a confirmed pid share one peer (the rule is
:func:`claw_sessiond.rpc.edge.share_peer`).

Must never: hold events per watcher beyond one batch, or block the loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from .config import DEFAULT_MAX_WATCHERS, DEFAULT_WATCH_SENDS_PER_S
from .errors import Reason, ResourceLimitError, SessiondError, SessionNotFoundError, ShuttingDownError

__all__ = [
    "ALL_SESSIONS",
    "TOKEN_BYTES",
    "WAKE_BURST",
    "WAKE_SLICE",
    "WATCH_BATCH",
    "WATCH_BATCH_EVENTS",
    "WATCH_MESSAGE_BYTES",
    "WatchHub",
    "Watcher",
    "message_cost",
]

#: Most events read from the database per pull for a client that takes one event per message.
WATCH_BATCH: Final = 64
#: Most events read per pull, and carried by one message, for a client that accepts batches (as a
#: Load page: ``storage.paging.PAGE_ROWS``). The storage also stops a pull at about 1 MiB of payload.
WATCH_BATCH_EVENTS: Final = 512
#: Most encoded bytes of one batched Watch message (a message always holds at least one event, so a
#: single larger event travels alone; every event is below the 4 MiB gRPC receive limit).
WATCH_MESSAGE_BYTES: Final = 1024 * 1024
#: A message costs the fan-out budget one token plus one per this many encoded bytes.
TOKEN_BYTES: Final = 256 * 1024
#: The key of WatchAll's watchers (no session id can contain "/"): every commit wakes them,
#: and their position is an event id. They share the stall limit of every other watcher.
ALL_SESSIONS: Final = "/all"
#: Watchers woken in one go before the dispatcher yields to the loop.
WAKE_SLICE: Final = 16
#: Tokens the bucket holds at most (what a quiet daemon sends at once without waiting).
WAKE_BURST: Final = 64

#: ``pull(after_position, limit)`` → ``(incarnation or None if not stored, [(position, item, size)], more
#: may follow)``: one entry per message to send, ``position`` its last event's, ``size`` its encoded bytes;
#: the item is whatever the caller sends (an already encoded reply, in the daemon).
Pull = Callable[[int, int], Awaitable[tuple[str | None, list[tuple[int, Any, int]], bool]]]


def message_cost(size: int) -> int:
    """Tokens of the fan-out budget one message of ``size`` encoded bytes costs."""
    return 1 + size // TOKEN_BYTES


@dataclass(eq=False)
class Watcher:
    """One open Watch stream.

    Attributes:
        session_id: the session followed.
        position: the last position handed to the transport.
        blocked_since: monotonic time the current send started (None while not sending).
        incarnation: the incarnation followed (None until the session is first seen).
        limit: the most events one pull reads (:data:`WATCH_BATCH` or :data:`WATCH_BATCH_EVENTS`).
        peer: the peer whose share it counts against (None: the daemon-wide cap only).
    """

    session_id: str
    position: int
    blocked_since: float | None = None
    incarnation: str | None = None
    limit: int = WATCH_BATCH
    peer: str | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    ended: SessiondError | None = None
    hub: WatchHub | None = None
    #: True from the moment it is woken until it waits again (a commit meanwhile only sets ``missed``).
    busy: bool = True
    missed: bool = False

    async def follow(self, pull: Pull) -> AsyncGenerator[tuple[int, Any], None]:
        """Yield ``(position, item)`` after :attr:`position`, then new ones as they commit (one per message).

        The caller sends each item before asking for the next; the time it
        spends doing so is recorded in :attr:`blocked_since`.

        Raises:
            ShuttingDownError: the daemon is stopping (the client should resume elsewhere).
            SessionNotFoundError: the session was deleted while watched (the incarnation followed is gone).
        """
        if self.hub is not None:  # the first pull waits for its turn too (a backlog is paid like the rest)
            self.busy = False
            self.hub.due(self)
            await self.wake.wait()
            self.busy = True
        while True:
            # Clear before reading: a commit that lands after the read sets it again.
            self.wake.clear()
            if self.ended is not None:
                raise self.ended
            incarnation, batch, more = await pull(self.position, self.limit)
            if self.incarnation is None:
                self.incarnation = incarnation  # stays None while the session is not stored yet
            elif incarnation != self.incarnation:
                raise SessionNotFoundError(
                    f"session {self.session_id!r} was deleted while being watched"
                    + (" (it has been created again: start a new Watch to follow it)" if incarnation else ""),
                    session_id=self.session_id,
                )
            for position, item, _size in batch:
                self.blocked_since = time.monotonic()
                yield position, item
                self.blocked_since = None
                self.position = position
            if self.hub is None:
                if not more:
                    await self.wake.wait()
                continue
            # Pay for the messages beyond the one token the wake-up cost, then
            # wait for the next turn: at once queued again if more is waiting.
            self.hub.spend(sum(message_cost(size) for _, _, size in batch) - 1)
            self.busy = False
            if more or self.missed:
                self.missed = False
                self.hub.due(self)
            await self.wake.wait()
            self.busy = True


class WatchHub:
    """The open watchers, by session; lives on the event loop."""

    def __init__(
        self,
        max_watchers: int = DEFAULT_MAX_WATCHERS,
        sends_per_s: float = DEFAULT_WATCH_SENDS_PER_S,
        max_per_peer: int | None = None,
    ) -> None:
        self._by_session: dict[str, set[Watcher]] = {}
        self._closing = False
        self._count = 0
        #: Open watchers of each peer that has a share (a peer is dropped when its last one closes).
        self._by_peer: dict[str, int] = {}
        self.max_watchers = max_watchers
        self.max_per_peer = max_watchers if max_per_peer is None else max_per_peer
        self.sends_per_s = sends_per_s
        #: Watchers waiting for their turn, in FIFO order (a dict: ordered, O(1) membership).
        self._due: dict[Watcher, None] = {}
        self._tokens = float(WAKE_BURST)
        self._refilled = time.monotonic()
        self._dispatcher: asyncio.Task[None] | None = None
        self.wakes = 0  # watchers woken by the dispatcher (for tests and stats)
        #: Bumped by every commit notification: a read started at generation g sees every
        #: commit notified up to g (what lets watchers share one read, see ``rpc/service_watch.py``).
        self.generation = 0

    def open(
        self,
        session_id: str,
        after_position: int,
        incarnation: str | None = None,
        *,
        peer: str | None = None,
        limit: int = WATCH_BATCH,
    ) -> Watcher:
        """Register a watcher of ``session_id`` that starts after ``after_position``.

        ``incarnation`` (from a resumed watch) pins the incarnation to follow; ``peer`` names
        the peer whose share it takes (None: only the daemon-wide cap applies); ``limit`` is
        the most events one pull reads.

        Raises:
            ShuttingDownError: the daemon is stopping.
            ResourceLimitError: ``TOO_MANY_STREAMS``: the daemon's cap or the peer's share is taken.
        """
        if self._closing:
            raise ShuttingDownError("claw-sessiond is shutting down; resume the watch in a moment")
        if self._count >= self.max_watchers:
            raise ResourceLimitError(
                f"too many Watch streams open ({self._count}, the limit is {self.max_watchers}, --max-watchers); "
                "close one or retry later",
                reason=Reason.TOO_MANY_STREAMS,
                limit=self.max_watchers,
            )
        if peer is not None:
            held = self._by_peer.get(peer, 0)
            if held >= self.max_per_peer:
                raise ResourceLimitError(
                    f"too many Watch streams open from this client ({held}; the share of one peer, a TCP "
                    f"connection or a client process on the Unix socket, is {self.max_per_peer}, "
                    "--max-watchers-per-peer); close one, or wait for a lagged one to end",
                    reason=Reason.TOO_MANY_STREAMS,
                    limit=self.max_per_peer,
                    scope="peer",
                )
            self._by_peer[peer] = held + 1
        watcher = Watcher(session_id, after_position, incarnation=incarnation, limit=limit, peer=peer, hub=self)
        self._by_session.setdefault(session_id, set()).add(watcher)
        self._count += 1
        return watcher

    def close(self, watcher: Watcher) -> None:
        """Unregister a watcher (idempotent)."""
        watchers = self._by_session.get(watcher.session_id)
        self._due.pop(watcher, None)
        if watchers is None or watcher not in watchers:
            return
        watchers.discard(watcher)
        self._count -= 1
        if not watchers:
            del self._by_session[watcher.session_id]
        if watcher.peer is not None:
            left = self._by_peer.pop(watcher.peer, 1) - 1
            if left > 0:
                self._by_peer[watcher.peer] = left

    def notify(self, session_ids: set[str]) -> None:
        """The store's commit listener: mark the watchers of the changed sessions due."""
        self.generation += 1
        for watcher in self._by_session.get(ALL_SESSIONS, ()):
            watcher.wake.set()
        for session_id in session_ids:
            for watcher in self._by_session.get(session_id, ()):
                if watcher.busy:
                    watcher.missed = True  # it reads again after its current turn
                else:
                    self.due(watcher)

    def due(self, watcher: Watcher) -> None:
        """Queue ``watcher`` for a turn (once: a queued watcher keeps its place)."""
        if watcher in self._due or watcher.wake.is_set():
            return
        self._due[watcher] = None
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch())

    def spend(self, messages: int) -> None:
        """A watcher sent ``messages`` more than its wake-up paid for."""
        if messages > 0:
            self._tokens -= messages

    def _refill(self) -> None:
        now = time.monotonic()
        self._tokens = min(float(WAKE_BURST), self._tokens + (now - self._refilled) * self.sends_per_s)
        self._refilled = now

    async def _dispatch(self) -> None:
        """Wake due watchers within the budget; ends when none is due."""
        while self._due:
            self._refill()
            if self._tokens < 1:
                await asyncio.sleep((1 - self._tokens) / self.sends_per_s)
                continue
            for _ in range(min(WAKE_SLICE, int(self._tokens), len(self._due))):
                watcher = next(iter(self._due))
                del self._due[watcher]
                self._tokens -= 1
                self.wakes += 1
                watcher.wake.set()
            await asyncio.sleep(0)  # let the woken watchers and everyone else run

    def stalled(self, limit_s: float, now: float | None = None) -> list[Watcher]:
        """Watchers whose current send has been blocked for longer than ``limit_s`` seconds."""
        at = time.monotonic() if now is None else now
        return [
            w
            for watchers in self._by_session.values()
            for w in watchers
            if w.blocked_since is not None and at - w.blocked_since > limit_s
        ]

    def end_session(self, session_id: str) -> None:
        """The session was deleted: its watchers end with SessionNotFoundError.

        Positions restart at 1 after a delete, so following on would skip the
        new session's first events; the watcher has to decide what to do.
        """
        for watcher in self._by_session.get(session_id, ()):
            watcher.ended = SessionNotFoundError(
                f"session {session_id!r} was deleted while being watched", session_id=session_id
            )
            watcher.wake.set()

    # The storage's change feed (``storage.base.ChangeListener``): the hub subscribes itself.

    def changed(self, session_ids: set[str]) -> None:
        """A commit changed these sessions: :meth:`notify`."""
        self.notify(session_ids)

    def erased(self, session_id: str) -> None:
        """The session was erased: :meth:`end_session`."""
        self.end_session(session_id)

    def resync(self) -> None:
        """Changes may have been missed (the feed across daemons reconnected): every watcher reads again."""
        self.notify(set(self._by_session))

    def end_all(self) -> None:
        """Shutdown: wake every watcher so that it ends with ShuttingDownError; refuse new ones."""
        self._closing = True
        self._due.clear()
        if self._dispatcher is not None:
            self._dispatcher.cancel()
        for watchers in self._by_session.values():
            for watcher in watchers:
                watcher.ended = ShuttingDownError("claw-sessiond is shutting down; resume the watch in a moment")
                watcher.wake.set()

    def count(self) -> int:
        """Number of open watchers."""
        return self._count
