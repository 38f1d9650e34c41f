"""What a storage reports about itself: running counters, what it holds, a copy's figures, and the outcome
of checking it (``doctor``). Plain data, shared by every backend and read by metrics, GetStats and the CLI.

Must never: import a backend, grpc or the service layer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["CheckStatus", "CopyFigures", "StorageCheck", "StorageCounters", "StorageFigures"]

_log = logging.getLogger("claw_sessiond.store")


@dataclass
class StorageCounters:
    """Running figures of this daemon's storage since start (read by metrics and GetStats)."""

    appends: int = 0
    messages_written: int = 0
    repairs: int = 0
    write_failures: int = 0
    commits: int = 0
    """Write transactions committed (a backend that commits requests in groups counts each group once)."""
    sessions_deleted: int = 0
    retention_deleted: int = 0
    requests_pruned: int = 0
    history_events_read: int = 0
    """History events a Load (its first read and its pages) read from storage: a bounded Load reads its
    window, not the history (the contract suite checks this)."""
    commit_observers: list[Callable[[int, float, bool], None]] = field(default_factory=list)
    """Told about every write transaction: the requests it carried, its seconds from begin to commit, and
    whether it committed. Called on the thread that ran it (a writer thread); an observer that raises is
    logged and never fails the write."""

    def observe(self, requests: int, began: float, committed: bool) -> None:
        """One write transaction of ``requests`` requests, begun at ``began`` (``time.perf_counter``), ended:
        count it if it committed and tell the :attr:`commit_observers`."""
        if committed:
            self.commits += 1
        seconds = time.perf_counter() - began
        for observer in self.commit_observers:
            try:
                observer(requests, seconds, committed)
            except Exception:  # an observer (metrics) never fails a write
                _log.exception("event=commit_observer_failed")


@dataclass(frozen=True, slots=True)
class StorageFigures:
    """What the storage holds now (read at stats and scrape time)."""

    sessions: int
    events: int
    request_records: int
    """Idempotency records kept (requests that can still be replayed)."""
    schema_version: int
    stored_bytes: int
    """Bytes the storage takes (SQLite: the database file)."""
    log_bytes: int
    """Bytes of written changes not yet folded into the stored data (SQLite: the WAL file; 0 where none)."""


@dataclass(frozen=True, slots=True)
class CopyFigures:
    """What a copy of the storage (a backup) holds, read from the copy itself."""

    sessions: int
    events: int
    bytes: int
    schema_version: int


CheckStatus = Literal["ok", "warn", "fail"]


@dataclass(frozen=True, slots=True)
class StorageCheck:
    """One outcome of checking a storage (``doctor``): ok, warn (worth knowing) or fail."""

    name: str
    status: CheckStatus
    detail: str
