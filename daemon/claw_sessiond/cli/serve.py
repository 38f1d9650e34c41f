"""``claw-sessiond serve``: run the daemon for a workspace in the foreground.

Its options (limits, fairness, retention, logging, idle exit) each have an
environment variable ``CLAW_SESSIOND_<OPTION>``; :func:`config_from_args`
turns them into the daemon's validated :class:`~claw_sessiond.config.Config`.
A configuration error exits 2 (``claw-sessiond: configuration error: ...``),
a log file that cannot be opened exits 1; otherwise the exit code is the
daemon's (:func:`claw_sessiond.server.run`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ..daemon import Daemon

from ..claw_dir import check_password_file
from ..config import (
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_LEASE_S,
    DEFAULT_MAX_BATCH_MESSAGES,
    DEFAULT_MAX_ENTRY_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_REQUEST_BYTES,
    DEFAULT_REQUEST_ID_RETENTION_S,
    DEFAULT_RETENTION_INTERVAL_S,
    DEFAULT_SHUTDOWN_GRACE_S,
    DEFAULT_WATCH_STALL_S,
    Config,
    ConfigError,
    environ,
    unknown_env_vars,
    warn,
)
from ..workspace_config import explicit_database, resolve_backend
from .failure import EXIT_FAILURE, EXIT_USAGE
from .options import env_option, set_epilog
from .termsafe import visible

__all__ = [
    "DESCRIPTION",
    "HELP",
    "add_arguments",
    "add_postgres_options",
    "config_from_args",
    "postgres_fields",
    "run",
    "say_ready",
]

HELP: Final = "run the daemon for a workspace (foreground; SIGTERM stops it gracefully)"
DESCRIPTION: Final = (
    "Run the daemon for a workspace in the foreground. Creates .claw/ (0700), takes the workspace "
    "lock, opens .claw/sessions.db (WAL) and listens on .claw/sessiond.sock (0600)."
)


def add_arguments(parser: argparse.ArgumentParser, env: Mapping[str, str]) -> None:
    parser.usage = "%(prog)s [--tcp HOST:PORT] [--database URL] [OPTIONS]"
    net = parser.add_argument_group("network")
    limits = parser.add_argument_group("limits and fairness")
    store = parser.add_argument_group("storage (the SQLite file, or PostgreSQL with --database)")
    life = parser.add_argument_group("lifecycle and logs")
    env_option(
        net,
        "--tcp",
        env,
        default=None,
        metavar="HOST:PORT",
        help="also listen on host:port (TLS with the certificate in .claw/tcp-cert.pem; loopback only; calls need the "
        "token in .claw/tcp-token)",
    )
    env_option(
        net,
        "--allow-non-loopback",
        env,
        default=False,
        action="store_true",
        help="allow --tcp on a non-loopback address (anyone who can reach it can read and write sessions)",
    )
    env_option(
        net, "--metrics", env, default=None, metavar="HOST:PORT", help="serve Prometheus metrics on loopback host:port"
    )
    env_option(
        limits,
        "--max-message-bytes",
        env,
        default=DEFAULT_MAX_MESSAGE_BYTES,
        type=int,
        help="largest text of one message (content, name, tool calls)",
    )
    env_option(
        limits,
        "--max-entry-bytes",
        env,
        default=DEFAULT_MAX_ENTRY_BYTES,
        type=int,
        help="largest entry in all (text, tool calls, item, metadata)",
    )
    env_option(
        limits,
        "--max-batch-messages",
        env,
        default=DEFAULT_MAX_BATCH_MESSAGES,
        type=int,
        help="most messages per append",
    )
    env_option(
        limits, "--max-request-bytes", env, default=DEFAULT_MAX_REQUEST_BYTES, type=int, help="gRPC receive limit"
    )
    env_option(life, "--shutdown-grace-s", env, default=DEFAULT_SHUTDOWN_GRACE_S, type=float, help="grace at shutdown")
    env_option(
        store,
        "--busy-timeout-ms",
        env,
        default=DEFAULT_BUSY_TIMEOUT_MS,
        type=int,
        help="SQLite busy timeout: how long a connection waits for another's lock on the file",
    )
    env_option(
        net,
        "--lease-s",
        env,
        default=DEFAULT_LEASE_S,
        type=int,
        help="the lease: on a shared PostgreSQL database, a daemon that stops renewing its lease for this long "
        "loses its runs to the others (docs/postgres.md); over --tcp, a connection that answers no keepalive "
        "ping within max(this, 2) seconds is closed (a vanished host)",
    )
    env_option(
        limits,
        "--watch-stall-s",
        env,
        default=DEFAULT_WATCH_STALL_S,
        type=float,
        help="end a Watch as lagged after its client stopped reading this long",
    )
    _add_fairness_options(limits, env)
    env_option(
        store, "--retention-days", env, default=0.0, type=float, help="delete sessions idle this long (0: never)"
    )
    env_option(
        store,
        "--retention-interval-s",
        env,
        default=DEFAULT_RETENTION_INTERVAL_S,
        type=float,
        help="how often the retention sweep runs",
    )
    env_option(
        store,
        "--request-id-retention-s",
        env,
        default=DEFAULT_REQUEST_ID_RETENTION_S,
        type=float,
        help="retry window: forget request ids (idempotency records) older than this (0: never)",
    )
    env_option(
        life, "--log-level", env, default="info", choices=["debug", "info", "warning", "error"], help="log level"
    )
    env_option(
        store,
        "--database",
        env,
        default=None,
        metavar="URL",
        help="where sessions live: a postgresql:// URL shared by several daemons (docs/postgres.md; put no password "
        "here: use PGPASSFILE or --database-file), else CLAW_DATABASE_URL, else the credential 'database' "
        "($CREDENTIALS_DIRECTORY/database, systemd LoadCredential=), else 'database' in .claw/config.toml, else "
        "the SQLite file; a PostgreSQL URL is recorded in .claw/config.toml at first use (without its password), "
        "and one that disagrees with the record is refused",
    )
    env_option(
        store,
        "--database-file",
        env,
        default=None,
        metavar="FILE",
        help="read the postgresql:// URL (password included if need be) from this file instead of --database: "
        "nothing secret in the command line, the environment or the unit (systemd: --database-file %%d/database "
        "with LoadCredential=database:/etc/claw-sessiond/database-url)",
    )
    add_postgres_options(store, env)
    env_option(
        store,
        "--switch-backend",
        env,
        default=False,
        action="store_true",
        help="serve the store --database names although .claw/config.toml records another one, and record it "
        "there from now on (move the data first with 'claw-sessiond copy'; without this flag a mismatch is a "
        "start-up error naming both; a .claw/sessions.db beside a PostgreSQL URL is refused even with it: copy "
        "its sessions, then move the file away)",
    )
    _add_lifecycle_options(life, env)
    set_epilog(
        parser,
        "",
        "Exit codes: 0 stopped (SIGTERM, SIGINT or --idle-exit-s), 1 failure (the workspace lock held by another "
        "daemon, a database that cannot be opened, a port in use), 2 usage or configuration error.",
    )


def add_postgres_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, env: Mapping[str, str]) -> None:
    """The PostgreSQL connection options (``serve`` and ``migrate-db``)."""
    from ..config import (
        DEFAULT_PG_CONNECT_TIMEOUT_S,
        DEFAULT_PG_LOCK_TIMEOUT_MS,
        DEFAULT_PG_POOL_MAX,
        DEFAULT_PG_POOL_MIN,
        DEFAULT_PG_STATEMENT_TIMEOUT_MS,
    )

    env_option(
        parser, "--pg-pool-min", env, default=DEFAULT_PG_POOL_MIN, type=int, help="PostgreSQL: connections kept open"
    )
    env_option(
        parser,
        "--pg-pool-max",
        env,
        default=DEFAULT_PG_POOL_MAX,
        type=int,
        help="PostgreSQL: most pooled connections (the daemon adds one lease and one LISTEN connection)",
    )
    env_option(
        parser,
        "--pg-lock-timeout-ms",
        env,
        default=DEFAULT_PG_LOCK_TIMEOUT_MS,
        type=int,
        help="PostgreSQL lock_timeout: a write waiting longer for a row lock fails as unavailable",
    )
    env_option(
        parser,
        "--pg-statement-timeout-ms",
        env,
        default=DEFAULT_PG_STATEMENT_TIMEOUT_MS,
        type=int,
        help="PostgreSQL statement_timeout of the daemon's connections (0: not set, the server's applies)",
    )
    env_option(
        parser,
        "--pg-connect-timeout-s",
        env,
        default=DEFAULT_PG_CONNECT_TIMEOUT_S,
        type=float,
        help="PostgreSQL: how long opening one connection may take (each host of a multi-host URL in turn)",
    )


def _add_fairness_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, env: Mapping[str, str]) -> None:
    from ..config import (
        DEFAULT_MAX_OPEN_TOOL_CALLS,
        DEFAULT_MAX_WATCHERS,
        DEFAULT_MAX_WATCHERS_PER_PEER,
        DEFAULT_WATCH_SENDS_PER_S,
    )

    env_option(
        parser, "--max-watchers", env, default=DEFAULT_MAX_WATCHERS, type=int, help="most Watch streams open at once"
    )
    env_option(
        parser,
        "--max-watchers-per-peer",
        env,
        default=DEFAULT_MAX_WATCHERS_PER_PEER,
        type=int,
        help="most Watch streams one peer (a TCP connection, or a client process on the Unix socket) holds",
    )
    env_option(
        parser,
        "--watch-sends-per-s",
        env,
        default=DEFAULT_WATCH_SENDS_PER_S,
        type=float,
        help="Watch fan-out budget: messages per second over all streams",
    )
    env_option(
        parser,
        "--max-open-tool-calls",
        env,
        default=DEFAULT_MAX_OPEN_TOOL_CALLS,
        type=int,
        help="most unanswered tool calls per session (bounds one repair)",
    )


def _add_lifecycle_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, env: Mapping[str, str]) -> None:
    from ..logs import DEFAULT_LOG_BACKUPS, DEFAULT_LOG_MAX_BYTES

    env_option(
        parser,
        "--idle-exit-s",
        env,
        default=0.0,
        type=float,
        help="stop gracefully after this many seconds without clients, streams, runs or calls (0: never; "
        "auto-started daemons get 600)",
    )
    env_option(
        parser,
        "--log-file",
        env,
        default=None,
        metavar="FILE",
        help="log to this file (0600, rotated) instead of stderr",
    )
    env_option(
        parser, "--log-max-bytes", env, default=DEFAULT_LOG_MAX_BYTES, type=int, help="rotate the log file at this size"
    )
    env_option(parser, "--log-backups", env, default=DEFAULT_LOG_BACKUPS, type=int, help="rotated log files kept")


def config_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> Config:
    """Build and validate the daemon's Config.

    Raises:
        ConfigError: a setting is invalid.
    """
    watchdog = env.get("WATCHDOG_USEC", "")
    watchdog_pid = env.get("WATCHDOG_PID", "")
    watchdog_usec = int(watchdog) if watchdog.isdigit() and watchdog_pid in ("", str(os.getpid())) else 0
    return Config(
        workspace=Path(os.path.abspath(args.workspace)),
        socket_path=Path(os.path.abspath(args.socket)) if args.socket else None,
        tcp_address=args.tcp,
        allow_non_loopback=bool(args.allow_non_loopback),
        metrics_address=args.metrics,
        max_message_bytes=int(args.max_message_bytes),
        max_entry_bytes=int(args.max_entry_bytes),
        max_batch_messages=int(args.max_batch_messages),
        max_request_bytes=int(args.max_request_bytes),
        shutdown_grace_s=float(args.shutdown_grace_s),
        busy_timeout_ms=int(args.busy_timeout_ms),
        lease_s=int(args.lease_s),
        watch_stall_s=float(args.watch_stall_s),
        max_watchers=int(args.max_watchers),
        max_watchers_per_peer=int(args.max_watchers_per_peer),
        watch_sends_per_s=float(args.watch_sends_per_s),
        max_open_tool_calls=int(args.max_open_tool_calls),
        retention_days=float(args.retention_days),
        retention_interval_s=float(args.retention_interval_s),
        request_id_retention_s=float(args.request_id_retention_s),
        log_level=str(args.log_level),
        notify_socket=env.get("NOTIFY_SOCKET") or None,
        watchdog_usec=watchdog_usec,
        runtime_dir=env.get("XDG_RUNTIME_DIR") or None,
        idle_exit_s=float(args.idle_exit_s),
        log_file=Path(os.path.abspath(args.log_file)) if args.log_file else None,
        log_max_bytes=int(args.log_max_bytes),
        log_backups=int(args.log_backups),
        registry_dir=_registry_dir(env),
        **backend_fields(args, env),
        **postgres_fields(args),
    ).validate()


def postgres_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The Config fields of :func:`add_postgres_options`."""
    return {
        "pg_pool_min": int(args.pg_pool_min),
        "pg_pool_max": int(args.pg_pool_max),
        "pg_lock_timeout_ms": int(args.pg_lock_timeout_ms),
        "pg_statement_timeout_ms": int(args.pg_statement_timeout_ms),
        "pg_connect_timeout_s": float(args.pg_connect_timeout_s),
    }


