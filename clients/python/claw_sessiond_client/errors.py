"""The exception tree every caller sees, and the shared ``Reason`` vocabulary.

The daemon attaches a ``google.rpc.ErrorInfo`` (domain ``claw-sessiond``,
``reason`` one of :class:`Reason`) to every error it returns; the client maps
code + reason back to these classes, so callers branch on types, never on
message text. A raw ``grpc.RpcError`` never escapes the client library::

    SessiondError
    ├── InvalidRequestError      INVALID_ARGUMENT
    ├── SessionNotFoundError     NOT_FOUND
    ├── ToolCallStateError       FAILED_PRECONDITION (UNKNOWN_TOOL_CALL, TOOL_CALL_ALREADY_ANSWERED)
    ├── PreconditionError        FAILED_PRECONDITION (other reasons: SESSION_EXISTS, RUN_ALREADY_OWNED, ...)
    ├── AlreadyExistsError       ALREADY_EXISTS (CLIENT_ID_EXISTS: an entry with that client id is stored;
    │                            SESSION_EXISTS: CreateSession or ForkSession to a stored id)
    ├── SequenceConflictError    ABORTED
    ├── WatchLaggedError         ABORTED (a Watch fell too far behind; resume from its last position)
    ├── StorageError             UNAVAILABLE
    │   ├── StorageFullError     RESOURCE_EXHAUSTED
    │   ├── StorageUnavailableError
    │   └── CorruptDatabaseError
    ├── ShuttingDownError        UNAVAILABLE (the daemon is stopping)
    ├── DaemonUnavailableError   nothing answers on the socket (and auto-start failed or is off), or the
    │                            daemon is not installed where auto-start looks
    ├── UntrustedPeerError       the socket's folder or the process listening there belongs to another
    │                            user (raised by the client before it sends anything)
    ├── DeadlineError            DEADLINE_EXCEEDED (a write may have committed: retry with the same request id)
    │   └── DaemonNotRespondingError  the daemon accepts connections but does not answer (stopped? overloaded?)
    ├── ClientClosedError        a call on a client after ``close()`` (raised by the client; nothing was sent)
    ├── UnauthenticatedError     UNAUTHENTICATED (TCP without the daemon's token, or a stale one; nothing was done)
    └── InternalError            anything else

Each class says whether its error is transient (:attr:`SessiondError.retryable`): the same
request, sent again later with the same request id, may succeed, and never writes twice. True for
``DaemonUnavailableError``, ``ShuttingDownError``, ``StorageUnavailableError``,
``DeadlineError`` (and ``DaemonNotRespondingError``) and ``ResourceLimitError`` (a Watch slot
frees up); False for every other class, whose request must change first (or an operator must act:
a full disk, a corrupt database). The client itself retries the transient errors within its
``retry_window_s``, except ``ResourceLimitError`` (a refused stream is the caller's to wait out)
and ``DaemonNotRespondingError`` (a hung daemon is reported at once).
"""

from __future__ import annotations

import enum

__all__ = [
    "ERROR_DOMAIN",
    "AlreadyExistsError",
    "ClientClosedError",
    "CorruptDatabaseError",
    "DaemonNotRespondingError",
    "DaemonUnavailableError",
    "DeadlineError",
    "InternalError",
    "InvalidRequestError",
    "PreconditionError",
    "Reason",
    "ResourceLimitError",
    "SequenceConflictError",
    "SessionNotFoundError",
    "SessiondError",
    "ShuttingDownError",
    "StorageError",
    "StorageFullError",
    "StorageUnavailableError",
    "ToolCallStateError",
    "UnauthenticatedError",
    "UntrustedPeerError",
    "WatchLaggedError",
]

#: The ``google.rpc.ErrorInfo`` domain of every error the daemon sends.
ERROR_DOMAIN = "claw-sessiond"


