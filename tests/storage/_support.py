"""What the contract tests share: opening storages, building requests, and reading back through the interface.

Requests are built the way the service builds them (``validate.prepare_append``),
so a backend sees exactly what the daemon would hand it. Everything read back
goes through :class:`~claw_sessiond.storage.Storage` methods.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from claw_sessiond.events import decode_events
from claw_sessiond.export import event_line, header_line, parse_session
from claw_sessiond.model import (
    AppendJob,
    AppendResult,
    DeleteEntriesResult,
    EditResult,
    LoadResult,
    Message,
    ToolCall,
    UsageDelta,
    UsageResult,
)
from claw_sessiond.policy import ToolPolicy
from claw_sessiond.selection import prepare_delete_entries
from claw_sessiond.storage import Run, SharedRuns, Storage
from claw_sessiond.validate import prepare_append, prepare_edit

#: Opens a backend's storage for a folder, with Config overrides; the same folder opens the same data.
BackendFactory = Callable[..., Awaitable[Storage]]

WORKDIR = "/work/dir"


class Stores:
    """Opens and closes storages of one backend; whatever is still open is closed at teardown."""

    def __init__(self, factory: BackendFactory) -> None:
        self._factory = factory
        self._open: list[Storage] = []

    async def open(self, folder: Path, **overrides: Any) -> Storage:
        """Open the storage of ``folder`` (the same folder: the same stored data)."""
        store = await self._factory(folder, **overrides)
        self._open.append(store)
        return store

    async def close(self, store: Storage) -> None:
        """Close ``store`` now (to reopen its folder, as after a restart)."""
        self._open.remove(store)
        await store.close()

    async def close_all(self) -> None:
        """Close every storage still open."""
        while self._open:
            await self._open.pop().close()


# ---------------------------------------------------------------- messages and requests


def user(text: str) -> Message:
    return Message("user", text)


def assistant(*call_ids: str, text: str = "") -> Message:
    """An assistant message making a call per id (tool ``bash``, no arguments)."""
    return Message("assistant", text, tool_calls=tuple(ToolCall(i, "bash", "{}") for i in call_ids))


def result(call_id: str, text: str = "done") -> Message:
    return Message("tool", text, tool_call_id=call_id)


def job(
    session_id: str,
    *messages: Message,
    expected: int = 0,
    request_id: str = "",
    run_id: str = "",
    trace_id: str = "trace",
    workdir: str = "",
    tool_policy: ToolPolicy | None = None,
    state_deltas: Sequence[tuple[str, str]] = (),
) -> AppendJob:
    """A validated Append, as the service builds it (``state_deltas``: (scope, delta JSON text) pairs)."""
    return prepare_append(
        session_id,
        list(messages),
        expected_last_position=expected,
        request_id=request_id,
        workdir=workdir,
        run_id=run_id,
        trace_id=trace_id,
        max_message_bytes=1 << 20,
        max_batch_messages=1000,
        tool_policy=tool_policy,
        state_deltas=state_deltas,
    )


async def attach(storage: Storage, session_id: str, pid: int, label: str, **options: Any) -> Run:
    """Start a run as Attach does: registered here, then claimed for every daemon sharing the storage."""
    run = storage.runs.register(session_id, pid, label, **options)
    try:
        if isinstance(storage.runs, SharedRuns):
            await storage.runs.claim(run)
    except BaseException:
        storage.runs.unregister(run.run_id)  # as Attach's stream ends
        raise
    return run


async def append(storage: Storage, session_id: str, *messages: Message, **options: Any) -> AppendResult:
    return await storage.append(job(session_id, *messages, **options))


async def usage(storage: Storage, session_id: str, request_id: str = "", **counts: Any) -> UsageResult:
    """Record a usage delta (``counts``: the fields of :class:`UsageDelta`)."""
    return await storage.record_usage(
        session_id, UsageDelta(**counts), request_id=request_id, workdir="", trace_id="trace"
    )


def edit_job(
    session_id: str,
    *replacements: Message,
    remove_last: int = 0,
    after: int = 0,
    expected: int = 0,
    request_id: str = "",
    run_id: str = "",
    discard_pending: bool = False,
) -> Any:
    """An EditTail's job, built as the service builds it (``validate.prepare_edit``, the daemon's default bounds)."""
    return prepare_edit(
        session_id,
        list(replacements),
        remove_last=remove_last,
        after_position=after,
        expected_last_position=expected,
        request_id=request_id,
        workdir="",
        run_id=run_id,
        trace_id="trace",
        discard_pending=discard_pending,
        max_message_bytes=1 << 20,
        max_batch_messages=1000,
    )


async def edit(storage: Storage, session_id: str, *replacements: Message, **options: Any) -> EditResult:
    """An EditTail (:func:`edit_job`'s options) through ``storage``; its result."""
    return await storage.edit_tail(edit_job(session_id, *replacements, **options))


async def delete_entries(storage: Storage, session_id: str, **selector: Any) -> DeleteEntriesResult:
    """A DeleteEntries, built as the service builds it (``selector``: its fields; bound 1000 unless given)."""
    fields: dict[str, Any] = {
        "client_ids": (),
        "client_id_prefix": "",
        "from_position": 0,
        "to_position": 0,
        "expected_last_position": 0,
        "request_id": "",
        "trace_id": "trace",
        "discard_pending": False,
        "max_entries": 1000,
    }
    fields.update(selector)
    return await storage.delete_entries(prepare_delete_entries(session_id, **fields))


async def clear(storage: Storage, session_id: str, *, expected: int = 0, request_id: str = "") -> Any:
    return await storage.clear(
        session_id, request_id=request_id, expected_last_position=expected, workdir="", trace_id="trace"
    )


# ---------------------------------------------------------------- reading back


async def history(storage: Storage, loaded: LoadResult) -> list[Message]:
    """The whole visible history of a Load: its messages, or every page of its cursor."""
    if loaded.cursor is None:
        return list(loaded.messages)
    out: list[Message] = []
    async for page in storage.history_pages(loaded.cursor):
        out.extend(page)
    return out


async def read(storage: Storage, session_id: str) -> list[Message]:
    """The visible history without repairing anything (``repair=False``: a read that writes nothing)."""
    return await history(storage, await storage.load(session_id, WORKDIR, "read", repair=False))


async def contents(storage: Storage, session_id: str) -> list[str]:
    return [m.content for m in await read(storage, session_id)]


async def export_lines(storage: Storage, session_id: str) -> list[str]:
    """The session's export block (header then events), as the Export RPC writes it; [] if not stored."""
    found = await storage.export_start(session_id)
    if found is None:
        return []
    header, cursor, max_event_id = found
    lines = [header_line(header)]
    pages = storage.export_pages(cursor, max_event_id)
    async for rows in pages:
        lines += [event_line(len(lines) + i, session_id, e) for i, e in enumerate(decode_events(rows))]
    return lines


def renamed(lines: list[str], session_id: str) -> list[str]:
    """An export block moved to another session id."""
    out = []
    for line in lines:
        obj = json.loads(line)
        obj["session_id"] = session_id
        out.append(json.dumps(obj))
    return out


async def event_types(storage: Storage, session_id: str) -> list[str]:
    """The types of the session's stored events, in event order."""
    found = await storage.export_start(session_id)
    if found is None:
        return []
    _header, cursor, max_event_id = found
    out: list[str] = []
    async for rows in storage.export_pages(cursor, max_event_id):
        out += [e.type for e in decode_events(rows)]
    return out


async def import_lines(storage: Storage, lines: list[str], mode: Any = "refuse") -> int:
    return await storage.import_session(parse_session(lines), mode)


async def snapshot(storage: Storage, *session_ids: str) -> tuple[object, ...]:
    """Everything the interface shows of some sessions and of the whole storage (to prove a write wrote nothing)."""
    figures = await storage.figures()
    per_session = [await export_lines(storage, sid) for sid in session_ids]
    listing = await storage.list_sessions("", 1000)
    return (figures.sessions, figures.events, figures.request_records, per_session, listing)


# ---------------------------------------------------------------- the change feed


class Feed:
    """A ChangeListener that remembers what it was told, in order."""

    def __init__(self) -> None:
        self.told: list[tuple[str, frozenset[str]]] = []

    def changed(self, session_ids: set[str]) -> None:
        self.told.append(("changed", frozenset(session_ids)))

    def erased(self, session_id: str) -> None:
        self.told.append(("erased", frozenset({session_id})))

    def resync(self) -> None:
        self.told.append(("resync", frozenset()))

    def changes_of(self, session_id: str) -> int:
        return sum(1 for kind, ids in self.told if kind == "changed" and session_id in ids)

    def erasures(self) -> list[str]:
        return [next(iter(ids)) for kind, ids in self.told if kind == "erased"]


async def eventually(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    """Wait until ``condition()`` holds (a feed may tell a moment after the write returned)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        await asyncio.sleep(0.005)
