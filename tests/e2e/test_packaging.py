"""The two distributions as users get them: real wheels in clean virtualenvs, a real daemon.

``claw-sessiond-client`` (clients/python/pyproject.toml) is what an agent's
virtualenv installs; ``claw-sessiond`` (the top-level pyproject.toml) is the
daemon and its CLI and depends on the client at the same version.

The slow test builds both wheels with ``pip wheel`` from a copy of just the
files a build may use, installs the client wheel alone in one fresh venv and
both wheels in another (dependencies and the build backend from the wheels
``scripts/setup-tests`` fetched, ``tests/helpers/wheelhouse.py``: never the network), starts
``claw-sessiond serve`` from the daemon venv and makes the client venv do a
Load/Append round trip (and get a typed error) against it. The venvs are
made without pip (this test's pip works on them, run by their interpreter:
``pip_in``) on /dev/shm when it has room, and what they hold is read from
their site-packages, not by ``pip list`` (tests/helpers/venvs.py). It took
6.7-10.7 CPU-s in four runs at load 2-9 (9.2-12.2 in two at load 2-6 with
``pip --python`` and ``pip list``, alternating; 29-34 CPU-s before the venvs
went without pip), so it runs
with ``CLAW_FULL=1`` (CI). The quick tests check the sources the wheels are
made of.
"""

from __future__ import annotations

import ast
import json
import signal
import subprocess
import sys
import time
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client.paths import default_socket_path
from tests.helpers.daemon import ROOT, health_status
from tests.helpers.tiers import FULL
from tests.helpers.venvs import distributions, pip_env, pip_in, scratch
from tests.helpers.wheelhouse import copy_build_inputs, wheelhouse_or_fail

CLIENT_DIR = ROOT / "clients" / "python"

# What the daemon distribution needs and the client distribution must not pull in.
DAEMON_ONLY_MODULES = {
    "aiosqlite",
    "claw_sessiond",
    "grpc_health",
    "grpc_reflection",
    "grpc_status",
    "grpc_tools",
    "prometheus_client",
    "rich",
}
DAEMON_ONLY_DISTS = {
    "aiosqlite",
    "claw-sessiond",
    "grpcio-health-checking",
    "grpcio-reflection",
    "grpcio-status",
    "grpcio-tools",
    "prometheus-client",
    "rich",
}


pytestmark = pytest.mark.backend_neutral(
    "the wheels' contents and clean installs; the installed daemon runs on its default store"
)


def _project(pyproject: Path) -> dict[str, object]:
    with open(pyproject, "rb") as f:
        project: dict[str, object] = tomllib.load(f)["project"]
    return project


def _imported_modules(folder: Path, *, skip: Path | None = None) -> set[str]:
    """Top-level names of every absolute import in the .py files under ``folder`` (not under ``skip``)."""
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        if skip is not None and path.is_relative_to(skip):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


# ---------------------------------------------------------------- quick: the sources


@pytest.mark.smoke
def test_both_distributions_have_one_version() -> None:
    import claw_sessiond

    daemon = _project(ROOT / "pyproject.toml")
    client = _project(CLIENT_DIR / "pyproject.toml")
    assert client["name"] == "claw-sessiond-client"
    assert daemon["version"] == client["version"] == claw_sessiond.__version__


#: The optional extra of the client that brings each module an adapter imports (by its top-level
#: name; pydantic_core comes with google-adk, which builds on pydantic; langchain_core, which the LangGraph
#: adapter imports for its config type, comes with langgraph too).
EXTRA_OF_MODULE = {
    "langchain_core": "langchain",
    "agents": "openai-agents",
    "google": "adk",
    "pydantic_core": "adk",
    "langgraph": "langgraph",
}


def test_the_client_imports_only_what_its_distribution_declares() -> None:
    package = CLIENT_DIR / "claw_sessiond_client"
    imported = _imported_modules(package, skip=package / "contrib")
    assert imported & DAEMON_ONLY_MODULES == set()
    # grpc -> grpcio, google.protobuf -> protobuf, google.rpc -> googleapis-common-protos
    third_party = imported - set(sys.stdlib_module_names) - {"claw_sessiond_client"}
    assert third_party == {"grpc", "google"}
    declared = {d.split(">")[0].split("=")[0] for d in _project(CLIENT_DIR / "pyproject.toml")["dependencies"]}  # type: ignore[attr-defined]
    assert declared == {"grpcio", "protobuf", "googleapis-common-protos"}


