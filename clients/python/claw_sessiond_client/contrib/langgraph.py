"""LangGraph checkpoints kept by claw-sessiond: :class:`ClawCheckpointSaver`.

Install with ``pip install './clients/python[langgraph]' .`` in a checkout (pins ``langgraph``;
the git URL form: README's Install section)::

    from claw_sessiond_client import SessionClient
    from claw_sessiond_client.contrib.langgraph import ClawCheckpointSaver

    with SessionClient(".") as client:
        graph = builder.compile(checkpointer=ClawCheckpointSaver(client))
        graph.invoke(inputs, {"configurable": {"thread_id": "t1"}})

A thread namespace is three sessions (its checkpoints, its pending writes, its channel values), laid out as
:mod:`claw_sessiond_client.contrib._langgraph_entries` says; docs/adapters.md tells what that
gives over LangGraph's own savers. Several processes may share a thread: a checkpoint put on a
parent that another writer has moved past raises :class:`CheckpointConflictError`, never a lost
checkpoint.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from claw_sessiond_client.install import missing_framework

try:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        WRITES_IDX_MAP,
        BaseCheckpointSaver,
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
        get_checkpoint_id,
        get_checkpoint_metadata,
    )
    from langgraph.checkpoint.serde.base import SerializerProtocol
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise missing_framework(__name__, "langgraph", client_extra="langgraph") from exc

from claw_sessiond_client import Message, SessionClient
from claw_sessiond_client.errors import (
    AlreadyExistsError,
    Reason,
    SequenceConflictError,
    SessiondError,
)

from . import _langgraph_entries as E
from ._langgraph_deletes import Deleter
from ._langgraph_reads import PAGE, Reader

__all__ = ["CheckpointConflictError", "ClawCheckpointSaver"]

#: ListSessions page size when the saver looks for a thread's (or every thread's) sessions.
_PAGE = 100
#: At most this many pages of sessions are walked by one call (100,000 thread namespaces).
_MAX_PAGES = 1000
#: At most this many checkpoint ids are remembered as having their channel values in blobs (a put of a child of
#: one not remembered reads the parent's entry once).
_KNOWN = 10_000
#: The kinds of a thread namespace's sessions, in the order of ``session_ids``.
_KINDS = (E.KIND_CHECKPOINTS, E.KIND_WRITES, E.KIND_BLOBS)


class CheckpointConflictError(SequenceConflictError):
    """Another writer changed the thread since this saver read it: the checkpoint was not stored.

    Raised by ``put`` when the parent checkpoint is no longer the thread's newest (another
    process ran the same thread meanwhile), and when a checkpoint id is already stored with other
    contents. The checkpoint was not written (channel values put before it stay, named by none);
    read the thread again (``get_tuple``) to go on from its newest checkpoint.
    """


class ClawCheckpointSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer whose threads live in a claw-sessiond daemon.

    Args:
        client: the sync client to use (not closed by this saver). Default: one made from
            ``workspace`` / ``address`` / ``token`` and closed by :meth:`close`.
        prefix: the first part of this saver's session ids and the value of its
            ``langgraph.saver`` label (1-64 characters of ``[A-Za-z0-9_-]``): savers with
            different prefixes share a daemon without seeing each other's threads.
        serde: LangGraph's serializer for checkpoints and writes (default: the base saver's).
        workspace, address, token, autostart: how to reach the daemon when ``client`` is not given.

    The async methods run the sync ones in a worker thread (the sync client is thread-safe).
    A thread id and a namespace are any str of at most 256 bytes; anything else raises
    ValueError/TypeError before anything is sent.
    """

    def __init__(
        self,
        client: SessionClient | None = None,
        *,
        prefix: str = "langgraph",
        serde: SerializerProtocol | None = None,
        workspace: str | os.PathLike[str] | None = None,
        address: str | None = None,
        token: str | None = None,
        autostart: bool = True,
    ) -> None:
        super().__init__(serde=serde)
        self.prefix = E.check_prefix(prefix)
        self._owns_client = client is None
        self.client = (
            client
            if client is not None
            else SessionClient(workspace, address=address, token=token, autostart=autostart)
        )
        self._reader = Reader(self.client)
        self._deleter = Deleter(self.client, self._reader, self.serde)
        self._lock = threading.Lock()
        #: (thread, ns) -> (checkpoint id, position): the newest checkpoint this saver read or wrote there.
        self._tails: dict[tuple[str, str], tuple[str, int]] = {}
        #: The sessions this saver created (or found stored) with their labels.
        self._made: set[str] = set()
        #: Sessions this saver may have written to after another saver deleted them (appends recreate a session
        #: without labels): the next ``_ensure`` of one sets its labels even if it exists.
        self._stale: set[str] = set()
        #: (thread, ns, checkpoint id) of checkpoints whose channel values are blobs (a child put of one reads
        #: nothing of it), oldest first: at most _KNOWN.
        self._in_blobs: dict[tuple[str, str, str], None] = {}

    def close(self) -> None:
        """Close the client this saver made (not one it was given)."""
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> ClawCheckpointSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reads

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``), or the thread namespace's newest one."""
        thread, ns = _names(config)
        cid = get_checkpoint_id(config)
        sid = E.session_ids(self.prefix, thread, ns)[0]
        if cid:
            entry = self._reader.by_client_id(sid, cid)
        else:
            entry, last = self._reader.newest(sid)
            if entry is not None:
                self._remember(thread, ns, entry.client_id, last)
        if entry is None:
            return None
        return self._tuples(thread, ns, [entry])[0]

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: of ``config``'s thread (and namespace, if it names one), or of every
        thread when ``config`` is None; only those before ``before``'s checkpoint, whose metadata has
        every ``filter`` item, at most ``limit``."""
        left = limit
        if left is not None and left <= 0:
            return
        only_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        for thread, ns in self._namespaces(config):
            sid = E.session_ids(self.prefix, thread, ns)[0]
            for page in self._pages(sid, only_id, before_id, left):
                chosen = []
                for entry in page:
                    if before_id and entry.client_id >= before_id:
                        continue
                    if filter and not _matches(self._metadata(entry), filter):
                        continue
                    chosen.append(entry)
                    if left is not None and len(chosen) >= left:
                        break
                if not chosen:
                    continue
                yield from self._tuples(thread, ns, chosen)
                if left is not None:
                    left -= len(chosen)
                    if left <= 0:
                        return

    def _pages(
        self, sid: str, only_id: str | None, before_id: str | None, wanted: int | None
    ) -> Iterator[Sequence[Message]]:
        """The checkpoints a ``list`` looks at in one session, newest first: the one ``only_id`` names (a point
        read), else pages of ``wanted`` (at most PAGE) from the one before ``before_id`` when this session holds
        it, else from the newest (``list`` then keeps those whose id sorts before it, as LangGraph's savers do).
        With a filter, pages after the first grow (Reader.pages) until enough match."""
        if only_id:
            entry = self._reader.by_client_id(sid, only_id)
            if entry is not None:
                yield [entry]
            return
        before = 0
        if before_id:
            at = self._reader.by_client_id(sid, before_id)
            before = at.position if at is not None else 0
        yield from self._reader.pages(sid, before, min(wanted or PAGE, PAGE))

    # -- writes

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` as a child of ``config``'s checkpoint; its config.

        The values of the channels ``new_versions`` names are stored first, one blob per channel and
        version (kept once), then the checkpoint without its ``channel_values``.

        Raises:
            CheckpointConflictError: another writer stored a checkpoint after the parent since this
                saver read it, or the checkpoint id is stored with other contents.
        """
        thread, ns = _names(config)
        parent = get_checkpoint_id(config)
        sid, _, bid = E.session_ids(self.prefix, thread, ns)
        meta = get_checkpoint_metadata(config, metadata)
        values = checkpoint["channel_values"]
        blobs = [
            _blob(ch, self.serde.dumps_typed(values[ch]) if ch in values else None, E.blob_client_id(ch, version))
            for ch, version in new_versions.items()
        ]
        if parent:
            blobs += self._inherited(thread, ns, parent, {b.client_id for b in blobs})
        stripped = {**checkpoint, "channel_values": {}}
        item = E.encode_checkpoint(self.serde.dumps_typed(stripped), self.serde.dumps_typed(meta), parent)
        entry = Message(
            "other", format=E.FORMAT_CHECKPOINT, item=item, client_id=checkpoint["id"], metadata=E.metadata_json(meta)
        )
        if blobs:  # before the checkpoint that names them: a stored checkpoint never lacks its values
            self._ensure(bid, thread, ns, E.KIND_BLOBS)
            self._append_new(bid, blobs)
        if parent:
            self._known(thread, ns, parent)
        self._ensure(sid, thread, ns, E.KIND_CHECKPOINTS)
        expected = self._expected(thread, ns, parent)
        try:
            result = self.client.append(sid, [entry], expected_last_position=expected)
        except SequenceConflictError as err:
            self._forget(thread, ns)
            with self._lock:
                # deleted meanwhile, perhaps: the next puts create the thread's sessions with their labels again
                ids = E.session_ids(self.prefix, thread, ns)
                self._made.difference_update(ids)
                self._stale.update(ids)
            if blobs:  # the values just written: found (and deleted) with the thread
                self._ensure(bid, thread, ns, E.KIND_BLOBS)
            raise CheckpointConflictError(
                f"thread {thread!r} (namespace {ns!r}) moved on past checkpoint {parent!r} since this saver read it "
                f"(another writer changed it: its last position is {err.actual}, not {expected}); the checkpoint "
                "was not stored (channel values it wrote stay unreferenced until the thread is deleted): read the "
                "thread again to go on from its newest checkpoint",
                reason=err.reason,
                metadata=err.metadata,
            ) from None
        except AlreadyExistsError:
            stored = self._reader.by_client_id(sid, checkpoint["id"])
            if stored is None or stored.item != item:
                raise CheckpointConflictError(
                    f"checkpoint {checkpoint['id']!r} of thread {thread!r} is stored with other contents",
                    reason=Reason.CLIENT_ID_EXISTS,
                ) from None
        else:
            self._remember(thread, ns, checkpoint["id"], result.last_position)
        self._known(thread, ns, checkpoint["id"])
        return _config(thread, ns, checkpoint["id"])

    def _inherited(self, thread: str, ns: str, parent: str, named: set[str]) -> Sequence[Message]:
        """The values a child put stores for a parent that holds them itself (a checkpoint of header version 1,
        written before the values had their session): the blob of each channel at the parent's version, those not
        in ``named`` (the put's own), so the child finds the channels it did not change by their versions. None when
        the parent's values are blobs already (known in memory, else one point read of the parent)."""
        with self._lock:
            if (thread, ns, parent) in self._in_blobs:
                return []
        entry = self._reader.by_client_id(E.session_ids(self.prefix, thread, ns)[0], parent)
        if entry is None:
            return []
        checkpoint_typed, _, _, in_blobs = E.decode_checkpoint(entry.item)
        if in_blobs:
            self._known(thread, ns, parent)
            return []
        whole = self.serde.loads_typed(checkpoint_typed)
        values = whole["channel_values"]
        out = []
        for ch, version in whole["channel_versions"].items():
            cid = E.blob_client_id(ch, version)
            if cid not in named:
                out.append(_blob(ch, self.serde.dumps_typed(values[ch]) if ch in values else None, cid))
        return out

    def _known(self, thread: str, ns: str, checkpoint_id: str) -> None:
        """Remember that a checkpoint's channel values are blobs (at most _KNOWN ids, the oldest forgotten first)."""
        with self._lock:
            self._in_blobs[(thread, ns, checkpoint_id)] = None
            if len(self._in_blobs) > _KNOWN:
                del self._in_blobs[next(iter(self._in_blobs))]

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes for ``config``'s checkpoint, in one append: a regular write already
        stored stays as it is (the first one wins), a special one (error, interrupt, ...) replaces it."""
        thread, ns = _names(config)
        cid = config["configurable"]["checkpoint_id"]
        wid = E.session_ids(self.prefix, thread, ns)[1]
        entries = []
        for i, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, i)
            item = E.encode_write(task_id, channel, task_path, idx, self.serde.dumps_typed(value))
            entries.append(
                Message("other", format=E.FORMAT_WRITE, item=item, client_id=E.write_client_id(cid, task_id, idx))
            )
        if not entries:
            return
        self._ensure(wid, thread, ns, E.KIND_WRITES)
        self._append_new(wid, entries)

    def _append_new(self, sid: str, entries: Sequence[Message]) -> None:
        """Append ``entries`` in one request; if some of their client ids are stored already, those stay as they
        are and the rest are appended."""
        try:
            self.client.append(sid, entries)
            return
        except AlreadyExistsError:
            pass
        taken = {e.client_id for e in self._reader.by_client_ids(sid, [e.client_id for e in entries])}
        rest = [e for e in entries if e.client_id not in taken]
        if rest:
            self.client.append(sid, rest)

    # -- whole threads

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of the thread, in every namespace."""
        E.check_names(thread_id, "")
        for summary in self._sessions({E.LABEL_THREAD: E.labels(self.prefix, thread_id, "", "")[E.LABEL_THREAD]}):
            self.client.delete(summary.id)
            with self._lock:
                self._made.discard(summary.id)
        with self._lock:
            for key in [k for k in self._tails if k[0] == thread_id]:
                del self._tails[key]

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread to another thread id (ForkSession of each of its
        sessions). Raises AlreadyExistsError if the target thread has a namespace the source has too."""
        E.check_names(source_thread_id, "")
        E.check_names(target_thread_id, "")
        label = E.labels(self.prefix, source_thread_id, "", "")[E.LABEL_THREAD]
        for summary in self._sessions({E.LABEL_THREAD: label}):
            found = E.thread_of(summary.labels)
            kind = summary.labels.get(E.LABEL_KIND, "")
            if found is None or kind not in _KINDS:
                continue
            ns = found[1]
            target = E.session_ids(self.prefix, target_thread_id, ns)[_KINDS.index(kind)]
            self.client.fork_session(summary.id, target, labels=E.labels(self.prefix, target_thread_id, ns, kind))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete every checkpoint (and its writes) whose metadata ``run_id`` is one of ``run_ids``, in every
        thread of this saver. It reads every checkpoint's metadata (as LangGraph's savers scan theirs); each
        deletion is a DeleteEntries, recorded in the session's log as an edit."""
        wanted = set(run_ids)
        if not wanted:
            return
        for summary in self._sessions({E.LABEL_KIND: E.KIND_CHECKPOINTS}):
            found = E.thread_of(summary.labels)
            if found is None:
                continue
            self._deleter.runs(*E.session_ids(self.prefix, *found), wanted)
            self._forget(*found)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest``: keep only the newest checkpoint of each namespace of these threads, and its
        writes; ``delete``: delete the threads. Other threads are not touched.

        As LangGraph warns for every saver, ``keep_latest`` drops the ancestors a ``DeltaChannel`` would
        rebuild its value from: do not prune threads of a graph that uses one.
        """
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"strategy must be 'keep_latest' or 'delete', not {strategy!r}")
        for thread_id in thread_ids:
            if strategy == "delete":
                self.delete_thread(thread_id)
                continue
            E.check_names(thread_id, "")
            label = E.labels(self.prefix, thread_id, "", "")[E.LABEL_THREAD]
            for summary in self._sessions({E.LABEL_THREAD: label, E.LABEL_KIND: E.KIND_CHECKPOINTS}):
                found = E.thread_of(summary.labels)
                if found is None:
                    continue
                self._deleter.all_but_newest(*E.session_ids(self.prefix, *found))
                self._forget(*found)

    # -- async: the sync methods in a worker thread

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """:meth:`get_tuple` in a worker thread."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """:meth:`list`, each step in a worker thread."""
        it = self.list(config, filter=filter, before=before, limit=limit)
        done = object()
        while (item := await asyncio.to_thread(next, it, done)) is not done:
            yield item  # type: ignore[misc]

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """:meth:`put` in a worker thread."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """:meth:`put_writes` in a worker thread."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """:meth:`delete_thread` in a worker thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """:meth:`delete_for_runs` in a worker thread."""
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """:meth:`prune` in a worker thread."""
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """:meth:`copy_thread` in a worker thread."""
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """The next channel version: a zero-padded counter, then a random part (as LangGraph's savers)."""
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(current.split(".")[0])
        return f"{number + 1:032}.{int.from_bytes(os.urandom(7)) / 2**56:016}"

    # -- helpers

    def _tuples(self, thread: str, ns: str, entries: Sequence[Message]) -> Sequence[CheckpointTuple]:
        """The tuples of checkpoint entries: their channel values (one read of their client ids for all of them)
        and each one's pending writes (one read of their client id prefix)."""
        _, wid, bid = E.session_ids(self.prefix, thread, ns)
        writes = self._reader.writes(wid, [e.client_id for e in entries])
        decoded = [E.decode_checkpoint(e.item) for e in entries]
        checkpoints: list[Checkpoint] = [self.serde.loads_typed(d[0]) for d in decoded]
        ids = [
            [(ch, E.blob_client_id(ch, v)) for ch, v in c["channel_versions"].items()] if d[3] else []
            for c, d in zip(checkpoints, decoded, strict=True)
        ]
        stored = self._reader.blobs(bid, [cid for named in ids for _, cid in named])
        out = []
        for entry, (_, metadata_typed, parent, in_blobs), checkpoint, named in zip(
            entries, decoded, checkpoints, ids, strict=True
        ):
            if in_blobs:
                checkpoint["channel_values"] = {
                    ch: self.serde.loads_typed(stored[cid]) for ch, cid in named if cid in stored
                }
                self._known(thread, ns, entry.client_id)
            pending = writes.get(entry.client_id, [])
            parent_config = _config(thread, ns, parent) if parent else None
            out.append(
                CheckpointTuple(
                    config=_config(thread, ns, entry.client_id),
                    checkpoint=checkpoint,
                    metadata=self.serde.loads_typed(metadata_typed),
                    parent_config=parent_config,
                    pending_writes=[(w.task_id, w.channel, self.serde.loads_typed(w.value)) for w in pending],
                )
            )
        return out

    def _metadata(self, entry: Message) -> dict[str, Any]:
        metadata: dict[str, Any] = self.serde.loads_typed(E.decode_checkpoint(entry.item)[1])
        return metadata

    def _namespaces(self, config: RunnableConfig | None) -> Iterator[tuple[str, str]]:
        """The thread namespaces a ``list`` reads: ``config``'s one, its thread's, or every thread's."""
        if config is not None:
            configurable = config["configurable"]
            if configurable.get("checkpoint_ns") is not None:
                yield _names(config)
                return
            thread = E.check_names(configurable["thread_id"], "")[0]
            wanted = {E.LABEL_THREAD: E.labels(self.prefix, thread, "", "")[E.LABEL_THREAD]}
        else:
            wanted = {}
        seen = []
        for summary in self._sessions({**wanted, E.LABEL_KIND: E.KIND_CHECKPOINTS}):
            found = E.thread_of(summary.labels)
            if found is not None:
                seen.append(found)
        yield from sorted(set(seen))

    def _sessions(self, wanted: dict[str, str]) -> Iterator[Any]:
        """Every session of this saver carrying the ``wanted`` labels (paged, bounded by _MAX_PAGES)."""
        token = ""
        for _ in range(_MAX_PAGES):
            page = self.client.list_sessions_page(
                limit=_PAGE, page_token=token, labels={E.LABEL_SAVER: self.prefix, **wanted}
            )
            yield from page.sessions
            token = page.next_page_token
            if not token:
                return
        raise SessiondError(f"more than {_PAGE * _MAX_PAGES} sessions carry the labels {wanted}")

    def _ensure(self, sid: str, thread: str, ns: str, kind: str) -> None:
        """Create the session with its labels the first time this saver writes to it (and label it again if it
        may have been recreated without them)."""
        with self._lock:
            if sid in self._made:
                return
            stale = sid in self._stale
        labels = E.labels(self.prefix, thread, ns, kind)
        try:
            self.client.create_session(sid, labels=labels)
        except AlreadyExistsError:
            if stale:
                self.client.update_session(sid, set_labels=labels)
        with self._lock:
            self._made.add(sid)
            self._stale.discard(sid)

    def _expected(self, thread: str, ns: str, parent: str | None) -> int:
        """The position the checkpoints session must still end at for a child of ``parent``: the parent's,
        when it is the newest checkpoint this saver knows of there; else 0 (no check: a branch off an
        older checkpoint, or a thread this saver has not read)."""
        with self._lock:
            tail = self._tails.get((thread, ns))
        return tail[1] if tail is not None and parent is not None and tail[0] == parent else 0

    def _remember(self, thread: str, ns: str, checkpoint_id: str, position: int) -> None:
        with self._lock:
            self._tails[(thread, ns)] = (checkpoint_id, position)

    def _forget(self, thread: str, ns: str) -> None:
        with self._lock:
            self._tails.pop((thread, ns), None)


def _names(config: RunnableConfig) -> tuple[str, str]:
    configurable = config["configurable"]
    return E.check_names(configurable["thread_id"], configurable.get("checkpoint_ns") or "")


def _config(thread: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}


def _blob(channel: str, value: tuple[str, bytes] | None, client_id: str) -> Message:
    """The entry of a channel's value (None: the channel has none) at the version ``client_id`` names."""
    return Message("other", format=E.FORMAT_BLOB, item=E.encode_blob(channel, value), client_id=client_id)


def _matches(metadata: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(metadata.get(key) == value for key, value in wanted.items())
