"""Domain errors of the daemon, and start-up errors. Nothing here knows about gRPC.

Store, repair and validation raise only domain errors; ``rpc/edge.py`` maps
them to status codes in one table (the error edge). Each class has a client-side twin
of the same name in ``claw_sessiond_client.errors`` (a test checks it)::

    SessiondError
    ├── InvalidRequestError      reason: INVALID_SESSION_ID | INVALID_MESSAGE | ARGUMENTS_NOT_JSON | ...
    ├── SessionNotFoundError
    ├── ToolCallStateError       reason: UNKNOWN_TOOL_CALL | TOOL_CALL_ALREADY_ANSWERED
    ├── PreconditionError        reason: SESSION_EXISTS | RUN_ALREADY_OWNED | TOO_MANY_OPEN_CALLS | ...
    ├── AlreadyExistsError       reason: CLIENT_ID_EXISTS (an entry) | SESSION_EXISTS (CreateSession, ForkSession)
    ├── ResourceLimitError       reason: TOO_MANY_STREAMS
    ├── SequenceConflictError    fields: expected, actual
    ├── WatchLaggedError
    ├── StorageError
    │   ├── StorageFullError
    │   ├── StorageUnavailableError
    │   └── CorruptDatabaseError (at start-up: exit 1 naming the file; never overwrite)
    └── ShuttingDownError

Start-up failures are not RPC errors: the daemon exits 1 with a message that
names the file (``daemon.py``; the CLI's offline commands take the same lock)::

    StartupError
    └── LockHeldError
"""

from __future__ import annotations

from typing import Final

from claw_sessiond_client.errors import Reason

__all__ = [
    "CLIENT_ONLY_REASONS",
    "SENT_REASONS",
    "AlreadyExistsError",
    "CorruptDatabaseError",
    "InvalidRequestError",
    "LockHeldError",
    "PreconditionError",
    "Reason",
    "ResourceLimitError",
    "SequenceConflictError",
    "SessionNotFoundError",
    "SessiondError",
    "ShuttingDownError",
    "StartupError",
    "StorageError",
    "StorageFullError",
    "StorageUnavailableError",
    "ToolCallStateError",
    "WatchLaggedError",
]

#: The reasons only a client raises (nothing was sent, or no daemon answered in time); the daemon never sends them.
CLIENT_ONLY_REASONS: Final = frozenset(
    {Reason.DAEMON_UNAVAILABLE, Reason.UNTRUSTED_PEER, Reason.DEADLINE_EXCEEDED, Reason.CLIENT_CLOSED}
)
#: Every reason the daemon may send in an ErrorInfo. The proto's header names each one, with its code and
#: whether a retry is safe (REASONS); ``tests/unit/test_proto_reasons.py`` holds the two lists equal, so a
#: reason added here without the proto fails CI.
SENT_REASONS: Final = frozenset(Reason) - CLIENT_ONLY_REASONS


class SessiondError(Exception):
    """Base of domain errors: a message a person can act on, a reason, and fields."""

    default_reason: Reason = Reason.INTERNAL

    def __init__(self, message: str, *, reason: Reason | None = None, **metadata: object) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason if reason is not None else self.default_reason
        self.metadata = {k: str(v) for k, v in metadata.items()}


class InvalidRequestError(SessiondError):
    """Malformed request. Nothing is written."""

    default_reason = Reason.INVALID_MESSAGE


class SessionNotFoundError(SessiondError):
    """A session that must exist does not."""

    default_reason = Reason.SESSION_NOT_FOUND


class ToolCallStateError(SessiondError):
    """A tool result for an unknown call, or for a call that already has a result."""

    default_reason = Reason.UNKNOWN_TOOL_CALL


class PreconditionError(SessiondError):
    """The session's state forbids the call."""

    default_reason = Reason.SESSION_EXISTS


class AlreadyExistsError(SessiondError):
    """What the request would create is already stored (an entry's client id, a session of an exclusive create).

    Nothing is written.
    """

    default_reason = Reason.CLIENT_ID_EXISTS


class ResourceLimitError(SessiondError):
    """A daemon-wide limit is reached (too many open streams); retry later. Nothing is written."""

    default_reason = Reason.TOO_MANY_STREAMS


class SequenceConflictError(SessiondError):
    """Optimistic-concurrency mismatch."""

    default_reason = Reason.SEQUENCE_CONFLICT


class WatchLaggedError(SessiondError):
    """A watcher's buffer overflowed."""

    default_reason = Reason.WATCH_LAGGED


class StorageError(SessiondError):
    """Storage failed; the request was not acknowledged."""

    default_reason = Reason.STORAGE_UNAVAILABLE


class StorageFullError(StorageError):
    """SQLITE_FULL: disk or page limit reached."""

    default_reason = Reason.STORAGE_FULL


class StorageUnavailableError(StorageError):
    """SQLITE_BUSY / SQLITE_IOERR and other transient failures."""

    default_reason = Reason.STORAGE_UNAVAILABLE


class CorruptDatabaseError(StorageError):
    """The database is damaged or not ours."""

    default_reason = Reason.CORRUPT_DATABASE


class ShuttingDownError(SessiondError):
    """The daemon is stopping."""

    default_reason = Reason.SHUTTING_DOWN


class StartupError(Exception):
    """The daemon cannot start; the message names the file and the problem. Exit code 1."""


class LockHeldError(StartupError):
    """Another daemon holds the workspace lock."""
