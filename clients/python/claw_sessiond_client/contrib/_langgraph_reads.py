"""The LangGraph checkpointer's reads of its sessions: point reads, newest-first pages, pending writes, channel values.

Each read asks the daemon for what it returns and no more where the daemon can say so (see
each method); the entries are those of
:mod:`claw_sessiond_client.contrib._langgraph_entries`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from claw_sessiond_client import Message, SessionClient
from claw_sessiond_client.errors import InvalidRequestError, Reason

from . import _langgraph_entries as E

__all__ = ["PAGE", "Reader", "StoredWrite"]

#: How many checkpoints one page of a ``list`` reads at most (its first page: its limit's size, each next one
#: twice the one before).
PAGE = 100
#: At most this many client ids are asked for in one Load (a checkpoint's channel values, a batch's ids) until the
#: daemon says its bound (``--max-batch-messages``) is lower: then that bound.
IDS_PER_LOAD = 1000


@dataclass(frozen=True, slots=True)
class StoredWrite:
    """One stored pending write of a checkpoint."""

    task_id: str
    channel: str
    task_path: str
    idx: int
    value: tuple[str, bytes]


class Reader:
    """Reads of one saver's sessions through its sync client (look-only loads: nothing is written).

    Every read is bounded by what it returns: a checkpoint by id is a point read through the
    daemon's index of client ids, the newest one ``last=1``, a ``list`` page ``last=N`` before a
    position, a checkpoint's pending writes a read of their client id prefix, its channel values a
    read of their client ids.
    """

    def __init__(self, client: SessionClient) -> None:
        self.client = client
        #: How many client ids one Load asks for: IDS_PER_LOAD, or the daemon's lower bound once it refused more.
        self.ids_per_load = IDS_PER_LOAD

    def by_client_id(self, sid: str, client_id: str) -> Message | None:
        """The checkpoint entry with this client id, or None (one point read)."""
        for entry in self.client.load(sid, no_repair=True, client_ids=[client_id]).messages:
            if entry.client_id == client_id and entry.format == E.FORMAT_CHECKPOINT:
                return entry
        return None

    def by_client_ids(self, sid: str, client_ids: list[str]) -> list[Message]:
        """The visible entries with these client ids: a Load of each ``ids_per_load`` of them (a Load the daemon
        refuses as asking for more ids than its bound is asked again in parts of that bound)."""
        out: list[Message] = []
        start = 0
        while start < len(client_ids):  # bounded: each pass moves on, or lowers ids_per_load (never below 1)
            chunk = client_ids[start : start + self.ids_per_load]
            try:
                loaded = self.client.load(sid, no_repair=True, client_ids=chunk)
            except InvalidRequestError as err:
                bound = _bound(err)
                if bound is None or bound >= len(chunk):
                    raise
                self.ids_per_load = bound
                continue
            out.extend(loaded.messages)
            start += len(chunk)
        return out

    def blobs(self, bid: str, client_ids: Iterable[str]) -> dict[str, tuple[str, bytes]]:
        """The serialized channel values with these client ids (:func:`~._langgraph_entries.blob_client_id`), by
        client id: one read of them. A value stored as none (the channel had no value) or not stored is left out:
        a checkpoint's ``channel_values`` hold the values stored for its versions, as LangGraph's SQL savers'
        (LangGraph.js's validation suite asks for it: a put whose ``new_versions`` leave a channel out stores none)."""
        out: dict[str, tuple[str, bytes]] = {}
        for entry in self.by_client_ids(bid, list(dict.fromkeys(client_ids))):
            if entry.format == E.FORMAT_BLOB:
                value = E.decode_blob(entry.item)[1]
                if value is not None:
                    out[entry.client_id] = value
        return out

    def newest(self, sid: str) -> tuple[Message | None, int]:
        """The newest checkpoint entry (or None) and the session's last position: one entry read."""
        loaded = self.client.load(sid, no_repair=True, last=1)
        checkpoints = [e for e in loaded.messages if e.format == E.FORMAT_CHECKPOINT]
        return (checkpoints[-1] if checkpoints else None), loaded.session.last_position

    def pages(self, sid: str, before: int, size: int, fmt: str = E.FORMAT_CHECKPOINT) -> Iterator[list[Message]]:
        """The entries of format ``fmt`` newest first, from the newest one before position ``before`` (0: the newest
        of all); the first page one read of ``size`` entries, each next one of twice the one before, up to PAGE."""
        while True:  # bounded: each page ends at a lower position than the one before
            loaded = self.client.load(sid, no_repair=True, last=size, before_position=before or None)
            entries = loaded.messages
            if not entries:
                return
            yield [e for e in reversed(entries) if e.format == fmt]
            if len(entries) < size:
                return
            before = entries[0].position
            size = min(size * 2, PAGE)

    def writes(self, wid: str, checkpoint_ids: Iterable[str]) -> dict[str, list[StoredWrite]]:
        """The pending writes of these checkpoints, each list in LangGraph's order (task path, task id,
        index); of a special write stored more than once, the newest. One read of each checkpoint's
        client id prefix (paged at the daemon's batch bound; a reply that is not ``complete`` is followed
        by one more)."""
        out: dict[str, list[StoredWrite]] = {}
        for cid in checkpoint_ids:
            by_key: dict[tuple[str, int], StoredWrite] = {}
            for entry in self.prefixed(wid, E.write_prefix(cid)):
                if entry.format != E.FORMAT_WRITE:
                    continue
                task_id, channel, task_path, idx, value = E.decode_write(entry.item)
                by_key[(task_id, idx)] = StoredWrite(task_id, channel, task_path, idx, value)
            if by_key:
                out[cid] = sorted(by_key.values(), key=lambda w: (w.task_path, w.task_id, w.idx))
        return out

    def prefixed(self, sid: str, prefix: str) -> Iterator[Message]:
        """Every visible entry whose client id starts with ``prefix``, in position order (paged)."""
        after = 0
        while True:  # bounded: each page starts after the last position of the one before
            loaded = self.client.load(sid, no_repair=True, client_id_prefix=prefix, after_position=after or None)
            entries = loaded.messages
            yield from entries
            if loaded.complete or not entries:
                return
            after = entries[-1].position


def _bound(err: InvalidRequestError) -> int | None:
    """The daemon's bound on ids per request a FIELD_TOO_LARGE refusal names (its ``limit``), if it is one >= 1."""
    if err.reason != Reason.FIELD_TOO_LARGE:
        return None
    try:
        bound = int(err.metadata.get("limit", ""))
    except ValueError:
        return None
    return bound if bound >= 1 else None
