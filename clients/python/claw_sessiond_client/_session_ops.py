"""Sessions as things of their own: create, fork, update (state, labels, tool policy) and shared scope states.

The requests are built and the replies converted here (pure); the methods
live in two mixins, :class:`SyncSessionOps` (of
:class:`~claw_sessiond_client.sync.SessionClient`) and
:class:`AsyncSessionOps` (of :class:`~claw_sessiond_client.aio.AsyncSessionClient`),
which only make the calls through the client's ``_call`` (its retries, its
errors). Every mutation carries a request id, so a retry never writes twice.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ._checks import check_ints, check_type
from ._core import ClientCore
from ._requests import (
    build,
    delete_request,
    deltas_pb,
    json_object,
    labels_arg,
    new_request_id,
    strings_arg,
    tool_policy_pb,
    usage_request,
)
from ._responses import delete_result_of, session_of, state_of, usage_report_of
from ._types import DeleteResult, ForkResult, Session, StateDelta, ToolPolicy, UsageReport
from .api.v1 import sessiond_pb2 as pb

__all__ = [
    "AsyncSessionOps",
    "SyncSessionOps",
    "create_session_request",
    "fork_result_of",
    "fork_session_request",
    "scope_states_of",
    "scope_states_request",
    "update_session_request",
]

T = TypeVar("T")
PathArg = (str, os.PathLike)


def _workdir_arg(workdir: str | os.PathLike[str] | None) -> str:
    """A workdir argument made absolute ("" for none)."""
    check_type("workdir", workdir, (*PathArg, type(None)))
    return os.path.abspath(workdir) if workdir else ""


def create_session_request(
    session_id: str,
    *,
    state: Mapping[str, Any] | None,
    labels: Mapping[str, str] | None,
    tool_policy: ToolPolicy | None,
    request_id: str | None,
    workdir: str,
) -> pb.CreateSessionRequest:
    """CreateSession's request (a fresh request id unless one is given).

    Raises:
        TypeError: an argument of the wrong type, named.
    """
    check_type("session_id", session_id, str)
    check_type("request_id", request_id, (str, type(None)))
    text = "" if state is None else json_object(state, "state")
    return build(
        pb.CreateSessionRequest,
        session_id=session_id,
        workdir=workdir,
        state=text,
        labels=labels_arg(labels),
        tool_policy=None if tool_policy is None else tool_policy_pb(tool_policy),
        request_id=request_id or new_request_id(),
    )


def fork_session_request(
    source_id: str,
    new_id: str,
    *,
    up_to_position: int,
    labels: Mapping[str, str] | None,
    request_id: str | None,
    workdir: str,
) -> pb.ForkSessionRequest:
    """ForkSession's request (a fresh request id unless one is given)."""
    check_type("source_id", source_id, str)
    check_type("new_id", new_id, str)
    check_ints(up_to_position=up_to_position)
    check_type("request_id", request_id, (str, type(None)))
    return build(
        pb.ForkSessionRequest,
        source_session_id=source_id,
        session_id=new_id,
        up_to_position=up_to_position,
        workdir=workdir,
        labels=labels_arg(labels),
        request_id=request_id or new_request_id(),
    )


def update_session_request(
    session_id: str,
    *,
    state_deltas: Sequence[StateDelta],
    set_labels: Mapping[str, str] | None,
    remove_labels: Iterable[str],
    tool_policy: ToolPolicy | None,
    expected_last_position: int,
    request_id: str | None,
) -> pb.UpdateSessionRequest:
    """UpdateSession's request (a fresh request id unless one is given)."""
    check_type("session_id", session_id, str)
    check_ints(expected_last_position=expected_last_position)
    check_type("request_id", request_id, (str, type(None)))
    return build(
        pb.UpdateSessionRequest,
        session_id=session_id,
        state_deltas=deltas_pb(state_deltas),
        set_labels=labels_arg(set_labels, "set_labels"),
        remove_labels=strings_arg(remove_labels, "remove_labels"),
        tool_policy=None if tool_policy is None else tool_policy_pb(tool_policy),
        expected_last_position=expected_last_position,
        request_id=request_id or new_request_id(),
    )


