"""Daemon configuration: one frozen ``Config``, its defaults, and the only reader of ``os.environ``.

Precedence: command-line flag, then ``CLAW_SESSIOND_<FLAG_NAME>`` (flag name
upper-cased, dashes to underscores), then the default. Workspace paths
(``.claw/...``) are derived here and passed down.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from claw_sessiond_client.paths import claw_dir, default_socket_path

from .bounds import MAX_STORED_PAYLOAD_BYTES
from .logs import DEFAULT_LOG_BACKUPS, DEFAULT_LOG_MAX_BYTES

if TYPE_CHECKING:
    from .workspace_config import WorkspaceConfig

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_LEASE_S",
    "DEFAULT_MAX_BATCH_MESSAGES",
    "DEFAULT_MAX_ENTRY_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_OPEN_TOOL_CALLS",
    "DEFAULT_MAX_REQUEST_BYTES",
    "DEFAULT_MAX_WATCHERS",
    "DEFAULT_MAX_WATCHERS_PER_PEER",
    "DEFAULT_PG_CONNECT_TIMEOUT_S",
    "DEFAULT_PG_LOCK_TIMEOUT_MS",
    "DEFAULT_PG_POOL_MAX",
    "DEFAULT_PG_POOL_MIN",
    "DEFAULT_PG_STATEMENT_TIMEOUT_MS",
    "DEFAULT_REQUEST_ID_RETENTION_S",
    "DEFAULT_SHUTDOWN_GRACE_S",
    "DEFAULT_WATCH_SENDS_PER_S",
    "DEFAULT_WATCH_STALL_S",
    "ENV_PREFIX",
    "MAX_MESSAGE_BYTES_CEILING",
    "REQUEST_OVERHEAD_BYTES",
    "Config",
    "ConfigError",
    "DatabaseUrl",
    "describe_store",
    "env_name",
    "environ",
    "parse_database_url",
    "redact_url",
    "store_label",
    "unknown_env_vars",
]

ENV_PREFIX: Final = "CLAW_SESSIOND_"
DEFAULT_MAX_MESSAGE_BYTES: Final = 1024 * 1024
#: The largest ``--max-message-bytes`` (4,128,768 B): a message is read back in one reply (a Load
#: chunk, a Watch event, an Export line), which a client with gRPC's default receive limit (4 MiB)
#: takes only if its stored form fits ``bounds.MAX_STORED_PAYLOAD_BYTES``. A larger setting would
#: accept texts no reply could carry (the append would be refused as FIELD_TOO_LARGE anyway).
MAX_MESSAGE_BYTES_CEILING: Final = MAX_STORED_PAYLOAD_BYTES
#: One entry in all (text, tool calls, item, metadata): large items such as screenshots fit.
DEFAULT_MAX_ENTRY_BYTES: Final = 16 * 1024 * 1024
#: Messages in one append, atomic: what a framework's own store takes in one transaction (the OpenAI
#: Agents SDK's SQLiteSession is handed 10,000 items at once); a request's bytes stay bounded by
#: ``--max-request-bytes`` whatever the count.
DEFAULT_MAX_BATCH_MESSAGES: Final = 10_000
#: The gRPC receive limit: one maximal entry and the rest of its request fit with room to spare.
DEFAULT_MAX_REQUEST_BYTES: Final = 64 * 1024 * 1024
#: What a request needs beyond its largest entry (ids, other fields, the proto framing).
REQUEST_OVERHEAD_BYTES: Final = 1024 * 1024
DEFAULT_SHUTDOWN_GRACE_S: Final = 10.0
DEFAULT_BUSY_TIMEOUT_MS: Final = 5000
DEFAULT_LEASE_S: Final = 10
DEFAULT_WATCH_STALL_S: Final = 30.0
#: Open Watch streams per daemon; one more is refused (RESOURCE_EXHAUSTED / TOO_MANY_STREAMS).
DEFAULT_MAX_WATCHERS: Final = 4096
#: Open Watch streams of one TCP connection (a peer); one more is refused (TOO_MANY_STREAMS, scope=peer).
DEFAULT_MAX_WATCHERS_PER_PEER: Final = 1024
#: Watch fan-out budget: messages per second over all Watch streams (see ``watch.py``).
DEFAULT_WATCH_SENDS_PER_S: Final = 500.0
#: Open (unanswered) tool calls per session; an append beyond it is refused (TOO_MANY_OPEN_CALLS).
DEFAULT_MAX_OPEN_TOOL_CALLS: Final = 1_000
DEFAULT_MAX_GROUP_COMMIT: Final = 512
DEFAULT_RETENTION_INTERVAL_S: Final = 3600.0
DEFAULT_REQUEST_ID_RETENTION_S: Final = 24 * 3600.0
#: PostgreSQL: connections the daemon's pool keeps open, and the most it opens (plus one lease and one LISTEN
#: connection, ``storage/postgres/connect.py``).
DEFAULT_PG_POOL_MIN: Final = 1
DEFAULT_PG_POOL_MAX: Final = 10
#: PostgreSQL ``lock_timeout`` of the daemon's connections: a write waiting longer for a row lock fails as
#: unavailable (the client retries it).
DEFAULT_PG_LOCK_TIMEOUT_MS: Final = 10_000
#: PostgreSQL ``statement_timeout`` of the daemon's connections (0: not set, the server's or role's applies):
#: the longest one statement may run (a Load page, a write, a batch of 64 appends). Migrations and the
#: VACUUM after a Delete run without it.
DEFAULT_PG_STATEMENT_TIMEOUT_MS: Final = 120_000
#: How long opening one PostgreSQL connection may take (each host of a multi-host URL in turn).
DEFAULT_PG_CONNECT_TIMEOUT_S: Final = 10.0


class ConfigError(ValueError):
    """A setting is invalid: ``field: problem (got value)``; the CLI exits 2."""

    def __init__(self, field_name: str, problem: str, value: object) -> None:
        super().__init__(f"{field_name}: {problem} (got {value!r})")
        self.field = field_name
        self.value = value


def env_name(flag: str) -> str:
    """``--max-message-bytes`` → ``CLAW_SESSIOND_MAX_MESSAGE_BYTES``."""
    return ENV_PREFIX + flag.lstrip("-").replace("-", "_").upper()


def environ() -> Mapping[str, str]:
    """The process environment (the one place that reads it)."""
    return os.environ


def unknown_env_vars(known_flags: list[str], env: Mapping[str, str]) -> list[str]:
    """``CLAW_SESSIOND_*`` variables that match no flag (probably typos)."""
    known = {env_name(f) for f in known_flags}
    return sorted(k for k in env if k.startswith(ENV_PREFIX) and k not in known)


@dataclass(frozen=True)
class Config:
    """Everything the daemon needs, validated once at start-up."""

    workspace: Path
    """Workspace folder; the daemon keeps its state in ``<workspace>/.claw/``."""
    socket_path: Path | None = None
    """Unix socket to listen on (default: ``.claw/sessiond.sock``, or a short fallback path)."""
    tcp_address: str | None = None
    """Optional ``host:port`` to listen on too (TLS with a certificate made at each start and written to
    ``.claw/tcp-cert.pem``, see ``rpc/tls.py``; loopback only unless forced; calls need the token the daemon
    writes to ``.claw/tcp-token`` at each start, see ``auth.py``)."""
    allow_non_loopback: bool = False
    """Allow ``tcp_address`` on a non-loopback interface (anyone on the network can connect)."""
    metrics_address: str | None = None
    """Optional loopback ``host:port`` serving Prometheus metrics at ``/metrics``."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """Largest text of one message (content, name, tool calls) or audit payload, in bytes."""
    max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES
    """Largest entry in all (text, tool calls, item and metadata), in bytes."""
    max_batch_messages: int = DEFAULT_MAX_BATCH_MESSAGES
    """Most messages in one Append."""
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    """gRPC receive limit; larger requests get RESOURCE_EXHAUSTED from the transport."""
    shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S
    """How long in-flight calls may take to finish at shutdown."""
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS
    """SQLite busy timeout of every connection."""
    lease_s: int = DEFAULT_LEASE_S
    """Over ``--tcp`` only: a connection that answers no keepalive ping for this long is closed (a vanished
    host); the Unix socket sends no pings (a blocked client keeps its runs, see ``rpc/service_runs.py``)."""
    watch_stall_s: float = DEFAULT_WATCH_STALL_S
    """A Watch whose send stays blocked this long (its client stopped reading) is ended as lagged."""
    max_watchers: int = DEFAULT_MAX_WATCHERS
    """Most Watch streams open at once; one more gets RESOURCE_EXHAUSTED / ``TOO_MANY_STREAMS``."""
    max_watchers_per_peer: int = DEFAULT_MAX_WATCHERS_PER_PEER
    """Most Watch streams one TCP connection holds (the Unix socket has no share: only the owner reaches it)."""
    watch_sends_per_s: float = DEFAULT_WATCH_SENDS_PER_S
    """Fan-out budget: Watch messages sent per second over all streams (more watchers: each waits longer)."""
    max_open_tool_calls: int = DEFAULT_MAX_OPEN_TOOL_CALLS
    """Most open (unanswered) tool calls in one session: bounds the work of one repair.

    An append (or import) that would leave more is refused with FAILED_PRECONDITION /
    ``TOO_MANY_OPEN_CALLS`` (import: INVALID_ARGUMENT / ``INVALID_IMPORT``); nothing is written."""
    max_group_commit: int = DEFAULT_MAX_GROUP_COMMIT
    """Most requests committed in one transaction."""
    retention_days: float = 0.0
    """Delete sessions not updated for this many days (0: never)."""
    retention_interval_s: float = DEFAULT_RETENTION_INTERVAL_S
    """How often the retention sweep runs."""
    request_id_retention_s: float = DEFAULT_REQUEST_ID_RETENTION_S
    """The retry window: idempotency records older than this are pruned (0: keep them forever).

    A retry within the window replays the first result; after its record is
    pruned, the same request id is a new request."""
    log_level: str = "info"
    """debug, info, warning or error. Message content is logged at no level."""
    notify_socket: str | None = field(default=None, repr=False)
    """``$NOTIFY_SOCKET`` (systemd ``Type=notify``)."""
    watchdog_usec: int = 0
    """``$WATCHDOG_USEC``: send ``WATCHDOG=1`` every half of it (0: off)."""
    runtime_dir: str | None = field(default=None, repr=False)
    """``$XDG_RUNTIME_DIR``, for the short socket fallback path."""
    idle_exit_s: float = 0.0
    """Stop gracefully after this long with no client activity (0: never; auto-start passes 600)."""
    log_file: Path | None = None
    """Write the log to this file (0600, rotated) instead of stderr."""
    log_max_bytes: int = DEFAULT_LOG_MAX_BYTES
    """Rotate ``log_file`` when it would grow past this size (0: never)."""
    log_backups: int = DEFAULT_LOG_BACKUPS
    """Rotated log files kept (``sessiond.log.1`` ... ``.N``)."""
    registry_dir: Path | None = field(default=None, repr=False)
    """Per-user folder of running-daemon records (``status``/``stop``); None: not registered."""
    database_url: str = field(default="", repr=False)
    """Where sessions are stored: "" (or ``sqlite:``) for the SQLite file under ``.claw/``, or a
    ``postgresql://`` URL (docs/postgres.md). May hold a password: never printed (``repr=False``)."""
    pg_pool_min: int = DEFAULT_PG_POOL_MIN
    """PostgreSQL: connections the pool keeps open."""
    pg_pool_max: int = DEFAULT_PG_POOL_MAX
    """PostgreSQL: most connections the pool opens (the daemon adds one lease and one LISTEN connection)."""
    pg_lock_timeout_ms: int = DEFAULT_PG_LOCK_TIMEOUT_MS
    """PostgreSQL ``lock_timeout`` of the daemon's connections."""
    pg_statement_timeout_ms: int = DEFAULT_PG_STATEMENT_TIMEOUT_MS
    """PostgreSQL ``statement_timeout`` of the daemon's connections (0: not set by the daemon)."""
    pg_connect_timeout_s: float = DEFAULT_PG_CONNECT_TIMEOUT_S
    """How long opening one PostgreSQL connection may take."""
    database_record: WorkspaceConfig | None = field(default=None, repr=False)
    """What to record in ``.claw/config.toml`` once the store has opened (a ``WorkspaceConfig``: first use of
    a PostgreSQL URL, or a switch), or None (``workspace_config.resolve_backend``)."""

    @property
    def uses_postgres(self) -> bool:
        """True when the sessions live in a PostgreSQL database."""
        return self.database_url.startswith(_POSTGRES_SCHEMES)

    @property
    def database(self) -> DatabaseUrl:
        """The parsed ``database_url`` (validated by :meth:`validate`)."""
        return parse_database_url(self.database_url)

    @property
    def store_label(self) -> str:
        """What the ready line, ``status``, ``stats`` and ``/metrics`` say the store is (never a password)."""
        return store_label(self.database_url, self.db_path)

    @property
    def claw_dir(self) -> Path:
        """``<workspace>/.claw``."""
        return claw_dir(self.workspace)

    @property
    def db_path(self) -> Path:
        """``.claw/sessions.db``."""
        return self.claw_dir / "sessions.db"

    @property
    def lock_path(self) -> Path:
        """``.claw/sessiond.lock`` (flock held for the daemon's life)."""
        return self.claw_dir / "sessiond.lock"

    @property
    def log_path(self) -> Path:
        """``.claw/sessiond.log``, used when a client auto-starts the daemon."""
        return self.claw_dir / "sessiond.log"

    @property
    def effective_socket_path(self) -> Path:
        """The socket path used: explicit, or derived from the workspace."""
        return self.socket_path or default_socket_path(self.workspace, self.runtime_dir)

    def validate(self) -> Config:
        """Return self if every field is usable.

        Raises:
            ConfigError: the first invalid field.
        """
        if not self.workspace.is_dir():
            raise ConfigError("workspace", "not an existing folder", str(self.workspace))
        sock = self.effective_socket_path
        if len(os.fsencode(sock)) > 107:
            raise ConfigError("socket", "longer than the 107-byte Unix socket path limit", str(sock))
        for name in (
            "max_message_bytes",
            "max_entry_bytes",
            "max_batch_messages",
            "max_request_bytes",
            "max_group_commit",
            "lease_s",
            "max_watchers",
            "max_watchers_per_peer",
            "watch_sends_per_s",
            "max_open_tool_calls",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(name, "must be positive", getattr(self, name))
        if self.max_message_bytes > MAX_MESSAGE_BYTES_CEILING:
            raise ConfigError(
                "max_message_bytes",
                f"must be at most {MAX_MESSAGE_BYTES_CEILING} (4 MiB - 64 KiB: one message must fit one reply "
                "a client with gRPC's default 4 MiB receive limit can read)",
                self.max_message_bytes,
            )
        if self.max_request_bytes < self.max_message_bytes:
            raise ConfigError("max_request_bytes", "must be at least max_message_bytes", self.max_request_bytes)
        if self.max_entry_bytes < self.max_message_bytes:
            raise ConfigError("max_entry_bytes", "must be at least max_message_bytes", self.max_entry_bytes)
        if self.max_request_bytes < self.max_entry_bytes + REQUEST_OVERHEAD_BYTES:
            raise ConfigError(
                "max_request_bytes",
                f"must be at least max_entry_bytes + {REQUEST_OVERHEAD_BYTES} (a request carrying one entry of "
                f"max_entry_bytes = {self.max_entry_bytes} must fit)",
                self.max_request_bytes,
            )
        if self.watch_stall_s <= 0:
            raise ConfigError("watch_stall_s", "must be positive", self.watch_stall_s)
        if self.shutdown_grace_s < 0 or self.retention_days < 0:
            raise ConfigError("shutdown_grace_s/retention_days", "must not be negative", self.shutdown_grace_s)
        if self.request_id_retention_s < 0:
            raise ConfigError("request_id_retention_s", "must not be negative", self.request_id_retention_s)
        if self.retention_interval_s <= 0:
            raise ConfigError("retention_interval_s", "must be positive", self.retention_interval_s)
        for name in ("idle_exit_s", "log_max_bytes", "log_backups"):
            if getattr(self, name) < 0:
                raise ConfigError(name, "must not be negative", getattr(self, name))
        parse_database_url(self.database_url)
        self._validate_postgres()
        if self.log_level not in ("debug", "info", "warning", "error"):
            raise ConfigError("log_level", "must be debug, info, warning or error", self.log_level)
        if self.tcp_address is not None:
            host = parse_host_port("tcp", self.tcp_address)[0]
            if not self.allow_non_loopback and not is_loopback(host):
                raise ConfigError(
                    "tcp", "not a loopback address; pass --allow-non-loopback to expose it", self.tcp_address
                )
        if self.metrics_address is not None:
            host = parse_host_port("metrics", self.metrics_address)[0]
            if not is_loopback(host):
                raise ConfigError("metrics", "metrics are served on loopback only", self.metrics_address)
        return self

    def _validate_postgres(self) -> None:
        if self.pg_pool_min < 1 or self.pg_pool_max < self.pg_pool_min:
            raise ConfigError("pg_pool_min/pg_pool_max", "need 1 <= pg_pool_min <= pg_pool_max", self.pg_pool_min)
        if self.pg_lock_timeout_ms <= 0:
            raise ConfigError(
                "pg_lock_timeout_ms", "must be positive (0 would wait for a lock forever)", self.pg_lock_timeout_ms
            )
        if self.pg_statement_timeout_ms < 0:
            raise ConfigError("pg_statement_timeout_ms", "must not be negative", self.pg_statement_timeout_ms)
        if not 0 < self.pg_connect_timeout_s <= 600:
            raise ConfigError("pg_connect_timeout_s", "must be above 0 and at most 600", self.pg_connect_timeout_s)


def parse_host_port(field_name: str, value: str) -> tuple[str, int]:
    """Split ``host:port`` (``[::1]:port`` for IPv6)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(field_name, "expected host:port", value)
    return host.strip("[]"), int(port)


_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")
_DEFAULT_PG_PORT: Final = 5432


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """A database URL, parsed once: the SQLite file under ``.claw/`` or a PostgreSQL database.

    The one reader of a URL's parts; everything printed from it is free of the password.
    """

    backend: Literal["sqlite", "postgresql"]
    """``sqlite`` (the URL "" or ``sqlite:``) or ``postgresql``."""
    url: str = field(default="", repr=False)
    """The URL as given (may hold a password)."""
    hosts: tuple[tuple[str, int], ...] = ()
    """``(host, port)`` of each server (several: libpq's multi-host form); a host may be a socket folder."""
    database: str = ""
    """The database name ("" : the server's default, the user's name)."""
    user: str = ""
    """The user name ("" : the default)."""
    has_password: bool = False
    """True when the URL holds a password (in the user part or as ``password=``)."""
    passfile: str = ""
    """The libpq password file the URL names (``passfile=``; "" : none named)."""

    @property
    def target(self) -> str:
        """``host:port/database`` (hosts comma-separated), for logs and errors; never the password."""
        if self.backend == "sqlite":
            return "the SQLite file .claw/sessions.db"
        hosts = ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.hosts)
        return f"{hosts}/{self.database or '(default)'}"

    @property
    def described(self) -> str:
        """``PostgreSQL host:port/database`` or ``the SQLite file .claw/sessions.db``."""
        return self.target if self.backend == "sqlite" else f"PostgreSQL {self.target}"

    def same_store(self, other: DatabaseUrl) -> bool:
        """True when both name the same store (same backend, servers and database; users may differ)."""
        return (self.backend, self.hosts, self.database) == (other.backend, other.hosts, other.database)

    def without_password(self) -> str:
        """The URL with any password removed (what ``.claw/config.toml`` may hold)."""
        if self.backend == "sqlite":
            return "sqlite:"
        return _rebuild(self.url, lambda userinfo: userinfo.split(":", 1)[0], drop_password=True)

    def with_password(self, password: str) -> str:
        """The URL carrying ``password`` as its ``password=`` parameter (for the driver; never printed)."""
        base = self.without_password()
        return base + ("&" if "?" in base else "?") + urllib.parse.urlencode({"password": password})


def _rebuild(url: str, userinfo_of: Callable[[str], str], *, drop_password: bool) -> str:
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        userinfo = userinfo_of(userinfo)
        netloc = f"{userinfo}@{hostport}" if userinfo else hostport
    query = []
    for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if k.lower() == "password":
            if drop_password:
                continue
            v = "***"
        query.append((k, v))
    text = urllib.parse.urlencode(query, safe="/*")
    # Not urlunsplit: it drops an empty host list ("postgresql:///db" would become "postgresql:/db").
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{text}" if text else "")


def redact_url(url: str) -> str:
    """A database URL as it may be printed: any password replaced by ``***`` (an unparsable URL: its scheme)."""
    try:
        return _rebuild(url, lambda u: u.split(":", 1)[0] + ":***" if ":" in u else u, drop_password=False)
    except ValueError:
        return url.split(":", 1)[0] + "://(unparsable URL)"


def _host_part(url: str) -> str:
    """The host list of a URL, for an error message: no user, no password, no parameters."""
    rest = url.split("://", 1)[-1]
    return rest.split("/", 1)[0].split("?", 1)[0].rpartition("@")[2]


def _port(text: str, url: str) -> int:
    if not text.isdigit() or not 0 < int(text) <= 65535:
        raise ConfigError("database", f"port {text!r} is not a number from 1 to 65535", _host_part(url))
    return int(text)


def _host_port(spec: str, url: str) -> tuple[str, int | None]:
    """``host``, ``host:port``, ``[v6]`` or ``[v6]:port`` of a URL's host list."""
    if spec.startswith("["):
        inside, bracket, after = spec[1:].partition("]")
        try:
            ipaddress.IPv6Address(inside.split("%", 1)[0])
        except ValueError:
            raise ConfigError("database", f"[{inside}] is not a valid IPv6 address", _host_part(url)) from None
        if not bracket or (after and not after.startswith(":")):
            raise ConfigError("database", "an IPv6 address must be written [address]:port", _host_part(url))
        return inside, _port(after[1:], url) if after else None
    host, sep, port = spec.rpartition(":")
    if not sep:
        return spec, None
    if ":" in host:
        raise ConfigError("database", "an IPv6 address must be written [address]:port", _host_part(url))
    return urllib.parse.unquote(host), _port(port, url)


def parse_database_url(url: str) -> DatabaseUrl:
    """Parse a database URL: "" or ``sqlite:`` (the SQLite file), or ``postgresql://`` (``postgres://``) in
    libpq's URL form, several hosts included (``h1:5432,h2:5433``), ``host=``/``port=`` parameters too.

    Raises:
        ConfigError: an unknown scheme, a port that is not a number, a malformed IPv6 address or URL; the
            message holds the host list, never the user or password.
    """
    if url in ("", "sqlite:"):
        return DatabaseUrl("sqlite", url)
    if not url.startswith(_POSTGRES_SCHEMES):
        scheme = url.split(":", 1)[0] if ":" in url else url[:20]
        raise ConfigError("database", "must be a postgresql:// URL (or empty, or sqlite:, for the SQLite file)", scheme)
    try:
        parts = urllib.parse.urlsplit(url)
        query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    except ValueError as exc:
        raise ConfigError("database", f"not a valid URL: {exc}", _host_part(url)) from None
    userinfo, at, hostlist = parts.netloc.rpartition("@")
    specs = [_host_port(spec, url) for spec in hostlist.split(",") if spec] if hostlist else []
    if not specs:  # libpq: host= (a host name or a socket folder, comma-separated) and port=
        ports = [_port(p, url) for p in ",".join(query.get("port", [])).split(",") if p]
        names = [h for h in ",".join(query.get("host", [])).split(",") if h] or ["localhost"]
        specs = [(h, ports[min(i, len(ports) - 1)] if ports else None) for i, h in enumerate(names)]
    hosts = tuple((h or "localhost", _DEFAULT_PG_PORT if p is None else p) for h, p in specs)
    user = urllib.parse.unquote(userinfo.split(":", 1)[0]) if at else ""
    return DatabaseUrl(
        "postgresql",
        url,
        hosts,
        urllib.parse.unquote(parts.path.lstrip("/")) or (query.get("dbname") or [""])[0],
        user or (query.get("user") or [""])[0],
        bool(at and ":" in userinfo) or "password" in {k.lower() for k in query},
        (query.get("passfile") or [""])[0],
    )


def store_label(url: str, db_path: Path) -> str:
    """The store of a workspace as printed: ``host:port/database`` for a PostgreSQL URL, else ``db_path``."""
    parsed = parse_database_url(url)
    return parsed.target if parsed.backend == "postgresql" else str(db_path)


def describe_store(url: str, db_path: Path) -> str:
    """``PostgreSQL host:port/database`` or ``the SQLite file <db_path>``: a store named in a sentence."""
    return f"PostgreSQL {store_label(url, db_path)}" if url else f"the SQLite file {db_path}"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def warn(text: str) -> None:
    """Print a configuration warning to stderr."""
    print(f"claw-sessiond: warning: {text}", file=sys.stderr)
