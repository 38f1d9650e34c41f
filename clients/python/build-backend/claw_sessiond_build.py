"""The PEP 517 build backend of both distributions, ``claw-sessiond`` and ``claw-sessiond-client``: stdlib only.

Each ``pyproject.toml`` names this module (``requires = []``, ``backend-path``: the client's tree is
``clients/python``, and a backend must live inside the tree it builds, so the one file is here and
the top-level pyproject points into it; it is in neither wheel). pip then builds with nothing
installed into its isolated environment and in one hook process per call, where setuptools cost
about 1 CPU-s to install and 2 more to run for each of the ~30 builds of the install tests.

What a distribution is comes from its ``pyproject.toml``: the ``[project]`` table (name, version,
summary, readme as the long description, license expression and files, requires-python,
dependencies, extras, scripts and entry points; core metadata 2.4) and
``[tool.claw-sessiond-build]``:

- ``packages``: each top-level package and the folder it is in (relative to the pyproject). A
  package's modules are the ``.py`` files of its folders that have an ``__init__.py``.
- ``package-data``: the other files it ships, globs inside each top-level package's folder
  (``py.typed``, ``.pyi`` stubs, the web viewer's built pages).
- ``dependencies``: the daemon's own, when ``[project]`` declares ``dependencies`` dynamic.
- ``client``: the folder of the client distribution the daemon ships with.

Two builds come out of the daemon's checkout:

- **The wheel** (``pip wheel .``, ``python -m build``): the ``claw_sessiond`` package only,
  depending on ``claw-sessiond-client`` at the same version. The client (``clients/python``, with
  the generated ``api/v1`` stubs the daemon imports) is its own distribution.
- **The editable install** (``pip install -e .``, the README's set-up): both packages, mapped to
  ``daemon/`` and ``clients/python/`` by one ``.pth`` file, and the client's dependencies instead
  of the client itself. pip 23 cannot resolve a dependency to a local folder by name, nor install
  one editable, and a direct reference (``claw-sessiond-client @ file:...``) would install a
  *copy* of the client that hides edits to ``clients/python/``. (``pip install clients/python .``
  installs the two wheels' layout from a checkout, not editable.) The two versions must match.

The sdist holds the pyproject, readme, license files, the backend and the packages' files, and
``PKG-INFO``; it builds the same wheel again. Archives are reproducible: their entries are sorted
and dated ``SOURCE_DATE_EPOCH`` (default 1980-01-01). Specifications: PEP 517, PEP 660, PEP 427
(wheel, RECORD), core metadata 2.4 (PEP 639 license fields), PEP 625 (sdist names), PEP 685 (extras).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import tarfile
import time
import tomllib
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

_TOOL = "claw-sessiond-build"
_BACKEND = Path(__file__).resolve()
_WHEEL = "Wheel-Version: 1.0\nGenerator: claw_sessiond_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
#: A normalized PEP 440 public version: written so in pyproject.toml, it names the files as is.
_VERSION = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")
_README_TYPES = {".md": "text/markdown", ".rst": "text/x-rst", ".txt": "text/plain"}
_SKIPPED_DIRS = {"__pycache__"}
#: The [project] keys this backend writes into the metadata; any other is refused rather than dropped.
_PROJECT_KEYS = frozenset(
    [
        "name",
        "version",
        "description",
        "readme",
        "requires-python",
        "license",
        "license-files",
        "keywords",
        "urls",
        "dependencies",
        "optional-dependencies",
        "scripts",
        "gui-scripts",
        "entry-points",
        "dynamic",
    ]
)


class BuildError(Exception):
    """pyproject.toml or the tree does not describe a distribution this backend can build (the message says why)."""


@dataclass(frozen=True)
class _Dist:
    """One distribution as one build makes it: where its files come from and what its metadata says."""

    root: Path
    project: Mapping[str, Any]
    packages: Mapping[str, Path]  # top-level package -> the folder that holds it
    package_data: tuple[str, ...]
    dependencies: tuple[str, ...]
    client: Path | None  # the client's folder, for the daemon (its pyproject names the client and its version)

    @property
    def name(self) -> str:
        return str(self.project["name"])

    @property
    def version(self) -> str:
        return str(self.project["version"])

    @property
    def stem(self) -> str:
        """``{name}-{version}`` as wheel, dist-info and sdist file names write it."""
        return f"{re.sub(r'[-_.]+', '_', self.name).lower()}-{self.version}"


def _pyproject(root: Path) -> dict[str, Any]:
    try:
        with open(root / "pyproject.toml", "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BuildError(f"{root / 'pyproject.toml'}: {exc}") from exc


def _load(root: Path, *, editable: bool) -> _Dist:
    data = _pyproject(root)
    project, tool = data.get("project", {}), data.get("tool", {}).get(_TOOL, {})
    unknown = sorted(set(project) - _PROJECT_KEYS)
    if unknown:
        raise BuildError(f"{root / 'pyproject.toml'}: [project] {', '.join(unknown)}: this backend does not write it")
    if not isinstance(project.get("license", ""), str):
        raise BuildError(f"{root / 'pyproject.toml'}: [project] license must be an SPDX expression (a string)")
    for key in ("name", "version"):
        if not isinstance(project.get(key), str):
            raise BuildError(f"{root / 'pyproject.toml'}: [project] {key} must be a string")
    if not _VERSION.fullmatch(project["version"]):
        raise BuildError(f"version {project['version']!r}: write it in normalized PEP 440 form (e.g. 1.2.0rc1)")
    dynamic = set(project.get("dynamic", []))
    if dynamic - {"dependencies"}:
        raise BuildError(f"[project] dynamic: only dependencies can be (from [tool.{_TOOL}]), not {sorted(dynamic)}")
    if ("dependencies" in dynamic) != ("dependencies" in tool):
        raise BuildError(f"dependencies: in [tool.{_TOOL}] if and only if [project] dynamic names them")
    requires = list(tool["dependencies"] if "dependencies" in dynamic else project.get("dependencies", []))
    packages = {top: root / folder for top, folder in tool.get("packages", {}).items()}
    if not packages:
        raise BuildError(f"{root / 'pyproject.toml'}: [tool.{_TOOL}] packages names no package")
    if "client" in tool:
        client_root = root / tool["client"]
        client_data = _pyproject(client_root)
        client = client_data["project"]
        if editable:
            if client["version"] != project["version"]:
                raise BuildError(
                    f"{tool['client']} is at {client['version']}, the daemon at {project['version']}: "
                    "release them together"
                )
            requires += client.get("dependencies", [])
            packages |= {top: client_root / folder for top, folder in client_data["tool"][_TOOL]["packages"].items()}
        else:
            requires.append(f"{client['name']}=={project['version']}")
    for top, folder in packages.items():
        if not (folder / top / "__init__.py").is_file():
            raise BuildError(f"package {top}: no {folder / top / '__init__.py'}")
    return _Dist(
        root=root,
        project=project,
        packages=packages,
        package_data=tuple(tool.get("package-data", [])),
        dependencies=tuple(dict.fromkeys(requires)),
        client=root / tool["client"] if "client" in tool else None,
    )


# ---------------------------------------------------------------- what the distribution holds


def _package_files(dist: _Dist) -> dict[str, Path]:
    """The wheel's package files by their path in the wheel: every module of each package, and its package data."""
    out: dict[str, Path] = {}
    for top, folder in dist.packages.items():
        for path in sorted((folder / top).rglob("*")):
            parts = path.relative_to(folder).parts
            if not path.is_file() or _SKIPPED_DIRS & set(parts) or path.suffix == ".pyc":
                continue
            is_module = path.suffix == ".py" and all(
                (folder.joinpath(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts))
            )
            inside = path.relative_to(folder / top).as_posix()
            in_data = any(fnmatchcase(inside if "/" in p else path.name, p) for p in dist.package_data)
            if is_module or in_data:
                out["/".join(parts)] = path
    return out


