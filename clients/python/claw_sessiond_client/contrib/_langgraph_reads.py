"""The LangGraph checkpointer's reads of its sessions: point reads, newest-first pages, pending writes.

Each read asks the daemon for what it returns and no more where the daemon can say so (see
each method); the entries are those of
:mod:`claw_sessiond_client.contrib._langgraph_entries`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from claw_sessiond_client import Message, SessionClient

from . import _langgraph_entries as E

__all__ = ["PAGE", "Reader", "StoredWrite"]

#: How many checkpoints one page of a ``list`` reads.
PAGE = 100


@dataclass(frozen=True, slots=True)
class StoredWrite:
    """One stored pending write of a checkpoint."""

    task_id: str
    channel: str
    task_path: str
    idx: int
    value: tuple[str, bytes]
    position: int
    client_id: str


class Reader:
    """Reads of one saver's sessions through its sync client (nothing is written: look-only loads)."""

    def __init__(self, client: SessionClient) -> None:
        self.client = client

    def _all(self, sid: str) -> tuple[list[Message], int]:
        loaded = self.client.load(sid, no_repair=True)
        return list(loaded.messages), loaded.session.last_position

    def by_client_id(self, sid: str, client_id: str) -> Message | None:
        """The checkpoint entry with this client id, or None."""
        for entry in self._all(sid)[0]:
            if entry.client_id == client_id and entry.format == E.FORMAT_CHECKPOINT:
                return entry
        return None

    def newest(self, sid: str) -> tuple[Message | None, int]:
        """The newest checkpoint entry (or None) and the session's last position: one entry read."""
        loaded = self.client.load(sid, no_repair=True, last=1)
        checkpoints = [e for e in loaded.messages if e.format == E.FORMAT_CHECKPOINT]
        return (checkpoints[-1] if checkpoints else None), loaded.session.last_position

    def pages(self, sid: str, before_id: str | None) -> Iterator[list[Message]]:
        """The checkpoint entries newest first, in pages of at most :data:`PAGE`; only those stored before
        the checkpoint ``before_id`` when it is given (none if it is not stored)."""
        entries = [e for e in self._all(sid)[0] if e.format == E.FORMAT_CHECKPOINT]
        if before_id:
            at = next((e.position for e in entries if e.client_id == before_id), None)
            if at is None:
                return
            entries = [e for e in entries if e.position < at]
        entries.reverse()
        for start in range(0, len(entries), PAGE):
            yield entries[start : start + PAGE]

    def writes(self, wid: str, checkpoint_ids: Iterable[str]) -> dict[str, list[StoredWrite]]:
        """The pending writes of these checkpoints, each list in LangGraph's order (task path, task id,
        index); of a special write stored more than once, the newest."""
        prefixes = {E.write_prefix(cid): cid for cid in checkpoint_ids}
        found: dict[str, dict[tuple[str, int], StoredWrite]] = {}
        for entry in self._all(wid)[0]:
            if entry.format != E.FORMAT_WRITE:
                continue
            cid = prefixes.get(entry.client_id.split("/", 1)[0] + "/")
            if cid is None:
                continue
            task_id, channel, task_path, idx, value = E.decode_write(entry.item)
            found.setdefault(cid, {})[(task_id, idx)] = StoredWrite(
                task_id, channel, task_path, idx, value, entry.position, entry.client_id
            )
        return {
            cid: sorted(by_key.values(), key=lambda w: (w.task_path, w.task_id, w.idx)) for cid, by_key in found.items()
        }
