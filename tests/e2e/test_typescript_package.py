"""A Node user's first run: the TypeScript package packed with ``npm pack``, installed into a fresh
folder with ``npm install <tarball>`` (offline, from the npm cache scripts/setup-tests fills), and
its README's example run there as written, starting a real daemon (auto-start from PATH); without
the daemon on PATH it fails at once, saying how to install it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.backend_neutral(
    "the TypeScript package as installed from its tarball: its auto-started daemons serve their own fresh "
    "folders on the default store (packaging and the first run are under test, not storage)"
)

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "clients" / "typescript"
#: npm without its network chatter; the registry is asked only for what its cache lacks.
NPM_ENV = {"npm_config_audit": "false", "npm_config_fund": "false", "npm_config_update_notifier": "false"}


def _need_node_modules() -> None:
    if not (TS / "node_modules" / ".bin" / "tsc").exists():
        pytest.skip("the TypeScript client's packages are not installed: run scripts/setup-tests")


def _npm(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(
        ["npm", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env={**os.environ, **NPM_ENV}
    )
    hint = " (ENOTCACHED: run scripts/setup-tests, which fills npm's cache)" if "ENOTCACHED" in proc.stderr else ""
    assert proc.returncode == 0, f"npm {' '.join(args)}{hint}: {proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return proc.stdout


#: An output no source builds (a deleted module's), planted in the packed copy's dist/src: the tarball must not have it.
STALE = "dist/src/deleted_module.js"


@pytest.fixture(scope="module")
def packed(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package's tarball, made by ``npm pack`` as the README's ``npm ci && npm pack`` does: ``npm ci``'s
    ``prepare`` (``tsc -b tsconfig.build.json``) built dist/src, then packing runs the package's ``prepack``
    (removes from dist/src what no source builds) and ``prepare`` again (builds what changed since: here nothing, one
    build in all); ``backend``: the daemons' store."""
    _need_node_modules()
    # A copy of the package folder as scripts/setup-tests leaves it (`npm ci`, then `npm run build`: dist/src and
    # dist/test), which keeps this from touching the dist/ that the client's own tests run from (copytree keeps the
    # files' times, so tsc -b finds the build up to date), plus a stale output that prepack must remove.
    source = tmp_path_factory.mktemp("checkout") / "typescript"
    shutil.copytree(TS, source, ignore=shutil.ignore_patterns("node_modules", "*.tgz"))
    (source / "node_modules").symlink_to(TS / "node_modules")
    (source / STALE).parent.mkdir(parents=True, exist_ok=True)
    (source / STALE).write_text("exports.gone = true;\n")
    out = tmp_path_factory.mktemp("pack")
    _npm(["pack", "--silent", "--pack-destination", str(out)], source)
    (tarball,) = out.glob("*.tgz")
    return tarball


@pytest.fixture(scope="module")
def project(backend: str, packed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh npm project with the tarball installed (one install for the module)."""
    folder = tmp_path_factory.mktemp("node-project")
    (folder / "package.json").write_text(json.dumps({"name": "node-project", "version": "1.0.0", "private": True}))
    # Offline: scripts/setup-tests put the dependencies and their registry metadata in npm's cache.
    _npm(["install", "--offline", "--no-save", str(packed)], folder)
    return folder


def readme_example() -> str:
    """The first ``js`` block of the package's README: the example a Node user copies."""
    text = (TS / "README.md").read_text()
    found = re.search(r"```js\n(.*?)```", text, re.S)
    assert found, "clients/typescript/README.md has no ```js example"
    return found.group(1)


def _path_with(*dirs: Path) -> str:
    """A PATH of node's folder, the system folders and ``dirs``."""
    node = shutil.which("node")
    assert node is not None
    return os.pathsep.join([*map(str, dirs), str(Path(node).parent), "/usr/bin", "/bin"])


def _stop_daemon(claw: Path) -> None:
    """SIGKILL the daemon an example auto-started (the pid its lock file holds), and wait for it."""
    text = (claw / "sessiond.lock").read_text().strip() if (claw / "sessiond.lock").exists() else ""
    if not text.isdigit():
        return
    pid = int(text)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.05)