def _license_files(dist: _Dist) -> list[str]:
    """The license files, by their path from the root (``license-files`` globs; each must match a file)."""
    out: list[str] = []
    for pattern in dist.project.get("license-files", []):
        found = sorted(p.relative_to(dist.root).as_posix() for p in dist.root.glob(pattern) if p.is_file())
        if not found:
            raise BuildError(f"license-files: {pattern!r} matches no file")
        out += found
    return list(dict.fromkeys(out))


def _readme(dist: _Dist) -> tuple[str, str] | None:
    """The long description and its content type, from ``readme``."""
    readme = dist.project.get("readme")
    if readme is None:
        return None
    if isinstance(readme, str):
        readme = {"file": readme}
    if "text" in readme:
        return readme["text"], readme["content-type"]
    path = dist.root / readme["file"]
    kind = readme.get("content-type") or _README_TYPES.get(path.suffix.lower())
    if kind is None:
        raise BuildError(f"readme {readme['file']}: say its content-type")
    return path.read_text(encoding="utf-8"), kind


def _extra(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def metadata(dist: _Dist) -> str:
    """The core metadata (2.4) of the distribution: ``METADATA`` in the wheel, ``PKG-INFO`` in the sdist."""
    project = dist.project
    lines = ["Metadata-Version: 2.4", f"Name: {dist.name}", f"Version: {dist.version}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if project.get("keywords"):
        lines.append(f"Keywords: {','.join(project['keywords'])}")
    if "license" in project:
        lines.append(f"License-Expression: {project['license']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    for label, url in project.get("urls", {}).items():
        lines.append(f"Project-URL: {label}, {url}")
    readme = _readme(dist)
    if readme is not None:
        lines.append(f"Description-Content-Type: {readme[1]}")
    lines += [f"License-File: {name}" for name in _license_files(dist)]
    lines += [f"Requires-Dist: {req}" for req in dist.dependencies]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {_extra(extra)}")
        for req in reqs:
            spec, _, marker = req.partition(";")
            when = f"({marker.strip()}) and " if marker.strip() else ""
            lines.append(f'Requires-Dist: {spec.strip()}; {when}extra == "{_extra(extra)}"')
    text = "\n".join(lines) + "\n"
    return text + ("\n" + readme[0] if readme is not None else "")


def _entry_points(project: Mapping[str, Any]) -> str | None:
    groups = {"console_scripts": project.get("scripts", {}), "gui_scripts": project.get("gui-scripts", {})}
    groups |= project.get("entry-points", {})
    text = "\n".join(
        f"[{group}]\n" + "".join(f"{name} = {ref}\n" for name, ref in refs.items())
        for group, refs in groups.items()
        if refs
    )
    return text or None


def _dist_info(dist: _Dist) -> dict[str, bytes]:
    """The ``.dist-info`` files but RECORD, by their path in it."""
    files = {"METADATA": metadata(dist).encode(), "WHEEL": _WHEEL.encode()}
    entry_points = _entry_points(dist.project)
    if entry_points is not None:
        files["entry_points.txt"] = entry_points.encode()
    for name in _license_files(dist):
        files[f"licenses/{name}"] = (dist.root / name).read_bytes()
    return files


# ---------------------------------------------------------------- archives


def _epoch() -> int:
    """The archives' file dates: ``SOURCE_DATE_EPOCH``, else 1980-01-01 (a zip cannot date earlier)."""
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _write_wheel(directory: str, dist: _Dist, files: Mapping[str, bytes]) -> str:
    """A wheel of ``files`` (path in the wheel -> bytes) and the dist-info, with its RECORD (PEP 427)."""
    info = f"{dist.stem}.dist-info"
    entries = dict(files) | {f"{info}/{name}": data for name, data in _dist_info(dist).items()}
    record = "".join(
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for path, data in entries.items()
    )
    entries[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    name = f"{dist.stem}-py3-none-any.whl"
    with zipfile.ZipFile(Path(directory) / name, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path, data in entries.items():
            entry = zipfile.ZipInfo(path, time.gmtime(_epoch())[:6])
            entry.external_attr = 0o100644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(entry, data)
    return name


def _write_metadata_dir(directory: str, dist: _Dist) -> str:
    info = Path(directory) / f"{dist.stem}.dist-info"
    for name, data in _dist_info(dist).items():
        (info / name).parent.mkdir(parents=True, exist_ok=True)
        (info / name).write_bytes(data)
    return info.name


def _sdist_files(dist: _Dist) -> dict[str, Path]:
    """What the sdist holds, by its path from the root: enough to build the wheel again."""
    files = {"pyproject.toml": dist.root / "pyproject.toml"}
    readme = dist.project.get("readme")
    if isinstance(readme, str) or (isinstance(readme, dict) and "file" in readme):
        name = readme if isinstance(readme, str) else readme["file"]
        files[name] = dist.root / name
    files |= {name: dist.root / name for name in _license_files(dist)}
    files[_BACKEND.relative_to(dist.root.resolve()).as_posix()] = _BACKEND
    if dist.client is not None:
        files[(dist.client / "pyproject.toml").relative_to(dist.root).as_posix()] = dist.client / "pyproject.toml"
    for path in _package_files(dist).values():
        files[path.resolve().relative_to(dist.root.resolve()).as_posix()] = path
    return dict(sorted(files.items()))


def _add(tar: tarfile.TarFile, path: str, data: bytes) -> None:
    entry = tarfile.TarInfo(path)
    entry.size, entry.mtime, entry.mode = len(data), _epoch(), 0o644
    tar.addfile(entry, io.BytesIO(data))


# ---------------------------------------------------------------- the PEP 517 / PEP 660 hooks


def _requires(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


get_requires_for_build_wheel = get_requires_for_build_sdist = get_requires_for_build_editable = _requires


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    return _write_metadata_dir(metadata_directory, _load(Path.cwd(), editable=False))


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    return _write_metadata_dir(metadata_directory, _load(Path.cwd(), editable=True))


def build_wheel(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    dist = _load(Path.cwd(), editable=False)
    return _write_wheel(wheel_directory, dist, {path: src.read_bytes() for path, src in _package_files(dist).items()})


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    dist = _load(Path.cwd(), editable=True)
    folders = dict.fromkeys(str(folder.resolve()) for folder in dist.packages.values())
    pth = "".join(f"{folder}\n" for folder in folders).encode()
    return _write_wheel(wheel_directory, dist, {f"__editable__.{dist.stem}.pth": pth})


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    dist = _load(Path.cwd(), editable=False)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, src in _sdist_files(dist).items():
            _add(tar, f"{dist.stem}/{path}", src.read_bytes())
        _add(tar, f"{dist.stem}/PKG-INFO", metadata(dist).encode())
    name = f"{dist.stem}.tar.gz"
    with open(Path(sdist_directory) / name, "wb") as out, gzip.GzipFile("", "wb", fileobj=out, mtime=_epoch()) as gz:
        gz.write(raw.getvalue())
    return name
