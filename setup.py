"""Build script of the ``claw-sessiond`` distribution (the daemon and its CLI).

Two builds come out of one checkout:

- **The wheel** (``pip wheel .``, ``python -m build``): the ``claw_sessiond``
  package only, depending on ``claw-sessiond-client`` at the same version. The
  client (``clients/python``, with the generated ``api/v1`` stubs the daemon
  imports) is its own distribution, built from ``clients/python/pyproject.toml``.
- **The editable install** (``pip install -e .``, the README's set-up): both
  packages, mapped to ``daemon/`` and ``clients/python/``, and the client's
  dependencies instead of the client itself. pip 23 cannot resolve a dependency
  to a local folder by name, nor install one editable, and a direct reference
  (``claw-sessiond-client @ file:...``) would install a *copy* of the client
  that hides edits to ``clients/python/``. (``pip install clients/python .``
  installs the two wheels' layout from a checkout, not editable.)

``scripts/build_backend/claw_sessiond_build.py`` (the PEP 517 backend named in
pyproject.toml) tells which of the two is being built. Everything else about
the distribution (name, version, extras, entry point) is in pyproject.toml.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
EDITABLE = os.environ.get("_CLAW_SESSIOND_EDITABLE_BUILD") == "1"

# What the daemon itself imports (the client's own dependencies come with claw-sessiond-client).
DAEMON_DEPENDENCIES = [
    # Below 0.23: a Load's snapshot runs on aiosqlite's own thread through its connection's
    # _execute and _conn (storage/sqlite/reading.py); a release that changes them is tried first.
    "aiosqlite>=0.20,<0.23",
    "grpcio>=1.85.1",
    "protobuf>=7.35.1",
    "grpcio-reflection>=1.85.1",
    "grpcio-health-checking>=1.85.1",
    "grpcio-status>=1.85.1",
    "googleapis-common-protos>=1.63",
    "prometheus-client>=0.20",
    "rich>=13",
    # the --tcp listener's TLS certificate, made at each start (rpc/tls.py)
    "cryptography>=42",
    # claw-sessiond ui: the viewer's HTTP server and Server-Sent Events on asyncio (docs/ARCHITECTURE.md)
    "aiohttp>=3.10",
]


def _pyproject(path: Path) -> dict[str, object]:
    with open(path, "rb") as f:
        project: dict[str, object] = tomllib.load(f)["project"]
    return project


version = _pyproject(HERE / "pyproject.toml")["version"]
if EDITABLE:
    client = _pyproject(HERE / "clients" / "python" / "pyproject.toml")
    if client["version"] != version:
        raise SystemExit(f"clients/python is at {client['version']}, the daemon at {version}: release them together")
    roots = {"claw_sessiond": "daemon", "claw_sessiond_client": "clients/python"}
    requires = list(dict.fromkeys(DAEMON_DEPENDENCIES + [str(d) for d in client["dependencies"]]))  # type: ignore[attr-defined]
else:
    roots = {"claw_sessiond": "daemon"}
    requires = [*DAEMON_DEPENDENCIES, f"claw-sessiond-client=={version}"]

packages = [p for top, root in roots.items() for p in find_packages(root, include=[top, f"{top}.*"])]
package_dir = {top: f"{root}/{top}" for top, root in roots.items()}

setup(packages=packages, package_dir=package_dir, install_requires=requires)
