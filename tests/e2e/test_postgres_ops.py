"""Operating a workspace whose store is a PostgreSQL database, with its daemon down (issue 17, docs/postgres.md).

- ``search``, ``usage`` and ``stats`` read the configured database: the one ``.claw/config.toml``
  records, or the one ``CLAW_DATABASE_URL`` names (a SQLite file beside it is refused:
  ``test_postgres_offline.py``);
- ``backup`` and ``restore`` refuse, naming ``pg_dump`` and the database (never the password), exit 1,
  and write nothing (no FILE, no file in ``.claw/``); a running daemon refuses the Backup RPC too
  (FAILED_PRECONDITION, reason STORAGE_UNAVAILABLE: its storage has no ``BackingUp``), and reports no
  pending erasure (nothing lingers after a delete: no ``Checkpointing``);
- ``doctor`` checks that database, each a line: it answers (host named, password never shown), its
  schema version against this build's, the durability settings (a private server started with
  ``fsync``, ``full_page_writes`` and ``synchronous_commit`` off; a per-role setting on the shared one)
  and the privileges the daemon needs (a role without them).

Real daemons, the CLI as a subprocess, the throwaway PostgreSQL server (``tests/helpers/postgres.py``).
"""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import pytest

from claw_sessiond.storage.postgres.schema import SCHEMA_VERSION
from claw_sessiond_client import Message, StorageUnavailableError
from tests.helpers.cli import in_workspace
from tests.helpers.daemon import DaemonProcess
from tests.helpers.postgres import PASSWORD, require_server, throwaway_postgres
from tests.helpers.postgres import SHARED as POSTGRES

pytestmark = pytest.mark.backend_neutral("picks its PostgreSQL databases and servers itself")


NO_URL = {"CLAW_DATABASE_URL": ""}


def _postgres_workspace(tmp_path: Path, url: str) -> Path:
    """A workspace first served with ``url`` (so ``.claw/config.toml`` records it; no SQLite file), whose
    database holds ``in-postgres`` (a parser message, usage recorded), its daemon stopped."""
    ws = tmp_path / "ws"
    ws.mkdir()
    on_pg = DaemonProcess(ws, env={"CLAW_DATABASE_URL": url})
    on_pg.start()
    with on_pg.client() as c:
        c.append("in-postgres", Message.user("the parser in postgres"))
        c.record_usage("in-postgres", input_tokens=1000, model="pg-model", cost_micros=5, currency="USD")
    on_pg.stop()
    assert (ws / ".claw" / "config.toml").exists() and not (ws / ".claw" / "sessions.db").exists()
    return ws


def _bare_workspace(tmp_path: Path) -> Path:
    """A workspace that records nothing and holds no database file: ``CLAW_DATABASE_URL`` names its store."""
    ws = tmp_path / "bare"
    (ws / ".claw").mkdir(parents=True, mode=0o700)
    return ws


def _checks(ws: Path, env: dict[str, str]) -> tuple[int, dict[str, dict[str, str]], str]:
    """doctor --json: its exit code, its checks by name, and its whole output."""
    proc = in_workspace(ws, "doctor", "--json", env=env)
    checks = {c["check"]: c for c in json.loads(proc.stdout)["checks"]}
    return proc.returncode, checks, proc.stdout + proc.stderr


def test_search_usage_and_stats_read_the_configured_database_with_the_daemon_down(tmp_path: Path) -> None:
    url = POSTGRES.database_for(str(tmp_path / "db"))
    recorded = _postgres_workspace(tmp_path, url)
    pg = {"CLAW_DATABASE_URL": url}

    # The recorded database, and the same one named by the environment in a workspace that records nothing.
    for ws, env in ((recorded, NO_URL), (recorded, pg), (_bare_workspace(tmp_path), pg)):
        found = in_workspace(ws, "search", "parser", "--json", env=env)
        assert found.returncode == 0, found.stderr
        assert "read-only view of postgresql://" in found.stderr
        assert [h["session_id"] for h in json.loads(found.stdout)["hits"]] == ["in-postgres"]
        bad = in_workspace(ws, "search", "parser", "--session", "no such/id", env=env)  # refused as the daemon would
        assert bad.returncode == 2 and "session" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr

        usage = in_workspace(ws, "usage", "--json", env=env)
        assert usage.returncode == 0, usage.stderr
        assert "pg-model" in usage.stdout, usage.stdout

        stats = in_workspace(ws, "stats", "--json", env=env)
        assert stats.returncode == 0, stats.stderr
        figures = json.loads(stats.stdout)["stats"]
        assert "read-only view of postgresql://" in stats.stderr
        assert figures["sessions"] == 1 and figures["schema_version"] == SCHEMA_VERSION, figures
        assert not (ws / ".claw" / "sessions.db").exists() and not (ws / ".claw" / "sessions.db-wal").exists()

        # follow needs the daemon: it says so, it reads nothing.
        follow = in_workspace(ws, "follow", "in-postgres", env=env, timeout_s=30)
        assert follow.returncode == 1 and "Traceback" not in follow.stderr


