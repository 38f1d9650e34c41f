"""Pure parts shared by the sync and asyncio clients: types, request building, error mapping.

Nothing here does I/O except :func:`spawn_daemon` (auto-start), which both
clients call the same way.
"""

from __future__ import annotations

from typing import Final

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
from ._runs import WatchCursor as WatchCursor
from ._runs import attach_request as attach_request
from ._runs import run_of as run_of
from ._status import _error_info as _error_info
from ._status import append_stream_error as append_stream_error
from ._status import closed_error as closed_error
from ._status import error_from_rpc as error_from_rpc
from ._status import error_from_status as error_from_status
from ._status import retryable as retryable
from ._types import AppendResult as AppendResult
from ._types import BackupFigures as BackupFigures
from ._types import ClearResult as ClearResult
from ._types import DeleteResult as DeleteResult
from ._types import ImportResult as ImportResult
from ._types import InFlightCall as InFlightCall
from ._types import LoadResult as LoadResult
from ._types import Message as Message
from ._types import ModelUsage as ModelUsage
from ._types import Repair as Repair
from ._types import Run as Run
from ._types import Session as Session
from ._types import SessionPage as SessionPage
from ._types import SessionSummary as SessionSummary
from ._types import Stats as Stats
from ._types import ToolCall as ToolCall
from ._types import Usage as Usage
from ._types import UsageReport as UsageReport
from ._types import WatchEvent as WatchEvent

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
