"""A SIGKILLed daemon on PostgreSQL: the COMMIT it sent just before the kill lands after it (issue 17, Status item 6).

On SQLite a SIGKILL ends every write of the daemon at once: the commit runs in its process. On
PostgreSQL it runs in the server's session for the daemon's connection, which finishes the
statement it was given (a COMMIT waiting for its WAL flush; for a plain append, the implicit
commit of its one ``append_batch`` statement, schema version 5) before it notices that the client
is gone. So "the daemon is dead" is not yet "the database no longer changes": a check read in
that window (``tests/e2e/test_edit_crash.py`` reads the events, then the session row, in two
snapshots) saw an edit's count change without its events, a ``message_count`` one off from the
visible entries. ``DaemonProcess.kill`` therefore waits until the server has ended the killed
daemon's sessions.

Here the window is held open on purpose: the server is told that every commit must wait for a
synchronous standby that never comes (``synchronous_standby_names``); a commit then waits flushed
but not yet visible, exactly where a slow WAL flush leaves it.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from claw_sessiond_client import Message
from tests.helpers.daemon import DaemonProcess
from tests.helpers.inspect_postgres import PostgresStored
from tests.helpers.postgres import ROLE, Server
from tests.helpers.postgres import SHARED as POSTGRES

pytestmark = pytest.mark.backend_neutral("picks its PostgreSQL server itself")

_PROBE = "claw-test-commit-probe"
_PROBE_WAITING = f"application_name = '{_PROBE}' AND wait_event = 'SyncRep'"


def _wait_for(what: str, check: Callable[[], bool], timeout_s: float = 20.0) -> None:
    end = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < end, f"not within {timeout_s:.0f}s: {what}"
        time.sleep(0.05)


def _commit_waits(server: Server) -> bool:
    """True if a write's COMMIT now waits for the (missing) standby: a probe's stays in ``SyncRep``, and is
    then cancelled (its transaction was flushed already; a cancelled wait only warns)."""
    probe = subprocess.Popen(
        [
            str(server.data_dir.parent / "psql"),
            "-X",
            "-q",
            "-h",
            str(server.socket_dir),
            "-p",
            str(server.port),
            "-U",
            ROLE,
            "-d",
            "postgres",
            "-c",
            "CREATE TEMP TABLE claw_probe (x int)",  # writes WAL, so its COMMIT is one that waits
        ],
        env={**os.environ, "PGAPPNAME": _PROBE},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        end = time.monotonic() + 2.0
        while probe.poll() is None and time.monotonic() < end:
            if server.psql(f"SELECT count(*) FROM pg_stat_activity WHERE {_PROBE_WAITING}") != "0":
                return True
            time.sleep(0.05)
        return False
    finally:
        server.psql(f"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '{_PROBE}'")
        probe.wait(30)


@contextmanager
def commits_held(server: Server) -> Iterator[Callable[[], None]]:
    """Every COMMIT on the server waits (flushed, not yet visible) until the returned function is called."""

    def release() -> None:
        server.psql("ALTER SYSTEM RESET synchronous_standby_names")
        server.psql("SELECT pg_reload_conf()")
        _wait_for("commits released", lambda: not _commit_waits(server))

    server.psql("ALTER SYSTEM SET synchronous_standby_names = 'claw_test_no_such_standby'")
    server.psql("SELECT pg_reload_conf()")
    try:
        _wait_for("commits held", lambda: _commit_waits(server))
        yield release
    finally:
        release()


def test_a_commit_sent_before_a_sigkill_lands_after_it_and_kill_waits_for_it(tmp_path: Path) -> None:
    server = POSTGRES.server()
    url = POSTGRES.database_for(str(tmp_path / "db"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = PostgresStored(url)
    daemon = DaemonProcess(workspace, "--database", url).start()
    assert daemon.proc is not None
    pid = daemon.proc.pid

    def counts() -> tuple[int, int]:
        [row] = store.sessions()
        return row.message_count, len([e for e in store.events("s") if e.position is not None])

    try:
        with daemon.client() as c:
            c.append("s", [Message.user("one")], workdir="/w")
        assert counts() == (1, 1)
        with commits_held(server) as release:
            outcome: list[object] = []

            def append_two() -> None:  # its reply never comes: the daemon dies first
                try:
                    with daemon.client(timeout_s=60, retry_window_s=0) as c:
                        outcome.append(c.append("s", [Message.user("two")], workdir="/w", request_id="two"))
                except Exception as exc:  # whatever the client says of a dead daemon
                    outcome.append(exc)

            writer = threading.Thread(target=append_two)
            writer.start()
            held = (
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                f"'claw-sessiond {pid}' AND wait_event = 'SyncRep' "
                "AND (query ILIKE 'COMMIT%' OR query ILIKE '%append_batch(%')"
            )
            _wait_for("the append's COMMIT waiting in the server", lambda: server.psql(held) != "0")
            killing = threading.Thread(target=daemon.kill)
            killing.start()
            _wait_for("the daemon process gone", lambda: daemon.proc is not None and daemon.proc.poll() is not None)
            killing.join(1.0)
            assert killing.is_alive(), "kill() returned while the dead daemon's COMMIT still ran in the server"
            assert counts() == (1, 1)  # not visible yet
            release()
            killing.join(30)
            assert not killing.is_alive()
            # The dead daemon's COMMIT landed after the SIGKILL, and kill() returned only once it had.
            assert counts() == (2, 2)
            assert POSTGRES.sessions_of(pid) == 0
            writer.join(60)
            assert outcome and isinstance(outcome[0], Exception), f"the append was acknowledged: {outcome}"
    finally:
        daemon.stop()