def test_backup_and_restore_refuse_a_postgres_workspace_and_write_nothing(tmp_path: Path) -> None:
    server = POSTGRES.server()
    url = POSTGRES.database_for(str(tmp_path / "db"))
    recorded = _postgres_workspace(tmp_path, url)
    bare = _bare_workspace(tmp_path)
    backup_file = tmp_path / "copy.db"
    # The password in the URL (a TCP one) must not be echoed.
    tcp = server.tcp_url(url.split("/")[-1].split("?")[0])
    cases = ((recorded, NO_URL), (recorded, {"CLAW_DATABASE_URL": url}), (bare, {"CLAW_DATABASE_URL": tcp}))
    before = {ws: sorted(p.name for p in (ws / ".claw").iterdir()) for ws in (recorded, bare)}
    for ws, env in cases:
        made = in_workspace(ws, "backup", str(backup_file), env=env)
        assert made.returncode == 1, made.stdout
        assert "pg_dump" in made.stderr and "PostgreSQL database postgresql://" in made.stderr, made.stderr
        assert PASSWORD not in made.stderr + made.stdout
        assert not backup_file.exists() and not list(tmp_path.glob(".copy.db.*"))
        as_json = in_workspace(ws, "backup", str(backup_file), "--json", env=env)
        assert as_json.returncode == 1 and "pg_dump" in json.loads(as_json.stdout)["error"]["message"]

    # A real SQLite backup to offer restore: made in a workspace of its own (a SQLite one).
    on_file = tmp_path / "on-file"
    on_file.mkdir()
    DaemonProcess(on_file, env=NO_URL).start().stop()
    made = in_workspace(on_file, "backup", str(backup_file), env=NO_URL)
    assert made.returncode == 0, made.stderr
    for ws, env in cases:
        put = in_workspace(ws, "restore", str(backup_file), "--force", env=env)
        assert put.returncode == 1, put.stdout
        assert "pg_dump" in put.stderr and "nothing was written" in put.stderr, put.stderr
        assert PASSWORD not in put.stderr + put.stdout
    for ws, names in before.items():
        assert sorted(p.name for p in (ws / ".claw").iterdir()) == names, ws  # no sessions.db restored


def test_a_daemon_on_postgres_refuses_the_backup_rpc_and_has_no_pending_erasure(tmp_path: Path) -> None:
    ws = _bare_workspace(tmp_path)
    daemon = DaemonProcess(ws, env={"CLAW_DATABASE_URL": POSTGRES.database_for(str(tmp_path / "db"))})
    daemon.start()
    try:
        with daemon.client() as c:
            c.append("gone", Message.user("erased now"))
            assert c.delete("gone").events_deleted == 1
            assert c.stats()["erasure_pending_sessions"] == 0
            out = io.BytesIO()
            with pytest.raises(StorageUnavailableError, match="pg_dump"):  # the client's class of the reason
                c.backup(out)
            assert out.getvalue() == b""
            c.append("after", Message.user("the daemon serves on"))
        assert "Traceback" not in daemon.log()
    finally:
        daemon.stop()
    assert list((ws / ".claw").glob(".backup-*")) == []


