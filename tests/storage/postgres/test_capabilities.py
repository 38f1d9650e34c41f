"""What only one backend has is a capability the caller checks, not a stub: a PostgreSQL storage.

It takes turns to sweep (``SweepTurns``), its runs are shared with the other daemons (``SharedRuns``),
and it has neither SQLite's checkpoints (``Checkpointing``:
erasure is logical here, nothing lingers for the daemon to finish) nor its self-copy (``BackingUp``:
the server's backups are its own job). ``pending_erasures`` counts none after a delete.
"""

from __future__ import annotations

from pathlib import Path

from claw_sessiond.config import Config
from claw_sessiond.storage import BackingUp, Checkpointing, SharedRuns, SweepTurns, open_storage, pending_erasures
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import append, user


async def test_a_postgres_storage_takes_sweep_turns_and_has_no_checkpoint_or_self_copy(tmp_path: Path) -> None:
    (tmp_path / ".claw").mkdir(mode=0o700)
    store = await open_storage(Config(workspace=tmp_path, database_url=POSTGRES.database_for(str(tmp_path))))
    try:
        assert isinstance(store, SweepTurns) and isinstance(store.runs, SharedRuns)
        assert not isinstance(store, Checkpointing) and not hasattr(store, "checkpoint")
        assert not isinstance(store, BackingUp) and not hasattr(store, "backup")
        assert not hasattr(store, "written_since_start") and not hasattr(store, "erasures")
        await append(store, "s", user("x"))
        assert (await store.delete("s")).events_deleted == 1
        assert pending_erasures(store) == 0
    finally:
        await store.close()