@pytest.fixture
def folder(project: Path, tmp_path: Path) -> Iterator[Path]:
    """A fresh folder inside the npm project (its own workspace), its auto-started daemon stopped after."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "node_modules").symlink_to(project / "node_modules")
    yield ws
    _stop_daemon(ws / ".claw")


def test_the_tarball_holds_what_main_types_and_exports_name(packed: Path) -> None:
    listing = subprocess.run(["tar", "-tzf", str(packed)], capture_output=True, text=True, check=True).stdout.split()
    files = {name.removeprefix("package/") for name in listing}
    manifest = json.loads((TS / "package.json").read_text())
    named = {manifest["main"], manifest["types"]}
    for target in manifest["exports"].values():
        named.update(target.values() if isinstance(target, dict) else [target])
    assert {n.removeprefix("./") for n in named} <= files, sorted(files)
    assert "dist/src/gen/claw/sessiond/v1/sessiond.js" in files
    assert STALE not in files, "prepack removes an output whose source is gone"
    assert not any(name.startswith(("dist/test/", "src/", "node_modules/")) for name in files), sorted(files)


def test_the_readme_example_runs_as_written_from_the_installed_tarball(folder: Path) -> None:
    (folder / "example.mjs").write_text(readme_example())
    env = {**os.environ, "PATH": _path_with(Path(sys.executable).parent)}
    env.pop("CLAW_SESSIOND_COMMAND", None)
    proc = subprocess.run(["node", "example.mjs"], cwd=folder, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split("\n")[:3] == ["1 user list the files", "2 assistant ", "3 tool README.md"], proc.stdout
    # Auto-start as docs/PROTOCOL.md says: the daemon's log and its early output in .claw/, private.
    claw = folder / ".claw"
    assert "sessiond" in (claw / "sessiond.log").read_text()
    for name in ("sessiond.log", "sessiond.stderr", "sessiond.lock"):
        assert (claw / name).stat().st_mode & 0o077 == 0, name
    # Run again: the second run finds the daemon the first one started, and continues the session.
    again = subprocess.run(["node", "example.mjs"], cwd=folder, capture_output=True, text=True, timeout=120, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.split("\n")[3:6] == ["4 user list the files", "5 assistant ", "6 tool README.md"], again.stdout


def test_without_the_daemon_on_path_the_first_call_fails_at_once_saying_how_to_install_it(folder: Path) -> None:
    script = (
        'import { SessionClient } from "@claw-sessiond/client";\n'
        "const c = new SessionClient();\n"
        "const t0 = Date.now();\n"
        'try { await c.load("s"); console.log("loaded"); }\n'
        "catch (e) {\n"
        "  const { name, reason, message } = e;\n"
        "  console.log(JSON.stringify({ ms: Date.now() - t0, name, reason, message }));\n"
        "}\n"
        "c.close();\n"
    )
    (folder / "first.mjs").write_text(script)
    env = {**os.environ, "PATH": _path_with()}
    env.pop("CLAW_SESSIOND_COMMAND", None)
    proc = subprocess.run(["node", "first.mjs"], cwd=folder, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["name"] == "UnavailableError" and out["reason"] == "DAEMON_UNAVAILABLE", out
    assert out["ms"] < 2000, out  # the 20 s auto-start wait is not spent on a command that does not exist
    assert "no executable claw-sessiond on PATH" in out["message"], out
    assert "pip install /path/to/claw-sessiond/clients/python /path/to/claw-sessiond" in out["message"], out
    assert "Python package" in out["message"], out
    assert not (folder / ".claw" / "sessiond.sock").exists()


def test_prepack_removes_what_no_source_builds_and_the_whole_build_when_an_output_is_missing(tmp_path: Path) -> None:
    _need_node_modules()
    (tmp_path / "scripts").mkdir()
    shutil.copy(TS / "scripts" / "prepack.mjs", tmp_path / "scripts")
    for source in ("src/client.ts", "src/gen/v1/api.ts", "src/types.d.ts"):
        (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / source).write_text("export {};\n")
    outputs = {"client.js", "client.d.ts", "gen/v1/api.js", "gen/v1/api.d.ts"}
    stale = {"gone.js", "gone.d.ts", "gen/v0/api.js", "types.js", "notes.txt"}
    built = tmp_path / "dist" / "src"
    for name in outputs | stale:
        (built / name).parent.mkdir(parents=True, exist_ok=True)
        (built / name).write_text("\n")
    (tmp_path / "dist" / "tsconfig.build.tsbuildinfo").write_text("{}")

    def prepack() -> None:
        proc = subprocess.run(["node", "scripts/prepack.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr

    prepack()
    left = {str(p.relative_to(built)) for p in built.rglob("*") if p.is_file()}
    assert left == outputs, "only the outputs of src/'s modules stay"
    assert (tmp_path / "dist" / "tsconfig.build.tsbuildinfo").exists(), "the build info stays: nothing to build"
    (built / "gen" / "v1" / "api.d.ts").unlink()
    prepack()
    assert not (tmp_path / "dist").exists(), "an output is missing: dist/ goes, so that prepare builds it all"


def test_the_three_packages_share_one_version() -> None:
    daemon = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    client = tomllib.loads((ROOT / "clients" / "python" / "pyproject.toml").read_text())["project"]["version"]
    node = json.loads((TS / "package.json").read_text())["version"]
    lock = json.loads((TS / "package-lock.json").read_text())
    assert daemon == client == node == lock["version"] == lock["packages"][""]["version"]
