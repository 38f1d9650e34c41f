"""The serving daemon's collector settings (``limits.settle_collector``), in a fresh interpreter (they are
process-wide): startup's objects frozen out of the generations, the youngest threshold raised."""

from __future__ import annotations

import subprocess
import sys

from claw_sessiond.limits import GC_YOUNG_THRESHOLD

_PROBE = """
import gc
from claw_sessiond import limits
older = gc.get_threshold()[1:]
limits.settle_collector()
print(gc.get_freeze_count() > 1000, gc.get_threshold() == (limits.GC_YOUNG_THRESHOLD, *older))
"""


def test_settle_collector_freezes_startup_objects_and_raises_the_young_threshold() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["True", "True"]
    assert 700 < GC_YOUNG_THRESHOLD <= 100_000  # above Python's default, and a bounded wait for cyclic garbage
