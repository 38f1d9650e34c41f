"""The edit property's reference model and a ``Storage`` (in-process, both backends) on the written-out sequences
around a superseded repair (tests/helpers/edit_model.py, ``SEQUENCES``): after each step the storage's answer
must equal the model's, and every Load its projection. Two of them also run through a real daemon
(tests/e2e/test_edit_supersede_model.py).
"""

from __future__ import annotations

import pytest

from claw_sessiond.storage import Storage
from tests.helpers.edit_model import InProcess, Model
from tests.helpers.edit_sequences import AGAIN, CALL, LATE, SEQUENCES, run_written_out


@pytest.mark.parametrize("name", sorted(SEQUENCES))
async def test_the_model_and_the_storage_agree(storage: Storage, name: str) -> None:
    await run_written_out(InProcess(storage), name)


def test_the_model_repairs_a_call_whose_superseding_result_an_edit_removed() -> None:
    """Guard: the model itself says the call is open again (a second repair), not still answered."""
    model = Model()
    model.append("s", [CALL], "1")
    assert model.load("s")[0] == [("c0", 1, 2)]
    model.append("s", [LATE], "2")
    model.edit("s", 1, 0, [], 0, "3")
    assert model.load("s")[0] == [("c0", 1, 5)]
    assert model.append("s", [AGAIN], "4") == ("ok", (6, 6, False))
    assert model.append("s", [AGAIN], "5") == ("err", ("FAILED_PRECONDITION", "TOOL_CALL_ALREADY_ANSWERED"))
