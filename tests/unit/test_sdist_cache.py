"""Tests read the sdists and wheels scripts/setup-tests fetched from the cache, and never fetch them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.sdist import cached_sdist, pinned_version, sdist_or_fail
from tests.helpers.wheelhouse import DONE, requirements, wheelhouse_or_fail


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
    (tmp_path / "wheels" / DONE).write_text("\n".join(requirements()) + "\n")
    assert wheelhouse_or_fail() == tmp_path / "wheels"
    # the client's dependencies and the daemon's own ([tool.claw-sessiond-build]); no build backend to fetch
    assert "grpcio>=1.85.1" in requirements() and "aiosqlite>=0.20,<0.23" in requirements()
