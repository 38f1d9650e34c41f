"""Sessions as things of their own: CreateSession, ForkSession, UpdateSession, GetScopeStates.

Each function checks its request (:mod:`claw_sessiond.validate_sessions`),
converts it (:mod:`.convert`), calls the store, and converts the result back;
:class:`.service.SessionService` calls them inside the error edge.
"""

from __future__ import annotations

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..retention import WrittenSessions
from ..storage import Storage
from ..validate_sessions import check_scopes, prepare_create, prepare_fork, prepare_update
from .convert import policy_text_of, scope_state_pb, session_pb, trace_id_of
from .edge import Context

__all__ = ["create_session", "fork_session", "get_scope_states", "update_session"]


async def create_session(
    store: Storage, written: WrittenSessions, request: pb.CreateSessionRequest, context: Context
) -> pb.CreateSessionResponse:
    job = prepare_create(
        request.session_id,
        workdir=request.workdir,
        state=request.state,
        labels=dict(request.labels),
        tool_policy=policy_text_of(request.tool_policy),
        request_id=request.request_id,
        trace_id=trace_id_of(request.trace_id, context),
    )
    written.note(job.session_id)
    result = await store.create_session(job)
    return pb.CreateSessionResponse(
        session=session_pb(result.session), replayed=result.replayed, trace_id=result.trace_id
    )


async def fork_session(
    store: Storage, written: WrittenSessions, request: pb.ForkSessionRequest, context: Context
) -> pb.ForkSessionResponse:
    job = prepare_fork(
        request.source_session_id,
        request.session_id,
        up_to_position=request.up_to_position,
        workdir=request.workdir,
        labels=dict(request.labels) or None,  # empty: the source's
        request_id=request.request_id,
        trace_id=trace_id_of(request.trace_id, context),
    )
    written.note(job.session_id)
    result = await store.fork_session(job)
    return pb.ForkSessionResponse(
        session=session_pb(result.session),
        entries_copied=result.entries_copied,
        replayed=result.replayed,
        trace_id=result.trace_id,
    )


async def update_session(
    store: Storage, written: WrittenSessions, request: pb.UpdateSessionRequest, context: Context
) -> pb.UpdateSessionResponse:
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
    written.note(job.session_id)
    result = await store.update_session(job)
    return pb.UpdateSessionResponse(
        session=session_pb(result.session), replayed=result.replayed, trace_id=result.trace_id
    )


async def get_scope_states(store: Storage, request: pb.GetScopeStatesRequest) -> pb.GetScopeStatesResponse:
    scopes = check_scopes(list(request.scopes))
    return pb.GetScopeStatesResponse(states=[scope_state_pb(s) for s in await store.scope_states(scopes)])
