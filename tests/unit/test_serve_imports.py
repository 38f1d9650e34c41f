"""What a daemon has imported once it is ready: only what its configuration uses.

Every test, and every agent that auto-starts one, pays a daemon's start, and most of that is
imports. A SQLite daemon must not import the PostgreSQL backend or its driver, the web viewer, the
Prometheus side of the metrics (``--metrics``), the TLS certificate code (``--tcp``), the export
format (only Export and Import use it) or a TOML parser (no ``.claw/config.toml``): each is imported
where it is first used. The check is deterministic: a real ``claw-sessiond serve`` (the CLI's
``main``, as ``python -m claw_sessiond`` runs it) writes its ``sys.modules`` right after
:func:`claw_sessiond.daemon.start` returns, that is once it serves, and then stops itself with
SIGTERM. A daemon started with ``--metrics`` shows that the check sees a lazily imported module when
it is imported. A daemon on PostgreSQL imports the SQLite backend no more than a SQLite daemon
imports the PostgreSQL one: checked on what the daemon's modules and the PostgreSQL backend import
(no server needed), with the SQLite backend imported last as the control.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.imports import loaded_under

#: Run in the daemon's process: record ``sys.modules`` once ``start`` has returned (READY), then SIGTERM.
_SERVE_AND_RECORD = """
import asyncio, json, os, signal, sys
from claw_sessiond import daemon
from claw_sessiond.cli import main

out, args = sys.argv[1], sys.argv[2:]
started = daemon.start

async def start(cfg, notifier=None):
    ready = await started(cfg, notifier)
    with open(out, "w") as f:
        json.dump(sorted(sys.modules), f)
    # after the daemon's signal handlers are in place (the loop runs this at its next turn)
    asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGTERM)
    return ready

daemon.start = start
sys.exit(main(["serve", *args]))
"""

#: Modules (and their submodules) a SQLite daemon with no options must not have imported.
_NOT_FOR_A_PLAIN_SQLITE_DAEMON = (
    "asyncpg",
    "claw_sessiond.storage.postgres",
    "claw_sessiond.ui",
    "claw_sessiond.exposition",
    "claw_sessiond.export",
    "prometheus_client",
    "cryptography",
    "tomllib",
)


def _ready_modules(tmp_path: Path, *args: str) -> set[str]:
    """The modules of a daemon for a fresh workspace in ``tmp_path``, once it serves (it then stops, exit 0)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAW_")}
    env["XDG_RUNTIME_DIR"] = str(tmp_path)  # a short socket path of its own
    done = subprocess.run(
        [sys.executable, "-c", _SERVE_AND_RECORD, str(out), "--workspace", str(workspace), *args],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(out.read_text()))


def test_a_sqlite_daemon_imports_only_what_it_serves(tmp_path: Path) -> None:
    modules = _ready_modules(tmp_path)
    assert "claw_sessiond.storage.sqlite.store" in modules  # it did serve its SQLite store
    assert loaded_under(modules, _NOT_FOR_A_PLAIN_SQLITE_DAEMON) == []


def test_a_daemon_with_metrics_imports_the_prometheus_side(tmp_path: Path) -> None:
    modules = _ready_modules(tmp_path, "--metrics", "127.0.0.1:0")
    assert {"claw_sessiond.exposition", "prometheus_client"} <= modules
    assert loaded_under(modules, ("asyncpg", "claw_sessiond.storage.postgres", "claw_sessiond.ui")) == []


def _modules_after(*names: str) -> list[set[str]]:
    """What a fresh interpreter has imported after importing each of ``names`` in turn (one set per name)."""
    script = (
        "import importlib, json, sys\n"
        "seen = []\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        "    seen.append(sorted(sys.modules))\n"
        "print(json.dumps(seen))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [set(modules) for modules in json.loads(done.stdout)]


def test_a_postgresql_daemon_imports_no_sqlite_backend() -> None:
    sqlite = ("aiosqlite", "sqlite3", "claw_sessiond.storage.sqlite")
    daemon, with_postgres, with_sqlite = _modules_after(
        "claw_sessiond.cli.serve",
        "claw_sessiond.daemon",
        "claw_sessiond.storage.postgres.store",
        "claw_sessiond.storage.sqlite.store",
    )[1:]
    assert "asyncpg" not in daemon
    assert "asyncpg" in with_postgres
    assert loaded_under(with_postgres, sqlite) == []
    assert loaded_under(with_sqlite, sqlite) != []  # the control: the check sees the SQLite backend once imported
