"""What the daemon remembers of its own writes for retention (``retention.WrittenSessions``), bounded."""

from __future__ import annotations

import time

from claw_sessiond.retention import WrittenSessions


def test_noted_sessions_are_kept_until_forgotten_by_their_last_write() -> None:
    written = WrittenSessions()
    written.note("a")
    written.note("b")
    assert "a" in written and "b" in written and "c" not in written
    time.sleep(0.01)  # the cut is strictly after the first notes, whatever the clock's resolution
    cut = time.monotonic()
    written.note("b")  # written again after the cut: kept
    assert written.forget_before(cut) == 1
    assert "a" not in written and "b" in written
    assert written.forget_before(time.monotonic() + 1) == 1 and "b" not in written


def test_with_retention_off_nothing_is_kept() -> None:
    written = WrittenSessions(enabled=False)
    for i in range(1000):
        written.note(f"s{i}")
    assert "s0" not in written and written.forget_before(time.monotonic() + 1) == 0
