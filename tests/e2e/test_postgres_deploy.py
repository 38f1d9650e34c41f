"""PostgreSQL as operators deploy it: PgBouncer, multi-host URLs, TLS, pool size, ``migrate-db`` (docs/postgres.md).

- behind a real PgBouncer (Debian's package, ``tests/helpers/pgbouncer.py``) in session mode with its default
  configuration, two daemons share sessions and a Watch on one sees the other's appends (LISTEN through it),
  and a run's lease holds across them and ends when its daemon is killed;
- behind transaction or statement pooling the daemon refuses to start, saying which mode and why;
- a multi-host URL whose first host is dead reaches the second (``target_session_attrs=read-write``), and
  when every host is dead the error names them all;
- ``sslmode=require`` against the tests' server (no TLS) says the server does not support TLS; against a
  server with a self-signed certificate it works, and ``verify-full`` with another root certificate says the
  certificate was not accepted;
- ``--pg-pool-min``/``--pg-pool-max`` bound the daemon's server sessions (counted in ``pg_stat_activity``);
  a bad value is one configuration line, exit 2;
- ``migrate-db`` migrates an empty database and one an older claw-sessiond wrote (a daemon then reads what
  was stored), changes nothing the second time, refuses a newer schema, and needs a PostgreSQL database.

Real daemons and the CLI as subprocesses, the test process's throwaway PostgreSQL server.
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from claw_sessiond.storage.postgres import schema
from claw_sessiond_client import Message, ToolCall
from tests.helpers.daemon import free_port
from tests.helpers.pgbouncer import throwaway_pgbouncer
from tests.helpers.postgres import PASSWORD, ROLE, require_server, throwaway_postgres
from tests.helpers.postgres import SHARED as POSTGRES

pytestmark = pytest.mark.backend_neutral("picks its PostgreSQL databases and servers itself")


def _database(tmp_path: Path) -> str:
    """A database of this test; its name."""
    return POSTGRES.database_for(str(tmp_path / "db")).split("/")[-1].split("?")[0]


def _cli(workspace: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "claw_sessiond", *args, "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        timeout=90,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def _workspaces(tmp_path: Path, *names: str) -> list[Path]:
    found = []
    for name in names:
        (tmp_path / name).mkdir()
        found.append(tmp_path / name)
    return found


def test_two_daemons_behind_pgbouncer_in_session_mode_share_sessions_and_watch(
    tmp_path: Path, spawn_daemon: Any
) -> None:
    database = _database(tmp_path)
    ws_a, ws_b = _workspaces(tmp_path, "a", "b")
    # PgBouncer's default configuration: it refuses start-up parameters it does not track (search_path ...).
    with throwaway_pgbouncer(POSTGRES.server(), "session") as bouncer:
        a = spawn_daemon("--database", bouncer.url(database), workspace_path=ws_a)
        b = spawn_daemon("--database", bouncer.url(database), workspace_path=ws_b)
        seen: list[str] = []
        watching = threading.Event()
        with a.client() as ca, b.client() as cb, b.client() as cb_watch:
            ca.append("s", Message.user("first"))

            def follow() -> None:
                for event in cb_watch.watch("s"):
                    watching.set()
                    seen.append(event.message.content if event.message else "")
                    if len(seen) == 3:
                        return

            thread = threading.Thread(target=follow, daemon=True)
            thread.start()
            assert watching.wait(20), "B's Watch delivered nothing"
            ca.append("s", [Message.user("second"), Message.assistant("third")])
            thread.join(20)
            assert seen == ["first", "second", "third"], seen
            assert [m.content for m in cb.load("s").messages] == ["first", "second", "third"]
            cb.append("s", Message.user("fourth"), expected_last_position=3)
            assert ca.load("s").session.last_position == 4
        a.stop()
        b.stop()


def test_runs_across_daemons_behind_pgbouncer_hold_and_end_with_a_killed_daemon(
    tmp_path: Path, spawn_daemon: Any
) -> None:
    """The lease through PgBouncer: a live run's call is not repaired on the other daemon; once its daemon is
    killed, PgBouncer's reset of the server session (DISCARD ALL) releases the lease's advisory lock and the
    call is repaired well within the 30 s lease."""
    database = _database(tmp_path)
    ws_a, ws_b = _workspaces(tmp_path, "a", "b")
    with throwaway_pgbouncer(POSTGRES.server(), "session") as bouncer:
        a = spawn_daemon("--database", bouncer.url(database), "--lease-s", "30", workspace_path=ws_a)
        b = spawn_daemon("--database", bouncer.url(database), "--lease-s", "30", workspace_path=ws_b)
        with b.client() as cb:
            ca = a.client()
            with ca.attach("s", label="owner") as run:
                call = Message.assistant(tool_calls=[ToolCall("call_1", "bash", '{"cmd": "ls"}')])
                ca.append("s", [Message.user("list the files"), call], run_id=run.run_id)
                loaded = cb.load("s", "/tmp")
                assert loaded.repairs == [] and [c.tool_call_id for c in loaded.in_flight] == ["call_1"]
                assert a.proc is not None
                os.kill(a.proc.pid, signal.SIGKILL)
                began = time.monotonic()
                repaired: list[str] = []
                while not repaired and time.monotonic() - began < 15:
                    repaired = [r.tool_call_id for r in cb.load("s", "/tmp").repairs]
                    time.sleep(0.1)
            ca.close()
            a.proc.wait(10)
        assert repaired == ["call_1"], "the killed daemon's run still held its call after 15 s (lease 30 s)"
        b.stop()


@pytest.mark.parametrize("mode", ["transaction", "statement"])
def test_transaction_and_statement_pooling_are_refused_at_start(tmp_path: Path, workspace: Path, mode: str) -> None:
    database = _database(tmp_path)
    with throwaway_pgbouncer(POSTGRES.server(), mode) as bouncer:
        done = _cli(workspace, "serve", "--database", bouncer.url(database))
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "transaction or statement mode" in out and "pool_mode = session" in out, out
    assert "Traceback" not in out, out
    assert not (workspace / ".claw" / "sessions.db").exists()


def test_a_multi_host_url_fails_over_past_a_dead_host(tmp_path: Path, spawn_daemon: Any, workspace: Path) -> None:
    database = _database(tmp_path)
    port, dead = POSTGRES.server().port, free_port()
    url = f"postgresql://{ROLE}@127.0.0.1:{dead},127.0.0.1:{port}/{database}?target_session_attrs=read-write"
    daemon = spawn_daemon("--database", url, env={"PGPASSWORD": PASSWORD})
    with daemon.client() as c:
        c.append("s", Message.user("over the second host"))
        assert [m.content for m in c.load("s").messages] == ["over the second host"]
    daemon.stop()
    both_dead = f"postgresql://{ROLE}@127.0.0.1:{dead},127.0.0.1:{free_port()}/{database}"
    # Another workspace: this one records the first URL now (.claw/config.toml), and another is a mismatch.
    (fresh,) = _workspaces(tmp_path, "fresh")
    done = _cli(fresh, "serve", "--database", both_dead, "--pg-connect-timeout-s", "5")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert f"127.0.0.1:{dead},127.0.0.1:" in out and "cannot connect" in out, out
    assert "Traceback" not in out, out


def test_sslmode_require_against_a_server_without_tls_says_so(tmp_path: Path, workspace: Path) -> None:
    database = _database(tmp_path)
    url = f"postgresql://{ROLE}@127.0.0.1:{POSTGRES.server().port}/{database}?sslmode=require"
    done = _cli(workspace, "serve", "--database", url, env={"PGPASSWORD": PASSWORD})
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "TLS: the server does not support TLS" in out and "sslmode" in out, out
    assert "Traceback" not in out and PASSWORD not in out, out


def _self_signed(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and its key (``openssl``, which the postgresql package pulls in)."""
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    request = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost"]
    subprocess.run([*request, "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    key.chmod(0o600)
    return cert, key


def test_tls_failures_say_what_failed(spawn_daemon: Any, workspace: Path) -> None:
    # Outside the test's tmp_path: the server (the postgres user when we are root) must reach the files.
    certs = Path(tempfile.mkdtemp(prefix="claw-tls-"))
    try:
        cert, key = _self_signed(certs, "server")
        other, _ = _self_signed(certs, "other")
        if os.geteuid() == 0:  # the server runs as postgres and must own its key
            entry = pwd.getpwnam("postgres")
            for path in (certs, cert, key):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        options = f"-c ssl=on -c ssl_cert_file={cert} -c ssl_key_file={key}"
        with throwaway_postgres(require_server(), extra_options=options) as server:
            server.psql("CREATE DATABASE tls")
            base = f"postgresql://{ROLE}@localhost:{server.port}/tls"
            daemon = spawn_daemon("--database", f"{base}?sslmode=require", env={"PGPASSWORD": PASSWORD})
            with daemon.client() as c:
                c.append("s", Message.user("over TLS"))
            daemon.stop()
            assert server.psql("SELECT count(*) FROM claw_sessiond.sessions", "tls") == "1"
            verify = f"{base}?sslmode=verify-full&sslrootcert={other}"
            done = _cli(workspace, "serve", "--database", verify, env={"PGPASSWORD": PASSWORD})
    finally:
        shutil.rmtree(certs, ignore_errors=True)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "TLS: the server's certificate was not accepted" in out, out
    assert "Traceback" not in out and PASSWORD not in out, out


def test_pool_size_flags_bound_the_daemons_server_sessions(tmp_path: Path, spawn_daemon: Any) -> None:
    url = POSTGRES.database_for(str(tmp_path / "db"))
    # The maximum through its environment variable, the minimum as a flag: both ways reach the pool.
    daemon = spawn_daemon("--database", url, "--pg-pool-min", "3", env={"CLAW_SESSIOND_PG_POOL_MAX": "3"})
    assert daemon.proc is not None
    pid = daemon.proc.pid
    # The pool opens its minimum at start; the lease and LISTEN connections come on top (the start-up check's
    # two connections are closed by then; their server sessions end within the bound).
    end = time.monotonic() + 10
    while POSTGRES.sessions_of(pid) != 3 + 2 and time.monotonic() < end:
        time.sleep(0.05)
    assert POSTGRES.sessions_of(pid) == 3 + 2
    with daemon.client() as c:
        c.append("s", Message.user("hello"))
    clients = [daemon.client() for _ in range(12)]
    peak = 0
    try:
        stop = threading.Event()

        def load(client: Any) -> None:
            while not stop.is_set():
                client.load("s")

        threads = [threading.Thread(target=load, args=(c,), daemon=True) for c in clients]
        for t in threads:
            t.start()
        end = time.monotonic() + 3
        while time.monotonic() < end:
            peak = max(peak, POSTGRES.sessions_of(pid))
        stop.set()
        for t in threads:
            t.join(20)
    finally:
        for c in clients:
            c.close()
    assert peak == 3 + 2, f"{peak} server sessions with --pg-pool-max 3"
    daemon.stop()


def test_a_bad_pool_or_timeout_flag_is_one_configuration_line(workspace: Path) -> None:
    for args in (["--pg-pool-max", "0"], ["--pg-pool-min", "5", "--pg-pool-max", "2"], ["--pg-lock-timeout-ms", "0"]):
        done = _cli(workspace, "serve", "--database", "postgresql://claw@127.0.0.1:1/x", *args)
        out = done.stdout + done.stderr
        assert done.returncode == 2, out
        assert out.startswith("claw-sessiond: configuration error: pg_") and out.count("\n") == 1, out


async def _older_schema(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What claw-sessiond at schema version 1 wrote: the version-1 tables and one session."""
    conn = await asyncpg.connect(url)
    try:
        with monkeypatch.context() as patch:
            patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
            patch.setattr(schema, "SCHEMA_VERSION", 1)
            assert len(await schema.migrate(conn)) == 1
        await conn.execute(
            f"INSERT INTO {schema.SCHEMA}.sessions(session_id, workdir, created_at, updated_at, incarnation) "
            "VALUES ('old', '/w', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'i1')"
        )
    finally:
        await conn.close()


def test_migrate_db_on_an_empty_and_on_an_older_database(
    tmp_path: Path, workspace: Path, spawn_daemon: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = [m.name for m in schema.MIGRATIONS]
    empty = POSTGRES.empty_database_for(str(tmp_path / "empty"))
    done = _cli(workspace, "migrate-db", "--database", empty, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["version_before"], report["version"], report["applied"]) == (0, schema.SCHEMA_VERSION, every)
    again = _cli(workspace, "migrate-db", "--database", empty)
    assert again.returncode == 0 and "up to date, nothing applied" in again.stdout, again.stdout + again.stderr

    older = POSTGRES.empty_database_for(str(tmp_path / "older"))
    asyncio.run(_older_schema(older, monkeypatch))
    done = _cli(workspace, "migrate-db", env={"CLAW_DATABASE_URL": older})
    assert done.returncode == 0, done.stderr
    assert f"schema version 1 -> {schema.SCHEMA_VERSION}: applied {', '.join(every[1:])}" in done.stdout, done.stdout
    daemon = spawn_daemon("--database", older)
    with daemon.client() as c:
        created = c.load("old").session.created_at
        assert created is not None and created.year == 2026
        c.append("old", Message.user("after the upgrade"))
    daemon.stop()

    POSTGRES.server().psql(
        f"INSERT INTO {schema.SCHEMA}.schema_migrations(version, name) VALUES ({schema.SCHEMA_VERSION + 1}, 'later')",
        older.split("/")[-1].split("?")[0],
    )
    newer = _cli(workspace, "migrate-db", "--database", older)
    assert newer.returncode == 1, newer.stdout + newer.stderr
    assert "newer than this claw-sessiond" in newer.stderr and "Traceback" not in newer.stderr, newer.stderr

    # The workspace records its PostgreSQL database now (the daemon above served it); a SQLite one has none.
    (plain,) = _workspaces(tmp_path, "plain")
    sqlite_only = _cli(plain, "migrate-db")
    assert sqlite_only.returncode == 2 and "no PostgreSQL database is configured" in sqlite_only.stderr
    unparsable = _cli(workspace, "migrate-db", "--database", "postgresql://[::1/x")
    assert unparsable.returncode == 2 and "configuration error" in unparsable.stderr, unparsable.stderr
    assert "Traceback" not in unparsable.stderr
