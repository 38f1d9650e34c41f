"""An import of a new id that others keep creating and deleting at once gives way (``storage/importing.py``).

On PostgreSQL the import claims a new id with a placeholder row; an insert that finds the id taken
waits for the other transaction, whose session may be deleted again before the import looks. That
race is hard to stage on a real server, so the sequence runs here against a port that answers every
look with "no row" and every claim with "taken": after three rounds it must refuse, retryable, having
written nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from claw_sessiond.errors import Reason, StorageUnavailableError
from claw_sessiond.export import ExportHeader, ImportedSession
from claw_sessiond.storage.importing import import_session
from claw_sessiond.storage.steps import run_sync


class RacedPort:
    """Every session look finds no row; every claim finds the id taken. Any other verb is a write."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def session_row(self, session_id: str) -> tuple[None, str]:
        self.calls.append("session_row")
        return None, "2026-01-01T00:00:00.000000Z"

    def claim_session(self, *args: Any) -> None:
        self.calls.append("claim_session")
        return None

    def __getattr__(self, verb: str) -> Any:
        raise AssertionError(f"the import went on to {verb}")


def test_an_import_gives_way_after_three_lost_claims_and_writes_nothing() -> None:
    port = RacedPort()
    session = ImportedSession(ExportHeader("s", "/w", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", 0), [])
    with pytest.raises(StorageUnavailableError) as caught:
        run_sync(import_session(port, session, "refuse"))  # type: ignore[arg-type]
    assert caught.value.reason == Reason.STORAGE_UNAVAILABLE
    assert port.calls == ["session_row", "claim_session"] * 3
