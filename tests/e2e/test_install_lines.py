"""Every install command the pages and the code's hints show, run as written in a clean virtualenv.

The commands come from tests/helpers/install_lines.py (README.md, docs/*.md, clients/*/README.md,
the packages' docstrings, and the hints of claw_sessiond_client/install.py). Each runs in the top
folder of a fresh clone of a git repository made from the checkout's build inputs; ``<repo>`` in
a git form is that repository's ``file://`` URL, and ``/path/to/claw-sessiond`` the clone. pip
gets ``--no-index --find-links`` the wheelhouse ``scripts/setup-tests`` fills
(tests/helpers/wheelhouse.py): third-party wheels only, never the project's own distributions,
which no index has, so a command that would need one from an index fails here as it fails for a
user. No test reaches the network.

Commands that install the same distributions with the same extras (a checkout form and its git
form, the same line on two pages) share one virtualenv: the first runs in it clean; before each
other one the project's distributions are uninstalled (pip would keep an installed one of the
same version; the test removes what ``pip uninstall`` would, in its own process), so that it
installs them again, and each is checked to have installed them from its own source
(``direct_url.json``). Then what each promises: the client imports, an extra's framework and
adapter import, the daemon's command runs; once per virtualenv, an auto-start round trip where
the client and the daemon are both there; the auto-start error where only the client is, and
each adapter's import error where no framework is, each naming its install hint; and the
missing-driver error, naming its hint, where the daemon has no PostgreSQL driver. A command that
leaves the venv as an earlier one of it left it, byte for byte (every file the project's
distributions installed, as their RECORDs list them, hashed from disk, but the two records of
where they came from; every other distribution at the same version), keeps the promises checked
on those bytes: running the same files again in the same venv cannot tell anything new (it was a
framework's whole import, 3-5 CPU-s, again for each git form), and a command whose files differ
is checked again. The README's test command (``pip install -e '.[test]'``) is not run here: it
is .ci/run's own command (tests/unit/test_install_lines.py checks), run on a fresh clone.
The virtualenvs, the clones and pip's temporary files are on /dev/shm when it has room, and
pip runs in each venv as ``pip --python`` runs it, without its first process; what a venv holds
is read from its site-packages in the test's process (tests/helpers/venvs.py). Full tier only: 10
virtualenvs. Measured 2026-12-07 on the 2-core development machine, one worker, its tests' own
CPU (children included), alternating in one sitting: 137 and 110 CPU-s before these last three
changes (load 6.5-3 and 1.5-2), 93 and 78 after (load 3-3.5 and 2-3.5); the CPU a run costs
rises with the load. What is left is mostly pip: 21 installs (about 30 builds of the project's
two distributions, each in the isolated build environment pip makes, with three hook processes;
pip keeps no wheel it built from a folder or an unpinned git URL), pip 23's resolver reading the
frameworks' requirements again for each git form (3-4.5 CPU-s), their dependencies unpacked, a
``pip check`` per venv, and the first command's checks (a framework's import 3.5-5 CPU-s).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from claw_sessiond_client import install
from tests.helpers.daemon import ROOT
from tests.helpers.install_lines import (
    CHECKOUT,
    CLIENT,
    DAEMON,
    FOLDERS,
    PUBLISHED,
    TEST_SETUP,
    Dist,
    InstallLine,
    NotAWorkingForm,
    extra_requirements,
    group_id,
    group_key,
    hint_lines,
    install_lines,
    parse,
)
from tests.helpers.process import stop_lock_holder
from tests.helpers.venvs import distributions, pip_env, pip_in, scratch
from tests.helpers.wheelhouse import copy_build_inputs, wheelhouse_or_fail

pytestmark = pytest.mark.backend_neutral("installs into clean virtualenvs; an auto-started daemon on its default store")

_PIP_TIMEOUT_S = 600
_RUN_TIMEOUT_S = 120


def _groups() -> dict[str, list[tuple[InstallLine, frozenset[Dist]]]]:
    """The commands to run, by what they install (a checkout form first: it runs in the clean venv)."""
    groups: dict[str, list[tuple[InstallLine, frozenset[Dist]]]] = {}
    seen: set[tuple[str, ...]] = set()
    for line in install_lines() + hint_lines():
        try:
            dists = parse(line.args)
        except NotAWorkingForm:
            continue  # tests/unit/test_install_lines.py fails on it, naming it
        key = group_key(dists)
        if key == TEST_SETUP or line.args in seen:
            continue
        seen.add(line.args)
        groups.setdefault(group_id(key), []).append((line, dists))
    for lines in groups.values():
        lines.sort(key=lambda item: any(d.source == "git" for d in item[1]))
    return groups


GROUPS = _groups()


def _version() -> str:
    with open(ROOT / "pyproject.toml", "rb") as f:
        version: str = tomllib.load(f)["project"]["version"]
    return version


def _client_extras() -> set[str]:
    """The client's extras: one per framework adapter (``claw_sessiond_client.contrib.<extra>``)."""
    with open(ROOT / FOLDERS[CLIENT] / "pyproject.toml", "rb") as f:
        return set(tomllib.load(f)["project"]["optional-dependencies"])


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout_s: float = _RUN_TIMEOUT_S) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=cwd, env=env)
    assert out.returncode == 0, f"{cmd} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
    return out.stdout


