"""The build backend both distributions use (clients/python/build-backend/claw_sessiond_build.py), hook by hook.

Each wheel is checked against what it is made of, read here without the backend: its files are the
package folders' files under git (every one ships: modules, stubs, py.typed, the viewer's pages), byte
for byte; its metadata is what the pyproject.toml files say; its RECORD hashes what the archive holds.
The editable wheel maps both folders and takes the client's dependencies instead of the client; the
sdist builds the same wheel again, byte for byte. (Compared once with the setuptools build this
backend replaced: the same files but setuptools' top_level.txt, the same Requires-Dist with its
specifiers in another order, the same extras and entry point.)
"""

from __future__ import annotations

import base64
import configparser
import hashlib
import importlib.util
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.daemon import ROOT

CLIENT_DIR = ROOT / "clients" / "python"
BACKEND = CLIENT_DIR / "build-backend" / "claw_sessiond_build.py"


@pytest.fixture(scope="module")
def backend() -> Iterator[ModuleType]:
    """The backend module, imported from its file as pip's hook process does (backend-path)."""
    spec = importlib.util.spec_from_file_location("claw_sessiond_build", BACKEND)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass resolves its annotations through it
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def _toml(folder: Path) -> dict[str, Any]:
    with open(folder / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _tracked(folder: Path) -> dict[str, bytes]:
    """The files git tracks under ``folder``, by their path from its parent (as a wheel names them)."""
    out = subprocess.run(["git", "ls-files", "-z", "--", str(folder)], cwd=ROOT, capture_output=True, check=True)
    paths = [ROOT / p for p in out.stdout.decode().split("\0") if p]
    return {p.relative_to(folder.parent).as_posix(): p.read_bytes() for p in paths}


def _wheel(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def _metadata(text: str) -> tuple[list[tuple[str, str]], str]:
    head, _, body = text.partition("\n\n")
    return [(k, v) for k, _, v in (line.partition(": ") for line in head.splitlines())], body


def _field(fields: list[tuple[str, str]], key: str) -> list[str]:
    return [v for k, v in fields if k == key]


def _check_record(files: dict[str, bytes], info: str) -> None:
    rows = [line.split(",") for line in files[f"{info}/RECORD"].decode().splitlines()]
    assert sorted(r[0] for r in rows) == sorted(files)
    for path, digest, size in rows:
        if path == f"{info}/RECORD":
            assert (digest, size) == ("", "")
            continue
        sha = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=").decode()
        assert (digest, size) == (f"sha256={sha}", str(len(files[path]))), path
    assert files[f"{info}/WHEEL"].decode().splitlines()[::2] == ["Wheel-Version: 1.0", "Root-Is-Purelib: true"]
    assert "Tag: py3-none-any" in files[f"{info}/WHEEL"].decode().splitlines()


def _check_metadata(files: dict[str, bytes], info: str, folder: Path, requires: list[str]) -> None:
    project = _toml(folder)["project"]
    fields, body = _metadata(files[f"{info}/METADATA"].decode())
    assert _field(fields, "Metadata-Version") == ["2.4"]
    assert _field(fields, "Name") == [project["name"]] and _field(fields, "Version") == [project["version"]]
    assert _field(fields, "Summary") == [project["description"]]
    assert _field(fields, "License-Expression") == [project["license"]]
    assert _field(fields, "License-File") == project["license-files"]
    assert files[f"{info}/licenses/LICENSE"] == (folder / "LICENSE").read_bytes()
    assert _field(fields, "Requires-Python") == [project["requires-python"]]
    assert _field(fields, "Description-Content-Type") == ["text/markdown"]
    assert body == (folder / project["readme"]).read_text()
    extras = project["optional-dependencies"]
    assert _field(fields, "Provides-Extra") == list(extras)
    assert _field(fields, "Requires-Dist") == requires + [
        f'{r}; extra == "{extra}"' for extra, reqs in extras.items() for r in reqs
    ]
    scripts = project.get("scripts", {})
    if scripts:
        parser = configparser.ConfigParser(delimiters=("=",))
        parser.read_string(files[f"{info}/entry_points.txt"].decode())
        assert dict(parser["console_scripts"]) == scripts
    else:
        assert f"{info}/entry_points.txt" not in files


def _build(backend: ModuleType, hook: str, folder: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(folder)
    out.mkdir(exist_ok=True)
    return out / str(getattr(backend, hook)(str(out)))


def test_the_wheels_hold_the_packages_files_and_the_pyprojects_metadata(
    backend: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon, client = _toml(ROOT), _toml(CLIENT_DIR)
    version = daemon["project"]["version"]
    cases = [
        (
            ROOT,
            ROOT / "daemon" / "claw_sessiond",
            [*daemon["tool"]["claw-sessiond-build"]["dependencies"], f"claw-sessiond-client=={version}"],
        ),
        (CLIENT_DIR, CLIENT_DIR / "claw_sessiond_client", client["project"]["dependencies"]),
    ]
    for folder, package, requires in cases:
        files = _wheel(_build(backend, "build_wheel", folder, tmp_path / "dist", monkeypatch))
        name = _toml(folder)["project"]["name"].replace("-", "_")
        info = f"{name}-{version}.dist-info"
        assert {n: d for n, d in files.items() if not n.startswith(f"{info}/")} == _tracked(package)
        _check_record(files, info)
        _check_metadata(files, info, folder, requires)
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == [
        f"claw_sessiond-{version}-py3-none-any.whl",
        f"claw_sessiond_client-{version}-py3-none-any.whl",
    ]


def test_prepared_metadata_is_the_wheels(backend: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for hook, build in (
        ("prepare_metadata_for_build_wheel", "build_wheel"),
        ("prepare_metadata_for_build_editable", "build_editable"),
    ):
        info = _build(backend, hook, ROOT, tmp_path / hook, monkeypatch)
        files = _wheel(_build(backend, build, ROOT, tmp_path / build, monkeypatch))
        assert (info / "METADATA").read_bytes() == files[f"{info.name}/METADATA"]
        assert (info / "entry_points.txt").read_bytes() == files[f"{info.name}/entry_points.txt"]
    for hook in ("get_requires_for_build_wheel", "get_requires_for_build_sdist", "get_requires_for_build_editable"):
        assert getattr(backend, hook)() == []


def test_the_editable_wheel_maps_both_folders_and_takes_the_clients_dependencies(
    backend: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _wheel(_build(backend, "build_editable", ROOT, tmp_path, monkeypatch))
    version = _toml(ROOT)["project"]["version"]
    info = f"claw_sessiond-{version}.dist-info"
    pth = f"__editable__.claw_sessiond-{version}.pth"
    assert files[pth].decode().splitlines() == [str((ROOT / "daemon").resolve()), str(CLIENT_DIR.resolve())]
    assert [n for n in files if not n.startswith(f"{info}/")] == [pth]
    own = _toml(ROOT)["tool"]["claw-sessiond-build"]["dependencies"]
    requires = list(dict.fromkeys(own + _toml(CLIENT_DIR)["project"]["dependencies"]))
    _check_record(files, info)
    _check_metadata(files, info, ROOT, requires)


def _tree_copy(tmp_path: Path) -> Path:
    """The build inputs of both distributions, copied (from tests/helpers/wheelhouse.py)."""
    from tests.helpers.wheelhouse import copy_build_inputs

    (tmp_path / "src").mkdir()
    copy_build_inputs(tmp_path / "src")
    return tmp_path / "src"


def test_the_sdists_build_the_same_wheels_again(
    backend: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for folder in (ROOT, CLIENT_DIR):
        sdist = _build(backend, "build_sdist", folder, tmp_path / "sdist", monkeypatch)
        with tarfile.open(sdist) as tar:
            names = tar.getnames()
            assert all(n.startswith(sdist.name.removesuffix(".tar.gz") + "/") for n in names)
            tar.extractall(tmp_path / "unpacked", filter="data")
        unpacked = tmp_path / "unpacked" / sdist.name.removesuffix(".tar.gz")
        pkg_info = (unpacked / "PKG-INFO").read_bytes()
        again = _build(backend, "build_wheel", unpacked, tmp_path / "again", monkeypatch)
        first = _build(backend, "build_wheel", folder, tmp_path / "first", monkeypatch)
        assert again.read_bytes() == first.read_bytes()
        assert pkg_info == _wheel(first)[f"{first.name.removesuffix('-py3-none-any.whl')}.dist-info/METADATA"]
        assert not any("build-backend" in n for n in _wheel(first)), "the backend ships in a wheel"


def test_the_editable_build_refuses_a_client_at_another_version(
    backend: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _tree_copy(tmp_path)
    client = src / "clients" / "python" / "pyproject.toml"
    client.write_text(client.read_text().replace('version = "', 'version = "9', 1))
    out = tmp_path / "out"
    with pytest.raises(backend.BuildError, match=r"clients/python is at 9.*release them together"):
        _build(backend, "build_editable", src, out, monkeypatch)
    assert list(out.iterdir()) == []
    assert _build(backend, "build_wheel", src, out, monkeypatch).is_file()  # the wheel pins its own version


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('version = "0.1.0"', 'version = "0.1.0-beta"'), "normalized PEP 440"),
        (("[project]\n", '[project]\nauthors = [{name = "x"}]\n'), "authors: this backend does not write it"),
        (('license = "MIT"', 'license = {text = "MIT"}'), "SPDX expression"),
        (('license-files = ["LICENSE"]', 'license-files = ["COPYING"]'), "'COPYING' matches no file"),
        (('dynamic = ["dependencies"]', "dynamic = []"), "if and only if"),
    ],
)
def test_bad_pyproject_gets_a_clear_error_and_writes_nothing(
    backend: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: tuple[str, str], message: str
) -> None:
    src = _tree_copy(tmp_path)
    pyproject = src / "pyproject.toml"
    assert edit[0] in pyproject.read_text()
    pyproject.write_text(pyproject.read_text().replace(*edit, 1))
    out = tmp_path / "out"
    for hook in ("build_wheel", "build_sdist"):
        with pytest.raises(backend.BuildError, match=message):
            _build(backend, hook, src, out, monkeypatch)
    assert list(out.iterdir()) == []


def test_nothing_names_setuptools_any_more() -> None:
    for folder in (ROOT, CLIENT_DIR):
        data = _toml(folder)
        assert data["build-system"] == {
            "requires": [],
            "build-backend": "claw_sessiond_build",
            "backend-path": [str(BACKEND.parent.relative_to(folder))],
        }
        assert "setuptools" not in data.get("tool", {})
    assert not (ROOT / "setup.py").exists() and not (ROOT / "MANIFEST.in").exists()
