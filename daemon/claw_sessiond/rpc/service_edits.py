"""EditTail and DeleteEntries, and how the history events that are not messages (edits, clears) reach Watch
and WatchAll.

:class:`.service.SessionService` calls :func:`edit_tail` and :func:`delete_entries` inside the
error edge. The rules are ``edits.py`` and ``selection.py``; the storage does each in one
transaction (``Storage.edit_tail``, ``Storage.delete_entries``).
"""

from __future__ import annotations

from typing import Any

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..config import Config
from ..model import HistoryMark, Message
from ..retention import WrittenSessions
from ..selection import prepare_delete_entries
from ..storage import RunRegistry, Storage
from ..validate import check_run_id, prepare_edit
from .convert import fill_message_pb, message_from_pb, message_pb, tool_policy_of, trace_id_of
from .edge import Context

__all__ = ["delete_entries", "edit_tail", "history_fields"]


def history_fields(item: Message | HistoryMark | None) -> dict[str, Any]:
    """The fields of a WatchResponse (or WatchAllResponse) that say what a history event is.

    A message; an edit (``edit.removed_positions``: its replacements follow as
    messages); a clear (``cleared``, with ``erased`` if it erased the log).
    """
    if isinstance(item, Message):
        return {"message": message_pb(item)}
    if item is None:
        return {"cleared": True}
    if item.erased:
        return {"cleared": True, "erased": True}
    return {"edit": pb.TailEdit(removed_positions=item.removed)}


async def edit_tail(
    store: Storage,
    config: Config,
    owners: RunRegistry,
    written: WrittenSessions,
    request: pb.EditTailRequest,
    context: Context,
) -> pb.EditTailResponse:
    """EditTail: the run named (if any) confirmed, the request checked, the edit done in one transaction."""
    trace_id = trace_id_of(request.trace_id, context)
    if request.run_id:
        check_run_id(request.run_id)
        await owners.confirm_run(request.run_id, request.session_id)  # on a shared database: in SQL
    job = prepare_edit(
        request.session_id,
        [message_from_pb(m) for m in request.replacements],
        remove_last=request.remove_last,
        after_position=request.after_position,
        expected_last_position=request.expected_last_position,
        request_id=request.request_id,
        workdir=request.workdir,
        run_id=request.run_id,
        trace_id=trace_id,
        discard_pending=request.discard_pending,
        max_message_bytes=config.max_message_bytes,
        max_batch_messages=config.max_batch_messages,
        max_entry_bytes=config.max_entry_bytes,
        tool_policy=tool_policy_of(request.tool_policy) if request.HasField("tool_policy") else None,
    )
    written.note(job.session_id)
    result = await store.edit_tail(job)
    reply = pb.EditTailResponse(
        edit_position=result.edit_position,
        first_position=result.first_position,
        last_position=result.last_position,
        replayed=result.replayed,
        trace_id=result.trace_id,
    )
    for message in result.removed:
        fill_message_pb(reply.removed.add(), message)
    return reply


async def delete_entries(
    store: Storage, config: Config, written: WrittenSessions, request: pb.DeleteEntriesRequest, context: Context
) -> pb.DeleteEntriesResponse:
    """DeleteEntries: the request checked, the removal done in one transaction (at most --max-batch-messages)."""
    job = prepare_delete_entries(
        request.session_id,
        client_ids=list(request.client_ids),
        client_id_prefix=request.client_id_prefix,
        from_position=request.from_position,
        to_position=request.to_position,
        expected_last_position=request.expected_last_position,
        request_id=request.request_id,
        trace_id=trace_id_of(request.trace_id, context),
        discard_pending=request.discard_pending,
        max_entries=config.max_batch_messages,
    )
    written.note(job.session_id)
    result = await store.delete_entries(job)
    return pb.DeleteEntriesResponse(
        removed_count=len(result.removed_positions),
        removed_positions=result.removed_positions,
        edit_position=result.edit_position,
        replayed=result.replayed,
        trace_id=result.trace_id,
    )
