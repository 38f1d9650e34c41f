"""The blocking client, :class:`SessionClient` (one ``grpc.Channel``).

One method per operation: requests are built by ``_requests`` (``req``),
``_session_ops`` (``ops``) and ``_edit_ops``, replies converted by
``_responses`` (``rsp``); the calls go through the client's connection layer,
:class:`~claw_sessiond_client._sync_channel.SyncChannel` (the channel, the peer
check, retries and auto-start, following streams), over the core
(:class:`~claw_sessiond_client._core.ClientCore`) that decides what to do after
a failure.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, BinaryIO

import grpc

from . import _finds as F
from . import _requests as req
from . import _responses as rsp
from . import _session_ops as ops
from ._core import DEFAULT_RETRY_WINDOW_S, DEFAULT_TIMEOUT_S
from ._edit_ops import edit_tail_request, edit_tail_result_of
from ._entry_ops import delete_entries_request, delete_entries_result_of
from ._runs import END_RUN_TIMEOUT_S, ThreadPinger, WatchCursor, attach_request, end_run_request, run_of
from ._status import error_from_rpc
from ._sync_channel import SyncChannel
from ._sync_stream import SyncAppends
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

__all__ = ["SessionClient"]


class SessionClient(SyncChannel):
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
            (default; same results and errors, see ``_sync_stream``); False: one unary call each.
        tls_cert: over TCP, the file with the daemon's certificate, the only one trusted (default: the
            workspace's ``.claw/tcp-cert.pem``, else ``$CLAW_TLS_CERT``); see ``_tls``. The token goes after it.

    Every method raises :class:`~claw_sessiond_client.errors.SessiondError`
    subclasses, never ``grpc.RpcError`` (nor ``ValueError`` or ``OSError``), and
    ``TypeError`` naming the field for an argument of the wrong type, before
    anything is sent. With no daemon for the workspace (and auto-start off) the
    error comes at once, naming the workspace and how to start one; a daemon
    that does not answer is a ``DaemonNotRespondingError`` naming its pid (within
    :data:`~claw_sessiond_client._liveness.CONNECT_TIMEOUT_S` on a new connection); a
    call after :meth:`close` is a ``ClientClosedError``. Before the first request, and again
    after the daemon was unreachable, the client checks who listens on a Unix
    socket (:func:`~claw_sessiond_client._peer.verify_peer`) and raises
    :class:`~claw_sessiond_client.errors.UntrustedPeerError` without sending
    anything if it is another user.
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
        self._appends = SyncAppends(self) if stream_appends else None

    def close(self) -> None:
        """Close the channel; later calls raise :class:`~claw_sessiond_client.errors.ClientClosedError`."""
        if self._appends is not None:
            self._appends.close()  # appends in flight get their replies first (bounded)
        self._closed = True
        self._close_channels()

    def __enter__(self) -> SessionClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the API

    def load(
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

        Args:
            session_id: the session.
            workdir: the caller's working folder (default: the current folder; none for a
                look-only Load, which then reports the stored one). Later mutations through
                this client store it.
            repair: False to only look: interrupted calls stay open (nothing is written).
            no_repair: True to only look: interrupted calls stay open and nothing at all is
                written (``repair=False`` says the same).
            last: only the last N visible entries (a bounded read: its cost does not grow
                with the history). At most one of ``last``, ``after_position`` and ``after_time``.
            after_position: only the entries after this position.
            after_time: only the entries from the first one stored after this time (a naive
                datetime is UTC).

        A bounded load sets ``complete`` False when it left visible entries out, and
        ``start_position`` to the first returned entry's position; ``scopes``: shared scopes
        whose states to return too (``LoadResult.scope_states``).

        Point and range reads: ``client_ids`` (only the visible entries with these client ids,
        through their index; ids not stored are absent), ``client_id_prefix`` (those whose client
        id starts with this, at most the daemon's batch bound per call: page with
        ``after_position``), ``before_position`` (only entries before it; with ``last``: paging
        backwards). See docs/api.md for which combine.
        """
        request, wd = req.load_request(
            session_id,
            workdir,
            repair,
            no_repair,
            last=last,
            after_position=after_position,
            after_time=after_time,
            scopes=scopes,
            before_position=before_position,
            client_ids=client_ids,
            client_id_prefix=client_id_prefix,
        )
        result = self._call(lambda: rsp.load_result_of(self._stub.Load(request, timeout=self.timeout_s)))
        if wd:  # a look-only Load given no workdir carries none
            self._workdirs[session_id] = wd
        return result

    def load_items(self, session_id: str, item_format: str, *, last: int | None = None) -> list[bytes]:
        """The stored items of one format (``Message.item`` of the visible entries whose ``format`` is
        ``item_format``), in the order written (by position): what a framework adapter gives back.

        A look only, like ``load(no_repair=True)`` (repairs nothing, writes nothing, needs no
        workdir; an unknown session has no items), but no :class:`Message` is built per entry: the
        bytes come straight off the reply. Entries of other formats and plain messages are left out.

        Args:
            last: only among the last N visible entries (a bounded read; see :meth:`load`).
        """
        request, _ = req.load_request(session_id, None, False, True, last=last, items_format=item_format)

        # a fresh assembly per attempt (a retry starts the stream over)
        return self._call(
            lambda: rsp.assembled(self._stub.Load(request, timeout=self.timeout_s), rsp.ItemsAssembly(item_format))
        )

    def append(
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
        request = req.append_request(
            session_id,
            messages,
            expected_last_position=expected_last_position,
            request_id=request_id,
            workdir=self._workdir(session_id, workdir),
            run_id=run_id,
            tool_policy=tool_policy,
            state_deltas=state_deltas,
        )
        return self._send_append(request) if self._appends is None else self._appends.send(request)

    def _send_append(self, request: pb.AppendRequest) -> AppendResult:
        """One unary Append call, with the client's retries (also the stream's fallback)."""
        return self._call(lambda: rsp.append_result_of(self._stub.Append(request, timeout=self.timeout_s), request))

    def record_usage(
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
        request = req.record_usage_request(
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
        return self._call(lambda: rsp.recorded_usage_of(self._stub.RecordUsage(request, timeout=self.timeout_s)))

    def clear(
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
        request = req.clear_request(session_id, expected_last_position, request_id, self._workdirs, erase)
        return self._call(lambda: rsp.clear_result_of(self._stub.Clear(request, timeout=self.timeout_s)))

    def record_event(
        self, session_id: str, kind: str, payload: dict[str, Any], *, request_id: str | None = None
    ) -> int:
        """Record a ``permission_denial`` or ``error`` event; returns its event id.

        Raises:
            TypeError: ``payload`` is not a JSON-serialisable dict (or another argument has the wrong type).
        """
        request = req.record_event_request(session_id, kind, payload, request_id)
        return self._call(lambda: rsp.event_id_of(self._stub.RecordEvent(request, timeout=self.timeout_s)))

    def list_sessions(
        self, id_contains: str = "", limit: int = 100, labels: Mapping[str, str] | None = None
    ) -> list[SessionSummary]:
        """Stored sessions, most recently updated first (only those carrying every one of ``labels``, if given)."""
        request = req.list_sessions_request(id_contains, limit, labels)
        return self._call(lambda: rsp.summaries_of(self._stub.ListSessions(request, timeout=self.timeout_s)))

    def list_sessions_page(
        self,
        id_contains: str = "",
        limit: int = 100,
        page_token: str = "",
        labels: Mapping[str, str] | None = None,
    ) -> SessionPage:
        """One page of stored sessions (most recently updated first), the next page's token and the total."""
        request = req.list_sessions_page_request(id_contains, limit, page_token, labels)
        return self._call(lambda: rsp.page_of(self._stub.ListSessions(request, timeout=self.timeout_s)))

    def export(self, session_id: str | None = None, *, timeout_s: float | None = None) -> Iterator[str]:
        """Lines of the export format (JSON Lines, no newline) of one session or, with None, of all.

        The stream is not retried: on an error, start again.
        """
        request = req.export_request(session_id)
        self._trust()
        try:
            for reply in self._stub.Export(request, timeout=timeout_s or self.timeout_s * 10):
                yield reply.line
        except grpc.RpcError as exc:
            err = error_from_rpc(exc)
            raise (self._final(err) or err) from None
        except ValueError as exc:
            raise self._closed_mid_call(exc) from None

    def import_lines(self, lines: Iterable[str], *, mode: str = "refuse") -> list[ImportResult]:
        """Import export lines, one Import call per session block: all or nothing per session.

        Args:
            lines: lines of the export format (trailing newlines are stripped).
            mode: ``refuse`` (default: an existing session is a PreconditionError),
                ``replace`` (erase it first) or ``merge`` (add the events it lacks).
        """
        results = []
        for request in req.import_requests(lines, mode):
            reply = self._call(lambda r=request: self._stub.Import(r, timeout=self.timeout_s))  # type: ignore[misc]
            results.append(rsp.import_result_of(reply))
        return results

    @contextlib.contextmanager
    def attach(self, session_id: str, label: str = "", *, ping_timeout_s: int = 0) -> Iterator[Run]:
        """Hold run ownership of ``session_id`` for a ``with`` block.

        Opens an Attach stream that stays open until the block exits. Pass
        ``run.run_id`` to :meth:`append`: tool calls appended with it are in
        flight (not repaired by anyone's Load) while the run is alive. The run
        lives while the stream's connection is open: a process that blocks
        (a long synchronous tool, SIGSTOP) keeps it; one that exits or is
        killed loses it at once. Leaving the block ends the run with EndRun,
        confirmed: a Load or an attach right after it sees the run gone.

        Args:
            ping_timeout_s: 0 (default) for no pings; else the run also ends
                when no ping came for this many seconds, and this client pings
                every third of it from a thread (so a hung process loses its run).

        Raises:
            PreconditionError: reason ``RUN_ALREADY_OWNED``: another live run owns the
                session (``metadata`` has its ``run_id`` and ``pid``).
        """
        request = attach_request(session_id, label, ping_timeout_s)

        def start() -> tuple[Any, Run]:
            call = self._stub.Attach(request)  # no deadline: the stream lives as long as the run
            try:
                first = next(call, None)
            except BaseException:
                call.cancel()
                raise
            return call, run_of(session_id, first)

        call, run = self._call(start)
        call.add_done_callback(lambda _call: run.end())
        pinger = ThreadPinger(self._stub, run)
        try:
            yield run
        finally:
            pinger.stop()
            if run.alive and not self._closed:
                with contextlib.suppress(grpc.RpcError, ValueError):  # the stream's end ends the run anyway
                    self._stub.EndRun(end_run_request(run.run_id), timeout=END_RUN_TIMEOUT_S)
            call.cancel()
            run.end()

    def end_run(self, run_id: str) -> bool:
        """End a run and return once it is no longer live; True if it was live (idempotent, safe to retry).

        After it returns, the run's unanswered calls are no longer in flight
        (the next Load repairs them) and the session can be attached again.
        """
        request = end_run_request(run_id)
        return bool(self._call(lambda: self._stub.EndRun(request, timeout=self.timeout_s)).was_live)

    def watch(self, session_id: str, after_position: int = 0) -> Iterator[WatchEvent]:
        """Follow a session: its history events after ``after_position``, then new ones as they commit.

        Yields messages (synthetic repairs included) and clears in commit
        order, each exactly once. The iterator resumes by itself from the last
        position it delivered when the daemon reports the watch as lagged,
        restarts, or is briefly unreachable (within ``retry_window_s``). It
        never ends on its own: break out of the loop (or close it) to stop.

        Raises:
            SessiondError: a non-resumable error, or an outage longer than ``retry_window_s``.
        """
        cursor = WatchCursor(session_id, after_position, self.retry_window_s)
        return self._follow(lambda: self._stub.Watch(cursor.request()), cursor, "Watch")

    def backup(self, out: BinaryIO, *, timeout_s: float | None = None) -> BackupFigures:
        """Write a consistent copy of the whole database to ``out``; return what it holds.

        The daemon copies one snapshot with SQLite's online backup API and
        streams the file in pieces of at most 1 MiB; writes go on meanwhile.
        The stream is not retried: on an error, start again (``out`` then
        holds a partial copy).

        Raises:
            StorageError: the daemon could not make the copy.
            SessiondError: the stream ended early or its size is not the announced one.
        """
        self._trust()
        copy = rsp.BackupCopy()
        try:
            for reply in self._stub.Backup(pb.BackupRequest(), timeout=timeout_s or self.timeout_s * 30):
                out.write(copy.data(reply))
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from None
        return copy.result()

    def search(
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
        """Full-text search over message content across sessions, best match first.

        ``query`` is plain words (all must occur) unless ``raw`` (FTS5 syntax).

        Raises:
            InvalidRequestError: empty or malformed query, bad filter, or a search that ran too long.
        """
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
        return self._call(lambda: F.search_result_of(self._stub.Search(request, timeout=self.timeout_s)))

    def usage_report(
        self, *, since: dt.datetime | None = None, until: dt.datetime | None = None, by_session: bool = False
    ) -> F.CrossSessionUsage:
        """Usage and cost across sessions by UTC day, model, pricing version and currency (and session)."""
        request = F.usage_report_request(since, until, by_session)
        return self._call(lambda: F.usage_report_of(self._stub.GetUsageReport(request, timeout=self.timeout_s)))

    def watch_all(self, last: int = 0) -> Iterator[F.FollowEvent]:
        """Follow every session: new history events in commit order (after the last ``last`` ones, if given).

        Resumes by itself after the last event delivered, like :meth:`watch`.
        It never ends on its own: break out of the loop (or close it) to stop.

        Raises:
            SessiondError: a non-resumable error, or an outage longer than ``retry_window_s``.
        """
        cursor = F.FollowCursor(last, self.retry_window_s)
        return self._follow(lambda: self._stub.WatchAll(cursor.request()), cursor, "WatchAll")

    def stats(self) -> Stats:
        """Daemon and database figures."""
        return self._call(lambda: rsp.stats_of(self._stub.GetStats(pb.GetStatsRequest(), timeout=self.timeout_s)))

    # -- sessions as things of their own, and editing the tail

    def create_session(
        self,
        session_id: str,
        *,
        state: Mapping[str, Any] | None = None,
        labels: Mapping[str, str] | None = None,
        tool_policy: ToolPolicy | None = None,
        request_id: str | None = None,
        workdir: str | os.PathLike[str] | None = None,
    ) -> Session:
        """Create an empty session with an initial state, labels and a default tool policy.

        Exclusive: if the id is stored, :class:`~claw_sessiond_client.errors.AlreadyExistsError`
        (reason ``SESSION_EXISTS``), unless this is a retry of the same request id (then the session
        as it is now). A top-level None in ``state`` is dropped (None means absent).

        Raises:
            AlreadyExistsError: the session is stored.
            InvalidRequestError: a bad id, state (not JSON-able, over 1 MiB), label or policy.
        """
        request = ops.create_session_request(
            session_id,
            state=state,
            labels=labels,
            tool_policy=tool_policy,
            request_id=request_id,
            workdir=ops.workdir_arg(workdir) or self._workdir(session_id, None),
        )
        return self._call(lambda: rsp.session_of(self._stub.CreateSession(request, timeout=self.timeout_s).session))

    def fork_session(
        self,
        source_id: str,
        new_id: str,
        *,
        up_to_position: int = 0,
        labels: Mapping[str, str] | None = None,
        request_id: str | None = None,
        workdir: str | os.PathLike[str] | None = None,
    ) -> ForkResult:
        """Create ``new_id`` as a copy of ``source_id``'s visible history up to a position (0: all).

        The copies take positions 1..n; state, tool policy and (unless ``labels`` is given) labels
        are copied; ``forked_from`` / ``forked_at_position`` record the lineage. Usage starts at 0.

        Raises:
            SessionNotFoundError: the source is not stored.
            AlreadyExistsError: ``new_id`` is stored.
        """
        request = ops.fork_session_request(
            source_id,
            new_id,
            up_to_position=up_to_position,
            labels=labels,
            request_id=request_id,
            workdir=ops.workdir_arg(workdir),
        )
        return self._call(lambda: ops.fork_result_of(self._stub.ForkSession(request, timeout=self.timeout_s)))

    def update_session(
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
        """Change a stored session's state (and shared scopes), labels and default tool policy, all or none.

        Raises:
            SessionNotFoundError: the session is not stored.
            SequenceConflictError: ``expected_last_position`` is set and the history moved on.
        """
        request = ops.update_session_request(
            session_id,
            state_deltas=state_deltas,
            set_labels=set_labels,
            remove_labels=remove_labels,
            tool_policy=tool_policy,
            expected_last_position=expected_last_position,
            request_id=request_id,
        )
        return self._call(lambda: rsp.session_of(self._stub.UpdateSession(request, timeout=self.timeout_s).session))

    def usage(self, session_id: str) -> UsageReport:
        """Totals and per-model breakdown of a stored session."""
        request = req.usage_request(session_id)
        return self._call(lambda: rsp.usage_report_of(self._stub.GetUsage(request, timeout=self.timeout_s)))

    def delete(self, session_id: str) -> DeleteResult:
        """Hard-delete a session; returns the number of events removed (with ``erasure_pending``)."""
        request = req.delete_request(session_id)
        return self._call(lambda: rsp.delete_result_of(self._stub.Delete(request, timeout=self.timeout_s)))

    def scope_states(self, scopes: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The states of shared scopes (``{}`` for a scope never written), by scope."""
        request = ops.scope_states_request(scopes)
        return self._call(lambda: ops.scope_states_of(self._stub.GetScopeStates(request, timeout=self.timeout_s)))

    def edit_tail(
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
        return self._call(lambda: edit_tail_result_of(self._stub.EditTail(request, timeout=self.timeout_s)))

    def delete_entries(
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
        """Remove visible entries anywhere in the history, chosen by exactly one of ``client_ids``,
        ``client_id_prefix`` or the range ``from_position`` .. ``to_position`` (inclusive; 0: to the end).

        The entries stay in the log, hidden by an edit event (Export and Watch show it); at most the
        daemon's batch bound per call. ``expected_last_position`` and ``request_id`` work as
        :meth:`append`'s; ``discard_pending`` allows taking one half of a tool call and its result
        (else ``PreconditionError``, reason ``EDIT_SPLITS_CALL``); an unknown session raises
        ``SessionNotFoundError``. See docs/api.md, "Removing entries".
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
        return self._call(lambda: delete_entries_result_of(self._stub.DeleteEntries(request, timeout=self.timeout_s)))
