"""An OpenAI Agents SDK ``Session`` kept by claw-sessiond: :class:`ClawSession`.

>>> from agents import Agent, Runner                                # doctest: +SKIP
>>> from claw_sessiond_client.contrib.openai_agents import ClawSession
>>> session = ClawSession("support-42")          # the workspace's daemon (started if needed)
>>> result = await Runner.run(agent, "hello", session=session)

Install with ``pip install './clients/python[openai-agents]' .`` in a checkout (pins the
SDK version this adapter is tested against; the git URL form: README's Install section).

How items are stored: one entry per SDK item, format ``openai.responses``,
the item's own JSON text as the entry's item bytes; what comes back is
``json.loads`` of exactly those bytes, in the order written (by position, as SQLiteSession
gives them: parallel tool calls before their outputs). Any string is a session id
(:mod:`~claw_sessiond_client.contrib._names` maps it to the daemon's). Role, text and tool calls are derived
for the daemon's own use (pairing, search, the CLI): a message item gives its
role and text; a call item (``function_call``, ``custom_tool_call``,
``shell_call``, ...) an assistant entry with one tool call keyed by its
``call_id`` (arguments that are not JSON, such as a custom tool's free text, are
stored as given); an output item (``function_call_output``, ...) a tool result;
every other item (reasoning, compaction, hosted tool calls, MCP, encrypted
envelopes) an entry with no conversation role, kept in order.

Tool-call rules: the SDK pairs calls and outputs itself and drops calls that
never got an output, so the daemon must not answer for it. Every write carries
the policy ``repair="off"`` with orphan outputs and unparsed calls allowed, and
the session is created with that policy. A call written without its output in
the same write (the run stopped for a person's approval, or a tool still
running) is marked *pending*: no Load repairs it, whatever the session's
policy, until its output is written, also from another process after a
restart. Should the daemon refuse a pairing anyway (a call id the history
already holds, an output for an answered call), the entries of that call id are
stored with no role instead: the SDK's history stays exact.

The SDK's optional hooks are implemented: ``_get_compaction_snapshot`` (a
bounded read plus an atomic compare-and-swap replacement of its suffix, used by
``OpenAIResponsesCompactionSession``), ``_atomic_replace_items`` (whole-history
replacement in one edit) and ``_pop_item_with_validation`` (a pop that removes
nothing when the item fails a check; the SDK's EncryptedSession calls it only on
its own SQLiteSession today).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from claw_sessiond_client.install import missing_framework

try:
    from agents import Agent, RunState
    from agents.items import TResponseInputItem
    from agents.memory.session import SessionABC, _CompactionSnapshot
    from agents.memory.session_settings import SessionSettings, coerce_session_settings, resolve_session_limit
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise missing_framework(__name__, "openai-agents", client_extra="openai-agents") from exc

from claw_sessiond_client import (
    AppendResult,
    AsyncSessionClient,
    EditTailResult,
    InvalidRequestError,
    LoadResult,
    Message,
    Reason,
    SequenceConflictError,
    SessiondError,
    SessionNotFoundError,
    StateDelta,
)

from ._names import store_id as to_store_id
from ._openai_items import (
    ALL,
    FORMAT,
    TOOL_POLICY,
    encode_item,
    entries_for_items,
    entry_for_item,
    item_of,
    items_from_bytes,
    refused_pairing,
)
from ._order import in_written_order

__all__ = ["FORMAT", "RUN_STATE_KEY", "TOOL_POLICY", "ClawSession", "encode_item", "entry_for_item", "item_of"]

#: The key of the session's state that :meth:`ClawSession.save_run_state` keeps a run's state under.
RUN_STATE_KEY = "openai_agents.run_state"
#: The Session methods the SDK calls (the compaction hooks bypass them).
_PROTOCOL = ("get_items", "add_items", "pop_item", "clear_session")

T = TypeVar("T")


def _sdk_item(entry: Message) -> TResponseInputItem | None:
    """:func:`item_of`, typed as the SDK's item."""
    return cast("TResponseInputItem | None", item_of(entry))


async def _settle(awaitable: Awaitable[T]) -> T:
    """Await a mutation to its end even if the caller is cancelled meanwhile (then re-raise the
    cancellation): the SDK must learn whether a write happened, as with its own sessions."""
    task = asyncio.ensure_future(awaitable)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    if cancelled is not None:
        with contextlib.suppress(BaseException):
            task.result()
        raise cancelled
    return task.result()


