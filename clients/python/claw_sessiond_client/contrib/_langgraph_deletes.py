"""The LangGraph checkpointer's deletions inside a thread namespace: ``delete_for_runs`` and ``prune``'s
``keep_latest``, each by DeleteEntries (recorded in the session's log as an edit).

The channel values a deletion leaves are those the checkpoints left name (every checkpoint's
``channel_versions``, whatever its header: one that holds its values itself names those a child put
stored for it all the same); it finds them in the pass that chooses what to delete.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from claw_sessiond_client import Message, SessionClient
from claw_sessiond_client.errors import InvalidRequestError, Reason, SessionNotFoundError

from . import _langgraph_entries as E
from ._langgraph_reads import PAGE, Reader

if TYPE_CHECKING:
    from langgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["Deleter"]


class Deleter:
    """Deletes checkpoints, their writes and the channel values no checkpoint left names, in one thread namespace's
    sessions (checkpoints ``sid``, writes ``wid``, values ``bid``)."""

    def __init__(self, client: SessionClient, reader: Reader, serde: SerializerProtocol) -> None:
        self.client = client
        self.reader = reader
        self.serde = serde

    def runs(self, sid: str, wid: str, bid: str, wanted: set[str]) -> None:
        """Delete every checkpoint whose metadata ``run_id`` is in ``wanted``, its writes, and then the values the
        others do not name: one pass over the checkpoints."""
        deleted = False
        used: set[str] = set()
        for page in self.reader.pages(sid, 0, PAGE):
            doomed = [e.client_id for e in page if _run_id(e) in wanted]
            used.update(name for e in page if _run_id(e) not in wanted for name in self.value_ids(e))
            if doomed:
                deleted = True
                self.client.delete_entries(sid, client_ids=doomed)
                for cid in doomed:
                    self.prefix(wid, E.write_prefix(cid))
        if deleted:
            self.unused_values(bid, used)

    def all_but_newest(self, sid: str, wid: str, bid: str) -> None:
        """Delete every checkpoint but the newest, every write but its own, every value but those it names."""
        newest, _ = self.reader.newest(sid)
        if newest is None:
            return
        self.all_but(sid, {newest.position}, E.FORMAT_CHECKPOINT, before=newest.position)
        kept = {e.position for e in self.reader.prefixed(wid, E.write_prefix(newest.client_id))}
        self.all_but(wid, kept, E.FORMAT_WRITE)
        self.unused_values(bid, self.value_ids(newest))

    def value_ids(self, entry: Message) -> set[str]:
        """The client ids of the channel values a checkpoint entry names: one per channel at its version."""
        versions = self.serde.loads_typed(E.decode_checkpoint(entry.item)[0])["channel_versions"]
        return {E.blob_client_id(ch, v) for ch, v in versions.items()}

    def unused_values(self, bid: str, used: set[str]) -> None:
        """Delete the channel values in ``bid`` but those ``used`` (what the checkpoints left name)."""
        for page in self.reader.pages(bid, 0, PAGE, E.FORMAT_BLOB):
            unused = [e.client_id for e in page if e.client_id not in used]
            if unused:
                self.client.delete_entries(bid, client_ids=unused)

    def all_but(self, sid: str, keep: set[int], fmt: str, before: int = 0) -> None:
        """Delete every entry of ``fmt`` (before position ``before``, 0: all) but those at ``keep``: a page at
        a time, each run of neighbouring entries one DeleteEntries of its position range."""
        for page in self.reader.pages(sid, before, PAGE, fmt):
            run: list[int] = []
            for entry in [*reversed(page), None]:
                if entry is not None and entry.position not in keep:
                    run.append(entry.position)
                    continue
                if run:
                    self.client.delete_entries(sid, from_position=run[0], to_position=run[-1])
                    run = []

    def prefix(self, sid: str, prefix: str) -> None:
        """Delete every entry whose client id starts with ``prefix`` (by pages of ids when they are more
        than the daemon deletes in one request)."""
        try:
            self.client.delete_entries(sid, client_id_prefix=prefix)
        except SessionNotFoundError:
            return  # no writes were ever stored there
        except InvalidRequestError as err:
            if err.reason != Reason.FIELD_TOO_LARGE:
                raise
            ids = [e.client_id for e in self.reader.prefixed(sid, prefix)]
            for start in range(0, len(ids), PAGE):
                self.client.delete_entries(sid, client_ids=ids[start : start + PAGE])


def _run_id(entry: Message) -> Any:
    """The ``run_id`` of a checkpoint entry's metadata JSON (None without one)."""
    try:
        metadata = json.loads(entry.metadata) if entry.metadata else {}
    except ValueError:
        return None
    return metadata.get("run_id") if isinstance(metadata, dict) else None
