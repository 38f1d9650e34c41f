"""The retry window: idempotency records are replayed inside it and pruned after it.

A real daemon with a one-second window (``--request-id-retention-s 1``); the
number of stored records is read from GetStats (``request_records``, a count
of the ``requests`` table) and, independently, read from storage
(``tests.helpers.inspect``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claw_sessiond_client import Message
from tests.helpers.daemon import DaemonProcess
from tests.helpers.inspect import stored
from tests.helpers.process import wait_until


def stored_records(workspace: Path) -> int:
    return stored(workspace).request_records()


def test_records_replay_inside_the_window_and_are_pruned_after_it(spawn_daemon, workspace: Path) -> None:
    d: DaemonProcess = spawn_daemon("--request-id-retention-s", "1")
    with d.client() as c:
        first = c.append("s", Message.user("one"), request_id="req-1")
        again = c.append("s", Message.user("one"), request_id="req-1")  # a retry inside the window
        assert again.replayed and (again.first_position, again.last_position) == (1, 1)
        c.record_usage("s", input_tokens=5, request_id="req-u")
        c.clear("s", request_id="req-c")  # records survive a Clear; the window still ends them
        assert c.stats()["request_records"] == 3 == stored_records(workspace)

        assert wait_until(lambda: c.stats()["request_records"] == 0, 15.0), d.log()
        assert stored_records(workspace) == 0
        assert c.stats()["request_records_pruned"] == 3

        # After pruning, the same request id is a new request: written again, at a new position.
        late = c.append("s", Message.user("one"), request_id="req-1")
        assert not late.replayed and late.first_position == 3 and first.first_position == 1
        # ... and it is remembered afresh: an immediate retry replays it.
        assert c.append("s", Message.user("one"), request_id="req-1").replayed
    assert d.terminate() == 0
    assert "event=request_records_pruned" in d.log()


@pytest.mark.smoke
def test_window_zero_keeps_records(spawn_daemon, workspace: Path) -> None:
    d: DaemonProcess = spawn_daemon("--request-id-retention-s", "0")
    with d.client() as c:
        c.append("s", Message.user("one"), request_id="req-1")
        assert c.stats()["request_records"] == 1
        assert c.append("s", Message.user("one"), request_id="req-1").replayed
    assert d.terminate() == 0
    assert stored_records(workspace) == 1
