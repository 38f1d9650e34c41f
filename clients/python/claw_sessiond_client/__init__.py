"""Python client of claw-sessiond: sync (:class:`SessionClient`) and asyncio (:class:`AsyncSessionClient`).

>>> from claw_sessiond_client import Message, SessionClient
>>> with SessionClient(".") as client:                      # doctest: +SKIP
...     client.append("demo", Message.user("hello"))
"""

import importlib as _importlib
import typing as _typing

# Only public names in the namespace (dir() lists them; tests/e2e/test_daemon.py): the helpers are private.
if _typing.TYPE_CHECKING:
    from ._finds import CrossSessionUsage, FollowEvent, SearchHit, SearchResult, UsageReportRow
    from ._types import (
        AppendResult,
        BackupFigures,
        ClearResult,
        DeleteEntriesResult,
        DeleteResult,
        EditTailResult,
        EntryUsage,
        ForkResult,
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
        StateDelta,
        Stats,
        ToolCall,
        ToolPolicy,
        Usage,
        UsageReport,
        WatchEvent,
    )
    from .aio import AppendStream, AsyncSessionClient
    from .errors import (
        AlreadyExistsError,
        ClientClosedError,
        CorruptDatabaseError,
        DaemonNotRespondingError,
        DaemonUnavailableError,
        DeadlineError,
        InternalError,
        InvalidRequestError,
        PreconditionError,
        Reason,
        ResourceLimitError,
        SequenceConflictError,
        SessiondError,
        SessionNotFoundError,
        ShuttingDownError,
        StorageError,
        StorageFullError,
        StorageUnavailableError,
        ToolCallStateError,
        UnauthenticatedError,
        UntrustedPeerError,
        WatchLaggedError,
    )
    from .paths import default_socket_path, find_workspace
    from .sync import SessionClient

__all__ = [
    "AlreadyExistsError",
    "AppendResult",
    "AppendStream",
    "AsyncSessionClient",
    "BackupFigures",
    "ClearResult",
    "ClientClosedError",
    "CorruptDatabaseError",
    "CrossSessionUsage",
    "DaemonNotRespondingError",
    "DaemonUnavailableError",
    "DeadlineError",
    "DeleteEntriesResult",
    "DeleteResult",
    "EditTailResult",
    "EntryUsage",
    "FollowEvent",
    "ForkResult",
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
    "ResourceLimitError",
    "Run",
    "SearchHit",
    "SearchResult",
    "SequenceConflictError",
    "Session",
    "SessionClient",
    "SessionNotFoundError",
    "SessionPage",
    "SessionSummary",
    "SessiondError",
    "ShuttingDownError",
    "StateDelta",
    "Stats",
    "StorageError",
    "StorageFullError",
    "StorageUnavailableError",
    "ToolCall",
    "ToolCallStateError",
    "ToolPolicy",
    "UnauthenticatedError",
    "UntrustedPeerError",
    "Usage",
    "UsageReport",
    "UsageReportRow",
    "WatchEvent",
    "WatchLaggedError",
    "default_socket_path",
    "find_workspace",
]

#: The module of each public name, imported when the name is first used (PEP 562): ``import
#: claw_sessiond_client`` costs a few milliseconds, an error class loads ``errors`` alone, and grpc and
#: protobuf load with the first name that needs them (a client class, a search result). The
#: ``TYPE_CHECKING`` imports above are the same table for type checkers; tests/unit/test_start_imports.py
#: checks that it, this one and ``__all__`` agree.
_HOMES: _typing.Final[dict[str, str]] = {
    name: f".{module}"
    for module, names in {
        "_finds": "CrossSessionUsage FollowEvent SearchHit SearchResult UsageReportRow",
        "_types": (
            "AppendResult BackupFigures ClearResult DeleteEntriesResult DeleteResult EditTailResult EntryUsage "
            "ForkResult ImportResult InFlightCall LoadResult Message ModelUsage Repair Run Session SessionPage "
            "SessionSummary StateDelta Stats ToolCall ToolPolicy Usage UsageReport WatchEvent"
        ),
        "aio": "AppendStream AsyncSessionClient",
        "errors": (
            "AlreadyExistsError ClientClosedError CorruptDatabaseError DaemonNotRespondingError "
            "DaemonUnavailableError DeadlineError InternalError InvalidRequestError PreconditionError Reason "
            "ResourceLimitError SequenceConflictError SessiondError SessionNotFoundError ShuttingDownError "
            "StorageError StorageFullError StorageUnavailableError ToolCallStateError UnauthenticatedError "
            "UntrustedPeerError WatchLaggedError"
        ),
        "paths": "default_socket_path find_workspace",
        "sync": "SessionClient",
    }.items()
    for name in names.split()
}

#: The public modules, reachable as attributes of the package (``claw_sessiond_client.errors``) once imported.
_MODULES: _typing.Final = frozenset({"aio", "api", "contrib", "endpoint", "errors", "install", "paths", "sync", "tcp"})


def __getattr__(name: str) -> _typing.Any:
    """A public name, its module imported now (PEP 562); a public module likewise."""
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(_importlib.import_module(home, __name__), name)
    elif name in _MODULES:
        value = _importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # the next use is a plain lookup
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
