"""A writer process for the EditTail crash test (tests/e2e/test_edit_crash.py), run as a module.

Usage: ``python -m tests.helpers.edit_writer ADDRESS SESSION LOG STOP_FILE DEADLINE_EPOCH``

Edits one session, which it alone writes, until STOP_FILE exists: edit ``i``
(request id ``<SESSION>-<i>``) removes the last ``i % 4`` visible entries (at
most as many as are visible) and appends ``i % 3 + 1`` replacements whose
contents are ``<rid>/<k>``, on condition that the last position is still the
one the previous acknowledgement left (``expected_last_position``). Every
edit is retried with the *same* request id until it is acknowledged, across
daemon kills and restarts, so the writer always knows how many entries are
visible and where the session ends. Every acknowledgement is logged as one
JSON line: ``{"rid", "edit", "first", "last", "removed", "texts", "replayed"}``
(``removed``: the positions the reply named; empty on a replay). A request
still unacknowledged at DEADLINE_EPOCH is logged as ``{"rid", "gave_up": true}``.
"""

from __future__ import annotations

import json
import os
import sys
import time

from claw_sessiond_client import Message, SessionClient
from claw_sessiond_client.errors import (
    DaemonUnavailableError,
    DeadlineError,
    ShuttingDownError,
    StorageUnavailableError,
)

_RETRY = (DaemonUnavailableError, DeadlineError, ShuttingDownError, StorageUnavailableError)


def plan(i: int, visible: int) -> tuple[int, int]:
    """(entries to remove, replacements to append) of edit ``i`` when ``visible`` entries are visible."""
    return min(i % 4, visible), i % 3 + 1


def main() -> int:
    address, session, log_path, stop_file, deadline_arg = sys.argv[1:6]
    deadline = float(deadline_arg)
    client = SessionClient(address=address, autostart=False, timeout_s=5, retry_window_s=0.5)
    visible = last = i = 0
    with open(log_path, "a", buffering=1) as log:
        while not os.path.exists(stop_file) and time.time() < deadline:
            rid = f"{session}-{i}"
            remove, add = plan(i, visible)
            texts = [f"{rid}/{k}" for k in range(add)]
            while True:
                try:
                    result = client.edit_tail(
                        session,
                        remove_last=remove,
                        replacements=[Message.user(t) for t in texts],
                        expected_last_position=last,
                        request_id=rid,
                    )
                    break
                except _RETRY:
                    if time.time() > deadline:
                        log.write(json.dumps({"rid": rid, "gave_up": True}) + "\n")
                        return 1
                    time.sleep(0.02)
            record = {
                "rid": rid,
                "edit": result.edit_position,
                "first": result.first_position,
                "last": result.last_position,
                "removed": [m.position for m in result.removed],
                "remove": remove,
                "texts": texts,
                "replayed": result.replayed,
            }
            log.write(json.dumps(record) + "\n")
            visible += add - remove
            last = result.last_position
            i += 1
    client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
