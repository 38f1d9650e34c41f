"""Pure parts shared by the sync and asyncio clients: types, request building, error mapping.

Nothing here does I/O except :func:`spawn_daemon` (auto-start), which both
clients call the same way.
"""

from __future__ import annotations

import os
from typing import Any, Final

from . import errors as E
from ._autostart import AUTOSTART_IDLE_EXIT_S as AUTOSTART_IDLE_EXIT_S
from ._autostart import AUTOSTART_WAIT_S as AUTOSTART_WAIT_S
from ._autostart import AutostartWait as AutostartWait
from ._autostart import autostart_failure as autostart_failure
from ._autostart import daemon_command as daemon_command
from ._autostart import spawn_daemon as spawn_daemon
from ._checks import arguments_text as arguments_text
from ._checks import check_ints as check_ints
from ._checks import check_type as check_type
from ._liveness import CONNECT_TIMEOUT_S as CONNECT_TIMEOUT_S
from ._liveness import HEALTH_CHECK_METHOD as HEALTH_CHECK_METHOD
from ._liveness import HUNG_CHECK_S as HUNG_CHECK_S
from ._liveness import LOCK_NAME as LOCK_NAME
from ._liveness import LOG_NAME as LOG_NAME
from ._liveness import accepts_connections as accepts_connections
from ._liveness import answers_within as answers_within
from ._liveness import health_ping as health_ping
from ._liveness import hung_error as hung_error
from ._liveness import lock_holder as lock_holder
from ._liveness import lock_path_for as lock_path_for
from ._liveness import no_daemon_error as no_daemon_error
from ._liveness import not_responding_error as not_responding_error
from ._liveness import socket_state as socket_state
from ._peer import PEER_CHECK_TIMEOUT_S as PEER_CHECK_TIMEOUT_S
from ._peer import WORKSPACE_ENV as WORKSPACE_ENV
from ._peer import resolve_target as resolve_target
from ._peer import resolve_workspace as resolve_workspace
from ._peer import trusted_uids as trusted_uids
from ._peer import unix_path as unix_path
from ._peer import verify_peer as verify_peer
from ._requests import IMPORT_MODES as IMPORT_MODES
from ._requests import ROLES as ROLES
from ._requests import PathArg as PathArg
from ._requests import append_request as append_request
from ._requests import build as build
from ._requests import event_payload as event_payload
from ._requests import import_mode as import_mode
from ._requests import load_workdir as load_workdir
from ._requests import message_batch as message_batch
from ._requests import message_pb as message_pb
from ._requests import messages_pb as messages_pb
from ._requests import new_request_id as new_request_id
from ._requests import split_export as split_export
from ._responses import append_result_of as append_result_of
from ._responses import backup_figures_of as backup_figures_of
from ._responses import delete_result_of as delete_result_of
from ._responses import load_result_of as load_result_of
from ._responses import message_of as message_of
from ._responses import page_of as page_of
from ._responses import session_of as session_of
from ._responses import stats_of as stats_of
from ._responses import summaries_of as summaries_of
from ._responses import usage_of as usage_of
from ._responses import usage_report_of as usage_report_of
from ._status import _error_info as _error_info
from ._status import append_stream_error as append_stream_error
from ._status import closed_error as closed_error
from ._status import error_from_rpc as error_from_rpc
from ._status import error_from_status as error_from_status
from ._status import retryable as retryable
from .api.v1 import sessiond_pb2 as pb
from .types import AppendResult as AppendResult
from .types import BackupFigures as BackupFigures
from .types import ClearResult as ClearResult
from .types import DeleteResult as DeleteResult
from .types import ImportResult as ImportResult
from .types import InFlightCall as InFlightCall
from .types import LoadResult as LoadResult
from .types import Message as Message
from .types import ModelUsage as ModelUsage
from .types import Repair as Repair
from .types import Run as Run
from .types import Session as Session
from .types import SessionPage as SessionPage
from .types import SessionSummary as SessionSummary
from .types import Stats as Stats
from .types import ToolCall as ToolCall
from .types import Usage as Usage
from .types import UsageReport as UsageReport
from .types import WatchEvent as WatchEvent