def test_doctor_checks_a_postgres_database_line_by_line(tmp_path: Path) -> None:
    server = POSTGRES.server()
    url = POSTGRES.database_for(str(tmp_path / "db"))
    database = url.split("/")[-1].split("?")[0]
    recorded = _postgres_workspace(tmp_path, url)
    # Other URLs for the same database (another user, another password, over TCP) are other stores to a
    # workspace that records one: they are checked in a workspace that records nothing.
    ws = _bare_workspace(tmp_path)

    for at, env in ((recorded, NO_URL), (ws, {"CLAW_DATABASE_URL": url})):
        code, checks, _ = _checks(at, env)
        assert code == 0, checks
        assert [checks[n]["status"] for n in ("database", "schema_version", "durability", "privileges")] == ["ok"] * 4
        assert f"/{database} as claw" in checks["database"]["detail"]
        assert "PostgreSQL 1" in checks["database"]["detail"]
        assert checks["schema_version"]["detail"] == f"{SCHEMA_VERSION} (this build's)"

    # Connectivity: a wrong password names the host, never the password; an unreachable port names the host too.
    wrong = server.tcp_url(database, password="not-" + PASSWORD)
    code, checks, out = _checks(ws, {"CLAW_DATABASE_URL": wrong})
    assert code == 1 and checks["database"]["status"] == "fail", checks
    assert "127.0.0.1" in checks["database"]["detail"] and "password authentication failed" in out
    assert "not-" + PASSWORD not in out and PASSWORD not in out
    code, checks, out = _checks(ws, {"CLAW_DATABASE_URL": f"postgresql://claw:{PASSWORD}@127.0.0.1:1/{database}"})
    assert code == 1 and "127.0.0.1:1/" in checks["database"]["detail"] and PASSWORD not in out, checks

    # A per-role default of synchronous_commit = off in this database: a warning that explains.
    server.psql(f"ALTER ROLE claw IN DATABASE {database} SET synchronous_commit = off")
    try:
        code, checks, _ = _checks(ws, {"CLAW_DATABASE_URL": url})
    finally:
        server.psql(f"ALTER ROLE claw IN DATABASE {database} RESET synchronous_commit")
    assert code == 0 and checks["durability"]["status"] == "warn", checks
    assert "synchronous_commit is off" in checks["durability"]["detail"]

    # A role without privileges on the daemon's schema and tables: named, with the GRANT that fixes it.
    role = f"doctor_{uuid.uuid4().hex[:8]}"
    server.psql(f"CREATE ROLE {role} LOGIN")
    try:
        as_role = url.replace("postgresql://claw@", f"postgresql://{role}@")
        code, checks, _ = _checks(ws, {"CLAW_DATABASE_URL": as_role})
        assert code == 1 and checks["privileges"]["status"] == "fail", checks
        assert checks["schema_version"]["status"] == "fail" and "see privileges" in checks["schema_version"]["detail"]
        assert "USAGE and CREATE on schema claw_sessiond" in checks["privileges"]["detail"]
        assert f"TO {role}" in checks["privileges"]["detail"]
        server.psql(f"GRANT USAGE, CREATE ON SCHEMA claw_sessiond TO {role}", database)
        code, checks, _ = _checks(ws, {"CLAW_DATABASE_URL": as_role})
        assert checks["privileges"]["status"] == "fail" and "table(s)" in checks["privileges"]["detail"], checks
        server.psql(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA claw_sessiond TO {role}", database)
        code, checks, _ = _checks(ws, {"CLAW_DATABASE_URL": as_role})
        assert checks["privileges"]["status"] == "ok", checks
        # A database without the schema yet: the role must be able to create it.
        empty = server.create_database(f"doctor_empty_{uuid.uuid4().hex[:8]}")
        code, checks, _ = _checks(
            ws, {"CLAW_DATABASE_URL": empty.replace("postgresql://claw@", f"postgresql://{role}@")}
        )
        assert checks["schema_version"]["status"] == "warn" and "no schema" in checks["schema_version"]["detail"]
        assert checks["privileges"]["status"] == "fail" and "GRANT CREATE ON DATABASE" in checks["privileges"]["detail"]
    finally:
        server.psql(f"DROP OWNED BY {role}", database)
        server.psql(f"DROP ROLE {role}")


def test_doctor_fails_on_fsync_off_and_names_every_weakened_setting(tmp_path: Path) -> None:
    # A private server: fsync and full_page_writes are server-wide (the command line wins over ALTER SYSTEM).
    with throwaway_postgres(require_server(), extra_options="-c fsync=off -c full_page_writes=off") as private:
        url = private.create_database("weak")
        private.psql("ALTER ROLE claw IN DATABASE weak SET synchronous_commit = local")
        ws = tmp_path / "ws"
        (ws / ".claw").mkdir(parents=True, mode=0o700)
        code, checks, _ = _checks(ws, {"CLAW_DATABASE_URL": url})
        assert code == 1 and checks["durability"]["status"] == "fail", checks
        detail = checks["durability"]["detail"]
        for said in ("fsync is off", "full_page_writes is off", "synchronous_commit is local"):
            assert said in detail, detail
        assert checks["database"]["status"] == "ok" and checks["privileges"]["status"] == "ok", checks
        # The daemon refuses that server, as doctor says.
        daemon = DaemonProcess(ws, env={"CLAW_DATABASE_URL": url})
        try:
            assert daemon.spawn().wait(60) != 0
            assert "fsync is off" in daemon.log(), daemon.log()
        finally:
            daemon.stop()
