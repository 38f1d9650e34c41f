"""Python client of claw-sessiond: sync (:class:`SessionClient`) and asyncio (:class:`AsyncSessionClient`).

>>> from claw_sessiond_client import Message, SessionClient
>>> with SessionClient(".") as client:                      # doctest: +SKIP
...     client.append("demo", Message.user("hello"))
"""

from ._base import (
    AppendResult,
    ClearResult,
    ImportResult,
    InFlightCall,
    LoadResult,
    Message,
    ModelUsage,
    Repair,
    Run,
    Session,
    SessionPage,
    SessionSummary,
    Stats,
    ToolCall,
    Usage,
    UsageReport,
    WatchEvent,
)
from .aio import AppendStream, AsyncSessionClient
from .errors import (
    CorruptDatabaseError,
    DaemonUnavailableError,
    DeadlineError,
    InternalError,
    InvalidRequestError,
    PreconditionError,
    Reason,
    SequenceConflictError,
    SessiondError,
    SessionNotFoundError,
    ShuttingDownError,
    StorageError,
    StorageFullError,
    StorageUnavailableError,
    ToolCallStateError,
    WatchLaggedError,
)
from .paths import default_socket_path
from .sync import SessionClient

__all__ = [
    "AppendResult",
    "AppendStream",
    "AsyncSessionClient",
    "ClearResult",
    "CorruptDatabaseError",
    "DaemonUnavailableError",
    "DeadlineError",
    "ImportResult",
    "InFlightCall",
    "InternalError",
    "InvalidRequestError",
    "LoadResult",
    "Message",
    "ModelUsage",
    "PreconditionError",
    "Reason",
    "Repair",
    "Run",
    "SequenceConflictError",
    "Session",
    "SessionClient",
    "SessionNotFoundError",
    "SessionPage",
    "SessionSummary",
    "SessiondError",
    "ShuttingDownError",
    "Stats",
    "StorageError",
    "StorageFullError",
    "StorageUnavailableError",
    "ToolCall",
    "ToolCallStateError",
    "Usage",
    "UsageReport",
    "WatchEvent",
    "WatchLaggedError",
    "default_socket_path",
]