__all__ = [
    "AppendResult",
    "BackupFigures",
    "ClearResult",
    "ImportResult",
    "InFlightCall",
    "LoadResult",
    "Message",
    "ModelUsage",
    "Repair",
    "Run",
    "Session",
    "SessionSummary",
    "Stats",
    "ToolCall",
    "Usage",
    "UsageReport",
    "WatchEvent",
]


#: Default per-call timeout in seconds.
DEFAULT_TIMEOUT_S: Final = 30.0
#: How long retries of a failed call may go on, in seconds.
DEFAULT_RETRY_WINDOW_S: Final = 15.0
#: Channel options: a local daemon that was down (auto-start, restart, idle exit) is retried every
#: 250 ms at most, not after gRPC's default backoff of up to 120 s, so a client reaches a new daemon
#: well before an idle one could stop again unused.
CHANNEL_OPTIONS: Final = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 250),
)


# ---------------------------------------------------------------- live runs and Watch


def attach_request(session_id: str, label: str) -> pb.AttachRequest:
    """The Attach request of this process.

    Raises:
        TypeError: ``session_id`` or ``label`` is not a str.
    """
    check_type("session_id", session_id, str)
    check_type("label", label, str)
    return pb.AttachRequest(session_id=session_id, pid=os.getpid(), label=label)


def run_of(session_id: str, first: Any) -> Run:
    """The :class:`Run` from Attach's first reply.

    Raises:
        InternalError: the stream ended before its first reply.
    """
    if not isinstance(first, pb.AttachResponse) or not first.run_id:
        raise E.InternalError("Attach stream ended before the daemon sent a run id")
    return Run(first.run_id, session_id, int(first.lease_seconds))


#: First pause before resuming a failed watch; doubles up to :data:`_WATCH_MAX_DELAY_S`.
_WATCH_FIRST_DELAY_S: Final = 0.05
_WATCH_MAX_DELAY_S: Final = 1.0


class WatchCursor:
    """Where a watch stands, and when to resume it after an error (pure; used by both clients).

    The cursor remembers the last position delivered; every (re)started
    Watch asks for events after it, and an event at or before it is dropped,
    so a resumed watch delivers each event exactly once.
    """

    def __init__(self, session_id: str, after_position: int, retry_window_s: float) -> None:
        check_type("session_id", session_id, str)
        check_ints(after_position=after_position)
        if after_position < 0:
            raise E.InvalidRequestError("after_position must be 0 (from the start) or a position")
        self.session_id = session_id
        self.position = after_position
        #: The incarnation followed (from the first event); a resumed Watch asks for it, so
        #: a session deleted and created again meanwhile ends the watch instead of mixing in.
        self.incarnation = ""
        self._retry_window_s = retry_window_s
        self._delay_s = _WATCH_FIRST_DELAY_S
        self._give_up_at: float | None = None

    def request(self) -> pb.WatchRequest:
        """The Watch request that resumes after the last delivered position."""
        return pb.WatchRequest(session_id=self.session_id, after_position=self.position, incarnation=self.incarnation)

    def accept(self, r: pb.WatchResponse) -> WatchEvent | None:
        """The event to deliver, or None for one already delivered."""
        if r.incarnation and not self.incarnation:
            self.incarnation = r.incarnation
        if r.position <= self.position:
            return None
        self.position = r.position
        self._delay_s = _WATCH_FIRST_DELAY_S
        self._give_up_at = None
        return WatchEvent(r.position, None if r.cleared else message_of(r.message), r.cleared)

    def resume_delay(self, err: E.SessiondError, now: float) -> float:
        """Seconds to wait before resuming after ``err``.

        A lagged watch resumes at once. Outages (daemon restarting or
        unreachable) are retried with backoff until ``retry_window_s`` passes
        without a delivered event.

        Raises:
            SessiondError: ``err`` itself, if it is not resumable or the window is over.
        """
        if isinstance(err, E.WatchLaggedError):
            return 0.0
        if not retryable(err):
            raise err
        if self._give_up_at is None:
            self._give_up_at = now + self._retry_window_s
        delay = self._delay_s
        if now + delay > self._give_up_at:
            raise err
        self._delay_s = min(delay * 2, _WATCH_MAX_DELAY_S)
        return delay