# ---------------------------------------------------------------- the session


class ClawSession(SessionABC):
    """A ``Session`` of the OpenAI Agents SDK whose history claw-sessiond keeps.

    Args:
        session_id: the SDK's session id: any string, as the SDK's own sessions take. The
            daemon's session id is :func:`~claw_sessiond_client.contrib._names.store_id` of it
            unless ``store_id`` is given: itself when the daemon takes it and it holds no
            ``%`` (``"support-42"``), else escaped (``"user/123"`` is ``"user%2F123"``).
        workspace, address, autostart, timeout_s: how to reach the daemon, as for
            :class:`~claw_sessiond_client.AsyncSessionClient`.
        client: use this client instead (on the event loop it was made on). Without
            one, the session makes one client per event loop it is used on (the SDK
            may drive a session from several threads, each with its own loop), and
            :meth:`close` closes them.
        session_settings: the SDK's settings (``limit``: the default of :meth:`get_items`).
        store_id: the daemon's session id, when it must differ from the mapped one.

    Every method raises :class:`~claw_sessiond_client.SessiondError` subclasses for what
    the daemon refuses, ``TypeError`` for an item that is not a JSON object, and
    ``RuntimeError`` after :meth:`close`.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        workspace: str | os.PathLike[str] | None = None,
        address: str | None = None,
        autostart: bool = True,
        timeout_s: float | None = None,
        client: AsyncSessionClient | None = None,
        session_settings: SessionSettings | Mapping[str, Any] | None = None,
        store_id: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.store_id = to_store_id(session_id) if store_id is None else store_id
        self.session_settings = (
            coerce_session_settings(cast(Any, session_settings)) if session_settings is not None else SessionSettings()
        )
        self._client = client
        self._connect: dict[str, Any] = {"workspace": workspace, "address": address, "autostart": autostart}
        if timeout_s is not None:
            self._connect["timeout_s"] = timeout_s
        self._clients: dict[int, tuple[weakref.ref[asyncio.AbstractEventLoop], AsyncSessionClient]] = {}
        self._guard = threading.Lock()
        self._created = False
        self._closed = False

    # -- plumbing

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed (session {self.session_id!r})")

    def _client_here(self) -> AsyncSessionClient:
        """This event loop's client (made on first use; clients of closed loops are dropped)."""
        self._check_open()
        if self._client is not None:
            return self._client
        loop = asyncio.get_running_loop()
        with self._guard:
            for key, (ref, _client) in list(self._clients.items()):
                gone = ref()
                if gone is None or gone.is_closed():
                    del self._clients[key]
            known = self._clients.get(id(loop))
            if known is not None and known[0]() is loop:
                return known[1]
            client = AsyncSessionClient(**self._connect)
            self._clients[id(loop)] = (weakref.ref(loop), client)
            return client

    def _hooks_apply(self) -> bool:
        """The compaction hooks bypass the four Session methods: a subclass that overrides one of
        them (to transform or index items) gets none, and the SDK falls back to those methods."""
        return all(getattr(type(self), name) is getattr(ClawSession, name) for name in _PROTOCOL)

    async def _load(self, last: int | None) -> LoadResult:
        """A look at the history (never repairs, writes nothing), in the order written; ``last`` bounds it."""
        return in_written_order(await self._client_here().load(self.store_id, last=last, no_repair=True))

    async def _ensure_policy(self, client: AsyncSessionClient) -> None:
        """Create the session with this adapter's tool policy, once per object (a stored session keeps its own)."""
        if self._created:
            return
        try:
            await client.create_session(self.store_id, tool_policy=TOOL_POLICY)
        except SessiondError as exc:
            if exc.reason != Reason.SESSION_EXISTS:
                raise
        self._created = True

    async def _write(self, items: Sequence[TResponseInputItem], send: Callable[[list[Message]], Awaitable[T]]) -> T:
        """Send the entries of ``items``; a pairing the daemon refuses demotes that call id's entries."""
        unpaired: set[str] = set()
        while True:
            entries = entries_for_items(cast(Sequence[Mapping[str, Any]], items), frozenset(unpaired))
            try:
                return await send(entries)
            except SessiondError as exc:
                call_id = refused_pairing(exc)
                if call_id is None or call_id in unpaired:
                    raise
                unpaired.add(call_id)

    # -- the Session protocol

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The newest ``limit`` items (default: ``session_settings.limit``; None or negative: all), oldest first."""
        self._check_open()
        n = resolve_session_limit(limit, self.session_settings)
        if n == 0:
            return []
        last = None if n is None or n < 0 or n >= ALL else n
        found = await self._client_here().load_items(self.store_id, FORMAT, last=last)  # in the order written
        return cast("list[TResponseInputItem]", items_from_bytes(found))

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append the items in one write (all or none)."""
        self._check_open()
        if not items:
            return
        client = self._client_here()

        async def add() -> None:
            await self._ensure_policy(client)
            await self._write(items, lambda entries: client.append(self.store_id, entries, tool_policy=TOOL_POLICY))

        await _settle(add())

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the newest item and return it (None if there is none)."""
        self._check_open()
        return await _settle(self._pop())

    async def _pop(self) -> TResponseInputItem | None:
        client = self._client_here()
        while True:
            try:
                edit = await client.edit_tail(
                    self.store_id, remove_last=1, discard_pending=True, tool_policy=TOOL_POLICY
                )
            except (InvalidRequestError, SessionNotFoundError) as exc:
                # remove_last beyond the visible entries: the reply says how many there are
                if exc.metadata.get("visible") == "0" or not (await self._load(1)).messages:
                    return None
                raise
            item = _sdk_item(edit.removed[0]) if edit.removed else None
            if item is not None:
                return item
            # an entry someone else wrote is not an item of the SDK: removed, keep looking

    async def _pop_item_with_validation(
        self, validate: Callable[[TResponseInputItem], None] | None = None
    ) -> TResponseInputItem | None:
        """Pop the newest item only if ``validate(item)`` returns (EncryptedSession's authenticated
        pop): read it, validate it in a worker thread, then remove it only if the session has not
        changed meanwhile (else read again). A raising ``validate`` removes nothing."""
        self._check_open()
        return await _settle(self._validated_pop(validate))

    async def _validated_pop(self, validate: Callable[[TResponseInputItem], None] | None) -> TResponseInputItem | None:
        client = self._client_here()
        while True:
            read = await self._load(1)
            if not read.messages:
                return None
            item = _sdk_item(read.messages[-1])
            if item is not None and validate is not None:
                await asyncio.to_thread(validate, item)
            try:
                await client.edit_tail(
                    self.store_id,
                    remove_last=1,
                    expected_last_position=read.session.last_position,
                    discard_pending=True,
                    tool_policy=TOOL_POLICY,
                )
            except SequenceConflictError:
                continue
            if item is not None:
                return item

    async def clear_session(self) -> None:
        """Erase the history (the entries leave the log and the database files; usage and policy stay)."""
        self._check_open()
        await _settle(self._client_here().clear(self.store_id, erase=True))

    # -- the SDK's optional hooks

    async def _get_compaction_snapshot(
        self, limit: int, *, prune_prefix: Callable[[TResponseInputItem], bool] | None = None
    ) -> _CompactionSnapshot | None:
        """The newest ``limit`` items, whether they are all, and an atomic replacement of their suffix.

        ``replace_suffix(start, new_items)`` replaces ``items[start:]`` with ``new_items``
        in one edit, only if the session has not changed since this read (False
        otherwise). With ``prune_prefix`` (EncryptedSession's expired envelopes), the
        leading items of the whole history that it selects go in the same edit. None if
        the read holds entries that are not the SDK's, or if a subclass overrides a
        Session method (the SDK then reads the whole history through those methods).
        """
        self._check_open()
        if not self._hooks_apply():
            return None
        read = await self._load(max(1, min(limit, ALL - 1)))
        items = [_sdk_item(m) for m in read.messages]
        if any(item is None for item in items):
            return None
        entries = read.messages
        last_position = read.session.last_position
        complete = read.complete

        async def replace_suffix(start: int, output: list[TResponseInputItem]) -> bool:
            if not 0 <= start < len(entries):
                return False
            if prune_prefix is None:
                return await _settle(self._replace_from(entries[start:], output, last_position))
            return await _settle(self._prune_and_replace(entries, start, output, last_position, complete, prune_prefix))

        return _CompactionSnapshot(cast(list[TResponseInputItem], items), complete, replace_suffix)

    async def _atomic_replace_items(self, items: list[TResponseInputItem]) -> bool:
        """Replace the whole history with ``items`` in one edit (False if it changed meanwhile, or
        if a subclass overrides a Session method: the SDK then clears and adds through them)."""
        self._check_open()
        if not self._hooks_apply():
            return False
        read = await self._load(None)
        if not read.messages:
            client = self._client_here()
            if not items:
                return True
            expected = read.session.last_position

            def append(entries: list[Message]) -> Awaitable[AppendResult]:
                return client.append(self.store_id, entries, tool_policy=TOOL_POLICY, expected_last_position=expected)

            try:
                await _settle(self._write(items, append))
            except SequenceConflictError:
                return False
            return True
        return await _settle(self._replace_from(read.messages, items, read.session.last_position))

    async def _prune_and_replace(
        self,
        window: list[Message],
        start: int,
        output: list[TResponseInputItem],
        last_position: int,
        complete: bool,
        prune_prefix: Callable[[TResponseInputItem], bool],
    ) -> bool:
        """Replace ``window[start:]`` and drop the leading entries of the history that
        ``prune_prefix`` selects, in one edit: the entries between the two are written again
        (the same bytes, at new positions). Reads the whole history unless ``window`` is it."""
        history = window
        if not complete:
            whole = await self._load(None)
            if whole.session.last_position != last_position:
                return False
            history = whole.messages
        before = len(history) - (len(window) - start)  # history[:before] stays, unless pruned
        pruned = 0
        while pruned < before:
            item = _sdk_item(history[pruned])
            if item is None or not prune_prefix(item):
                break
            pruned += 1
        kept = [_sdk_item(e) for e in history[pruned:before]]
        if not pruned or any(item is None for item in kept):  # an entry of someone else's cannot be written again
            return await self._replace_from(window[start:], output, last_position)
        return await self._replace_from(history, [*cast(list[TResponseInputItem], kept), *output], last_position)

    async def _replace_from(
        self, removed: Sequence[Message], items: Sequence[TResponseInputItem], last_position: int
    ) -> bool:
        """Remove the visible entries ``removed`` (the newest ones) and write ``items`` in their
        place, only if the session's last position is still ``last_position``."""
        client = self._client_here()
        await self._ensure_policy(client)
        position = removed[0].position

        # after_position 0 means "not set": from position 1 on, remove by count (the same entries)
        after, count = (position - 1, 0) if position > 1 else (0, len(removed))

        def edit(entries: list[Message]) -> Awaitable[EditTailResult]:
            return client.edit_tail(
                self.store_id,
                remove_last=count,
                after_position=after,
                replacements=entries,
                expected_last_position=last_position,
                discard_pending=True,
                tool_policy=TOOL_POLICY,
            )

        try:
            await self._write(items, edit)
        except SequenceConflictError:
            return False
        return True

    # -- a run waiting for a person

    async def save_run_state(self, state: RunState[Any, Any] | str) -> None:
        """Keep a run's state (``result.to_state()``, or its ``to_string()``) in the session's
        state, so a run stopped for an approval can resume in another process, after a restart."""
        self._check_open()
        text = state if isinstance(state, str) else state.to_string()
        await _settle(self._set_state({RUN_STATE_KEY: text}))

    async def load_run_state(self, agent: Agent[Any], **kwargs: Any) -> RunState[Any, Any] | None:
        """The run state :meth:`save_run_state` kept (None if none), for ``agent``
        (``kwargs`` go to ``RunState.from_string``). The daemon is the trusted storage the SDK
        asks for: only the daemon's user can write to it."""
        self._check_open()
        text = (await self._load(1)).session.state.get(RUN_STATE_KEY)
        if not isinstance(text, str):
            return None
        return await RunState.from_string(agent, text, **kwargs)

    async def discard_run_state(self) -> None:
        """Forget the run state kept by :meth:`save_run_state`."""
        self._check_open()
        await _settle(self._set_state({RUN_STATE_KEY: None}))

    async def _set_state(self, delta: dict[str, Any]) -> None:
        client = self._client_here()
        await self._ensure_policy(client)
        await client.update_session(self.store_id, state_deltas=[StateDelta(delta)])

    # -- lifetime

    def close(self) -> None:
        """Stop using the session: later calls raise ``RuntimeError``; the clients it made are closed."""
        self._closed = True
        with self._guard:
            clients = list(self._clients.values())
            self._clients.clear()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        for ref, client in clients:
            loop = ref()
            if loop is None or loop.is_closed():
                continue  # its channel went with its loop
            if loop is running:
                running.create_task(client.close())
            elif loop.is_running():
                asyncio.run_coroutine_threadsafe(client.close(), loop)
            else:
                loop.run_until_complete(client.close())

    async def __aenter__(self) -> ClawSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