def test_each_framework_adapter_imports_only_the_client_and_its_extra() -> None:
    contrib = CLIENT_DIR / "claw_sessiond_client" / "contrib"
    third_party = _imported_modules(contrib) - set(sys.stdlib_module_names) - {"claw_sessiond_client"}
    assert third_party <= set(EXTRA_OF_MODULE), "an adapter imports a framework no extra declares"
    extras = _project(CLIENT_DIR / "pyproject.toml")["optional-dependencies"]  # type: ignore[index]
    for module in third_party:
        assert extras[EXTRA_OF_MODULE[module]], module


def test_nothing_at_runtime_imports_the_protobuf_compiler() -> None:
    assert "grpc_tools" not in _imported_modules(ROOT / "daemon")
    assert "grpc_tools" not in _imported_modules(CLIENT_DIR)


# ---------------------------------------------------------------- slow: real wheels, real venvs

CLIENT_ROUND_TRIP = r"""
import json, sys
import claw_sessiond_client
from claw_sessiond_client import Message, SessionClient, ToolCall
from claw_sessiond_client.errors import ToolCallStateError

with SessionClient(sys.argv[1], autostart=False, timeout_s=20) as client:
    first = client.load("pkg")
    appended = client.append(
        "pkg",
        [
            Message.user("list the files"),
            Message.assistant(tool_calls=[ToolCall("call_1", "bash", '{"cmd": "ls"}')]),
        ],
    )
    client.append("pkg", Message.tool("call_1", "README.md"))
    try:
        client.append("pkg", Message.tool("call_404", "nobody asked"))
        reason = None
    except ToolCallStateError as exc:
        reason = exc.reason.name
    loaded = client.load("pkg")
print(json.dumps({
    "client_file": claw_sessiond_client.__file__,
    "empty_before": first.messages == [],
    "positions": [appended.first_position, appended.last_position],
    "history": [[m.position, m.role, m.content] for m in loaded.messages],
    "error_reason": reason,
}))
"""


def _run(cmd: list[str], timeout_s: float, **kw: object) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, **kw)  # type: ignore[call-overload]
    assert out.returncode == 0, f"{cmd} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
    return out  # type: ignore[no-any-return]