@pytest.fixture(scope="module")
def repo(backend: str) -> Iterator[Path]:
    """A git repository of the checkout's build inputs, committed: what ``<repo>`` and a clone stand for (one per
    module and worker; ``backend``: the e2e rule for module fixtures, though nothing here depends on it)."""
    with scratch("claw-install-repo-") as path:
        (path / "repo").mkdir()
        copy_build_inputs(path / "repo")
        git = ["git", "-c", "user.name=claw", "-c", "user.email=claw@localhost", "-c", "init.defaultBranch=main"]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "build inputs"]):
            _run([*git, *args], path / "repo", pip_env(path))
        yield path / "repo"


@pytest.fixture
def folder() -> Iterator[Path]:
    """The test's scratch folder: its venv, the clone, pip's temporary files (tests/helpers/venvs.py)."""
    with scratch("claw-install-") as path:
        yield path


def _url(repo: Path) -> str:
    """What ``<repo>`` stands for here: the repository's ``file:`` URL, with the host ``localhost`` (pip 23's
    requirement parser refuses ``git+file:///path``, a URL with no host; git and newer pips take either)."""
    return f"file://localhost{repo}"


def _inspect(venv: Path) -> dict[str, dict[str, object]]:
    """The venv's installed distributions by normalized name: version and ``direct_url.json`` (as ``pip inspect``
    gives them), read from its site-packages in this process (tests/helpers/venvs.py)."""
    found: dict[str, dict[str, object]] = {}
    for name, dist in distributions(venv).items():
        direct = dist.read_text("direct_url.json")
        found[name] = {"version": dist.version, "direct_url": json.loads(direct) if direct else None}
    return found


#: The files of a dist-info that say where its distribution came from (``RECORD`` holds the first one's hash).
_PROVENANCE = ("direct_url.json", "RECORD")


def _state(venv: Path) -> tuple[dict[str, str], dict[str, str]]:
    """What the venv holds as far as a promise can tell: each file the project's distributions installed (their
    RECORDs) with the SHA-256 of its bytes on disk, but the records of where they came from; and the version of
    every other distribution."""
    files: dict[str, str] = {}
    others: dict[str, str] = {}
    for name, dist in distributions(venv).items():
        if name not in FOLDERS:
            others[name] = dist.version
            continue
        for file in dist.files or ():
            if file.parent.name.endswith(".dist-info") and file.name in _PROVENANCE:
                continue
            files[file.as_posix()] = hashlib.sha256(Path(str(dist.locate_file(file))).read_bytes()).hexdigest()
    return files, others


