"""Written-out sequences around a superseded repair, for the edit property's reference model
(tests/helpers/edit_model.py) and a storage or a daemon.

A property run once saw the daemon accept a tool result the model refused as already answered; its seed was
lost. These are the sequences suspected (a call, the Load that repairs it, the late real result that supersedes
the repair, then an EditTail that removes the real result or the repair, an erasing Clear, the result sent
again), written out so that every run compares them: after each step the answer must equal the model's, and
every Load its projection. All of them run on a ``Storage`` in-process, both backends
(tests/storage/test_edit_supersede_model.py), two through a real daemon (tests/e2e/test_edit_supersede_model.py).
"""

from __future__ import annotations

import uuid
from typing import Any

from tests.helpers.edit_model import Model, Side

CALL = {"role": "assistant", "content": "", "calls": ["c0"]}
LATE = {"role": "tool", "tool_call_id": "c0", "content": "late"}
AGAIN = {"role": "tool", "tool_call_id": "c0", "content": "again"}

#: Steps: ("append", batch) | ("edit", remove_last, after, replacements) | ("clear", erase) | ("load",)
SEQUENCES: dict[str, list[tuple[Any, ...]]] = {
    "remove the real result, then Load": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 1, 0, []),
        ("load",),
        ("load",),
        ("append", [AGAIN]),
        ("append", [AGAIN]),
        ("load",),
    ],
    "remove the real result, then send it again": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 1, 0, []),
        ("append", [AGAIN]),
        ("append", [AGAIN]),
        ("load",),
    ],
    "replace the real result in the edit": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 0, 1, [AGAIN]),
        ("append", [LATE]),
        ("edit", 1, 0, []),
        ("load",),
    ],
    "remove the repair": [
        ("append", [CALL]),
        ("load",),
        ("edit", 1, 0, []),
        ("append", [LATE]),
        ("append", [AGAIN]),
        ("edit", 1, 0, []),
        ("load",),
        ("append", [AGAIN]),
        ("load",),
    ],
    "remove the call with its result": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 2, 0, []),
        ("append", [LATE]),
        ("load",),
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("load",),
    ],
    "an erasing clear in between": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("edit", 1, 0, []),
        ("clear", True),
        ("append", [AGAIN]),
        ("load",),
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("append", [AGAIN]),
        ("load",),
    ],
    "a clear that keeps the log in between": [
        ("append", [CALL]),
        ("load",),
        ("append", [LATE]),
        ("clear", False),
        ("append", [CALL]),
        ("load",),
        ("edit", 1, 0, []),
        ("append", [LATE]),
        ("append", [AGAIN]),
        ("load",),
    ],
}


async def run_written_out(real: Side, name: str) -> None:
    """One of :data:`SEQUENCES` on the side and on a new model; every answer must be equal."""
    model = Model()
    sid = f"supersede-{uuid.uuid4().hex[:8]}"
    outcomes: list[str] = []
    for n, step in enumerate(SEQUENCES[name]):
        rid = f"{sid}-{n}"
        kind = step[0]
        if kind == "load":
            got, expected = await real.load(sid), model.load(sid)
        elif kind == "append":
            got, expected = await real.append(sid, step[1], rid), model.append(sid, step[1], rid)
        elif kind == "edit":
            args = (sid, step[1], step[2], step[3], 0, rid)
            got, expected = await real.edit(*args), model.edit(*args)
        else:
            got, expected = await real.clear(sid, step[1], rid), model.clear(sid, step[1], rid)
        assert got == expected, f"{name}, step {n} {step}: got {got}, model {expected}"
        if kind != "load":
            outcomes.append(expected[0] if expected[0] == "ok" else expected[1][1])
    # Each sequence sends a result the rules refuse (so the comparison covers a refusal too).
    assert "TOOL_CALL_ALREADY_ANSWERED" in outcomes or "UNKNOWN_TOOL_CALL" in outcomes, outcomes
