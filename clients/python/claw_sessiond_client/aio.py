"""The asyncio client, :class:`AsyncSessionClient` (one ``grpc.aio.Channel``).

A thin face over :class:`~claw_sessiond_client._core.ClientCore`, like
:class:`~claw_sessiond_client.sync.SessionClient`: this module only awaits the
calls and sleeps, and runs the blocking checks (peer, liveness) in a thread.
The pipelined appends are in :mod:`claw_sessiond_client._append_stream`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, BinaryIO, TypeVar

import grpc

from . import _finds as F
from . import errors as E
from ._append_stream import AppendStream
from ._core import CHANNEL_OPTIONS, DEFAULT_RETRY_WINDOW_S, DEFAULT_TIMEOUT_S, CallRetry, FollowRetry
from ._edit_ops import AsyncEditOps
from ._liveness import CONNECT_TIMEOUT_S, HEALTH_CHECK_METHOD, accepts_connections, ping_verdict
from ._peer import verify_peer
from ._plain_stream import PlainAppends
from ._requests import (
    append_request,
    clear_request,
    delete_request,
    export_request,
    import_requests,
    list_sessions_page_request,
    list_sessions_request,
    load_request,
    record_event_request,
    record_usage_request,
    usage_request,
)
from ._responses import (
    BackupCopy,
    LoadAssembly,
    append_result_of,
    clear_result_of,
    delete_result_of,
    event_id_of,
    import_result_of,
    page_of,
    recorded_usage_of,
    stats_of,
    summaries_of,
    usage_report_of,
)
from ._runs import END_RUN_TIMEOUT_S, WatchCursor, attach_request, end_run_request, ping_task, run_of
from ._session_ops import AsyncSessionOps
from ._status import error_from_rpc
from ._types import (
    AppendResult,
    BackupFigures,
    ClearResult,
    DeleteResult,
    ImportResult,
    LoadResult,
    Message,
    Run,
    SessionPage,
    SessionSummary,
    StateDelta,
    Stats,
    ToolPolicy,
    Usage,
    UsageReport,
    WatchEvent,
)
from .api.v1 import sessiond_pb2 as pb
from .api.v1 import sessiond_pb2_grpc as pb_grpc

__all__ = ["AppendStream", "AsyncSessionClient"]

T = TypeVar("T")
R = TypeVar("R")


class AsyncSessionClient(AsyncEditOps, AsyncSessionOps):
    """Talks to a workspace's claw-sessiond.

    Args:
        workspace: the workspace folder, searched upward for the nearest folder holding ``.claw/``
            (as git finds ``.git``), which must be yours (another user's: :class:`UntrustedPeerError`,
            nothing sent); default: ``$CLAW_SESSIOND_WORKSPACE`` as is, else the current folder
            searched upward. The socket is found as the daemon computes it.
        address: connect here instead (``unix:/path``, ``/path`` or ``127.0.0.1:PORT``);
            no auto-start then. A ``workspace`` given with it (used as is) only
            says whose daemon to expect there (the peer check for root).
        autostart: start a daemon for ``workspace`` if nothing answers (default on).
        timeout_s: per-call timeout.
        retry_window_s: how long a call that may be retried safely is retried
            (UNAVAILABLE, DEADLINE_EXCEEDED, daemon restarting); every mutation
            carries a request id, so a retry never writes twice.
        token: the daemon's TCP token, sent as ``authorization: Bearer`` when
            ``address`` is a TCP one (default: ``<workspace>/.claw/tcp-token``
            if ``workspace`` is given and readable, else ``$CLAW_TOKEN``). Never
            sent over a Unix socket; a refusal raises ``UnauthenticatedError``.
        stream_appends: carry :meth:`append` over one long-lived AppendStream call
            (default; same results and errors, see ``_plain_stream``); False: one unary call each.
        tls_cert: over TCP, the file holding the daemon's certificate (as :class:`SessionClient`).

    Every method raises :class:`~claw_sessiond_client.errors.SessiondError`
    subclasses, never ``grpc.RpcError`` (nor ``ValueError`` or ``OSError``), and
    ``TypeError`` naming the field for an argument of the wrong type, before
    anything is sent. With no daemon for the workspace (and auto-start off) the
    error comes at once, naming the workspace and how to start one; a daemon
    that does not answer is a ``DaemonNotRespondingError`` naming its pid (within
    :data:`~claw_sessiond_client._liveness.CONNECT_TIMEOUT_S` on a new connection); a
    call after :meth:`close` is a ``ClientClosedError``. Before the first request, and again
    after the daemon was unreachable, the client checks who listens on a Unix
    socket and raises :class:`~claw_sessiond_client.errors.UntrustedPeerError`
    without sending anything if it is another user (as :class:`SessionClient`).
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        address: str | None = None,
        autostart: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry_window_s: float = DEFAULT_RETRY_WINDOW_S,
        token: str | None = None,
        stream_appends: bool = True,
        tls_cert: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(workspace, address, autostart, timeout_s, retry_window_s, token, tls_cert)
        self._plain = PlainAppends(self) if stream_appends else None
        self._channel = self._transport.aio_channel(self.target, CHANNEL_OPTIONS)
        self._stub = pb_grpc.SessionServiceStub(self._channel)
        self._trusting: asyncio.Future[None] | None = None
        self._retired: list[grpc.aio.Channel] = []

    def _follow_endpoint(self) -> bool:
        """Follow the endpoint file or a new TCP certificate (as :meth:`SessionClient._follow_endpoint`)."""
        moved = self._next_target()
        if moved is None:
            return False
        self._retired.append(self._channel)
        self.target = moved
        self._channel = self._transport.aio_channel(self.target, CHANNEL_OPTIONS)
        self._stub = pb_grpc.SessionServiceStub(self._channel)
        return True

    # -- plumbing

    async def _trust(self) -> None:
        """Check the peer (once per connection episode) before anything is sent.

        Concurrent callers share one check and resume in the order they
        called (an AppendStream's appends must keep their call order).
        """
        self._check_open()
        if self._verified:
            return
        if self._trusting is None or self._trusting.done():
            self._follow_endpoint()
            self._trusting = asyncio.ensure_future(self._check_peer())
        await asyncio.shield(self._trusting)  # one caller cancelled must not cancel the others' check
        self._verified = True

    async def _check_peer(self) -> None:
        """The peer check, then (a daemon accepts connections) :data:`~claw_sessiond_client._liveness.CONNECT_TIMEOUT_S`
        for it to answer; one that does not (stopped, hung) is reported at once, not retried."""
        await asyncio.to_thread(verify_peer, self.target, self._owner_workspace)
        await self._transport.aio_prove(self._channel, self.target, CONNECT_TIMEOUT_S)
        accepts = await asyncio.to_thread(accepts_connections, self.target)
        if accepts and not await self._answers(CONNECT_TIMEOUT_S):
            raise self._not_responding()

    async def _answers(self, timeout_s: float) -> bool:
        """:func:`~claw_sessiond_client._liveness.health_ping` on this client's channel."""
        ping = self._channel.unary_unary(HEALTH_CHECK_METHOD, None, None)
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await ping(b"", timeout=left)
                return True
            except grpc.RpcError as exc:
                verdict = ping_verdict(exc.code())
            if verdict is not None:
                return verdict
            if not await asyncio.to_thread(accepts_connections, self.target):
                return True
            await asyncio.sleep(min(0.1, max(0.0, deadline - time.monotonic())))

    async def _final(self, err: E.SessiondError) -> E.SessiondError | None:
        """The error to raise at once instead of retrying ``err`` (no daemon at all, a hung one), if any."""
        check = self._final_check(err)
        return None if check is None else await asyncio.to_thread(check)

    async def close(self) -> None:
        """Close the channel; later calls raise :class:`~claw_sessiond_client.errors.ClientClosedError`."""
        if self._plain is not None and not self._closed:
            await self._plain.aclose()  # appends in flight get their replies first (bounded)
        self._closed = True
        await self._channel.close(None)
        for channel in self._retired:
            await channel.close(None)

    async def __aenter__(self) -> AsyncSessionClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(self, fn: Callable[[], Awaitable[T]]) -> T:
        retry = CallRetry(self)
        while True:
            await self._trust()
            try:
                result = await fn()
                self._served = True
                return result
            except grpc.RpcError as exc:
                err = error_from_rpc(exc)
            except (ValueError, grpc.aio.UsageError) as exc:
                raise self._closed_mid_call(exc) from None
            if retry.needs_daemon(err):
                await self._ensure_daemon()
                continue
            final = await self._final(err)
            if final is not None:
                raise final from None
            await asyncio.sleep(retry.pause(err))

    async def _ensure_daemon(self) -> None:
        """Start a daemon (once per outage) and wait until it answers."""
        wait = self._autostart_wait()
        while not wait.expired():
            try:
                await asyncio.wait_for(self._channel.channel_ready(), 0.2)
                return
            except TimeoutError:
                pass
            if self._follow_endpoint():  # another client's daemon won the lock, and listens elsewhere
                continue
            if wait.hopeless():
                break
        raise self._autostart_failure()

    async def _load_chunks(self, request: pb.LoadRequest) -> LoadResult:
        assembly = LoadAssembly()  # each chunk converted as it arrives
        async for chunk in self._stub.Load(request, timeout=self.timeout_s):
            assembly.add(chunk)
        return assembly.result()

    async def _send_append(self, request: pb.AppendRequest) -> AppendResult:
        """One unary Append, with :meth:`_call`'s retries (also the fallback of :class:`AppendStream`)."""
        reply = await self._call(lambda: self._stub.Append(request, timeout=self.timeout_s))
        return append_result_of(reply, request)

    # -- the API

    async def load(
        self,
        session_id: str,
        workdir: str | os.PathLike[str] | None = None,
        *,
        repair: bool = True,
        no_repair: bool = False,
        last: int | None = None,
        after_position: int | None = None,
        after_time: dt.datetime | None = None,
        scopes: Iterable[str] = (),
    ) -> LoadResult:
        """Get-or-create: metadata, usage and history; repairs interrupted tool calls.

        The arguments are those of :meth:`SessionClient.load <claw_sessiond_client.sync.SessionClient.load>`
        (``repair``/``no_repair`` to only look; ``last``, ``after_position``, ``after_time`` for a
        bounded read whose cost does not grow with the history; ``scopes`` for shared states).
        """
        # The default workdir is the current folder: read off the event loop (os.getcwd is file
        # system I/O; LangChain's tests fail a coroutine that does it on the loop).
        build = functools.partial(load_request, last=last, after_position=after_position, after_time=after_time)
        request, wd = await asyncio.to_thread(build, session_id, workdir, repair, no_repair, scopes=scopes)
        result = await self._call(lambda: self._load_chunks(request))
        self._workdirs[session_id] = wd
        return result

    async def append(
        self,
        session_id: str,
        messages: Iterable[Message] | Message,
        *,
        expected_last_position: int = 0,
        request_id: str | None = None,
        workdir: str | None = None,
        run_id: str = "",
        tool_policy: ToolPolicy | None = None,
        state_deltas: Sequence[StateDelta] = (),
    ) -> AppendResult:
        """Append messages atomically, in order.

        Args:
            expected_last_position: if > 0, append only if the session's last
                position is still this (else SequenceConflictError); -1 requires a new session.
            request_id: idempotency key (default: a fresh one, reused by retries).
            run_id: the run (from :meth:`attach`) that owns the tool calls appended.
            tool_policy: tool-call rules for this append (its fields win over the session's where set).
            state_deltas: state changes applied in the same transaction (all or none with the messages).
        """
        request = append_request(
            session_id,
            messages,
            expected_last_position=expected_last_position,
            request_id=request_id,
            workdir=self._workdir(session_id, workdir),
            run_id=run_id,
            tool_policy=tool_policy,
            state_deltas=state_deltas,
        )
        return await (self._send_append(request) if self._plain is None else self._plain.send(request))

    async def record_usage(
        self,
        session_id: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        cost_micros: int = 0,
        currency: str = "",
        model: str = "",
        pricing_version: str = "",
        request_id: str | None = None,
    ) -> Usage:
        """Add tokens and cost to the session's totals; returns the new totals."""
        request = record_usage_request(
            session_id,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
            cost_micros=cost_micros,
            currency=currency,
            model=model,
            pricing_version=pricing_version,
            request_id=request_id,
            workdirs=self._workdirs,
        )
        return await self._call(
            lambda: _then(self._stub.RecordUsage(request, timeout=self.timeout_s), recorded_usage_of)
        )

    async def clear(
        self,
        session_id: str,
        *,
        expected_last_position: int = 0,
        request_id: str | None = None,
        erase: bool = False,
    ) -> ClearResult:
        """Empty the visible history (usage totals are kept).

        With ``erase`` the history also leaves the event log and its bytes the database files (as
        :meth:`delete` does); the result's ``events_erased`` and ``erasure_pending`` say how it went.
        """
        request = clear_request(session_id, expected_last_position, request_id, self._workdirs, erase)
        return await self._call(lambda: _then(self._stub.Clear(request, timeout=self.timeout_s), clear_result_of))

    async def record_event(
        self, session_id: str, kind: str, payload: dict[str, Any], *, request_id: str | None = None
    ) -> int:
        """Record a ``permission_denial`` or ``error`` event; returns its event id.

        Raises:
            TypeError: ``payload`` is not a JSON-serialisable dict (or another argument has the wrong type).
        """
        request = record_event_request(session_id, kind, payload, request_id)
        return await self._call(lambda: _then(self._stub.RecordEvent(request, timeout=self.timeout_s), event_id_of))

    async def list_sessions(
        self, id_contains: str = "", limit: int = 100, labels: Mapping[str, str] | None = None
    ) -> list[SessionSummary]:
        """Stored sessions, most recently updated first (only those carrying every one of ``labels``, if given)."""
        request = list_sessions_request(id_contains, limit, labels)
        return await self._call(lambda: _then(self._stub.ListSessions(request, timeout=self.timeout_s), summaries_of))

    async def list_sessions_page(
        self,
        id_contains: str = "",
        limit: int = 100,
        page_token: str = "",
        labels: Mapping[str, str] | None = None,
    ) -> SessionPage:
        """One page of stored sessions (most recently updated first), the next page's token and the total."""
        request = list_sessions_page_request(id_contains, limit, page_token, labels)
        return await self._call(lambda: _then(self._stub.ListSessions(request, timeout=self.timeout_s), page_of))

    async def usage(self, session_id: str) -> UsageReport:
        """Totals and per-model breakdown of a stored session."""
        request = usage_request(session_id)
        return await self._call(lambda: _then(self._stub.GetUsage(request, timeout=self.timeout_s), usage_report_of))

    async def delete(self, session_id: str) -> DeleteResult:
        """Hard-delete a session; returns the number of events removed (with ``erasure_pending``)."""
        request = delete_request(session_id)
        return await self._call(lambda: _then(self._stub.Delete(request, timeout=self.timeout_s), delete_result_of))

    async def export(self, session_id: str | None = None, *, timeout_s: float | None = None) -> AsyncIterator[str]:
        """Lines of the export format of one session or, with None, of all (not retried)."""
        request = export_request(session_id)
        await self._trust()
        try:
            async for reply in self._stub.Export(request, timeout=timeout_s or self.timeout_s * 10):
                yield reply.line
        except grpc.RpcError as exc:
            err = error_from_rpc(exc)
            raise (await self._final(err) or err) from None
        except (ValueError, grpc.aio.UsageError) as exc:
            raise self._closed_mid_call(exc) from None

    async def backup(self, out: BinaryIO, *, timeout_s: float | None = None) -> BackupFigures:
        """Write a consistent copy of the whole database to ``out`` (see :meth:`SessionClient.backup`)."""
        await self._trust()
        copy = BackupCopy()
        try:
            async for reply in self._stub.Backup(pb.BackupRequest(), timeout=timeout_s or self.timeout_s * 30):
                out.write(copy.data(reply))
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from None
        return copy.result()

    async def import_lines(self, lines: Iterable[str], *, mode: str = "refuse") -> list[ImportResult]:
        """Import export lines, one Import call per session block (see :meth:`SessionClient.import_lines`)."""
        results = []
        for request in import_requests(lines, mode):
            reply = await self._call(
                lambda r=request: _then(self._stub.Import(r, timeout=self.timeout_s), import_result_of)  # type: ignore[misc]
            )
            results.append(reply)
        return results

    @contextlib.asynccontextmanager
    async def attach(self, session_id: str, label: str = "", *, ping_timeout_s: int = 0) -> AsyncIterator[Run]:
        """Hold run ownership of ``session_id`` for an ``async with`` block (see :meth:`SessionClient.attach`).

        Raises:
            PreconditionError: reason ``RUN_ALREADY_OWNED``: another live run owns the session.
        """
        request = attach_request(session_id, label, ping_timeout_s)

        async def start() -> tuple[Any, Run]:
            call = self._stub.Attach(request)  # no deadline: the stream lives as long as the run
            try:
                first = await call.read()
            except BaseException:
                call.cancel()
                raise
            return call, run_of(session_id, first)

        call, run = await self._call(start)
        call.add_done_callback(lambda _call: run.end())
        pinger = asyncio.ensure_future(ping_task(self._stub, run))
        try:
            yield run
        finally:
            pinger.cancel()
            if run.alive and not self._closed:
                with contextlib.suppress(grpc.RpcError, ValueError, grpc.aio.UsageError):
                    await self._stub.EndRun(end_run_request(run.run_id), timeout=END_RUN_TIMEOUT_S)
            call.cancel()
            run.end()

    async def end_run(self, run_id: str) -> bool:
        """End a run and return once it is no longer live (see :meth:`SessionClient.end_run`)."""
        request = end_run_request(run_id)
        reply = await self._call(lambda: self._stub.EndRun(request, timeout=self.timeout_s))
        return bool(reply.was_live)

    async def _follow(self, start: Callable[[], Any], cursor: Any, name: str) -> AsyncGenerator[Any, None]:
        """Run a following stream (Watch, WatchAll); see :meth:`SessionClient._follow`."""
        follow = FollowRetry(self, cursor, name)
        while True:
            await self._trust()
            try:
                call = start()
            except (ValueError, grpc.aio.UsageError) as exc:
                raise self._closed_mid_call(exc) from None
            err: E.SessiondError
            try:
                async for reply in call:
                    for event in follow.accept(reply):
                        yield event
                err = follow.ended()
            except grpc.RpcError as exc:
                err = error_from_rpc(exc)
            finally:
                call.cancel()
            if follow.needs_daemon(err):
                await self._ensure_daemon()
                continue
            check = follow.final_check(err)
            final = None if check is None else await asyncio.to_thread(check)
            if final is not None:
                raise final
            await asyncio.sleep(follow.pause(err))

    async def watch(self, session_id: str, after_position: int = 0) -> AsyncIterator[WatchEvent]:
        """Follow a session (see :meth:`SessionClient.watch`): resumes by itself after lag or restarts.

        Raises:
            SessiondError: a non-resumable error, or an outage longer than ``retry_window_s``.
        """
        cursor = WatchCursor(session_id, after_position, self.retry_window_s)
        follow = self._follow(lambda: self._stub.Watch(cursor.request()), cursor, "Watch")
        async with contextlib.aclosing(follow) as events:  # closed at once when the caller stops
            async for event in events:
                yield event

    async def search(
        self,
        query: str,
        *,
        raw: bool = False,
        session_id: str = "",
        role: str = "",
        since: dt.datetime | None = None,
        until: dt.datetime | None = None,
        limit: int = 0,
        include_cleared: bool = False,
    ) -> F.SearchResult:
        """Full-text search across sessions (see :meth:`SessionClient.search`)."""
        request = F.search_request(
            query,
            raw=raw,
            session_id=session_id,
            role=role,
            since=since,
            until=until,
            limit=limit,
            include_cleared=include_cleared,
        )
        return await self._call(lambda: _then(self._stub.Search(request, timeout=self.timeout_s), F.search_result_of))

    async def usage_report(
        self, *, since: dt.datetime | None = None, until: dt.datetime | None = None, by_session: bool = False
    ) -> F.CrossSessionUsage:
        """Usage and cost across sessions (see :meth:`SessionClient.usage_report`)."""
        request = F.usage_report_request(since, until, by_session)
        return await self._call(
            lambda: _then(self._stub.GetUsageReport(request, timeout=self.timeout_s), F.usage_report_of)
        )

    async def watch_all(self, last: int = 0) -> AsyncIterator[F.FollowEvent]:
        """Follow every session (see :meth:`SessionClient.watch_all`): resumes by itself after lag or restarts.

        Raises:
            SessiondError: a non-resumable error, or an outage longer than ``retry_window_s``.
        """
        cursor = F.FollowCursor(last, self.retry_window_s)
        follow = self._follow(lambda: self._stub.WatchAll(cursor.request()), cursor, "WatchAll")
        async with contextlib.aclosing(follow) as events:  # closed at once when the caller stops
            async for event in events:
                yield event

    async def stats(self) -> Stats:
        """Daemon and database figures."""
        return await self._call(
            lambda: _then(self._stub.GetStats(pb.GetStatsRequest(), timeout=self.timeout_s), stats_of)
        )

    def append_stream(self) -> AppendStream:
        """Pipelined appends over one AppendStream call, for writers with many appends in flight.

        >>> async with client.append_stream() as stream:          # doctest: +SKIP
        ...     await asyncio.gather(*(stream.append("s", Message.user(t)) for t in texts))

        Same semantics, results and errors as :meth:`append`, at a fraction of
        a gRPC call's cost per append (README "Benchmarks").
        """
        return AppendStream(self)


async def _then(call: Awaitable[R], convert: Callable[[R], T]) -> T:
    return convert(await call)
