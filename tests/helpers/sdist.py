"""A framework's published source distribution, fetched by ``scripts/setup-tests`` and read by tests from a cache.

The frameworks' own tests are not copied into this repository. ``scripts/setup-tests`` runs
``python -m tests.helpers.sdist PROJECT...``, which downloads the sdist of the version under test
(:func:`version_under_test`: the one installed, which in the README's venv is the exact pin of the
client's extras) with ``pip download --no-deps --no-binary :all:`` and unpacks it into a cache
(``$CLAW_TEST_CACHE``, default ``~/.cache/claw-sessiond-tests``). Tests never
reach the network: :func:`sdist_or_fail` returns the unpacked folder from the cache, and
fails (never skips) naming the command to run when it is not there.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

from tests.helpers.checkout import ROOT

CLIENT_PYPROJECT = ROOT / "clients" / "python" / "pyproject.toml"


class SdistUnavailableError(Exception):
    """The sdist could not be downloaded or unpacked."""


def cache_dir() -> Path:
    return Path(os.environ.get("CLAW_TEST_CACHE") or Path.home() / ".cache" / "claw-sessiond-tests")


def pins() -> dict[str, str]:
    """Framework → the exact version an extra of the client pins (``name==version``)."""
    with open(CLIENT_PYPROJECT, "rb") as f:
        extras: dict[str, list[str]] = tomllib.load(f)["project"]["optional-dependencies"]
    found = {}
    for requirements in extras.values():
        for requirement in requirements:
            m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;,]+)", requirement.strip())
            if m:
                found[m.group(1)] = m.group(2)
    return found


def pinned_version(project: str) -> str:
    """The exact version of ``project`` that an extra of the client pins (``project==X``)."""
    found = pins().get(project)
    if found is None:
        raise AssertionError(f"no extra of {CLIENT_PYPROJECT} pins {project}==<version>")
    return found


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Holds an exclusive lock on ``path`` (created if missing): one fetch of a cache entry at a time, across
    processes (``.ci/run`` starts the downloads early and ``scripts/setup-tests python`` asks again)."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def fetch_sdist(project: str, version: str, timeout_s: float = 300) -> Path:
    """The unpacked sdist of ``project==version`` (its top folder, holding PKG-INFO)."""
    cache = cache_dir() / "sdists"
    cache.mkdir(parents=True, exist_ok=True)
    stem = f"{re.sub(r'[-_.]+', '_', project)}-{version}"
    target = cache / stem
    with locked(cache / f"{stem}.lock"):
        if cached_sdist(project, version) is not None:
            return target
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            try:
                download = ["download", "-q", "--no-deps", "--no-binary", ":all:", "--disable-pip-version-check"]
                proc = subprocess.run(
                    [sys.executable, "-m", "pip", *download, f"{project}=={version}", "-d", tmp],
                    capture_output=True,
                    text=True,
                    timeout=timeout_s,
                )
            except subprocess.TimeoutExpired as exc:
                raise SdistUnavailableError(f"pip download {project}=={version}: no answer in {timeout_s}s") from exc
            archives = sorted(Path(tmp).glob("*.tar.gz"))
            if proc.returncode != 0 or len(archives) != 1:
                raise SdistUnavailableError(
                    f"pip download {project}=={version} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
                )
            unpacked = Path(tmp) / "unpacked"
            try:
                with tarfile.open(archives[0]) as tar:
                    tar.extractall(unpacked, filter="data")
            except (tarfile.TarError, OSError) as exc:
                raise SdistUnavailableError(f"cannot unpack {archives[0].name}: {exc}") from exc
            tops = list(unpacked.iterdir())
            if len(tops) != 1 or not (tops[0] / "PKG-INFO").is_file():
                raise SdistUnavailableError(f"{archives[0].name} is not an sdist (no single top folder with PKG-INFO)")
            tops[0].rename(target)
    return target


def cached_sdist(project: str, version: str) -> Path | None:
    """The unpacked sdist of ``project==version`` in the cache, or None if it was never fetched."""
    target = cache_dir() / "sdists" / f"{re.sub(r'[-_.]+', '_', project)}-{version}"
    return target if (target / "PKG-INFO").is_file() else None


def version_under_test(project: str) -> str:
    """The version of ``project`` installed where the tests run, or the pin when it is not installed.

    In the README's venv the two are the same (the test extra installs the pins); the run against a
    framework's newest release (``tests/helpers/newest.py``) installs a newer one, whose sdist it reads.
    """
    try:
        return metadata.version(project)
    except metadata.PackageNotFoundError:
        return pinned_version(project)


def sdist_or_fail(project: str) -> Path:
    """The unpacked sdist of the version under test, from the cache; fails the test if it is not there."""
    import pytest  # here, not at the top: the module runs without the venv (tests/helpers/checkout.py)

    version = version_under_test(project)
    found = cached_sdist(project, version)
    if found is None:
        pytest.fail(
            f"the sdist of {project}=={version} is not in {cache_dir() / 'sdists'}: run scripts/setup-tests "
            f"(or `python -m tests.helpers.sdist {project}`) first; tests do not reach the network"
        )
    return found


def main(projects: list[str]) -> int:
    """``python -m tests.helpers.sdist PROJECT...``: fetch the sdists of the versions under test into the cache
    (``scripts/setup-tests`` does, so the tests find them without reaching the network)."""
    for project in projects:
        try:
            print(f"sdist {project}: {fetch_sdist(project, version_under_test(project))}")
        except SdistUnavailableError as exc:
            print(f"sdist {project}: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
