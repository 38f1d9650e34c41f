"""Tests read the sdists and wheels scripts/setup-tests fetched from the cache, and never fetch them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import packaging
import pytest

from tests.helpers.checkout import ROOT
from tests.helpers.sdist import cached_sdist, pinned_version, sdist_or_fail
from tests.helpers.wheelhouse import DONE, fill, requirements, stamp, wheelhouse_or_fail


def test_a_missing_sdist_fails_the_test_naming_the_set_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAW_TEST_CACHE", str(tmp_path))
    with pytest.raises(pytest.fail.Exception) as caught:  # a failure, not a skip
        sdist_or_fail("langchain-core")
    assert "scripts/setup-tests" in str(caught.value) and "langchain-core==" in str(caught.value)
    assert list(tmp_path.iterdir()) == []  # nothing was fetched


def test_a_cached_sdist_is_found_without_the_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAW_TEST_CACHE", str(tmp_path))
    version = pinned_version("openai-agents")
    unpacked = tmp_path / "sdists" / f"openai_agents-{version}"
    unpacked.mkdir(parents=True)
    assert cached_sdist("openai-agents", version) is None  # a folder without PKG-INFO is not an sdist
    (unpacked / "PKG-INFO").write_text("Name: openai-agents\n")
    assert sdist_or_fail("openai-agents") == unpacked


def test_an_unfilled_wheelhouse_fails_the_packaging_test_naming_the_set_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAW_TEST_CACHE", str(tmp_path))
    with pytest.raises(pytest.fail.Exception) as caught:
        wheelhouse_or_fail()
    assert "scripts/setup-tests" in str(caught.value)
    # Filled for other requirements (the project's changed since): still refused.
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / DONE).write_text("setuptools>=1\n")
    with pytest.raises(pytest.fail.Exception):
        wheelhouse_or_fail()
    # Filled for these requirements but by another Python (other wheel tags): refused too.
    (tmp_path / "wheels" / DONE).write_text("\n".join(requirements()) + "\n# for cpython-399 on linux-x86_64\n")
    with pytest.raises(pytest.fail.Exception) as caught:
        wheelhouse_or_fail()
    assert "another Python" in str(caught.value)
    (tmp_path / "wheels" / DONE).write_text("\n".join(stamp()) + "\n")
    assert wheelhouse_or_fail() == tmp_path / "wheels"
    # the client's dependencies and the daemon's own ([tool.claw-sessiond-build]); no build backend to fetch
    assert "grpcio>=1.85.1" in requirements() and "aiosqlite>=0.20,<0.23" in requirements()


def test_a_filled_wheelhouse_is_not_filled_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """scripts/setup-tests asks for the wheelhouse on every run: filled for the same stamp, nothing is resolved."""
    monkeypatch.setenv("CLAW_TEST_CACHE", str(tmp_path))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # were pip run after all, it fails here instead of reaching the network
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / DONE).write_text("\n".join(stamp()) + "\n")
    assert fill() == tmp_path / "wheels"
    assert [p.name for p in (tmp_path / "wheels").iterdir()] == [DONE]
    assert (tmp_path / "wheels" / DONE).read_text() == "\n".join(stamp()) + "\n"


def test_the_download_helpers_run_without_the_venv() -> None:
    """.ci/run fills the sdists and the wheelhouse from its start, with a throwaway Python that has only pip and
    packaging (scripts/setup-tests downloads): the two modules import nothing else outside the standard library
    but the checkout's own (the client's stdlib-only install module). Checked in a process without site-packages."""
    site = str(Path(packaging.__file__).parents[1])
    code = (
        f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'clients' / 'python')!r}, {site!r}]; "
        "import tests.helpers.sdist, tests.helpers.wheelhouse; "
        "print(*sorted({m.partition('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)))"
    )
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["__main__", "claw_sessiond_client", "packaging", "tests"]
