"""Sessions as things of their own: CreateSession, ForkSession, UpdateSession, GetScopeStates.

Part of :class:`.service.SessionService`. Each method checks its request
(:mod:`claw_sessiond.validate_sessions`), converts it (:mod:`.convert`), calls
the store, and converts the result back, inside the error edge.
"""

from __future__ import annotations

from typing import Any

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..retention import WrittenSessions
from ..storage import Storage
from ..validate_sessions import check_scopes, prepare_create, prepare_fork, prepare_update
from .convert import policy_text_of, scope_state_pb, session_pb, trace_id_of
from .edge import Context, EdgeState, edge

__all__ = ["SessionRpcs"]


class SessionRpcs(EdgeState):
    """CreateSession, ForkSession, UpdateSession, GetScopeStates (state set up by :class:`.service.SessionService`)."""

    store: Storage
    written: WrittenSessions

    @edge
    async def CreateSession(self, request: pb.CreateSessionRequest, context: Context) -> Any:
        job = prepare_create(
            request.session_id,
            workdir=request.workdir,
            state=request.state,
            labels=dict(request.labels),
            tool_policy=policy_text_of(request.tool_policy),
            request_id=request.request_id,
            trace_id=trace_id_of(request.trace_id, context),
        )
        self.written.note(job.session_id)
        result = await self.store.create_session(job)
        return pb.CreateSessionResponse(
            session=session_pb(result.session), replayed=result.replayed, trace_id=result.trace_id
        )

    @edge
    async def ForkSession(self, request: pb.ForkSessionRequest, context: Context) -> Any:
        job = prepare_fork(
            request.source_session_id,
            request.session_id,
            up_to_position=request.up_to_position,
            workdir=request.workdir,
            labels=dict(request.labels) or None,  # empty: the source's
            request_id=request.request_id,
            trace_id=trace_id_of(request.trace_id, context),
        )
        self.written.note(job.session_id)
        result = await self.store.fork_session(job)
        return pb.ForkSessionResponse(
            session=session_pb(result.session),
            entries_copied=result.entries_copied,
            replayed=result.replayed,
            trace_id=result.trace_id,
        )

    @edge
    async def UpdateSession(self, request: pb.UpdateSessionRequest, context: Context) -> Any:
        job = prepare_update(
            request.session_id,
            state_deltas=[(d.scope, d.delta) for d in request.state_deltas],
            set_labels=dict(request.set_labels),
            remove_labels=list(request.remove_labels),
            tool_policy=policy_text_of(request.tool_policy) if request.HasField("tool_policy") else None,
            expected_last_position=request.expected_last_position,
            request_id=request.request_id,
            trace_id=trace_id_of(request.trace_id, context),
        )
        self.written.note(job.session_id)
        result = await self.store.update_session(job)
        return pb.UpdateSessionResponse(
            session=session_pb(result.session), replayed=result.replayed, trace_id=result.trace_id
        )

    @edge
    async def GetScopeStates(self, request: pb.GetScopeStatesRequest, context: Context) -> Any:
        scopes = check_scopes(list(request.scopes))
        return pb.GetScopeStatesResponse(states=[scope_state_pb(s) for s in await self.store.scope_states(scopes)])
