"""PEP 517 backend of the top-level distribution: setuptools, told whether the build is editable.

``setup.py`` builds two different things from one checkout (its docstring says
why): the ``claw-sessiond`` wheel (daemon package only, depends on
``claw-sessiond-client``), and the editable development install (daemon and
client packages, both from the working tree). PEP 517 gives ``setup.py`` no way
to tell them apart: setuptools prepares editable metadata with the same command
as wheel metadata. So the two editable hooks set :data:`EDITABLE_ENV` around
setuptools' own; every other hook is setuptools' unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (
    build_sdist,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

__all__ = [
    "EDITABLE_ENV",
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

#: Set to "1" while an editable build runs; read by setup.py. Not CLAW_SESSIOND_* (the daemon
#: warns about unknown variables with that prefix).
EDITABLE_ENV = "_CLAW_SESSIOND_EDITABLE_BUILD"


@contextmanager
def _editable() -> Iterator[None]:
    before = os.environ.get(EDITABLE_ENV)
    os.environ[EDITABLE_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[EDITABLE_ENV]
        else:
            os.environ[EDITABLE_ENV] = before


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    with _editable():
        return str(_setuptools.prepare_metadata_for_build_editable(metadata_directory, config_settings))


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    with _editable():
        return str(_setuptools.build_editable(wheel_directory, config_settings, metadata_directory))
