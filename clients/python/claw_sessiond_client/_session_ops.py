"""Sessions as things of their own: create, fork, update (state, labels, tool policy) and shared scope states.

The requests are built and the replies converted here (pure); the methods of
:class:`~claw_sessiond_client.sync.SessionClient` and
:class:`~claw_sessiond_client.aio.AsyncSessionClient` only make the calls
through the client's ``_call`` (its retries, its errors). Every mutation
carries a request id, so a retry never writes twice.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ._checks import check_ints, check_type
from ._requests import (
    build,
    deltas_pb,
    json_object,
    labels_arg,
    new_request_id,
    strings_arg,
    tool_policy_pb,
)
from ._responses import session_of, state_of
from ._types import ForkResult, StateDelta, ToolPolicy
from .api.v1 import sessiond_pb2 as pb

__all__ = [
    "create_session_request",
    "fork_result_of",
    "fork_session_request",
    "scope_states_of",
    "scope_states_request",
    "update_session_request",
    "workdir_arg",
]

T = TypeVar("T")
PathArg = (str, os.PathLike)


def workdir_arg(workdir: str | os.PathLike[str] | None) -> str:
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