def _uninstall(venv: Path, names: list[str]) -> None:
    """What ``pip uninstall -y NAMES`` removes: each file the distributions' RECORDs list, the bytecode of their
    modules, and the folders left empty. A step between two commands, not one under test, done here: a pip run
    for it cost 0.6-0.7 CPU-s."""
    found = distributions(venv)
    for name in names:
        dist = found[name]
        folders: set[Path] = set()
        for file in dist.files or ():
            path = Path(str(dist.locate_file(file)))
            path.unlink(missing_ok=True)
            if path.suffix == ".py":
                for compiled in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
                    compiled.unlink()
            folders.add(path.parent)
        for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):  # the deepest first
            for empty in (folder / "__pycache__", folder):
                if empty.is_dir() and not any(empty.iterdir()):
                    empty.rmdir()
    left = distributions(venv).keys() & set(names)
    assert not left, f"still installed after the uninstall: {sorted(left)}"


def _check_source(dist: Dist, record: dict[str, object], checkout: Path, repo: Path) -> None:
    direct = record.get("direct_url")
    if dist.source == "index":
        assert direct is None, f"{dist.name} came from {direct}, not the index"
        return
    assert isinstance(direct, dict), f"{dist.name}: no direct_url.json: not installed from the command's source"
    folder = FOLDERS[dist.name]
    if dist.source == "checkout":
        assert direct["url"] == (checkout / folder).resolve().as_uri(), direct
        assert bool(direct.get("dir_info", {}).get("editable")) == dist.editable, direct
    else:
        assert direct["url"] == _url(repo) and direct.get("vcs_info", {}).get("vcs") == "git", direct
        assert direct.get("subdirectory") == (None if folder == "." else folder), direct


def _check_extras(dist: Dist, installed: dict[str, dict[str, object]]) -> None:
    for extra in sorted(dist.extras):
        for text in extra_requirements(dist.name, extra):
            req = Requirement(text)
            record = installed.get(req.name.lower())
            assert record is not None, f"{dist.name}[{extra}] promises {req.name}: not installed"
            version = str(record["version"])
            assert req.specifier.contains(version, prereleases=True), f"{req.name} {version} is not {req.specifier}"


AUTOSTART = r"""
import sys
from claw_sessiond_client import Message, SessionClient
with SessionClient(sys.argv[1], timeout_s=30) as client:
    client.append("installed", Message.user("hello"))
    print([m.content for m in client.load("installed").messages])
"""

NO_FRAMEWORK = r"""
import importlib, json, sys
said = {}
for extra in sys.argv[1:]:
    try:
        importlib.import_module("claw_sessiond_client.contrib." + extra.replace("-", "_"))
        said[extra] = None
    except ImportError as exc:
        said[extra] = str(exc)
print(json.dumps(said))
"""

NOT_INSTALLED = r"""
import sys
from claw_sessiond_client import DaemonUnavailableError, SessionClient
try:
    with SessionClient(sys.argv[1], timeout_s=30) as client:
        client.load("installed")
except DaemonUnavailableError as exc:
    print(exc.message)
"""


def _has_client(names: dict[str, Dist]) -> bool:
    """The client is there: named, or in the daemon's editable install (which maps both packages)."""
    return CLIENT in names or (DAEMON in names and names[DAEMON].editable)


def _check_promises(venv: Path, names: dict[str, Dist], cwd: Path, env: dict[str, str]) -> None:
    """What one command promises, whatever ran before it: the client and its adapters import, commands run."""
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    if _has_client(names):
        extras = names[CLIENT].extras if CLIENT in names else frozenset()
        adapters = [f"claw_sessiond_client.contrib.{e.replace('-', '_')}" for e in sorted(extras)]
        modules = ["claw_sessiond_client", *adapters]
        _run([str(python), "-I", "-c", "; ".join(f"import {m}" for m in modules)], cwd, env)
    if DAEMON in names:
        assert _run([str(bin_dir / "claw-sessiond"), "--version"], cwd, env).strip() == f"claw-sessiond {_version()}"
    for name in names.keys() & PUBLISHED.keys():
        command, *args = PUBLISHED[name]
        _run([str(bin_dir / command), *args], cwd, env)


