"""Editing the tail of a history: EditTail's request and its reply, for both clients.

The request is built and the reply converted here (pure); ``edit_tail`` of
:class:`~claw_sessiond_client.sync.SessionClient` and of
:class:`~claw_sessiond_client.aio.AsyncSessionClient` only makes the call
through the client's ``_call`` (its retries, its errors). Every edit carries a
request id, so a retry never edits twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from ._checks import check_ints, check_type
from ._requests import build, message_batch, message_pb, new_request_id, tool_policy_pb
from ._responses import message_of
from ._types import EditTailResult, Message, ToolPolicy
from .api.v1 import sessiond_pb2 as pb

__all__ = ["edit_tail_request", "edit_tail_result_of"]

T = TypeVar("T")


def edit_tail_request(
    session_id: str,
    *,
    remove_last: int,
    after_position: int,
    replacements: Iterable[Message] | Message,
    expected_last_position: int,
    request_id: str | None,
    discard_pending: bool,
    workdir: str,
    run_id: str,
    tool_policy: ToolPolicy | None = None,
) -> pb.EditTailRequest:
    """EditTail's request (a fresh request id unless one is given).

    Raises:
        TypeError: an argument of the wrong type, named.
    """
    check_type("session_id", session_id, str)
    check_ints(remove_last=remove_last, after_position=after_position, expected_last_position=expected_last_position)
    check_type("request_id", request_id, (str, type(None)))
    check_type("discard_pending", discard_pending, bool)
    check_type("workdir", workdir, str)
    check_type("run_id", run_id, str)
    policy = tool_policy_pb(tool_policy)
    batch = message_batch(replacements, "replacements")
    return build(
        pb.EditTailRequest,
        session_id=session_id,
        remove_last=remove_last,
        after_position=after_position,
        replacements=[message_pb(m, f"replacements[{i}]") for i, m in enumerate(batch)],
        expected_last_position=expected_last_position,
        request_id=request_id or new_request_id(),
        discard_pending=discard_pending,
        workdir=workdir,
        run_id=run_id,
        tool_policy=policy,
    )


def edit_tail_result_of(r: pb.EditTailResponse) -> EditTailResult:
    """EditTail's reply → the client type."""
    return EditTailResult(
        [message_of(m) for m in r.removed],
        r.edit_position,
        r.first_position,
        r.last_position,
        r.replayed,
        r.trace_id,
    )
