"""The daemon process: ``.claw/``, lock, database, sd_notify, signals, background tasks, graceful stop.

Start-up order matters (SPEC §7):

1. umask 077 and ``.claw/`` at 0700 (refused if another user owns it or
   others can write in it); the lock, database and socket are opened without
   following links (:mod:`claw_sessiond.claw_dir`: the checks every writer
   of a workspace runs);
2. an exclusive ``flock`` on ``.claw/sessiond.lock`` *before* touching the
   socket (grpcio would silently take over a live daemon's socket path);
3. the database checked read-only, then opened, migrated, WAL verified;
4. a stale socket file removed only if it is a socket, then bind, chmod 0600;
5. ``.claw/endpoint.json`` written (where it listens: :mod:`claw_sessiond.endpoint`);
6. ``READY=1`` to systemd.

Building and binding the gRPC servers (step 4, health, reflection) is
:mod:`claw_sessiond.rpc.server`; this module never imports grpc.

Once READY the daemon registers itself for ``status``/``stop`` and, with
``--idle-exit-s``, watches for idleness (:mod:`claw_sessiond.lifecycle`).

Stop (SIGTERM/SIGINT, or idle exit): ``STOPPING=1``, health NOT_SERVING, new calls get
UNAVAILABLE, in-flight calls finish within the grace period, the writer
drains and checkpoints the WAL (TRUNCATE), the socket and the endpoint file
are removed, the lock is released, exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from claw_sessiond_client.paths import folder_problem

from . import erasure, idempotency, lifecycle, limits, logs, retention
from . import metrics as metrics_http
from .claw_dir import acquire_lock, claim_workspace
from .config import Config, describe_store
from .endpoint import endpoint_record, remove_endpoint, tcp_endpoint, write_endpoint
from .errors import LockHeldError, SessiondError, StartupError, StorageError
from .metrics import Metrics
from .rpc.idle import IdleTracker
from .rpc.server import Servers
from .rpc.service import SessionService
from .storage import Checkpointing, Storage, open_storage
from .watch import WatchHub

__all__ = ["Daemon", "LockHeldError", "Notifier", "StartupError", "acquire_lock", "run", "start"]

# The logger keeps the name it had when this was server.py: log lines (and tests of them) stay the same.
_log = logging.getLogger("claw_sessiond.server")


# ---------------------------------------------------------------- sd_notify


class Notifier:
    """Sends sd_notify datagrams to ``$NOTIFY_SOCKET`` (no-op without it)."""

    def __init__(self, address: str | None) -> None:
        self._address = address
        self._sock: socket.socket | None = None
        if address:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    def send(self, *lines: str) -> None:
        """Send ``KEY=value`` lines as one datagram; failures are logged, never fatal."""
        if self._sock is None or not self._address:
            return
        target = "\0" + self._address[1:] if self._address.startswith("@") else self._address
        try:
            self._sock.sendto("\n".join(lines).encode(), target)
        except OSError as exc:
            _log.warning("event=notify_failed error=%s", exc)

    def close(self) -> None:
        """Close the datagram socket."""
        if self._sock is not None:
            self._sock.close()


@dataclass
class Daemon:
    """A running daemon: what ``start`` built and ``stop`` tears down."""

    config: Config
    store: Storage
    servers: Servers
    service: SessionService
    lock_fd: int
    socket_path: Path
    socket_inode: int
    notifier: Notifier
    metrics: Metrics | None = None
    idle: IdleTracker | None = None
    retention_clock: retention.ClockCheck | None = None

    async def stop(self) -> None:
        """Graceful stop (see the module docstring)."""
        self.notifier.send("STOPPING=1", "STATUS=stopping: finishing in-flight calls")
        _log.info("event=stopping grace_s=%s", self.config.shutdown_grace_s)
        self.service.draining = True
        await self.servers.enter_graceful_shutdown()
        self.service.owners.end_all()
        self.service.close_watches()
        self.service.end_append_streams()
        began = time.monotonic()
        await self.servers.stop(self.config.shutdown_grace_s)
        _log.info("event=calls_finished ms=%d", (time.monotonic() - began) * 1000)
        await self.store.close()
        _log.info("event=storage_closed ms=%d", (time.monotonic() - began) * 1000)
        with contextlib.suppress(FileNotFoundError):
            if self.socket_path.lstat().st_ino == self.socket_inode:
                self.socket_path.unlink()
        remove_endpoint(self.config.claw_dir)
        os.close(self.lock_fd)
        self.notifier.close()
        _log.info("event=stopped")


async def start(cfg: Config, notifier: Notifier | None = None) -> Daemon:
    """Bring the daemon up to READY (see the module docstring).

    Raises:
        StartupError: lock held, bad socket path, storage broken or read-only.
    """
    notifier = notifier or Notifier(cfg.notify_socket)
    os.umask(0o077)
    # Refuse a squatted socket folder before anything is created or written (.claw/, lock, database).
    sock_problem = folder_problem(cfg.effective_socket_path.parent, {os.getuid()})
    if sock_problem is not None:
        raise StartupError(sock_problem)
    # The checks every writer of a workspace runs (:mod:`claw_sessiond.claw_dir`), then the lock.
    lock_fd = claim_workspace(cfg.claw_dir, create=True)
    try:
        notifier.send("STATUS=lock held; opening database")
        try:
            store = await open_storage(cfg)
        except StorageError as exc:
            raise StartupError(exc.message) from exc
        if store.applied_migrations:
            _log.info('event=migrated steps="%s"', ",".join(store.applied_migrations))
        try:
            if cfg.database_record is not None:
                _record_backend(cfg)
            daemon = await _serve_store(cfg, store, lock_fd, notifier)
        except BaseException:
            await store.close()
            raise
    except BaseException:
        os.close(lock_fd)
        raise
    notifier.send("READY=1", f"STATUS=serving on {daemon.socket_path}", f"MAINPID={os.getpid()}")
    _log.info(
        "event=ready socket=%s pid=%d backend=%s database=%s",
        daemon.socket_path,
        os.getpid(),
        cfg.database.backend,
        cfg.store_label,
    )
    return daemon


def _record_backend(cfg: Config) -> None:
    """Record the store just opened in ``.claw/config.toml`` (first use of a URL, or a switch); under the lock.

    Raises:
        StartupError: the file cannot be written (the caller closes the store).
    """
    from .workspace_config import write_workspace_config

    assert cfg.database_record is not None
    try:
        path = write_workspace_config(cfg.claw_dir, cfg.database_record)
    except OSError as exc:
        raise StartupError(f"{cfg.claw_dir}/config.toml: cannot write: {exc.strerror}") from exc
    _log.info("event=backend_recorded file=%s backend=%s database=%s", path, cfg.database.backend, cfg.store_label)


async def _serve_store(cfg: Config, store: Storage, lock_fd: int, notifier: Notifier) -> Daemon:
    owners = store.runs
    watch_hub = WatchHub(cfg.max_watchers, cfg.watch_sends_per_s, cfg.max_watchers_per_peer)
    # Commits only wake watchers; each watcher reads what it missed from the database.
    store.subscribe(watch_hub)
    service = SessionService(store, cfg, owners, watch_hub)
    metrics = Metrics(
        store,
        active_runs=owners.count,
        active_watchers=watch_hub.count,
        store_info=(cfg.database.backend, cfg.store_label),
        exposed=bool(cfg.metrics_address),
    )
    service.rpc_observers.append(metrics.observe_rpc)
    store.counters.commit_observers.append(metrics.observe_commit)
    service.stats_extra = metrics.stats
    idle = IdleTracker(owners.count)
    servers = Servers(cfg, service, idle)
    sock = cfg.effective_socket_path
    socket_inode = servers.bind_unix(sock)
    if cfg.tcp_address:
        servers.bind_tcp(cfg.tcp_address)
    # The store's newest change before this daemon writes anything: retention checks its clock against it.
    clock = await retention.clock_check(store) if cfg.retention_days > 0 else None
    await servers.start()
    # Where this daemon listens, for every client (docs/PROTOCOL.md "Discovery"); written once it serves.
    record = endpoint_record(cfg.workspace, sock, tcp_endpoint(cfg.tcp_address, servers.tcp_port))
    try:
        write_endpoint(cfg.claw_dir, record)
    except OSError as exc:
        await servers.stop(0)
        raise StartupError(f"{cfg.claw_dir / 'endpoint.json'}: cannot write: {exc.strerror}") from exc
    return Daemon(cfg, store, servers, service, lock_fd, sock, socket_inode, notifier, metrics, idle, clock)


async def _history_tasks(daemon: Daemon) -> list[asyncio.Task[None]]:
    """Start the erasure retry, and the metrics endpoint and the retention sweep as configured.

    Raises:
        StartupError: the metrics address cannot be bound.
    """
    cfg, tasks = daemon.config, []
    if isinstance(daemon.store, Checkpointing):  # erased bytes may linger in its files until a checkpoint
        tasks.append(asyncio.create_task(erasure.run(daemon.store.erasures, daemon.store.checkpoint)))
    if cfg.metrics_address and daemon.metrics is not None:
        try:
            endpoint = await metrics_http.listen(daemon.metrics, cfg.metrics_address)
        except OSError as exc:
            raise StartupError(f"metrics {cfg.metrics_address}: cannot bind: {exc.strerror or exc}") from exc
        tasks.append(asyncio.create_task(metrics_http.hold(endpoint)))
    if cfg.request_id_retention_s > 0:
        tasks.append(asyncio.create_task(idempotency.run(daemon.store, cfg.request_id_retention_s)))
    if cfg.retention_days > 0:
        _log.info("event=retention_on days=%s interval_s=%s", cfg.retention_days, cfg.retention_interval_s)
        tasks.append(
            asyncio.create_task(
                retention.run(
                    daemon.store,
                    cfg.retention_days,
                    cfg.retention_interval_s,
                    daemon.retention_clock,
                    daemon.service.written,
                )
            )
        )
    return tasks


async def _watchdog(notifier: Notifier, interval_s: float) -> None:
    while True:
        notifier.send("WATCHDOG=1")
        await asyncio.sleep(interval_s)


async def _main(cfg: Config, on_ready: Callable[[Daemon], None] | None = None) -> int:
    limits.raise_nofile_limit()  # a flood of local connections must not starve the database of descriptors
    limits.install_loop_error_throttle(asyncio.get_running_loop())
    notifier = Notifier(cfg.notify_socket)
    try:
        daemon = await start(cfg, notifier)
    except (StartupError, SessiondError) as exc:
        # `systemctl status` shows the last STATUS= line: make it the reason.
        notifier.send(f"STATUS=failed: {getattr(exc, 'message', None) or exc}")
        notifier.close()
        raise
    limits.settle_collector()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tasks = []
    if cfg.watchdog_usec:
        tasks.append(asyncio.create_task(_watchdog(notifier, cfg.watchdog_usec / 2_000_000)))
    try:
        tasks.extend(await _history_tasks(daemon))
    except StartupError:
        for task in tasks:
            task.cancel()
        await daemon.stop()
        raise
    tasks.append(asyncio.create_task(_lifecycle(daemon, stop.set)))
    if on_ready is not None:
        on_ready(daemon)
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)  # a retention sweep ends before the store closes
    await daemon.stop()
    return 0


async def _lifecycle(daemon: Daemon, stop: Callable[[], None]) -> None:
    """Registry record for ``status``/``stop``, and idle exit (:mod:`claw_sessiond.lifecycle`)."""
    cfg = daemon.config

    def begin_drain() -> None:
        daemon.service.draining = True

    await lifecycle.run(
        workspace=cfg.workspace,
        socket_path=daemon.socket_path,
        lock_path=cfg.lock_path,
        registry=cfg.registry_dir,
        idle_exit_s=cfg.idle_exit_s,
        log_file=cfg.log_file,
        database=describe_store(cfg.database_url if cfg.uses_postgres else "", cfg.db_path),
        tracker=daemon.idle,
        begin_drain=begin_drain,
        stop=stop,
    )


def run(cfg: Config, on_ready: Callable[[Daemon], None] | None = None) -> int:
    """Run the daemon until SIGTERM/SIGINT; return the exit code. ``on_ready`` is called once it serves."""
    try:
        return asyncio.run(_main(cfg, on_ready))
    except StartupError as exc:
        print(f"claw-sessiond: error: {exc}", file=sys.stderr)
        logs.log_startup_failure(str(exc))
        return 1
    except SessiondError as exc:
        print(f"claw-sessiond: error: {exc.message}", file=sys.stderr)
        logs.log_startup_failure(exc.message)
        return 1
