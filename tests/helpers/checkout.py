"""The checkout's top folder, for the helpers that must import without the project's venv.

``tests/helpers/sdist.py`` and ``tests/helpers/wheelhouse.py`` run as ``python -m`` under any Python
3.11+ with pip and ``packaging`` (``.ci/run`` fills the caches from its start, beside the venv's
install: ``scripts/setup-tests downloads``), so what they import stays in the standard library, ``packaging``
and the client's stdlib-only ``install`` module (``tests/unit/test_sdist_cache.py`` checks it).
"""

from __future__ import annotations

from pathlib import Path

#: The checkout.
ROOT = Path(__file__).resolve().parents[2]
