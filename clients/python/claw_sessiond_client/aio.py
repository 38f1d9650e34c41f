"""The asyncio client, :class:`AsyncSessionClient` (one ``grpc.aio.Channel``).

One method per operation, each building its request (``_requests``,
``_session_ops``, ``_edit_ops``), making the call through its connection layer
(:class:`~claw_sessiond_client._aio_channel.AsyncChannel`: the channel, the peer
check, retries, auto-start, following streams) and converting the reply
(``_responses``), like :class:`~claw_sessiond_client.sync.SessionClient`. The
pipelined appends are in :mod:`claw_sessiond_client._append_stream`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, BinaryIO, TypeVar

import grpc

from . import _finds as F
from ._aio_channel import AsyncChannel
from ._append_stream import AppendStream
from ._core import DEFAULT_RETRY_WINDOW_S, DEFAULT_TIMEOUT_S
from ._edit_ops import edit_tail_request, edit_tail_result_of
from ._entry_ops import delete_entries_request, delete_entries_result_of
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
    Assembly,
    BackupCopy,
    ItemsAssembly,
    LoadAssembly,
    append_result_of,
    clear_result_of,
    delete_result_of,
    event_id_of,
    import_result_of,
    page_of,
    recorded_usage_of,
    session_of,
    stats_of,
    summaries_of,
    usage_report_of,
)
from ._runs import END_RUN_TIMEOUT_S, WatchCursor, attach_request, end_run_request, ping_task, run_of
from ._session_ops import (
    create_session_request,
    fork_result_of,
    fork_session_request,
    scope_states_of,
    scope_states_request,
    update_session_request,
    workdir_arg,
)
from ._status import error_from_rpc
from ._types import (
    AppendResult,
    BackupFigures,
    ClearResult,
    DeleteEntriesResult,
    DeleteResult,
    EditTailResult,
    ForkResult,
    ImportResult,
    LoadResult,
    Message,
    Run,
    Session,
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

__all__ = ["AppendStream", "AsyncSessionClient"]

T = TypeVar("T")
R = TypeVar("R")


class AsyncSessionClient(AsyncChannel):
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

    async def close(self) -> None:
        """Close the channel; later calls raise :class:`~claw_sessiond_client.errors.ClientClosedError`."""
        if self._plain is not None and not self._closed:
            await self._plain.aclose()  # appends in flight get their replies first (bounded)
        self._closed = True
        await self._close_channels()

    async def __aenter__(self) -> AsyncSessionClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _load_chunks(self, request: pb.LoadRequest) -> LoadResult:
        return await self._assembled(request, LoadAssembly())  # each chunk converted as it arrives

    async def _assembled(self, request: pb.LoadRequest, assembly: Assembly[T]) -> T:
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
        before_position: int | None = None,
        client_ids: Iterable[str] = (),
        client_id_prefix: str = "",
    ) -> LoadResult:
        """Get-or-create: metadata, usage and history; repairs interrupted tool calls.

        The arguments are those of :meth:`SessionClient.load <claw_sessiond_client.sync.SessionClient.load>`
        (``repair``/``no_repair`` to only look; ``last``, ``after_position``, ``after_time`` for a
        bounded read whose cost does not grow with the history; ``scopes`` for shared states;
        ``client_ids``, ``client_id_prefix``, ``before_position`` for point and range reads).
        """
        # The default workdir is the current folder: read off the event loop (os.getcwd is file
        # system I/O; LangChain's tests fail a coroutine that does it on the loop).
        build = functools.partial(
            load_request,
            last=last,
            after_position=after_position,
            after_time=after_time,
            before_position=before_position,
            client_ids=client_ids,
            client_id_prefix=client_id_prefix,
        )
        request, wd = await asyncio.to_thread(build, session_id, workdir, repair, no_repair, scopes=scopes)
        result = await self._call(lambda: self._load_chunks(request))
        if wd:  # a look-only Load given no workdir carries none
            self._workdirs[session_id] = wd
        return result

    async def load_items(self, session_id: str, item_format: str, *, last: int | None = None) -> list[bytes]:
        """The stored items of one format, in the order written: a look only (repairs and writes nothing).

        The arguments are those of
        :meth:`SessionClient.load_items <claw_sessiond_client.sync.SessionClient.load_items>`.
        """
        # no workdir: no file system I/O
        request, _ = load_request(session_id, None, False, True, last=last, items_format=item_format)
        items: list[bytes] = await self._call(lambda: self._assembled(request, ItemsAssembly(item_format)))
        return items

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

    # -- sessions as things of their own, and editing the tail

    async def create_session(
        self,
        session_id: str,
        *,
        state: Mapping[str, Any] | None = None,
        labels: Mapping[str, str] | None = None,
        tool_policy: ToolPolicy | None = None,
        request_id: str | None = None,
        workdir: str | os.PathLike[str] | None = None,
    ) -> Session:
        """See :meth:`SessionClient.create_session`."""
        request = create_session_request(
            session_id,
            state=state,
            labels=labels,
            tool_policy=tool_policy,
            request_id=request_id,
            workdir=workdir_arg(workdir) or self._workdir(session_id, None),
        )
        reply = await self._call(lambda: self._stub.CreateSession(request, timeout=self.timeout_s))
        return session_of(reply.session)

    async def fork_session(
        self,
        source_id: str,
        new_id: str,
        *,
        up_to_position: int = 0,
        labels: Mapping[str, str] | None = None,
        request_id: str | None = None,
        workdir: str | os.PathLike[str] | None = None,
    ) -> ForkResult:
        """See :meth:`SessionClient.fork_session`."""
        request = fork_session_request(
            source_id,
            new_id,
            up_to_position=up_to_position,
            labels=labels,
            request_id=request_id,
            workdir=workdir_arg(workdir),
        )
        return fork_result_of(await self._call(lambda: self._stub.ForkSession(request, timeout=self.timeout_s)))

    async def update_session(
        self,
        session_id: str,
        *,
        state_deltas: Sequence[StateDelta] = (),
        set_labels: Mapping[str, str] | None = None,
        remove_labels: Iterable[str] = (),
        tool_policy: ToolPolicy | None = None,
        expected_last_position: int = 0,
        request_id: str | None = None,
    ) -> Session:
        """See :meth:`SessionClient.update_session`."""
        request = update_session_request(
            session_id,
            state_deltas=state_deltas,
            set_labels=set_labels,
            remove_labels=remove_labels,
            tool_policy=tool_policy,
            expected_last_position=expected_last_position,
            request_id=request_id,
        )
        reply = await self._call(lambda: self._stub.UpdateSession(request, timeout=self.timeout_s))
        return session_of(reply.session)

    async def scope_states(self, scopes: Iterable[str]) -> dict[str, dict[str, Any]]:
        """See :meth:`SessionClient.scope_states`."""
        request = scope_states_request(scopes)
        return scope_states_of(await self._call(lambda: self._stub.GetScopeStates(request, timeout=self.timeout_s)))

    async def edit_tail(
        self,
        session_id: str,
        *,
        remove_last: int = 0,
        after_position: int = 0,
        replacements: Iterable[Message] | Message = (),
        expected_last_position: int = 0,
        request_id: str | None = None,
        discard_pending: bool = False,
        workdir: str | None = None,
        run_id: str = "",
        tool_policy: ToolPolicy | None = None,
    ) -> EditTailResult:
        """Atomically remove the last ``remove_last`` visible entries (or every one after ``after_position``)
        and append ``replacements`` in their place, with :meth:`append`'s rules; returns what was removed.

        ``expected_last_position`` and ``request_id`` work as :meth:`append`'s (a replay returns no
        removed entries); ``discard_pending`` allows removing an unanswered pending call (else
        ``PreconditionError``, reason ``EDIT_SPLITS_CALL``); ``tool_policy`` applies to the replacements as
        :meth:`append`'s does. See docs/api.md, "Editing the tail".
        """
        request = edit_tail_request(
            session_id,
            remove_last=remove_last,
            after_position=after_position,
            replacements=replacements,
            expected_last_position=expected_last_position,
            request_id=request_id,
            discard_pending=discard_pending,
            workdir=self._workdir(session_id, workdir),
            run_id=run_id,
            tool_policy=tool_policy,
        )
        reply = await self._call(lambda: self._stub.EditTail(request, timeout=self.timeout_s))
        return edit_tail_result_of(reply)

    async def delete_entries(
        self,
        session_id: str,
        *,
        client_ids: Iterable[str] = (),
        client_id_prefix: str = "",
        from_position: int = 0,
        to_position: int = 0,
        expected_last_position: int = 0,
        request_id: str | None = None,
        discard_pending: bool = False,
    ) -> DeleteEntriesResult:
        """Remove visible entries anywhere in the history: the arguments and rules are those of
        :meth:`SessionClient.delete_entries <claw_sessiond_client.sync.SessionClient.delete_entries>`.
        """
        request = delete_entries_request(
            session_id,
            client_ids=client_ids,
            client_id_prefix=client_id_prefix,
            from_position=from_position,
            to_position=to_position,
            expected_last_position=expected_last_position,
            request_id=request_id,
            discard_pending=discard_pending,
        )
        reply = await self._call(lambda: self._stub.DeleteEntries(request, timeout=self.timeout_s))
        return delete_entries_result_of(reply)


async def _then(call: Awaitable[R], convert: Callable[[R], T]) -> T:
    return convert(await call)