def _check_once(
    venv: Path,
    names: dict[str, Dist],
    installed: dict[str, object],
    cwd: Path,
    pip: dict[str, str],
) -> None:
    """What the installed set promises, checked once per venv: auto-start, and the errors naming install hints."""
    python = venv / "bin" / "python"
    workspace = cwd / "workspace"
    workspace.mkdir()
    # PATH without the test's own venv, so that only this venv's commands are found.
    env = pip | {"PATH": f"{venv / 'bin'}:/usr/bin:/bin"}
    if _has_client(names) and DAEMON in names:
        try:
            out = _run([str(python), "-I", "-c", AUTOSTART, str(workspace)], cwd, env)
        finally:
            stop_lock_holder(workspace)
        assert out.strip() == "['hello']", out
    elif CLIENT in names:
        out = _run([str(python), "-I", "-c", NOT_INSTALLED, str(workspace)], cwd, env)
        assert "the daemon is not installed here" in out and install.install_hint() in out, out
        if not names[CLIENT].extras:  # no framework here: each adapter's import names its install command
            extras = sorted(_client_extras())
            said = json.loads(_run([str(python), "-I", "-c", NO_FRAMEWORK, *extras], cwd, env))
            for extra in extras:
                assert said[extra] and install.install_hint(client_extra=extra) in said[extra], (extra, said[extra])
    if DAEMON in names and "asyncpg" not in installed:
        url = "postgresql://claw@127.0.0.1:1/claw"  # never reached: the driver is missing first
        other = cwd / "postgres-workspace"  # not the SQLite one above: one store per workspace
        other.mkdir()
        cmd = [str(venv / "bin" / "claw-sessiond"), "migrate-db", "--workspace", str(other), "--database", url]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_RUN_TIMEOUT_S, cwd=cwd, env=env)
        said = proc.stdout + proc.stderr
        assert proc.returncode == 1, said
        assert install.install_hint(daemon_extra="postgres") in said and "Traceback" not in said, said


@pytest.mark.slow
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_install_commands_work_as_written(group: str, repo: Path, folder: Path) -> None:
    started = time.monotonic()
    env = pip_env(folder)
    # As written, plus: dependencies from the wheelhouse alone; -q; no .pyc compiled at install (Python compiles
    # what it imports anyway; the openai-agents line measured 15.3 CPU-s with compiling, 8.4 without).
    quick = ["-q", "--no-compile", "--no-index", "--find-links", str(wheelhouse_or_fail())]
    venv = folder / "venv"
    pip = pip_in(venv)
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], folder, env)
    checkout = folder / "checkout"
    _run(["git", "clone", "-q", str(repo), str(checkout)], folder, env)
    checked: list[tuple[dict[str, str], dict[str, str]]] = []  # the venv's states whose promises were checked
    for i, (line, dists) in enumerate(GROUPS[group]):
        if i:  # the third-party dependencies stay; the project's distributions come from this command's sources
            _uninstall(venv, sorted(d.name for d in dists))
        args = [a.replace(install.REPO, _url(repo)).replace(CHECKOUT, str(checkout)) for a in line.args]
        cmd = [*pip, "install", *quick, *args]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, cwd=checkout, env=env)
        assert out.returncode == 0, f"{line.where}: `{line.text}` failed (exit {out.returncode}):\n{out.stderr}"
        found = _inspect(venv)
        names = {d.name: d for d in dists}
        for dist in dists:
            assert dist.name in found, f"{line.where}: `{line.text}` did not install {dist.name}"
            _check_source(dist, found[dist.name], checkout, repo)
            _check_extras(dist, found)
        state = _state(venv)
        if state not in checked:  # the same bytes in the same venv keep the promises checked on them
            _check_promises(venv, names, checkout, env)
            checked.append(state)
        if i == 0:
            _check_once(venv, names, found, folder, env)
    _run([*pip, "check"], checkout, env)  # what the commands installed, together, is consistent
    took = time.monotonic() - started
    print(f"{group}: {len(GROUPS[group])} command(s), promises checked on {len(checked)} state(s), {took:.1f} s")