def scope_states_request(scopes: Iterable[str]) -> pb.GetScopeStatesRequest:
    """GetScopeStates' request."""
    return build(pb.GetScopeStatesRequest, scopes=strings_arg(scopes, "scopes"))


def scope_states_of(r: pb.GetScopeStatesResponse) -> dict[str, dict[str, Any]]:
    """GetScopeStates' reply → ``{scope: state}``."""
    return {s.scope: state_of(s.state) for s in r.states}


def fork_result_of(r: pb.ForkSessionResponse) -> ForkResult:
    """ForkSession's reply → client type."""
    return ForkResult(session_of(r.session), int(r.entries_copied), bool(r.replayed))


class SyncSessionOps(ClientCore):
    """The session operations of :class:`~claw_sessiond_client.sync.SessionClient`."""

    _stub: Any

    def _call(self, fn: Callable[[], T]) -> T:  # pragma: no cover - SessionClient's
        raise NotImplementedError

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
        request = create_session_request(
            session_id,
            state=state,
            labels=labels,
            tool_policy=tool_policy,
            request_id=request_id,
            workdir=_workdir_arg(workdir) or self._workdir(session_id, None),
        )
        return self._call(lambda: session_of(self._stub.CreateSession(request, timeout=self.timeout_s).session))

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
        request = fork_session_request(
            source_id,
            new_id,
            up_to_position=up_to_position,
            labels=labels,
            request_id=request_id,
            workdir=_workdir_arg(workdir),
        )
        return self._call(lambda: fork_result_of(self._stub.ForkSession(request, timeout=self.timeout_s)))

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
        request = update_session_request(
            session_id,
            state_deltas=state_deltas,
            set_labels=set_labels,
            remove_labels=remove_labels,
            tool_policy=tool_policy,
            expected_last_position=expected_last_position,
            request_id=request_id,
        )
        return self._call(lambda: session_of(self._stub.UpdateSession(request, timeout=self.timeout_s).session))

    def usage(self, session_id: str) -> UsageReport:
        """Totals and per-model breakdown of a stored session."""
        request = usage_request(session_id)
        return self._call(lambda: usage_report_of(self._stub.GetUsage(request, timeout=self.timeout_s)))

    def delete(self, session_id: str) -> DeleteResult:
        """Hard-delete a session; returns the number of events removed (with ``erasure_pending``)."""
        request = delete_request(session_id)
        return self._call(lambda: delete_result_of(self._stub.Delete(request, timeout=self.timeout_s)))

    def scope_states(self, scopes: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The states of shared scopes (``{}`` for a scope never written), by scope."""
        request = scope_states_request(scopes)
        return self._call(lambda: scope_states_of(self._stub.GetScopeStates(request, timeout=self.timeout_s)))


class AsyncSessionOps(ClientCore):
    """The session operations of :class:`~claw_sessiond_client.aio.AsyncSessionClient` (see :class:`SyncSessionOps`)."""

    _stub: Any

    async def _call(self, fn: Callable[[], Awaitable[T]]) -> T:  # pragma: no cover - AsyncSessionClient's
        raise NotImplementedError

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
        """See :meth:`SyncSessionOps.create_session`."""
        request = create_session_request(
            session_id,
            state=state,
            labels=labels,
            tool_policy=tool_policy,
            request_id=request_id,
            workdir=_workdir_arg(workdir) or self._workdir(session_id, None),
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
        """See :meth:`SyncSessionOps.fork_session`."""
        request = fork_session_request(
            source_id,
            new_id,
            up_to_position=up_to_position,
            labels=labels,
            request_id=request_id,
            workdir=_workdir_arg(workdir),
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
        """See :meth:`SyncSessionOps.update_session`."""
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
        """See :meth:`SyncSessionOps.scope_states`."""
        request = scope_states_request(scopes)
        return scope_states_of(await self._call(lambda: self._stub.GetScopeStates(request, timeout=self.timeout_s)))