def backend_fields(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, Any]:
    """``database_url`` and ``database_record`` of the Config: the workspace's store (``workspace_config``)."""
    url, source = explicit_database(args.database, getattr(args, "database_file", None), env)
    backend = resolve_backend(
        Path(os.path.abspath(args.workspace)), env, (url, source), switch=bool(getattr(args, "switch_backend", False))
    )
    if source == "--database" and backend.database.has_password:
        warn("the --database URL holds a password, visible to other local users in ps; use PGPASSFILE instead")
    if backend.record is not None and backend.database.has_password:
        warn(
            "the password in the URL is not recorded in .claw/config.toml: name where to find it with "
            "'claw-sessiond init --password-file F' (or --password-env NAME), or use PGPASSFILE"
        )
    check_password_file(backend.url, env)
    return {"database_url": backend.url, "database_record": backend.record}


def _registry_dir(env: Mapping[str, str]) -> Path | None:
    from ..lifecycle import default_registry_dir

    return default_registry_dir(env)


def run(args: argparse.Namespace) -> int:
    """Run the daemon in the foreground until it stops; its exit code (2 for a configuration error)."""
    from .. import daemon as server

    env = environ()
    try:
        cfg = config_from_args(args, env)
    except (ConfigError, ValueError) as exc:
        print(visible(f"claw-sessiond: configuration error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    from .. import logs

    try:
        if cfg.log_file is not None and cfg.log_file.parent == cfg.claw_dir:
            cfg.claw_dir.mkdir(mode=0o700, exist_ok=True)
        logs.configure(cfg.log_level, env, cfg.log_file, cfg.log_max_bytes, cfg.log_backups)
    except OSError as exc:
        print(f"claw-sessiond: error: {cfg.log_file}: cannot open the log file: {exc.strerror}", file=sys.stderr)
        return EXIT_FAILURE
    for name in unknown_env_vars(args.known_flags, env):
        warn(f"unknown environment variable {name} (no such option)")
    # A person in front of a terminal gets a line for people; the log (stderr) stays one event a line.
    return server.run(cfg, on_ready=say_ready if sys.stdout.isatty() else None)


def say_ready(daemon: Daemon) -> None:
    """The ready lines for people on stdout: where it serves, its store, how to stop it, what to run next."""
    from ..endpoint import tcp_endpoint

    cfg = daemon.config
    workspace = shlex.quote(str(cfg.workspace))
    tcp = f" and TCP {tcp_endpoint(cfg.tcp_address, daemon.servers.tcp_port)}" if cfg.tcp_address else ""
    lines = [
        f"claw-sessiond ready: pid {os.getpid()} serves {cfg.workspace} on {daemon.socket_path}{tcp}",
        f"  store: {cfg.database.backend} {cfg.store_label}",
        f"  stop:  Ctrl-C here, or: claw-sessiond stop --workspace {workspace}",
        f"  next:  claw-sessiond ls --workspace {workspace}   (in another terminal)",
    ]
    print(visible("\n".join(lines), keep_layout=True), flush=True)
