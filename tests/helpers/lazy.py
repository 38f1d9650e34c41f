"""A module imported on first use, for test modules whose tests need an agent framework.

Every pytest process (each xdist worker, the default tier too) imports every test module to collect it,
whichever worker then runs its tests; a framework imported at the top of a test module is paid by each
of them (``agents`` ~2.6 CPU-s, ``google.adk`` with ``google.genai`` ~1.9, ``langgraph`` ~1.3). A test
module names its framework's helpers through a :class:`LazyModule` instead, and only the process that
runs one of its tests imports them. ``tests/unit/test_collect_imports.py`` checks that collection loads
no framework.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["LazyModule"]


class LazyModule:
    """The module ``name``, imported (``importlib.import_module``) when an attribute is first read.

    Unlike ``importlib.util.LazyLoader`` it loads nothing before that, not even the parent packages. A name
    that starts with an underscore is never looked up (AttributeError): pytest probes every module-level object
    for such attributes as it collects (``_fixture_function_marker``, ``__test__``), and a lookup would import.
    It is not the module: patch a module's name by its dotted path (``monkeypatch.setattr("pkg.mod.NAME", v)``).
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"LazyModule({self._name!r})"