@pytest.fixture
def folder() -> Iterator[Path]:
    """The test's scratch folder, removed at teardown (the two venvs are ~150 MB; tests/helpers/venvs.py)."""
    with scratch("claw-pkg-") as path:
        yield path


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="builds wheels and two venvs (1-2 min); runs with CLAW_FULL=1")
def test_client_wheel_alone_talks_to_the_daemon_wheel(folder: Path) -> None:
    started = time.monotonic()
    env = pip_env(folder)
    local = ["--no-index", "--find-links", str(wheelhouse_or_fail())]

    # 1. Two wheels, built the way a user or a release would.
    src, dist = folder / "src", folder / "dist"
    src.mkdir()
    copy_build_inputs(src)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            *local,
            "-w",
            str(dist),
            str(src),
            str(src / "clients" / "python"),
        ],
        300,
        env=env,
    )
    client_whl = next(dist.glob("claw_sessiond_client-*.whl"))
    daemon_whl = next(dist.glob("claw_sessiond-*.whl"))
    with zipfile.ZipFile(daemon_whl) as z:
        daemon_files = z.namelist()
        daemon_meta = z.read(next(n for n in daemon_files if n.endswith(".dist-info/METADATA"))).decode()
    with zipfile.ZipFile(client_whl) as z:
        client_files = z.namelist()
        client_meta = z.read(next(n for n in client_files if n.endswith(".dist-info/METADATA"))).decode()
    assert not [n for n in daemon_files if n.startswith("claw_sessiond_client/")], "the daemon wheel ships the client"
    assert "claw_sessiond_client/api/v1/sessiond_pb2.py" in client_files
    assert "claw_sessiond_client/py.typed" in client_files and "claw_sessiond/py.typed" in daemon_files
    static = ROOT / "daemon" / "claw_sessiond" / "ui" / "static"  # the web viewer's pages ship built
    shipped = sorted(str(p.relative_to(ROOT / "daemon")) for p in static.rglob("*") if p.is_file())
    assert set(shipped) <= set(daemon_files), sorted(set(shipped) - set(daemon_files))
    version = _project(ROOT / "pyproject.toml")["version"]
    assert f"Requires-Dist: claw-sessiond-client=={version}" in daemon_meta.splitlines()
    for meta, files in ((daemon_meta, daemon_files), (client_meta, client_files)):
        assert "License-Expression: MIT" in meta.splitlines()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in files)
        assert "grpcio-tools" not in "\n".join(ln for ln in meta.splitlines() if "extra ==" not in ln)

    # 2. Two clean venvs, installed at the same time: the client alone, and daemon + client.
    client_venv, daemon_venv = folder / "client-venv", folder / "daemon-venv"
    for venv in (client_venv, daemon_venv):
        _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], 120, env=env)
    installs = [
        subprocess.Popen(
            [*pip_in(venv), "install", "-q", "--no-compile", *local, *map(str, wheels)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        for venv, wheels in ((client_venv, [client_whl]), (daemon_venv, [daemon_whl, client_whl]))
    ]
    for proc in installs:
        try:
            output, _ = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
        assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}:\n{output}"
    for venv in (client_venv, daemon_venv):
        _run([*pip_in(venv), "check"], 60, env=env)
    in_client_venv = set(distributions(client_venv))
    assert "claw-sessiond-client" in in_client_venv
    assert in_client_venv & DAEMON_ONLY_DISTS == set()
    assert "grpcio-tools" not in distributions(daemon_venv)

    # 3. The daemon venv's command line, then its daemon serving a workspace.
    daemon_bin = daemon_venv / "bin" / "claw-sessiond"
    help_out = _run([str(daemon_bin), "--help"], 60, env=env, cwd=folder).stdout
    assert "serve" in help_out and "ui" in help_out
    # The web viewer's server (aiohttp) comes with the daemon's wheel.
    _run([str(daemon_venv / "bin" / "python"), "-I", "-c", "import claw_sessiond.ui.server"], 60, env=env, cwd=folder)
    assert _run([str(daemon_bin), "--version"], 60, env=env, cwd=folder).stdout.strip() == f"claw-sessiond {version}"
    workspace = folder / "ws"
    workspace.mkdir()
    socket_path = default_socket_path(workspace, env.get("XDG_RUNTIME_DIR"))
    log_path = folder / "daemon.log"
    with open(log_path, "wb") as log:
        daemon = subprocess.Popen(
            [str(daemon_bin), "serve", "--workspace", str(workspace)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=workspace,
        )
    try:
        deadline = time.monotonic() + 60
        while not (socket_path.exists() and health_status(f"unix:{socket_path}") == "SERVING"):
            assert daemon.poll() is None, f"daemon exited {daemon.returncode}:\n{log_path.read_text()}"
            assert time.monotonic() < deadline, f"daemon not SERVING after 60 s:\n{log_path.read_text()}"
            time.sleep(0.2)

        # 4. The client-only venv: no daemon code, a real round trip and a typed error.
        probe = subprocess.run(
            [str(client_venv / "bin" / "python"), "-I", "-c", "import claw_sessiond"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=folder,
        )
        assert probe.returncode != 0 and "No module named 'claw_sessiond'" in probe.stderr
        out = _run(
            [str(client_venv / "bin" / "python"), "-I", "-c", CLIENT_ROUND_TRIP, str(workspace)],
            120,
            env=env,
            cwd=folder,
        )
        result = json.loads(out.stdout)
        assert Path(result["client_file"]).is_relative_to(client_venv)
        assert result["empty_before"] is True
        assert result["positions"] == [1, 2]
        assert [h[:2] for h in result["history"]] == [[1, "user"], [2, "assistant"], [3, "tool"]]
        assert result["history"][2][2] == "README.md"
        assert result["error_reason"] == "UNKNOWN_TOOL_CALL"

        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0, log_path.read_text()
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=10)
    print(f"packaging test: {time.monotonic() - started:.1f} s")
