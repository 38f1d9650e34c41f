"""Editing the tail of a history: EditTail's request, its reply, and ``edit_tail`` for both clients.

The request is built and the reply converted here (pure); the method lives in
two mixins, :class:`SyncEditOps` (of :class:`~claw_sessiond_client.sync.SessionClient`)
and :class:`AsyncEditOps` (of :class:`~claw_sessiond_client.aio.AsyncSessionClient`),
which only make the call through the client's ``_call`` (its retries, its
errors). Every edit carries a request id, so a retry never edits twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from ._checks import check_ints, check_type
from ._core import ClientCore
from ._requests import build, message_batch, message_pb, new_request_id, tool_policy_pb
from ._responses import message_of
from ._types import EditTailResult, Message, ToolPolicy
from .api.v1 import sessiond_pb2 as pb

__all__ = ["AsyncEditOps", "SyncEditOps", "edit_tail_request", "edit_tail_result_of"]

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


class SyncEditOps(ClientCore):
    """``edit_tail`` of :class:`~claw_sessiond_client.sync.SessionClient`."""

    _stub: Any

    def _call(self, fn: Callable[[], T]) -> T:  # pragma: no cover - SessionClient's
        raise NotImplementedError

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


class AsyncEditOps(ClientCore):
    """``edit_tail`` of :class:`~claw_sessiond_client.aio.AsyncSessionClient`."""

    _stub: Any

    async def _call(self, fn: Callable[[], Awaitable[T]]) -> T:  # pragma: no cover - AsyncSessionClient's
        raise NotImplementedError

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