class Reason(enum.StrEnum):
    """Machine-readable reason of an error (``ErrorInfo.reason``)."""

    INVALID_SESSION_ID = "INVALID_SESSION_ID"
    INVALID_MESSAGE = "INVALID_MESSAGE"
    ARGUMENTS_NOT_JSON = "ARGUMENTS_NOT_JSON"
    DUPLICATE_TOOL_CALL_ID = "DUPLICATE_TOOL_CALL_ID"
    EMPTY_BATCH = "EMPTY_BATCH"
    FIELD_TOO_LARGE = "FIELD_TOO_LARGE"
    INVALID_USAGE = "INVALID_USAGE"
    INVALID_WORKDIR = "INVALID_WORKDIR"
    INVALID_EVENT = "INVALID_EVENT"
    INVALID_IMPORT = "INVALID_IMPORT"
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
    UNKNOWN_TOOL_CALL = "UNKNOWN_TOOL_CALL"
    TOOL_CALL_ALREADY_ANSWERED = "TOOL_CALL_ALREADY_ANSWERED"
    CURRENCY_MISMATCH = "CURRENCY_MISMATCH"
    SESSION_EXISTS = "SESSION_EXISTS"
    RUN_ALREADY_OWNED = "RUN_ALREADY_OWNED"
    UNKNOWN_RUN = "UNKNOWN_RUN"
    SEQUENCE_CONFLICT = "SEQUENCE_CONFLICT"
    WATCH_LAGGED = "WATCH_LAGGED"
    TOO_MANY_STREAMS = "TOO_MANY_STREAMS"
    TOO_MANY_OPEN_CALLS = "TOO_MANY_OPEN_CALLS"
    EDIT_SPLITS_CALL = "EDIT_SPLITS_CALL"
    STORAGE_FULL = "STORAGE_FULL"
    STORAGE_UNAVAILABLE = "STORAGE_UNAVAILABLE"
    CORRUPT_DATABASE = "CORRUPT_DATABASE"
    SHUTTING_DOWN = "SHUTTING_DOWN"
    DAEMON_UNAVAILABLE = "DAEMON_UNAVAILABLE"
    UNTRUSTED_PEER = "UNTRUSTED_PEER"
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    CLIENT_CLOSED = "CLIENT_CLOSED"
    CLIENT_ID_EXISTS = "CLIENT_ID_EXISTS"
    INTERNAL = "INTERNAL"


