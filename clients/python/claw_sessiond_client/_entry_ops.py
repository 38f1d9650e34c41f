"""Removing entries anywhere in a history: DeleteEntries' request and its reply, for both clients.

The request is built and the reply converted here (pure); ``delete_entries`` of
:class:`~claw_sessiond_client.sync.SessionClient` and of
:class:`~claw_sessiond_client.aio.AsyncSessionClient` only makes the call through the client's
``_call`` (its retries, its errors). Every delete carries a request id, so a retry never
removes twice.
"""

from __future__ import annotations

from ._checks import check_ints, check_type
from ._requests import build, new_request_id, strings_arg
from ._types import DeleteEntriesResult
from .api.v1 import sessiond_pb2 as pb

__all__ = ["delete_entries_request", "delete_entries_result_of"]


def delete_entries_request(
    session_id: str,
    *,
    client_ids: object,
    client_id_prefix: str,
    from_position: int,
    to_position: int,
    expected_last_position: int,
    request_id: str | None,
    discard_pending: bool,
) -> pb.DeleteEntriesRequest:
    """DeleteEntries' request (a fresh request id unless one is given); the daemon checks the selector.

    Raises:
        TypeError: an argument of the wrong type, named.
    """
    check_type("session_id", session_id, str)
    check_type("client_id_prefix", client_id_prefix, str)
    check_ints(from_position=from_position, to_position=to_position, expected_last_position=expected_last_position)
    check_type("request_id", request_id, (str, type(None)))
    check_type("discard_pending", discard_pending, bool)
    return build(
        pb.DeleteEntriesRequest,
        session_id=session_id,
        client_ids=strings_arg(client_ids, "client_ids"),
        client_id_prefix=client_id_prefix,
        from_position=from_position,
        to_position=to_position,
        expected_last_position=expected_last_position,
        request_id=request_id or new_request_id(),
        discard_pending=discard_pending,
    )


def delete_entries_result_of(r: pb.DeleteEntriesResponse) -> DeleteEntriesResult:
    """DeleteEntries' reply → the client type."""
    return DeleteEntriesResult(list(r.removed_positions), r.edit_position, r.replayed, r.trace_id)