class SessiondError(Exception):
    """Base of every claw-sessiond error.

    Attributes:
        reason: the machine-readable :class:`Reason`.
        metadata: extra fields from the daemon (for example ``expected`` and ``actual``).
    """

    default_reason: Reason = Reason.INTERNAL
    #: The same request (same request id) may succeed if sent again later: the error is transient
    #: (the daemon restarting or busy, a deadline, a full stream slot), not the request's fault.
    retryable: bool = False

    def __init__(self, message: str, *, reason: Reason | None = None, metadata: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason if reason is not None else self.default_reason
        self.metadata: dict[str, str] = dict(metadata or {})


class InvalidRequestError(SessiondError):
    """The request is malformed (bad id, role, JSON, size, ...). Nothing was written."""

    default_reason = Reason.INVALID_MESSAGE


class SessionNotFoundError(SessiondError):
    """The session must exist for this call and does not."""

    default_reason = Reason.SESSION_NOT_FOUND


class ToolCallStateError(SessiondError):
    """A tool result answers no known call, or a call that already has a result."""

    default_reason = Reason.UNKNOWN_TOOL_CALL


class PreconditionError(SessiondError):
    """The session is not in a state that allows the call (exists, owned, ...)."""

    default_reason = Reason.SESSION_EXISTS


class AlreadyExistsError(SessiondError):
    """What the call would create is already stored (``CLIENT_ID_EXISTS``: an entry with that client id is in
    the session's visible history, or twice in one request; ``SESSION_EXISTS``: CreateSession or ForkSession to
    a stored id). Nothing was written."""

    default_reason = Reason.CLIENT_ID_EXISTS


class ResourceLimitError(SessiondError):
    """A daemon-wide limit is reached (``TOO_MANY_STREAMS``: too many open Watch streams); retry later."""

    default_reason = Reason.TOO_MANY_STREAMS
    retryable = True


class SequenceConflictError(SessiondError):
    """Optimistic concurrency: the session's last position is not the expected one."""

    default_reason = Reason.SEQUENCE_CONFLICT

    @property
    def actual(self) -> int:
        """The session's last position when the request was refused."""
        return int(self.metadata.get("actual", "0"))


class WatchLaggedError(SessiondError):
    """A watcher fell too far behind; resume from its last position."""

    default_reason = Reason.WATCH_LAGGED


class StorageError(SessiondError):
    """Storage failed; nothing of the request was acknowledged."""

    default_reason = Reason.STORAGE_UNAVAILABLE


class StorageFullError(StorageError):
    """The disk (or the database's page limit) is full."""

    default_reason = Reason.STORAGE_FULL


class StorageUnavailableError(StorageError):
    """Storage is busy or failing (I/O error)."""

    default_reason = Reason.STORAGE_UNAVAILABLE
    retryable = True


class CorruptDatabaseError(StorageError):
    """The database file is damaged or not a claw-sessiond database."""

    default_reason = Reason.CORRUPT_DATABASE


class ShuttingDownError(SessiondError):
    """The daemon is stopping; retry against its successor."""

    default_reason = Reason.SHUTTING_DOWN
    retryable = True


class DaemonUnavailableError(SessiondError):
    """Nothing answers on the daemon's socket.

    When no daemon runs for the workspace at all (no socket, or a stale one,
    and nobody holds ``.claw/sessiond.lock``) and auto-start is off, the client
    raises this at once, naming the workspace and how to start a daemon; it
    retries (within ``retry_window_s``) only while a daemon holds the lock
    (starting or stopping). Auto-start raises it when the daemon is not
    installed where it looks (``python -m claw_sessiond``, then
    ``claw-sessiond`` on ``PATH``) or did not come up.
    """

    default_reason = Reason.DAEMON_UNAVAILABLE
    retryable = True


class UntrustedPeerError(SessiondError):
    """The socket's folder, or the process listening on the socket, belongs to another user.

    Raised by the client itself, before any request is sent: the folder is
    owned by someone else or writable by others (someone created it first to
    intercept the daemon's socket), or the peer's uid (``SO_PEERCRED``) is
    neither the caller's nor, for root, the workspace owner's. The message
    names the path and the owner. Not retried: remove the folder or find out
    who runs that process.

    Also raised when the client is created, if the ``.claw`` found looking
    upward for the workspace is another user's
    (:func:`~claw_sessiond_client.paths.find_workspace`): name the workspace.
    """

    default_reason = Reason.UNTRUSTED_PEER


class DeadlineError(SessiondError):
    """The deadline passed; a write may still have committed."""

    default_reason = Reason.DEADLINE_EXCEEDED
    retryable = True


class DaemonNotRespondingError(DeadlineError):
    """The daemon accepts connections but did not answer in time: stopped (``SIGSTOP``), hung or overloaded.

    ``metadata`` has ``pid`` (the holder of ``.claw/sessiond.lock``, when
    known) and ``waited_s``. A new connection is given
    :data:`~claw_sessiond_client._liveness.CONNECT_TIMEOUT_S` to complete its
    handshake; a call on an established connection its ``timeout_s``. Not
    retried by the client. Like any :class:`DeadlineError`, a write sent
    before may have committed: retry it with the same request id.
    """

    default_reason = Reason.DEADLINE_EXCEEDED


class ClientClosedError(SessiondError):
    """A method was called on a client after ``close()`` (or its ``with`` block ended). Nothing was sent."""

    default_reason = Reason.CLIENT_CLOSED


class UnauthenticatedError(SessiondError):
    """The daemon's TCP port refused the call: no token, or not the daemon's current one. Nothing was done.

    ``metadata["problem"]`` is ``missing`` or ``mismatch``. Pass ``workspace=`` (the client then reads
    ``<workspace>/.claw/tcp-token``), ``token=``, or set ``$CLAW_TOKEN``; the daemon writes a new token
    at every start.
    """

    default_reason = Reason.UNAUTHENTICATED


class InternalError(SessiondError):
    """An unexpected failure inside the daemon (see its log)."""

    default_reason = Reason.INTERNAL
